// NC1HWC0 conversion and zero-fill vector kernels (see conv_layout.h). Work items (one C0 block
// of one source item, one pixel chunk) are split into contiguous shares over the vector cores;
// loads, gathers and stores overlap through double-buffered queues.
#include "runtime/ops/conv_layout.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct LayoutTiling {
    uint32_t c0 = 16, c1 = 1;
    uint32_t q = 0, qp = 0;  // pixels per chunk, and the padded row length in UB (elements)
    uint32_t chunks = 1;
    uint32_t rs = 16;  // a channel row's stride in UB (elements): qp, or q when the rows arrive in one burst
    bool packed = false;  // the chunk's channel rows are adjacent in GM: one burst, packed in UB
    uint64_t items = 0, per_block = 0;
    uint32_t block_dim = 1;
};

template <class T>
void nc1hwc0_body(isa::IInstrSink& sink, const Nc1hwc0Plan& p, const LayoutTiling& t) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * t.per_block;
    if (first >= t.items) return;
    const uint64_t last = std::min(t.items, first + t.per_block);
    constexpr uint32_t es = sizeof(T);
    const uint32_t c0 = t.c0, L = p.h * p.w;
    GlobalTensor<T> gs, gd;
    gs.SetGlobalBuffer(p.src, ~0ull / 8);
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> off_buf;
    // One repeat (256 B) of slack per buffer: a masked tail repeat's footprint is the whole repeat.
    pipe.InitBuffer(qin, 2, c0 * t.qp * es + 256);
    pipe.InitBuffer(qout, 2, t.q * c0 * es + 256);
    pipe.InitBuffer(off_buf, t.q * c0 * 4 + 256);
    // Byte offsets: element (pixel i, channel j) of a chunk comes from row j, pixel f(i).
    // A flip reverses the pixels within each block of fb (the whole plane, or p.blk): the first
    // block is built reversed, then whole blocks are doubled forward.
    const LocalTensor<int32_t> off = off_buf.Get<int32_t>();
    const uint32_t fb = p.flip ? (p.blk ? p.blk : L) : 1;
    const int32_t f0 = static_cast<int32_t>(fb - 1);
    for (uint32_t j = 0; j < c0; ++j) {
        const uint64_t bit[2] = {1ull << j, 0};
        Duplicate(off, static_cast<int32_t>((j * t.rs + f0) * es), VecMask(bit), 1, 1, 8);
    }
    const uint32_t first_block = std::min(fb, t.q);
    for (uint32_t s = 1; s < first_block; s *= 2)
        Adds(off[s * c0], off, static_cast<int32_t>(-static_cast<int64_t>(s) * es), std::min(s, first_block - s) * c0);
    for (uint32_t s = first_block; s < t.q; s *= 2)
        Adds(off[s * c0], off, static_cast<int32_t>(s * es), std::min(s, t.q - s) * c0);
    const LocalTensor<uint32_t> offs = off.ReinterpretCast<uint32_t>();
    for (uint64_t it = first; it < last; ++it) {
        ctx.scalar(6);  // item coordinates
        const uint32_t chunk = static_cast<uint32_t>(it % t.chunks);
        uint64_t rest = it / t.chunks;
        const uint32_t c1 = static_cast<uint32_t>(rest % t.c1);
        rest /= t.c1;
        const uint32_t i2 = static_cast<uint32_t>(rest % p.n2), i1 = static_cast<uint32_t>(rest / p.n2);
        const uint32_t q0 = chunk * t.q, q = std::min(t.q, L - q0);
        const uint32_t nch = std::min(c0, p.cg - c1 * c0);
        LocalTensor<T> src = qin.AllocTensor<T>();
        const GlobalTensor<T> from = gs[i1 * p.s1 + i2 * p.s2 + uint64_t{c1} * c0 * p.sc + q0];
        if (t.packed) {
            // The rows back to back: one burst; the copy zeroes up to its last 32 B block, a
            // duplicate the missing channels' rows beyond it.
            const uint32_t got = (nch * q * es + 31) / 32 * 32, all = c0 * q * es;
            if (all > got) Duplicate(src[got / es], T(0), (all - got) / es);
            DataCopyPad(src, from, DataCopyExtParams{1, nch * q * es, 0, 0});
        } else {
            if (nch < c0) Duplicate(src[nch * t.qp], T(0), uint64_t{c0 - nch} * t.qp);
            const uint32_t row_bytes = (q * es + 31) / 32 * 32;
            DataCopyPad(src, from,
                        DataCopyExtParams{nch, q * es, static_cast<uint32_t>(p.sc * es - q * es),
                                          (t.qp * es - row_bytes) / 32});
        }
        qin.EnQue(src);
        src = qin.DeQue<T>();
        LocalTensor<T> dst = qout.AllocTensor<T>();
        Gather(dst, src, offs, c0 * t.qp * es, uint64_t{q} * c0);
        qin.FreeTensor(src);
        qout.EnQue(dst);
        dst = qout.DeQue<T>();
        const uint64_t base = ((uint64_t{i1} * p.n2 + i2) * t.c1 + c1) * p.hd * p.wd * c0;
        if (p.fz_rows && p.blk) {
            // Each block (a row of the cube's weight matrix) to its K blocks, fz_rows rows apart.
            for (uint32_t b = 0; b * p.blk < q; ++b) {
                const uint64_t row = (q0 / p.blk) + b;
                DataCopyPad(gd[(uint64_t{c1} * p.blk * p.fz_rows + row) * c0], dst[b * p.blk * c0],
                            DataCopyExtParams{p.blk, 32, 0, (p.fz_rows - 1) * 32});
            }
        } else if (p.fz_rows) {
            DataCopyPad(gd[((uint64_t{c1} * L + q0) * p.fz_rows + i1) * c0], dst,
                        DataCopyExtParams{q, 32, 0, (p.fz_rows - 1) * 32});
        } else if (p.blk) {
            // Each block of blk pixels to its own (block, c1) place: (..., L / blk, C1, blk, C0).
            const uint64_t bbytes = uint64_t{p.blk} * c0 * es;
            const uint64_t at = ((uint64_t{i1} * p.n2 + i2) * (L / p.blk) + q0 / p.blk) * t.c1 * p.blk * c0 +
                                uint64_t{c1} * p.blk * c0;
            DataCopyPad(gd[at], dst,
                        DataCopyExtParams{q / p.blk, static_cast<uint32_t>(bbytes), 0,
                                          static_cast<uint32_t>((t.c1 - 1) * bbytes)});
        } else if (!p.spread()) {
            DataCopy(gd[base + uint64_t{q0} * c0], dst, q * c0);
        } else {
            // Whole source rows per chunk: each row spreads with sw - 1 empty pixels between.
            for (uint32_t r = 0; r * p.w < q; ++r) {
                const int64_t i = (q0 / p.w) + r, orow = i * p.sh + p.oh;
                if (orow < 0 || orow >= p.hd) continue;
                const int64_t jlo = p.ow >= 0 ? 0 : (-p.ow + p.sw - 1) / p.sw;
                const int64_t jhi =
                    std::min<int64_t>(p.w - 1, (static_cast<int64_t>(p.wd) - 1 - p.ow) / p.sw);
                if (jlo > jhi) continue;
                DataCopyPad(
                    gd[base +
                       (static_cast<uint64_t>(orow) * p.wd + static_cast<uint64_t>(jlo * p.sw + p.ow)) * c0],
                    dst[(r * p.w + static_cast<uint32_t>(jlo)) * c0],
                    DataCopyExtParams{static_cast<uint32_t>(jhi - jlo + 1), 32, 0, (p.sw - 1) * 32});
            }
        }
        qout.FreeTensor(dst);
    }
}

