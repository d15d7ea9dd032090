// The weight-gradient convolution kernel and its tiling (see conv_wgrad_kernel.h). One step =
// one chunk of output rows of one image for one work item (output tile and image share).
#include "runtime/ops/conv_wgrad_kernel.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/kernel/api.h"
#include "runtime/ops/cube_store.h"
#include "runtime/ops/op_util.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

template <class T, class U>
class WgradKernel {
public:
    WgradKernel(isa::IInstrSink& sink, const ConvWgradPlan& p) : m_ctx(sink), m_p(p), m_pipe(m_ctx) {}

    void run() {
        const bool coupled = m_ctx.sink().core_kind() == isa::CoreKind::Coupled;
        const ConvWgradPlan& p = m_p;
        m_pipe.InitBuffer(m_qa1, 2, p.base_m * rup(p.rows_out * p.ow, kC0) * kEs);
        m_pipe.InitBuffer(m_qb1, 2, p.c1_l1 * p.rows_in * p.wi * kC0 * kEs);
        m_pipe.InitBuffer(m_qa2, 2, p.base_m * p.base_k * kEs);
        m_pipe.InitBuffer(m_qb2, 2, p.base_k * p.base_n * kEs);
        m_pipe.InitBuffer(m_qc1, 1, p.base_m * p.base_n * 4);
        if (coupled) m_pipe.InitBuffer(m_qc2, 1, p.base_m * ub_row(p.base_n) * uint32_t{sizeof(U)});
        m_gx.SetGlobalBuffer(p.x5, ~0ull / 8);
        m_gdy.SetGlobalBuffer(p.dy, ~0ull / 8);
        m_gdw.SetGlobalBuffer(p.dw, ~0ull / 8);
        Step cur = first_of(m_ctx.block_idx());
        if (cur.valid) load(cur);
        LocalTensor<float> c;
        for (; cur.valid; cur = next(cur)) {
            m_ctx.scalar(2);
            const Step nx = next(cur);
            if (nx.valid) load(nx);
            if (cur.first) c = m_qc1.AllocTensor<float>();
            compute(cur, c);
            if (!cur.last) continue;
            m_qc1.EnQue(c);
            c = m_qc1.DeQue<float>();
            drain(cur, c, coupled);
            m_qc1.FreeTensor(c);
        }
    }

private:
    static constexpr uint32_t kEs = sizeof(T), kC0 = 32 / kEs, kFrac = isa::kFractalBytes / kEs;

    struct Step {
        bool valid = false, first = false, last = false;
        uint32_t item = 0, img = 0, img_end = 0, chunk = 0, part = 0;
        uint32_t m0 = 0, tm = 0, n0 = 0, tn = 0, c1_lo = 0, c1c = 0, k_start = 0;
        uint32_t lo = 0, pc = 0;                // first output row, pixels of the chunk
        uint32_t r0 = 0, rows = 0, pt = 0, pb = 0;  // the input-row window
    };

    static uint32_t ub_row(uint32_t tn) {
        return (tn * uint32_t{sizeof(U)} + 31) / 32 * 32 / uint32_t{sizeof(U)};
    }
    uint32_t chunks() const { return (m_p.oh + m_p.rows_out - 1) / m_p.rows_out; }

