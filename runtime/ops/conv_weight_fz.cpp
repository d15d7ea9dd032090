// A convolution weight into FRACTAL_Z by whole pieces (fz_weight_kernel, conv_layout.h).
#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/conv_layout.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct FzWeightTiling {
    uint32_t r = 1;   // rows per item
    uint32_t rs = 1;  // transposed: a channel row's stride in UB (elements, whole 32 B)
    uint64_t chunks = 1, items = 1, per_block = 1;
};

uint64_t src_elems(const FzWeightPlan& p, uint32_t r, uint32_t rs, uint32_t c0) {
    return p.transposed ? uint64_t{c0} * rs : uint64_t{r} * c0 * p.taps;
}

template <class T>
void fz_weight_body(isa::IInstrSink& sink, const FzWeightPlan& p, const FzWeightTiling& t) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * t.per_block;
    if (first >= t.items) return;
    const uint64_t last = std::min(t.items, first + t.per_block);
    constexpr uint32_t es = sizeof(T), c0 = 32 / es;
    const uint32_t L = p.taps, r = t.r, n = r * L * c0;
    GlobalTensor<T> gs, gd;
    gs.SetGlobalBuffer(p.src, ~0ull / 8);
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> off_buf;
    const uint32_t sbytes = static_cast<uint32_t>(src_elems(p, r, t.rs, c0) * es);
    pipe.InitBuffer(qin, 2, sbytes + 256);
    pipe.InitBuffer(qout, 2, n * es + 256);
    pipe.InitBuffer(off_buf, n * 4 + 256);
    // Byte offsets of the output (tap, row, lane) in the source piece: base + row A + lane B +
    // tap D (forward: rows of C0 x L, lanes L apart; transposed: lane rows rs apart, rows L
    // apart, the taps reversed). The C0 lanes by masked duplicates, then doublings.
    const int64_t A = p.transposed ? L : int64_t{c0} * L, B = p.transposed ? t.rs : L;
    const int64_t D = p.transposed ? -1 : 1, base = p.transposed ? L - 1 : 0;
    const LocalTensor<int32_t> off = off_buf.Get<int32_t>();
    for (uint32_t j = 0; j < c0; ++j) {
        const uint64_t bit[2] = {1ull << j, 0};
        Duplicate(off, static_cast<int32_t>((base + j * B) * es), VecMask(bit), 1, 1, 8);
    }
    for (uint32_t s = 1; s < r; s *= 2) Adds(off[s * c0], off, static_cast<int32_t>(s * A * es), std::min(s, r - s) * c0);
    for (uint32_t s = 1; s < L; s *= 2)
        Adds(off[s * r * c0], off, static_cast<int32_t>(s * D * es), std::min(s, L - s) * r * c0);
    const LocalTensor<uint32_t> offs = off.ReinterpretCast<uint32_t>();
    for (uint64_t it = first; it < last; ++it) {
        ctx.scalar(6);  // item coordinates
        const uint32_t c1 = static_cast<uint32_t>(it / t.chunks), m0 = static_cast<uint32_t>(it % t.chunks) * r;
        const uint32_t rr = std::min(r, p.m - m0), nch = std::min(c0, p.c - c1 * c0);
        LocalTensor<T> src = qin.AllocTensor<T>();
        if (p.transposed) {
            // Each lane's channel row: the chunk's rows x taps, one burst (missing lanes zero).
            if (nch < c0) Duplicate(src[nch * t.rs], T(0), (c0 - nch) * t.rs);
            const uint32_t len = rr * L * es;
            DataCopyPad(src, gs[(uint64_t{c1} * c0 * p.m + m0) * L],
                        DataCopyExtParams{nch, len, (p.m - rr) * L * es, (t.rs * es - (len + 31) / 32 * 32) / 32});
        } else {
            // Each row's C0 channels x taps: one burst of 32 L bytes.
            DataCopyPad(src, gs[(uint64_t{m0} * p.c + c1 * c0) * L],
                        DataCopyExtParams{rr, c0 * L * es, (p.c - c0) * L * es, 0});
        }
        qin.EnQue(src);
        src = qin.DeQue<T>();
        LocalTensor<T> dst = qout.AllocTensor<T>();
        Gather(dst, src, offs, sbytes, n);
        qin.FreeTensor(src);
        qout.EnQue(dst);
        dst = qout.DeQue<T>();
        // Each tap's rr rows of 32 B: one run of FRACTAL_Z (rows m apart per K block).
        DataCopyPad(gd[(uint64_t{c1} * L * p.m + m0) * c0], dst, DataCopyExtParams{L, rr * 32, r - rr, (p.m - rr) * 32});
        qout.FreeTensor(dst);
    }
}

}  // namespace

KernelDesc fz_weight_kernel(const FzWeightPlan& p, const DeviceInfo& dev, const std::string& name,
                            const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (es != 2 && es != 4) throw InputError("FRACTAL_Z weight: needs a 2- or 4-byte type");
    const uint32_t c0 = 32 / es;
    if (!p.transposed && p.c % c0 != 0)
        throw InputError("FRACTAL_Z weight: a forward weight's channels must fill whole C0 blocks");
    if (p.m == 0 || p.c == 0 || p.taps == 0 || p.m > 65535 || p.taps > 65535)
        throw InputError("FRACTAL_Z weight: 1..65535 rows and taps");
    const uint32_t c1n = (p.c + c0 - 1) / c0, cores = std::max<uint32_t>(1, dev.vector_cores);
    FzWeightTiling t;
    auto fits = [&](uint32_t r) {
        const uint32_t rs = (r * p.taps * es + 31) / 32 * 32 / es;
        const uint64_t n = uint64_t{r} * p.taps * c0;
        return 2 * (src_elems(p, r, rs, c0) * es + 256) + 2 * (n * es + 256) + n * 4 + 256 <= dev.ub_bytes &&
               n <= 65535 * 64;
    };
    // Enough items for every vector core twice over, each as many rows as fit.
    const uint64_t want = std::max<uint64_t>(1, (2ull * cores + c1n - 1) / c1n);
    uint32_t r = static_cast<uint32_t>(std::max<uint64_t>(1, (p.m + want - 1) / want));
    while (r > 1 && !fits(r)) r = (r + 1) / 2;
    if (!fits(r)) throw InputError("FRACTAL_Z weight: one row of " + std::to_string(p.taps) + " taps does not fit UB");
    t.r = r, t.rs = (r * p.taps * es + 31) / 32 * 32 / es;
    t.chunks = (p.m + r - 1) / r, t.items = uint64_t{c1n} * t.chunks;
    const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>(t.items, cores));
    t.per_block = (t.items + blocks - 1) / blocks;
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = static_cast<uint32_t>((t.items + t.per_block - 1) / t.per_block);
    if (es == 2)
        kd.body = [p, t](isa::IInstrSink& s) { fz_weight_body<half>(s, p, t); };
    else
        kd.body = [p, t](isa::IInstrSink& s) { fz_weight_body<float>(s, p, t); };
    kd.bytes = (uint64_t{p.m} * p.c + uint64_t{p.m} * c1n * c0) * p.taps * es;
    return kd;
}

}  // namespace sfumato::ops