template <class T>
void nd_from_body(isa::IInstrSink& sink, const NdFromNc1hwc0Plan& p, const LayoutTiling& t) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * t.per_block;
    if (first >= t.items) return;
    const uint64_t last = std::min(t.items, first + t.per_block);
    constexpr uint32_t es = sizeof(T);
    const uint32_t c0 = t.c0;
    GlobalTensor<T> gs, gd;
    gs.SetGlobalBuffer(p.src, ~0ull / 8);
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> off_buf;
    pipe.InitBuffer(qin, 2, t.qp * c0 * es + 256);
    pipe.InitBuffer(qout, 2, c0 * t.qp * es + 256);
    pipe.InitBuffer(off_buf, c0 * t.qp * 4 + 256);
    // Byte offsets: element (channel j, pixel i) of the rows comes from (pixel i, channel j).
    const LocalTensor<int32_t> off = off_buf.Get<int32_t>();
    // Row 0's first 32 B by masked lanes, then doublings (32-byte aligned: qp is a multiple of 8).
    for (uint32_t i = 0; i < 8; ++i) {
        const uint64_t bit[2] = {1ull << i, 0};
        Duplicate(off, static_cast<int32_t>(i * c0 * es), VecMask(bit), 1, 1, 8);
    }
    for (uint32_t s = 8; s < t.qp; s *= 2)
        Adds(off[s], off, static_cast<int32_t>(s * c0 * es), std::min(s, t.qp - s));
    for (uint32_t j = 1; j < c0; ++j) Adds(off[j * t.qp], off, static_cast<int32_t>(j * es), t.qp);
    const LocalTensor<uint32_t> offs = off.ReinterpretCast<uint32_t>();
    const uint64_t c1n = (p.c + c0 - 1) / c0;
    for (uint64_t it = first; it < last; ++it) {
        ctx.scalar(6);  // item coordinates
        const uint32_t chunk = static_cast<uint32_t>(it % t.chunks);
        const uint64_t blk = it / t.chunks, img = blk / c1n, c1 = blk % c1n;
        const uint64_t q0 = uint64_t{chunk} * t.q;
        const uint32_t q = static_cast<uint32_t>(std::min<uint64_t>(t.q, p.l - q0));
        const uint32_t nch = static_cast<uint32_t>(std::min<uint64_t>(c0, p.c - c1 * c0));
        LocalTensor<T> src = qin.AllocTensor<T>();
        DataCopy(src, gs[((img * c1n + c1) * p.l + q0) * c0], q * c0);
        qin.EnQue(src);
        src = qin.DeQue<T>();
        LocalTensor<T> dst = qout.AllocTensor<T>();
        Gather(dst, src, offs, t.qp * c0 * es, uint64_t{t.qp} * c0);
        qin.FreeTensor(src);
        qout.EnQue(dst);
        dst = qout.DeQue<T>();
        DataCopyPad(gd[(img * p.c + c1 * c0) * p.l + q0], dst,
                    DataCopyExtParams{nch, q * es, (t.qp * es - (q * es + 31) / 32 * 32) / 32,
                                      static_cast<uint32_t>((p.l - q) * es)});
        qout.FreeTensor(dst);
    }
}