    Step first_of(uint32_t item) const {
        const ConvWgradPlan& p = m_p;
        Step s;
        if (item >= p.items()) return s;
        const uint32_t tiles = p.tiles_m * p.tiles_n, tile = item % tiles;
        s.item = item, s.part = item / tiles;
        s.img = static_cast<uint32_t>(uint64_t{s.part} * p.n / p.parts);
        s.img_end = static_cast<uint32_t>(uint64_t{s.part + 1} * p.n / p.parts);
        if (s.img >= s.img_end) return s;
        s.m0 = tile / p.tiles_n * p.base_m, s.n0 = tile % p.tiles_n * p.base_n;
        s.tm = std::min(p.base_m, p.m - s.m0), s.tn = std::min(p.base_n, p.ncol() - s.n0);
        const uint32_t L = p.kh * p.kw * kC0;
        s.c1_lo = s.n0 / L, s.c1c = (s.n0 + s.tn - 1) / L - s.c1_lo + 1;
        s.k_start = s.n0 - s.c1_lo * L;
        s.first = true;
        return window(s, 0);
    }
    // The chunk's output rows and the input rows they read, clipped to the image (the window's
    // pads are what lies outside it).
    Step window(Step s, uint32_t chunk) const {
        const ConvWgradPlan& p = m_p;
        s.valid = true;
        s.chunk = chunk;
        s.lo = chunk * p.rows_out;
        const uint32_t hi = std::min(p.oh, s.lo + p.rows_out) - 1;
        s.pc = (hi - s.lo + 1) * p.ow;
        const int64_t ih_lo = int64_t{s.lo} * p.sh - p.pt, ih_hi = int64_t{hi} * p.sh - p.pt + p.ext_h() - 1;
        const int64_t r0 = std::max<int64_t>(0, ih_lo), r1 = std::min<int64_t>(p.hi - 1, ih_hi);
        s.r0 = static_cast<uint32_t>(r0), s.rows = static_cast<uint32_t>(r1 - r0 + 1);
        s.pt = static_cast<uint32_t>(r0 - ih_lo);
        const int64_t need = int64_t{hi - s.lo} * p.sh + p.ext_h();
        s.pb = static_cast<uint32_t>(std::max<int64_t>(0, need - s.rows - s.pt));
        s.last = chunk + 1 == chunks() && s.img + 1 == s.img_end;
        return s;
    }
    Step next(const Step& s) const {
        if (s.chunk + 1 < chunks()) {
            Step n = window(s, s.chunk + 1);
            n.first = false;
            return n;
        }
        if (s.img + 1 < s.img_end) {
            Step n = s;
            ++n.img;
            n = window(n, 0);
            n.first = false;
            return n;
        }
        Step n = first_of(s.item + m_ctx.block_num());
        return n;
    }

    void load(const Step& s) {
        const ConvWgradPlan& p = m_p;
        m_ctx.scalar(8);  // item, image and window coordinates
        const uint32_t mp = rup(s.tm, 16), pix = p.oh * p.ow;
        LocalTensor<T> a1 = m_qa1.template AllocTensor<T>();
        if (p.dy_5hd) {
            // Per channel block of the tile, the chunk's pixels: one run of C0-wide rows, placed
            // as NZ fractals of dY^T (16 pixels x C0 channels), rup(pc, 16) rows per block.
            const uint64_t m1_all = (p.m + kC0 - 1) / kC0;
            const uint32_t blocks = mp / kC0, rows = rup(s.pc, 16);
            DataCopyPad(a1, m_gdy[((uint64_t{s.img} * m1_all + s.m0 / kC0) * pix + uint64_t{s.lo} * p.ow) * kC0],
                        DataCopyExtParams{blocks, s.pc * kC0 * kEs, (pix - s.pc) * kC0 * kEs, rows - s.pc});
        } else if (const GlobalTensor<T> dy = m_gdy[(uint64_t{s.img} * p.m + s.m0) * pix + uint64_t{s.lo} * p.ow];
                   p.nd2nz_instr) {
            DataCopy(a1, dy,
                     Nd2NzParams{1, static_cast<uint16_t>(s.tm), static_cast<uint16_t>(s.pc), 0, pix,
                                 static_cast<uint16_t>(mp), 1, 0});
        } else {
            // One C0 column group per copy (the copy zeroes a partial group's tail in L1).
            for (uint32_t g = 0; g * kC0 < s.pc; ++g) {
                const uint32_t len = std::min(kC0, s.pc - g * kC0);
                DataCopyPad(a1[g * mp * kC0], dy[g * kC0], DataCopyExtParams{s.tm, len * kEs, (pix - len) * kEs, 0});
            }
        }
        m_qa1.EnQue(a1);
        LocalTensor<T> b1 = m_qb1.template AllocTensor<T>();
        const uint64_t plane = uint64_t{p.hi} * p.wi * kC0;  // one channel block of the image
        const uint32_t win = s.rows * p.wi * kC0 * kEs;
        DataCopyPad(b1, m_gx[(uint64_t{s.img} * p.c1 + s.c1_lo) * plane + uint64_t{s.r0} * p.wi * kC0],
                    DataCopyExtParams{s.c1c, win, static_cast<uint32_t>(plane * kEs - win), 0});
        m_qb1.EnQue(b1);
    }