template <class T>
void fz_rows_body(isa::IInstrSink& sink, const FzFromRowsPlan& p, uint32_t rows, uint64_t per_block) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * per_block;
    if (first >= p.m) return;
    const uint64_t last = std::min<uint64_t>(p.m, first + per_block);
    constexpr uint32_t c0 = 32 / sizeof(T);
    const uint32_t kb = p.k / c0;
    GlobalTensor<T> gs, gd;
    gs.SetGlobalBuffer(p.src, ~0ull / 8);
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    pipe.InitBuffer(qin, 2, rows * p.k * uint32_t{sizeof(T)});
    pipe.InitBuffer(qout, 2, rows * p.k * uint32_t{sizeof(T)});
    for (uint64_t r0 = first; r0 < last; r0 += rows) {
        ctx.scalar(4);
        const uint32_t r = static_cast<uint32_t>(std::min<uint64_t>(rows, last - r0));
        LocalTensor<T> src = qin.AllocTensor<T>();
        DataCopy(src, gs[r0 * p.k], r * p.k);
        qin.EnQue(src);
        src = qin.DeQue<T>();
        LocalTensor<T> dst = qout.AllocTensor<T>();
        for (uint32_t b = 0; b < kb; ++b)  // K block b of every row, the rows back to back
            DataCopy(dst[b * r * c0], src[b * c0],
                     DataCopyParams{static_cast<uint16_t>(r), 1, static_cast<uint16_t>(kb - 1), 0});
        qin.FreeTensor(src);
        qout.EnQue(dst);
        dst = qout.DeQue<T>();
        DataCopyPad(gd[r0 * c0], dst, DataCopyExtParams{kb, r * 32, 0, (p.m - r) * 32});
        qout.FreeTensor(dst);
    }
}

void zero_body(isa::IInstrSink& sink, uint64_t addr, uint64_t bytes, uint64_t per_block, uint32_t tile) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * per_block;
    if (first >= bytes) return;
    const uint64_t n = std::min(per_block, bytes - first);
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer(addr + first, n / 4);
    TPipe pipe(ctx);
    TQue<TPosition::VECOUT> q;
    pipe.InitBuffer(q, 1, tile);
    LocalTensor<int32_t> z = q.AllocTensor<int32_t>();
    Duplicate(z, 0, tile / 4);
    q.EnQue(z);
    z = q.DeQue<int32_t>();
    for (uint64_t off = 0; off < n; off += tile) {
        ctx.scalar(1);
        DataCopy(g[off / 4], z, static_cast<uint32_t>(std::min<uint64_t>(tile, n - off) / 4));
    }
    q.FreeTensor(z);
}

template <class T>
void merge_body(isa::IInstrSink& sink, const PhaseMergePlan& p, uint32_t rows, uint32_t chunks, uint64_t per_block) {
    KernelContext ctx(sink);
    const uint64_t items = uint64_t{p.n} * p.c1 * p.sh * chunks, first = uint64_t{ctx.block_idx()} * per_block;
    if (first >= items) return;
    const uint64_t last = std::min(items, first + per_block);
    constexpr uint32_t c0 = 32 / sizeof(T);
    const uint32_t qw_max = (p.yw + p.sw - 1) / p.sw, rws = std::min(p.sw, p.yw);
    GlobalTensor<T> gd;
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    pipe.InitBuffer(qin, 2, rows * qw_max * 32);
    pipe.InitBuffer(qout, 2, rows * p.yw * 32 + 256);  // + a repeat: the zero fill's masked tail
    for (uint64_t it = first; it < last; ++it) {
        ctx.scalar(6);  // item coordinates
        const uint32_t chunk = static_cast<uint32_t>(it % chunks);
        uint64_t rest = it / chunks;
        const uint32_t rh = static_cast<uint32_t>(rest % p.sh);
        rest /= p.sh;
        const uint64_t c1 = rest % p.c1, img = rest / p.c1;
        const uint32_t qh = (p.yh - std::min(p.yh, rh) + p.sh - 1) / p.sh, r0 = chunk * rows;
        if (r0 >= qh) continue;
        const uint32_t r = std::min(rows, qh - r0);
        LocalTensor<T> out = qout.AllocTensor<T>();
        bool zeros = false;
        for (uint32_t rw = 0; rw < rws; ++rw) zeros = zeros || p.src[rh * p.sw + rw] == 0;
        if (zeros) Duplicate(out, T(0), r * p.yw * c0);
        for (uint32_t rw = 0; rw < rws; ++rw) {
            const uint64_t src = p.src[rh * p.sw + rw];
            if (src == 0) continue;
            ctx.scalar(2);
            const uint32_t qw = (p.yw - rw + p.sw - 1) / p.sw;
            GlobalTensor<T> gs;
            gs.SetGlobalBuffer(src, ~0ull / 8);
            LocalTensor<T> in = qin.AllocTensor<T>();
            DataCopy(in, gs[((img * p.c1 + c1) * qh + r0) * qw * c0], r * qw * c0);
            qin.EnQue(in);
            in = qin.DeQue<T>();
            // Pixel j of row i to Y's (i, j sw + rw): one copy when the rows are sw x qw long.
            const uint16_t gap = static_cast<uint16_t>(p.sw - 1);
            if (qw * p.sw == p.yw)
                DataCopy(out[rw * c0], in, DataCopyParams{static_cast<uint16_t>(r * qw), 1, 0, gap});
            else
                for (uint32_t i = 0; i < r; ++i)
                    DataCopy(out[(i * p.yw + rw) * c0], in[i * qw * c0],
                             DataCopyParams{static_cast<uint16_t>(qw), 1, 0, gap});
            qin.FreeTensor(in);
        }
        qout.EnQue(out);
        out = qout.DeQue<T>();
        const uint64_t row0 = uint64_t{r0} * p.sh + rh;
        DataCopyPad(gd[((img * p.c1 + c1) * p.yh + row0) * p.yw * c0], out,
                    DataCopyExtParams{r, p.yw * 32, 0, (p.sh - 1) * p.yw * 32});
        qout.FreeTensor(out);
    }
}