    void compute(const Step& s, const LocalTensor<float>& c) {
        const ConvWgradPlan& p = m_p;
        const uint32_t m1 = rup(s.tm, 16) / 16, np = rup(s.tn, 16);
        LocalTensor<T> a1 = m_qa1.template DeQue<T>();
        LocalTensor<T> b1 = m_qb1.template DeQue<T>();
        const uint32_t rows = rup(s.pc, 16);  // dY in NC1HWC0: pixel rows per channel block in L1
        if (p.dy_5hd && rows > s.pc)
            // The last fractal's pixel rows past the chunk: zeros (K padding of the mads; load3d
            // zeroes B's, and a stale value could be an infinity).
            InitConstValue(a1[s.pc * kC0], InitConstValueParams{static_cast<uint16_t>(m1),
                                                                static_cast<uint16_t>(rows - s.pc),
                                                                static_cast<uint16_t>(s.pc), 0.0});
        for (uint32_t ks = 0; ks < s.pc; ks += p.base_k) {
            m_ctx.scalar(2);
            const uint32_t valid = std::min(p.base_k, s.pc - ks), kk = rup(valid, kC0), k1 = kk / kC0,
                           kb0 = ks / kC0;
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            if (p.dy_5hd) {
                // Fractal (channel block mb, pixel block kb) of dY^T, transposed: L0A's (mb, kb).
                for (uint32_t mb = 0; mb < m1; ++mb)
                    LoadData(a2[mb * k1 * kFrac], a1,
                             LoadData2DParams{static_cast<uint16_t>(mb * (rows / 16) + kb0), static_cast<uint16_t>(k1),
                                              1, 0, true});
            } else {
                for (uint32_t kb = 0; kb < k1; ++kb)
                    LoadData(a2[kb * kFrac], a1,
                             LoadData2DParams{static_cast<uint16_t>((kb0 + kb) * m1), static_cast<uint16_t>(m1), 1,
                                              static_cast<uint16_t>(k1 - 1), false});
            }
            m_qa2.EnQue(a2);
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            LoadData3DParams l3;
            l3.l1H = static_cast<uint16_t>(s.rows), l3.l1W = static_cast<uint16_t>(p.wi),
            l3.c1 = static_cast<uint16_t>(s.c1c);
            l3.filterH = static_cast<uint8_t>(p.kh), l3.filterW = static_cast<uint8_t>(p.kw);
            l3.strideH = static_cast<uint8_t>(p.sh), l3.strideW = static_cast<uint8_t>(p.sw);
            l3.dilationH = static_cast<uint8_t>(p.dh), l3.dilationW = static_cast<uint8_t>(p.dw_);
            l3.padList[0] = static_cast<uint8_t>(p.pl), l3.padList[1] = static_cast<uint8_t>(p.pr);
            l3.padList[2] = static_cast<uint8_t>(s.pt), l3.padList[3] = static_cast<uint8_t>(s.pb);
            l3.mStartPt = static_cast<uint16_t>(ks), l3.mExtension = static_cast<uint16_t>(rup(valid, 16));
            l3.kStartPt = static_cast<uint16_t>(s.k_start), l3.kExtension = static_cast<uint16_t>(np);
            l3.transpose = true;
            LoadData(b2, b1, l3);
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(s.tn), static_cast<uint16_t>(kk),
                            s.first && ks == 0});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
        }
        m_qa1.FreeTensor(a1);
        m_qb1.FreeTensor(b1);
    }

    void drain(const Step& s, const LocalTensor<float>& c, bool coupled) {
        const ConvWgradPlan& p = m_p;
        const uint32_t ncol = p.ncol();
        FixpipeParams fp{static_cast<uint16_t>(s.tn), static_cast<uint16_t>(s.tm),
                         static_cast<uint16_t>(rup(s.tm, 16)), ncol};
        store_l0c_tile(m_gdw[(uint64_t{s.part} * p.m + s.m0) * ncol + s.n0], c, fp, coupled, m_qc2, ub_row(s.tn),
                       s.tm, s.tn, ncol);
    }

    KernelContext m_ctx;
    const ConvWgradPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::A1> m_qa1;
    TQue<TPosition::B1> m_qb1;
    TQue<TPosition::A2> m_qa2;
    TQue<TPosition::B2> m_qb2;
    TQue<TPosition::CO1> m_qc1;
    TQue<TPosition::CO2> m_qc2;
    GlobalTensor<T> m_gx, m_gdy;
    GlobalTensor<U> m_gdw;
};