uint32_t vector_blocks(uint64_t items, const DeviceInfo& dev) {
    return static_cast<uint32_t>(std::clamp<uint64_t>(items, 1, std::max<uint32_t>(1, dev.vector_cores)));
}

// t.items over the vector cores: equal runs of per_block items, as many blocks as that needs.
void split_items(LayoutTiling& t, const DeviceInfo& dev) {
    t.block_dim = vector_blocks(t.items, dev);
    t.per_block = (t.items + t.block_dim - 1) / t.block_dim;
    t.block_dim = static_cast<uint32_t>((t.items + t.per_block - 1) / t.per_block);
}

}  // namespace

uint64_t Nc1hwc0Plan::dst_elems() const {
    const uint32_t c0 = 32 / isa::dtype_size(dtype);
    return uint64_t{n1} * n2 * ((cg + c0 - 1) / c0) * hd * wd * c0;
}

KernelDesc nc1hwc0_kernel(const Nc1hwc0Plan& p, const DeviceInfo& dev, const std::string& name,
                          const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (es != 2 && es != 4) throw InputError("NC1HWC0 conversion: needs a 2- or 4-byte type");
    LayoutTiling t;
    t.c0 = 32 / es;
    t.c1 = (p.cg + t.c0 - 1) / t.c0;
    const uint32_t L = p.h * p.w;
    // UB: two source buffers (c0 rows of qp), two destination chunks and the offset table.
    const uint64_t per_pixel = uint64_t{t.c0} * (4 * es + 4);
    const uint64_t qmax = std::max<uint64_t>(1, (dev.ub_bytes - std::min<uint64_t>(dev.ub_bytes, 5 * 256)) / per_pixel) / 16 * 16;
    if (p.blk && (p.spread() || L % p.blk))
        throw InputError("NC1HWC0 conversion: blocks of pixels need a plain conversion of whole blocks");
    if (p.fz_rows && (p.spread() || p.n2 != 1 || (p.blk ? p.n1 != 1 || p.fz_rows != L / p.blk : p.fz_rows != p.n1)))
        throw InputError("FRACTAL_Z conversion: one row per source item (or block), plain, n2 = 1");
    if (p.blk) {
        t.q = static_cast<uint32_t>(std::min<uint64_t>(L, std::max<uint64_t>(qmax, p.blk)) / p.blk * p.blk);
    } else if (p.flip) {
        t.q = L;
    } else if (p.spread()) {
        t.q = p.w * static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(qmax / p.w, p.h)));
    } else {
        t.q = static_cast<uint32_t>(std::min<uint64_t>(L, std::max<uint64_t>(16, qmax)));
    }
    t.qp = (t.q * es + 31) / 32 * 32 / es;
    if (uint64_t{t.c0} * (2 * t.qp * es + 2 * t.q * es + t.q * 4) + 5 * 256 > dev.ub_bytes)
        throw InputError("NC1HWC0 conversion: " + std::to_string(t.q) + " pixels per chunk do not fit UB (" +
                         std::to_string(dev.ub_bytes) + " bytes)");
    t.chunks = (L + t.q - 1) / t.q;
    t.packed = t.chunks == 1 && p.sc == L;
    t.rs = t.packed ? t.q : t.qp;
    t.items = uint64_t{p.n1} * p.n2 * t.c1 * t.chunks;
    split_items(t, dev);
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = t.block_dim;
    if (es == 2)
        kd.body = [p, t](isa::IInstrSink& s) { nc1hwc0_body<half>(s, p, t); };
    else
        kd.body = [p, t](isa::IInstrSink& s) { nc1hwc0_body<float>(s, p, t); };
    kd.bytes = (uint64_t{p.n1} * p.n2 * p.cg * L + p.dst_elems()) * es;
    if (dev.vector_bytes_per_cycle > 0)
        kd.min_compute_cycles =
            double(p.dst_elems() * es) /
            (dev.vector_bytes_per_cycle * std::max(1u, dev.vector_cores));  // every vector core (chip peak)
    return kd;
}

KernelDesc fz_from_rows_kernel(const FzFromRowsPlan& p, const DeviceInfo& dev, const std::string& name,
                               const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (es != 2 && es != 4) throw InputError("FRACTAL_Z conversion: needs a 2- or 4-byte type");
    const uint32_t c0 = 32 / es;
    if (p.k % c0 != 0 || p.k / c0 > 65536 || p.m > 65535)
        throw InputError("FRACTAL_Z conversion: rows of " + std::to_string(p.k) +
                         " elements (a multiple of C0, at most 65536 C0 blocks) and at most 65535 rows");
    // UB: two source and two destination chunks of whole rows.
    const uint64_t row = uint64_t{p.k} * es, fit = dev.ub_bytes / (4 * row);
    if (fit == 0)
        throw InputError("FRACTAL_Z conversion: four rows of " + std::to_string(p.k) + " elements exceed UB");
    const uint32_t blocks = vector_blocks(p.m, dev);
    const uint64_t per_block = (p.m + blocks - 1) / blocks;
    const uint32_t rows = static_cast<uint32_t>(std::min<uint64_t>({fit, per_block, 65535}));
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = static_cast<uint32_t>((p.m + per_block - 1) / per_block);
    if (es == 2)
        kd.body = [p, rows, per_block](isa::IInstrSink& s) { fz_rows_body<half>(s, p, rows, per_block); };
    else
        kd.body = [p, rows, per_block](isa::IInstrSink& s) { fz_rows_body<float>(s, p, rows, per_block); };
    kd.bytes = 2ull * p.m * row;
    return kd;
}

KernelDesc zero_kernel(uint64_t addr, uint64_t bytes, const DeviceInfo& dev, const std::string& name,
                       const std::string& type) {
    if (bytes % 32)
        throw InputError("zero fill: " + std::to_string(bytes) + " bytes is not a multiple of 32");
    const uint32_t tile = static_cast<uint32_t>(std::min<uint64_t>(dev.ub_bytes / 2 / 256 * 256, 16384));
    const uint32_t blocks = vector_blocks((bytes + 65535) / 65536, dev);
    uint64_t per_block = (bytes + blocks - 1) / blocks;
    per_block = (per_block + 31) / 32 * 32;
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = static_cast<uint32_t>((bytes + per_block - 1) / per_block);
    kd.body = [addr, bytes, per_block, tile](isa::IInstrSink& s) {
        zero_body(s, addr, bytes, per_block, tile);
    };
    kd.bytes = bytes;
    return kd;
}