template <class T>
void run_t(isa::IInstrSink& sink, const ConvWgradPlan& p) {
    switch (p.out) {
        case isa::DType::FP16: return WgradKernel<T, half>(sink, p).run();
        case isa::DType::BF16: return WgradKernel<T, bfloat16>(sink, p).run();
        default: return WgradKernel<T, float>(sink, p).run();
    }
}

uint64_t oihw_ub(const OihwPlan& p) {
    const uint64_t es = isa::dtype_size(p.dtype), row_in = uint64_t{p.c1()} * p.taps * p.c0() * es,
                   row_out = uint64_t{p.c} * p.taps * es;
    const uint64_t table = (uint64_t{p.c} * p.taps + 64) * 4;
    return 2 * (row_in + 256) + 2 * (row_out + 256) + table + 256;
}

// The gather's byte offsets: output (c, t) comes from ((c / C0) * taps + t) * C0 + c % C0 (the
// first channel block's entries lane by lane, then whole blocks doubled with adds).
LocalTensor<uint32_t> oihw_offsets(KernelContext& ctx, const LocalTensor<int32_t>& off, uint32_t channels,
                                   uint32_t taps, uint32_t c0, uint32_t es) {
    const uint32_t first_block = std::min(channels, c0) * taps, n_out = channels * taps;
    for (uint32_t e = 0; e < first_block; ++e) {
        const uint32_t c = e / taps, t = e % taps;
        const uint64_t bit[2] = {1ull << (e % 64), 0};
        ctx.scalar(2);
        Duplicate(off[e / 64 * 64], static_cast<int32_t>((t * c0 + c) * es), VecMask(bit), 1, 1, 8);
    }
    const uint32_t unit = c0 * taps;  // entries of one channel block
    for (uint32_t s = unit; s < n_out; s *= 2)
        Adds(off[s], off, static_cast<int32_t>(s * es), std::min(s, n_out - s));
    return off.ReinterpretCast<uint32_t>();
}