KernelDesc phase_merge_kernel(const PhaseMergePlan& p, const DeviceInfo& dev, const std::string& name,
                              const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (es != 2 && es != 4) throw InputError("phase merge: needs a 2- or 4-byte type");
    if (p.sh == 0 || p.sw == 0 || p.src.size() != uint64_t{p.sh} * p.sw || p.sw > 65536)
        throw InputError("phase merge: one source per phase of the strides");
    // UB: two buffers of a chunk's phase rows and two of its Y rows.
    const uint64_t qw = (p.yw + p.sw - 1) / p.sw, qh = (p.yh + p.sh - 1) / p.sh;
    const uint64_t per_row = 64 * (qw + p.yw), room = dev.ub_bytes - std::min<uint64_t>(dev.ub_bytes, 1024);
    const uint32_t rows = static_cast<uint32_t>(std::min<uint64_t>({room / per_row, qh, 65535 / qw}));
    if (rows == 0)
        throw InputError("phase merge: a row of " + std::to_string(p.yw) + " pixels does not fit UB (" +
                         std::to_string(dev.ub_bytes) + " bytes)");
    const uint32_t chunks = static_cast<uint32_t>((qh + rows - 1) / rows);
    const uint64_t items = uint64_t{p.n} * p.c1 * p.sh * chunks;
    const uint32_t blocks = vector_blocks(items, dev);
    const uint64_t per_block = (items + blocks - 1) / blocks;
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = static_cast<uint32_t>((items + per_block - 1) / per_block);
    if (es == 2)
        kd.body = [p, rows, chunks, per_block](isa::IInstrSink& s) { merge_body<half>(s, p, rows, chunks, per_block); };
    else
        kd.body = [p, rows, chunks, per_block](isa::IInstrSink& s) { merge_body<float>(s, p, rows, chunks, per_block); };
    const uint64_t y = uint64_t{p.n} * p.c1 * p.yh * p.yw * 32;
    uint64_t read = 0;
    for (uint32_t rh = 0; rh < p.sh; ++rh)
        for (uint32_t rw = 0; rw < p.sw; ++rw)
            if (p.src[rh * p.sw + rw] != 0 && rh < p.yh && rw < p.yw)
                read += uint64_t{p.n} * p.c1 * ((p.yh - rh + p.sh - 1) / p.sh) * ((p.yw - rw + p.sw - 1) / p.sw) * 32;
    kd.bytes = y + read;
    return kd;
}

KernelDesc nd_from_nc1hwc0_kernel(const NdFromNc1hwc0Plan& p, const DeviceInfo& dev, const std::string& name,
                                  const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (es != 2 && es != 4) throw InputError("NC1HWC0 -> ND conversion: needs a 2- or 4-byte type");
    LayoutTiling t;
    t.c0 = 32 / es;
    t.c1 = (p.c + t.c0 - 1) / t.c0;
    // UB: two source chunks (pixels x C0), two row blocks (C0 x pixels) and the offset table.
    const uint64_t per_pixel = uint64_t{t.c0} * (4 * es + 4);
    const uint64_t room = dev.ub_bytes - std::min<uint64_t>(dev.ub_bytes, 5 * 256);
    const uint64_t qmax = std::max<uint64_t>(1, room / per_pixel) / 16 * 16;
    t.q = static_cast<uint32_t>(std::min<uint64_t>(p.l, std::max<uint64_t>(16, qmax)));
    t.qp = (t.q * es + 31) / 32 * 32 / es;
    if (uint64_t{t.c0} * t.qp * (4 * es + 4) + 5 * 256 > dev.ub_bytes)
        throw InputError("NC1HWC0 -> ND conversion: " + std::to_string(t.q) +
                         " pixels per chunk do not fit UB");
    t.chunks = static_cast<uint32_t>((p.l + t.q - 1) / t.q);
    t.items = uint64_t{p.n} * t.c1 * t.chunks;
    split_items(t, dev);
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = t.block_dim;
    if (es == 2)
        kd.body = [p, t](isa::IInstrSink& s) { nd_from_body<half>(s, p, t); };
    else
        kd.body = [p, t](isa::IInstrSink& s) { nd_from_body<float>(s, p, t); };
    const uint64_t src_elems = uint64_t{p.n} * t.c1 * t.c0 * p.l;
    kd.bytes = (uint64_t{p.n} * p.c * p.l + src_elems) * es;
    if (dev.vector_bytes_per_cycle > 0)
        kd.min_compute_cycles =
            double(src_elems * es) / (dev.vector_bytes_per_cycle * std::max(1u, dev.vector_cores));
    return kd;
}

}  // namespace sfumato::ops