// wgrad_finish_kernel: items of `len` elements (a row, or a chunk of the flat M x ncol).
template <class T>
void finish_body(isa::IInstrSink& sink, const WgradFinishPlan& p, uint32_t len, uint64_t items, uint64_t per_block) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * per_block;
    if (first >= items) return;
    const uint64_t last = std::min(items, first + per_block);
    constexpr uint32_t es = sizeof(T);
    const uint64_t total = uint64_t{p.m} * p.ncol();
    const uint32_t n_out = p.oihw ? p.c * p.taps : len;
    GlobalTensor<float> gs;
    GlobalTensor<T> gd;
    gs.SetGlobalBuffer(p.src, ~0ull / 8);
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> acc_buf, cast_buf, off_buf;
    pipe.InitBuffer(qin, 2, len * 4 + 256);
    pipe.InitBuffer(acc_buf, len * 4 + 256);
    pipe.InitBuffer(qout, 2, n_out * es + 256);
    LocalTensor<uint32_t> offs;
    if (p.oihw) {
        pipe.InitBuffer(cast_buf, len * es + 256);
        pipe.InitBuffer(off_buf, (n_out + 64) * 4);
        offs = oihw_offsets(ctx, off_buf.Get<int32_t>(), p.c, p.taps, p.c0(), es);
    }
    const LocalTensor<float> acc = acc_buf.Get<float>();
    for (uint64_t it = first; it < last; ++it) {
        ctx.scalar(4);
        const uint64_t e0 = it * len;
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(len, total - e0));
        auto part = [&](uint32_t k) {
            LocalTensor<float> in = qin.AllocTensor<float>();
            DataCopy(in, gs[k * total + e0], n);
            qin.EnQue(in);
            return qin.DeQue<float>();
        };
        LocalTensor<float> a = part(0), b = part(1);
        Add(acc, a, b, n);
        qin.FreeTensor(a);
        qin.FreeTensor(b);
        for (uint32_t k = 2; k < p.parts; ++k) {
            b = part(k);
            Add(acc, acc, b, n);
            qin.FreeTensor(b);
        }
        LocalTensor<T> out = qout.AllocTensor<T>();
        if (p.oihw) {
            const LocalTensor<T> h = cast_buf.Get<T>();
            if constexpr (es == 4)
                Adds(h, acc, 0.0f, n);
            else
                Cast(h, acc, RoundMode::RINT, n);
            Gather(out, h, offs, n * es, n_out);
        } else if constexpr (es == 4) {
            Adds(out, acc, 0.0f, n);
        } else {
            Cast(out, acc, RoundMode::RINT, n);
        }
        qout.EnQue(out);
        out = qout.DeQue<T>();
        DataCopy(gd[p.oihw ? it * n_out : e0], out, p.oihw ? n_out : n);
        qout.FreeTensor(out);
    }
}

template <class T>
void oihw_body(isa::IInstrSink& sink, const OihwPlan& p, uint32_t per_block) {
    KernelContext ctx(sink);
    const uint32_t first = ctx.block_idx() * per_block;
    if (first >= p.m) return;
    const uint32_t last = std::min(p.m, first + per_block);
    constexpr uint32_t es = sizeof(T);
    const uint32_t c0 = p.c0(), n_in = p.c1() * p.taps * c0, n_out = p.c * p.taps;
    GlobalTensor<T> gs, gd;
    gs.SetGlobalBuffer(p.src, ~0ull / 8);
    gd.SetGlobalBuffer(p.dst, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> off_buf;
    pipe.InitBuffer(qin, 2, n_in * es + 256);
    pipe.InitBuffer(qout, 2, n_out * es + 256);
    pipe.InitBuffer(off_buf, (n_out + 64) * 4);
    const LocalTensor<uint32_t> offs = oihw_offsets(ctx, off_buf.Get<int32_t>(), p.c, p.taps, c0, es);
    for (uint32_t r = first; r < last; ++r) {
        ctx.scalar(2);
        LocalTensor<T> in = qin.AllocTensor<T>();
        DataCopy(in, gs[uint64_t{r} * n_in], n_in);
        qin.EnQue(in);
        in = qin.DeQue<T>();
        LocalTensor<T> out = qout.AllocTensor<T>();
        Gather(out, in, offs, n_in * es, n_out);
        qin.FreeTensor(in);
        qout.EnQue(out);
        out = qout.DeQue<T>();
        DataCopy(gd[uint64_t{r} * n_out], out, n_out);
        qout.FreeTensor(out);
    }
}

}  // namespace

KernelDesc oihw_kernel(const OihwPlan& p, const DeviceInfo& dev, const std::string& name, const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (es != 2 && es != 4) throw InputError("OIHW conversion: needs a 2- or 4-byte type");
    if (oihw_ub(p) > dev.ub_bytes)
        throw InputError("OIHW conversion: a row of " + std::to_string(p.c) + " x " + std::to_string(p.taps) +
                         " does not fit UB");
    const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
    const uint32_t per_block = (p.m + std::min(p.m, cores) - 1) / std::min(p.m, cores);
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = (p.m + per_block - 1) / per_block;
    if (es == 2)
        kd.body = [p, per_block](isa::IInstrSink& s) { oihw_body<half>(s, p, per_block); };
    else
        kd.body = [p, per_block](isa::IInstrSink& s) { oihw_body<float>(s, p, per_block); };
    kd.bytes = uint64_t{p.m} * (uint64_t{p.c1()} * p.c0() + p.c) * p.taps * es;
    return kd;
}

KernelDesc wgrad_finish_kernel(const WgradFinishPlan& p, const DeviceInfo& dev, const std::string& name,
                               const std::string& type) {
    const uint32_t es = isa::dtype_size(p.dtype);
    if (p.dtype != isa::DType::FP16 && p.dtype != isa::DType::BF16 && p.dtype != isa::DType::FP32)
        throw InputError("weight-gradient finish: needs fp16, bf16 or fp32");
    if (p.parts < 2) throw InputError("weight-gradient finish: needs two shares or more");
    const uint64_t total = uint64_t{p.m} * p.ncol(), room = dev.ub_bytes - std::min<uint64_t>(dev.ub_bytes, 1536);
    uint32_t len = 0;
    uint64_t items = 0;
    if (p.oihw) {  // one row per item: two inputs, the sum, its conversion, two outputs, the table
        len = p.ncol();
        if (uint64_t{len} * (12 + es) + 2ull * p.c * p.taps * es + (uint64_t{p.c} * p.taps + 64) * 4 > room)
            throw InputError("weight-gradient finish: a row of " + std::to_string(len) + " does not fit UB");
        items = p.m;
    } else {  // chunks of whole elements (the rows are dW's already)
        len = static_cast<uint32_t>(std::min<uint64_t>(room / (12 + 2 * es) / 64 * 64, (total + 63) / 64 * 64));
        if (len == 0) throw InputError("weight-gradient finish: UB too small");
        items = (total + len - 1) / len;
    }
    const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
    const uint64_t per_block = (items + std::min<uint64_t>(items, cores) - 1) / std::min<uint64_t>(items, cores);
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = static_cast<uint32_t>((items + per_block - 1) / per_block);
    if (p.dtype == isa::DType::FP16)
        kd.body = [p, len, items, per_block](isa::IInstrSink& s) { finish_body<half>(s, p, len, items, per_block); };
    else if (p.dtype == isa::DType::BF16)
        kd.body = [p, len, items, per_block](isa::IInstrSink& s) { finish_body<bfloat16>(s, p, len, items, per_block); };
    else
        kd.body = [p, len, items, per_block](isa::IInstrSink& s) { finish_body<float>(s, p, len, items, per_block); };
    kd.bytes = total * (4ull * p.parts + es);
    return kd;
}

void plan_conv_wgrad(ConvWgradPlan& p, const DeviceInfo& dev) {
    for (uint32_t v : {p.kh, p.kw, p.sh, p.sw, p.dh, p.dw_, p.pt, p.pb, p.pl, p.pr})
        if (v > 255)
            throw InputError("conv weight gradient: kernel, stride, dilation and pads must be at most 255 (load3d fields)");
    if (p.pt >= p.ext_h() || p.pb >= p.ext_h())
        throw InputError("conv weight gradient: top/bottom pads must be smaller than the dilated kernel height");
    const uint32_t es = isa::dtype_size(p.in), c0 = p.c0(), L = p.kh * p.kw * c0, ncol = p.ncol();
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores);
    const double rate = dev.core_read_max_bytes_per_cycle > 0 ? dev.core_read_max_bytes_per_cycle : 64.0;
    const double macs = dev.cube_macs_fp16 > 0 ? dev.cube_macs_fp16 : 4096.0;
    const bool coupled = dev.arch == "coupled";
    const uint32_t osz = isa::dtype_size(p.out);
    double best = -1;
    ConvWgradPlan t = p;
    for (uint32_t bm = 256; bm >= 16; bm /= 2) {
        if (bm > rup(p.m, 16) && bm / 2 >= rup(p.m, 16)) continue;
        for (uint32_t bn = 256; bn >= 16; bn /= 2) {
            if (bn > rup(ncol, 16) && bn / 2 >= rup(ncol, 16)) continue;
            t.base_m = std::min(bm, rup(p.m, 16)), t.base_n = std::min(bn, rup(ncol, 16));
            if (uint64_t{t.base_m} * t.base_n * 4 > dev.l0c_bytes) continue;
            if (coupled && uint64_t{t.base_m} * rup(t.base_n * osz, 32) > dev.ub_bytes) continue;
            uint32_t bk = 256;
            while (bk > 16 && (2ull * t.base_m * bk * es > dev.l0a_bytes || 2ull * bk * t.base_n * es > dev.l0b_bytes))
                bk -= 16;
            if (2ull * t.base_m * bk * es > dev.l0a_bytes || 2ull * bk * t.base_n * es > dev.l0b_bytes) continue;
            t.base_k = bk;
            t.c1_l1 = std::min(p.c1, (t.base_n + L - 2) / L + 1);
            // The most output rows whose chunk (dY rows and the input window) fits L1 twice.
            uint32_t ro = 0;
            for (uint32_t r = p.oh; r >= 1 && ro == 0; --r) {
                const uint32_t rin = std::min(p.hi, (r - 1) * p.sh + p.ext_h());
                const uint64_t bytes = 2ull * (uint64_t{t.base_m} * rup(r * p.ow, c0) + uint64_t{t.c1_l1} * rin * p.wi * c0) * es;
                if (bytes <= dev.l1_bytes && r * p.ow <= 65535) ro = r;
            }
            if (ro == 0) continue;
            t.rows_out = ro, t.rows_in = std::min(p.hi, (ro - 1) * p.sh + p.ext_h());
            t.tiles_m = (p.m + t.base_m - 1) / t.base_m, t.tiles_n = (ncol + t.base_n - 1) / t.base_n;
            const uint32_t tiles = t.tiles_m * t.tiles_n;
            t.parts = std::max<uint32_t>(1, std::min(p.n, cores / tiles));
            t.block_dim = std::min(t.items(), cores);
            const double waves = std::ceil(double(t.items()) / t.block_dim);
            const double pixels = std::ceil(double(p.n) / t.parts) * p.oh * p.ow;
            const double chunks = std::ceil(double(p.n) / t.parts) * std::ceil(double(p.oh) / ro);
            const double cube = double(t.base_m) * t.base_n * pixels / macs * (16.0 / c0);
            const double load =
                (double(t.base_m) * pixels + chunks * double(t.c1_l1) * t.rows_in * p.wi * c0) * es / rate;
            const double cost = waves * std::max(cube, load) + double(t.parts) * t.base_m * t.base_n * 4.0 / rate;
            if (best < 0 || cost < best - 1e-9) {
                best = cost;
                const uint64_t x5 = p.x5, dy = p.dy, dw = p.dw;
                p = t;
                p.x5 = x5, p.dy = dy, p.dw = dw;
            }
        }
    }
    if (best < 0)
        throw InputError("conv weight gradient: L0/L1 buffers too small for a 16 x 16 tile and one output row");
    p.nd2nz_instr = !coupled;
}

void run_conv_wgrad_kernel(isa::IInstrSink& sink, const ConvWgradPlan& p) {
    switch (p.in) {
        case isa::DType::FP16: return run_t<half>(sink, p);
        case isa::DType::BF16: return run_t<bfloat16>(sink, p);
        case isa::DType::FP32: return run_t<float>(sink, p);
        default: throw InputError(std::string("conv weight gradient: unsupported input type ") + isa::dtype_name(p.in));
    }
}

}  // namespace sfumato::ops
