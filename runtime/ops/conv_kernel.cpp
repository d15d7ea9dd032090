// The cube convolution kernel and its tiling (see conv_kernel.h). One step = one chunk of
// input-channel blocks of one output tile (output channels x pixels of one image and group).
#include "runtime/ops/conv_kernel.h"

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

// Input rows a run of `pixels` consecutive output pixels can need.
uint32_t window_rows(const ConvCubePlan& p, uint32_t pixels) {
    const uint32_t out_rows = std::min(p.oh, (pixels - 1 + p.ow - 1) / p.ow + 1);
    return std::min(p.hi, (out_rows - 1) * p.sh + p.ext_h());
}

template <class T, class U>
class ConvKernel {
public:
    ConvKernel(isa::IInstrSink& sink, const ConvCubePlan& p) : m_ctx(sink), m_p(p), m_pipe(m_ctx) {}
    // Tiles [first, end) of the plan's weight-major order (run_conv_phases), not the block's share.
    ConvKernel(isa::IInstrSink& sink, const ConvCubePlan& p, uint32_t first, uint32_t end)
        : m_ctx(sink), m_p(p), m_pipe(m_ctx), m_range(true), m_first(first), m_end(end) {}

    void run() {
        const bool coupled = m_ctx.sink().core_kind() == isa::CoreKind::Coupled;
        const ConvCubePlan& p = m_p;
        m_pipe.InitBuffer(m_qa1, p.l1_buffers, a1_bytes());
        m_pipe.InitBuffer(m_qb1, p.l1_buffers, p.c1_l1 * p.rows_l1 * p.wi * kC0 * kEs);
        const uint32_t la = p.y_5hd ? p.base_n : p.base_m, lb = p.y_5hd ? p.base_m : p.base_n;
        m_pipe.InitBuffer(m_qa2, 2, la * p.base_k * kEs);
        m_pipe.InitBuffer(m_qb2, 2, p.base_k * lb * kEs);
        m_pipe.InitBuffer(m_qc1, p.l0c_buffers, p.base_m * p.base_n * 4);
        if (coupled)
            m_pipe.InitBuffer(m_qc2, p.l0c_buffers, p.base_m * ub_row(p.base_n) * uint32_t{sizeof(U)});
        // The padding rows' fill (y_5hd, M not whole fractals): by the MTE1 before the MTE2 loads
        // the rows beside them, on an event of its own when the A1 and B1 queues leave one (else,
        // as on the coupled part's 4 ids, after the load, when the MTE1 takes the buffer).
        m_fill_late = m_ctx.sink().event_ids() <= 2 * p.l1_buffers;
        if (p.y_5hd && p.mg % 16 != 0 && !m_fill_late)
            m_pad_event = m_ctx.alloc_event(Pipe::MTE1, Pipe::MTE2, "conv padding rows");
        m_gx.SetGlobalBuffer(p.x5, ~0ull / 8);
        m_gw.SetGlobalBuffer(p.w5, ~0ull / 8);
        m_gy.SetGlobalBuffer(p.y, ~0ull / 8);
        m_gb.SetGlobalBuffer(p.bias, ~0ull / 8);
        // This core's tiles: a contiguous range of the weight-major order (conv_kernel.h).
        const uint64_t t = p.tiles(), b = m_ctx.block_idx(), nb = std::max<uint32_t>(1, m_ctx.block_num());
        if (!m_range) m_first = static_cast<uint32_t>(t * b / nb), m_end = static_cast<uint32_t>(t * (b + 1) / nb);
        Step cur = at(m_first, 0);
        if (cur.valid) load(cur);
        LocalTensor<float> c;
        for (; cur.valid; cur = next(cur)) {
            m_ctx.scalar(2);
            const Step nx = next(cur);
            const bool ahead = p.l1_buffers > 1;  // single buffered: the next loads once this frees L1
            if (nx.valid && ahead) load(nx);
            if (cur.c1_0 == 0) c = m_qc1.AllocTensor<float>();
            compute(cur, c);
            if (nx.valid && !ahead) load(nx);
            if (cur.c1_0 + cur.c1c < p.c1) continue;
            m_qc1.EnQue(c);
            c = m_qc1.DeQue<float>();
            drain(cur, c, coupled);
            m_qc1.FreeTensor(c);
        }
    }

private:
    static constexpr uint32_t kEs = sizeof(T), kC0 = 32 / kEs, kFrac = isa::kFractalBytes / kEs;

    struct Step {
        bool valid = false;
        uint32_t tile = 0, c1_0 = 0, c1c = 0;
        uint32_t img = 0, grp = 0, m0 = 0, tm = 0, p0 = 0, tn = 0;
        uint32_t r0 = 0, rows = 0, pt = 0, pb = 0, m_start = 0;  // the input-row window
    };

    static uint32_t ub_row(uint32_t tn) {
        return (tn * uint32_t{sizeof(U)} + 31) / 32 * 32 / uint32_t{sizeof(U)};
    }
    uint32_t a1_bytes() const {
        return m_p.base_m * (m_p.c1_l1 * m_p.kh * m_p.kw * kC0 + (m_p.bias_en ? kC0 : 0)) * kEs;
    }
    uint32_t l_per_c1() const { return m_p.kh * m_p.kw * kC0; }  // K of one channel block

    Step at(uint32_t tile, uint32_t c1_0) const {
        const ConvCubePlan& p = m_p;
        Step s;
        s.tile = tile, s.c1_0 = c1_0;
        if (tile >= m_end) return s;
        s.valid = true;
        s.c1c = std::min(p.c1_l1, p.c1 - c1_0);
        // Weight-major: (group, channel tile) outermost, then image, then pixel tile.
        const uint32_t per = p.n * p.tiles_n, gm = tile / per, r = tile % per;
        s.grp = gm / p.tiles_m, s.img = r / p.tiles_n;
        s.m0 = gm % p.tiles_m * p.base_m, s.p0 = r % p.tiles_n * p.base_n;
        s.tm = std::min(p.base_m, p.mg - s.m0), s.tn = std::min(p.base_n, p.oh * p.ow - s.p0);
        // Output rows [lo, hi] of the tile's pixels need input rows [lo * sh - pt, hi * sh - pt
        // + ext_h - 1], clipped to the image; the window's pads are what lies outside it.
        const int64_t lo = s.p0 / p.ow, hi = (s.p0 + s.tn - 1) / p.ow;
        const int64_t ih_lo = lo * p.sh - p.pt, ih_hi = hi * p.sh - p.pt + p.ext_h() - 1;
        const int64_t r0 = std::max<int64_t>(0, ih_lo), r1 = std::min<int64_t>(p.hi - 1, ih_hi);
        s.r0 = static_cast<uint32_t>(r0), s.rows = static_cast<uint32_t>(r1 - r0 + 1);
        s.pt = static_cast<uint32_t>(r0 - ih_lo);
        const int64_t need = (hi - lo) * p.sh + p.ext_h();  // padded rows the window's outputs span
        s.pb = static_cast<uint32_t>(std::max<int64_t>(0, need - s.rows - s.pt));
        s.m_start = static_cast<uint32_t>(s.p0 - lo * p.ow);
        return s;
    }
    Step next(const Step& s) const {
        if (s.c1_0 + s.c1c < m_p.c1) return at(s.tile, s.c1_0 + s.c1c);
        return at(s.tile + 1, 0);
    }

    void load(const Step& s) {
        const ConvCubePlan& p = m_p;
        m_ctx.scalar(8);  // tile and window coordinates
        const uint32_t kc = s.c1c * l_per_c1(), mp = rup(s.tm, 16), kdim = p.kdim();
        LocalTensor<T> a1 = m_qa1.template AllocTensor<T>();
        // The A1 buffer still holds these weights (and bias) from an earlier tile of the same
        // channels and chunk (a core's consecutive tiles mostly are): nothing to load.
        const uint64_t key = ((uint64_t{s.grp} * p.mg + s.m0) << 20 | s.c1_0) + 1;
        uint64_t& held = m_a1_key[static_cast<size_t>(a1.buffer_index())];
        const bool fresh = held != key;
        held = key;
        const GlobalTensor<T> w =
            p.w_fz ? m_gw[(uint64_t{s.c1_0} * p.kh * p.kw * p.mg + s.m0) * kC0]
                   : m_gw[(uint64_t{s.grp} * p.mg + s.m0) * kdim + uint64_t{s.c1_0} * l_per_c1()];
        const bool pad = fresh && p.y_5hd && s.tm < mp;
        m_pad_late[static_cast<size_t>(a1.buffer_index())] = pad && m_fill_late;
        if (pad && !m_fill_late) {
            pad_rows(a1, s);
            m_ctx.set_flag(Pipe::MTE1, Pipe::MTE2, m_pad_event);
            m_ctx.wait_flag(Pipe::MTE1, Pipe::MTE2, m_pad_event);
        }
        if (fresh && p.w_fz && p.sub_taps) {
            // A phase's taps, a strided sub-grid of W's: per channel block and tap row, kw K
            // blocks tsw apart, each tm rows as one run.
            const uint32_t taps = p.fkh * p.fkw;
            for (uint32_t c = 0; c < s.c1c; ++c)
                for (uint32_t u = 0; u < p.kh; ++u) {
                    m_ctx.scalar(2);
                    const uint64_t kb = uint64_t{s.c1_0 + c} * taps + (p.e0h + u * p.tsh) * p.fkw + p.e0w;
                    DataCopyPad(a1[((c * p.kh + u) * p.kw) * mp * kC0], m_gw[(kb * p.mg + s.m0) * kC0],
                                DataCopyExtParams{p.kw, s.tm * 32, (p.tsw * p.mg - s.tm) * 32, mp - s.tm});
                }
        } else if (fresh && p.w_fz) {
            // FRACTAL_Z: each K block's tm rows are one run (mg rows apart), NZ in L1 as loaded.
            DataCopyPad(a1, w,
                        DataCopyExtParams{kc / kC0, s.tm * 32, (p.mg - s.tm) * 32, mp - s.tm});
        } else if (fresh && p.nd2nz_instr) {
            DataCopy(a1, w,
                     Nd2NzParams{1, static_cast<uint16_t>(s.tm), static_cast<uint16_t>(kc), 0, kdim,
                                 static_cast<uint16_t>(mp), 1, 0});
        } else if (fresh) {
            for (uint32_t g = 0; g * kC0 < kc; ++g)
                DataCopyPad(a1[g * mp * kC0], w[g * kC0],
                            DataCopyExtParams{s.tm, kC0 * kEs, (kdim - kC0) * kEs, 0});
        }
        if (fresh && p.bias_en && s.c1_0 == 0) {  // the bias column (one per output channel) after the chunk
            const LocalTensor<T> be = a1[p.base_m * p.c1_l1 * l_per_c1()];
            const GlobalTensor<T> b = m_gb[uint64_t{s.grp} * p.mg + s.m0];
            if (p.nd2nz_instr)
                DataCopy(be, b, Nd2NzParams{1, static_cast<uint16_t>(s.tm), 1, 0, 1, 1, 1, 0});
            else
                DataCopyPad(be, b, DataCopyExtParams{s.tm, kEs, 0, 0});
        }
        m_qa1.EnQue(a1);
        LocalTensor<T> b1 = m_qb1.template AllocTensor<T>();
        const uint64_t plane = uint64_t{p.hi} * p.wi * kC0;  // one channel block of the image
        const uint32_t win = s.rows * p.wi * kC0 * kEs;
        DataCopyPad(
            b1, m_gx[((uint64_t{s.img} * p.g + s.grp) * p.c1 + s.c1_0) * plane + uint64_t{s.r0} * p.wi * kC0],
            DataCopyExtParams{s.c1c, win, static_cast<uint32_t>(plane * kEs - win), 0});
        m_qb1.EnQue(b1);
    }

    // The weight (and bias) rows of the channels beyond M, B's padding columns, as zeros: the
    // product's padding channels, which the NC1HWC0 drain writes, are then zero.
    void pad_rows(const LocalTensor<T>& a1, const Step& s) {
        const ConvCubePlan& p = m_p;
        const uint32_t kc = s.c1c * l_per_c1(), mp = rup(s.tm, 16);
        InitConstValue(a1[s.tm * kC0], InitConstValueParams{static_cast<uint16_t>(kc / kC0),
                                                            static_cast<uint16_t>(mp - s.tm),
                                                            static_cast<uint16_t>(s.tm), 0.0});
        if (p.bias_en && s.c1_0 == 0)
            InitConstValue(a1[p.base_m * p.c1_l1 * l_per_c1() + s.tm * kC0],
                           InitConstValueParams{1, static_cast<uint16_t>(mp - s.tm), 0, 0.0});
    }

    // img2col of the step's input window: output pixels [m_start, + np), columns [ks, + kk).
    LoadData3DParams load3d_params(const Step& s, uint32_t np, uint32_t ks, uint32_t kk) const {
        const ConvCubePlan& p = m_p;
        LoadData3DParams l3;
        l3.l1H = static_cast<uint16_t>(s.rows), l3.l1W = static_cast<uint16_t>(p.wi),
        l3.c1 = static_cast<uint16_t>(s.c1c);
        l3.filterH = static_cast<uint8_t>(p.kh), l3.filterW = static_cast<uint8_t>(p.kw);
        l3.strideH = static_cast<uint8_t>(p.sh), l3.strideW = static_cast<uint8_t>(p.sw);
        l3.dilationH = static_cast<uint8_t>(p.dh), l3.dilationW = static_cast<uint8_t>(p.dw);
        l3.padList[0] = static_cast<uint8_t>(p.pl), l3.padList[1] = static_cast<uint8_t>(p.pr);
        l3.padList[2] = static_cast<uint8_t>(s.pt), l3.padList[3] = static_cast<uint8_t>(s.pb);
        l3.mStartPt = static_cast<uint16_t>(s.m_start), l3.mExtension = static_cast<uint16_t>(np);
        l3.kStartPt = static_cast<uint16_t>(ks), l3.kExtension = static_cast<uint16_t>(kk);
        return l3;
    }

    void compute(const Step& s, const LocalTensor<float>& c) {
        if (m_p.y_5hd) return compute_5hd(s, c);
        const ConvCubePlan& p = m_p;
        const uint32_t m1 = rup(s.tm, 16) / 16, np = rup(s.tn, 16), n1 = np / 16, kc = s.c1c * l_per_c1();
        LocalTensor<T> a1 = m_qa1.template DeQue<T>();
        LocalTensor<T> b1 = m_qb1.template DeQue<T>();
        const bool bias = p.bias_en && s.c1_0 == 0;
        if (bias) {
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            LoadData(a2, a1[p.base_m * p.c1_l1 * l_per_c1()],
                     LoadData2DParams{0, static_cast<uint16_t>(m1), 1, 0, false});
            InitConstValue(b2, InitConstValueParams{1, static_cast<uint16_t>(n1 * 16), 0, 1.0});
            m_qa2.EnQue(a2);
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(np),
                            static_cast<uint16_t>(kC0), true});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
        }
        for (uint32_t ks = 0; ks < kc; ks += p.base_k) {
            m_ctx.scalar(2);
            const uint32_t kk = std::min(p.base_k, kc - ks), k1 = kk / kC0, kb0 = ks / kC0;
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            for (uint32_t kb = 0; kb < k1; ++kb)
                LoadData(a2[kb * kFrac], a1,
                         LoadData2DParams{static_cast<uint16_t>((kb0 + kb) * m1), static_cast<uint16_t>(m1),
                                          1, static_cast<uint16_t>(k1 - 1), false});
            m_qa2.EnQue(a2);
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            LoadData(b2, b1, load3d_params(s, np, ks, kk));
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(np), static_cast<uint16_t>(kk),
                            !bias && s.c1_0 == 0 && ks == 0});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
        }
        m_qa1.FreeTensor(a1);
        m_qb1.FreeTensor(b1);
    }

    // The product the other way round (y_5hd): C (pixels x channels) = img2col(X) (L0A, load3d)
    // x W^T (L0B: the NZ of W in L1 is the ZN of W^T, fractal for fractal).
    void compute_5hd(const Step& s, const LocalTensor<float>& c) {
        const ConvCubePlan& p = m_p;
        const uint32_t m1 = rup(s.tm, 16) / 16, np = rup(s.tn, 16), n1 = np / 16, kc = s.c1c * l_per_c1();
        LocalTensor<T> a1 = m_qa1.template DeQue<T>();
        LocalTensor<T> b1 = m_qb1.template DeQue<T>();
        if (m_pad_late[static_cast<size_t>(a1.buffer_index())]) pad_rows(a1, s);
        const bool bias = p.bias_en && s.c1_0 == 0;
        if (bias) {  // ones (pixels x K0) x the bias row (K0 x channels, row 0 = bias)
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            InitConstValue(a2, InitConstValueParams{1, static_cast<uint16_t>(n1 * 16), 0, 1.0});
            LoadData(b2, a1[p.base_m * p.c1_l1 * l_per_c1()],
                     LoadData2DParams{0, static_cast<uint16_t>(m1), 1, 0, false});
            m_qa2.EnQue(a2);
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(np), static_cast<uint16_t>(m1 * 16),
                            static_cast<uint16_t>(kC0), true});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
        }
        for (uint32_t ks = 0; ks < kc; ks += p.base_k) {
            m_ctx.scalar(2);
            const uint32_t kk = std::min(p.base_k, kc - ks), k1 = kk / kC0, kb0 = ks / kC0;
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            LoadData(a2, b1, load3d_params(s, np, ks, kk));
            m_qa2.EnQue(a2);
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            for (uint32_t kb = 0; kb < k1; ++kb)
                LoadData(b2[kb * m1 * kFrac], a1,
                         LoadData2DParams{static_cast<uint16_t>((kb0 + kb) * m1), static_cast<uint16_t>(m1),
                                          1, 0, false});
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(np), static_cast<uint16_t>(m1 * 16),
                            static_cast<uint16_t>(kk), !bias && s.c1_0 == 0 && ks == 0});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
        }
        m_qa1.FreeTensor(a1);
        m_qb1.FreeTensor(b1);
    }

    void drain(const Step& s, const LocalTensor<float>& c, bool coupled) {
        const ConvCubePlan& p = m_p;
        const uint32_t pix = p.oh * p.ow;
        if (p.y_5hd) {
            // NZ drain = NC1HWC0: C0 channels of a pixel per 32 B block, channel blocks pix
            // blocks apart; the padding channels of a last partial block written (zeros).
            constexpr uint32_t c0o = 32 / uint32_t{sizeof(U)};
            FixpipeParams fp{static_cast<uint16_t>(rup(s.tm, c0o)), static_cast<uint16_t>(s.tn),
                             static_cast<uint16_t>(rup(s.tn, 16)), pix};
            fp.reluEn = p.relu;
            fp.nz2ndEn = false;
            const uint32_t c1o = (p.mtot + c0o - 1) / c0o;
            const uint64_t blk = (uint64_t{s.grp} * p.mg + s.m0) / c0o;  // groups: whole C0 blocks
            const GlobalTensor<U> y = m_gy[((uint64_t{s.img} * c1o + blk) * pix + s.p0) * c0o];
            if (!coupled) {
                Fixpipe(y, c, fp);
                return;
            }
            // Coupled: the NZ tile to UB (channel blocks tn pixels of 32 B apart), then each
            // block's tn pixels to its place in GM by the MTE3, channel blocks pix pixels apart.
            fp.dstStride = s.tn;
            LocalTensor<U> c2 = m_qc2.template AllocTensor<U>();
            DataCopy(c2, c, fp);
            m_qc2.EnQue(c2);
            c2 = m_qc2.template DeQue<U>();
            DataCopyPad(y, c2,
                        DataCopyExtParams{rup(s.tm, c0o) / c0o, s.tn * 32, 0, (pix - s.tn) * 32});
            m_qc2.FreeTensor(c2);
            return;
        }
        FixpipeParams fp{static_cast<uint16_t>(s.tn), static_cast<uint16_t>(s.tm),
                         static_cast<uint16_t>(rup(s.tm, 16)), pix};
        fp.reluEn = p.relu;
        store_l0c_tile(m_gy[(uint64_t{s.img} * p.mtot + uint64_t{s.grp} * p.mg + s.m0) * pix + s.p0], c, fp, coupled,
                       m_qc2, ub_row(s.tn), s.tm, s.tn, pix);
    }

    KernelContext m_ctx;
    const ConvCubePlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::A1> m_qa1;
    TQue<TPosition::B1> m_qb1;
    TQue<TPosition::A2> m_qa2;
    TQue<TPosition::B2> m_qb2;
    TQue<TPosition::CO1> m_qc1;
    TQue<TPosition::CO2> m_qc2;
    GlobalTensor<T> m_gx, m_gw, m_gb;
    GlobalTensor<U> m_gy;
    bool m_range = false;             // [m_first, m_end) given (run_conv_phases)
    uint32_t m_first = 0, m_end = 0;  // this core's tiles [m_first, m_end)
    uint64_t m_a1_key[2] = {0, 0};  // what each A1 buffer holds (0: nothing yet)
    uint8_t m_pad_event = 0;         // y_5hd: the padding rows' fill before the weight load
    bool m_fill_late = false;        // no event left for it: the fill after the load
    bool m_pad_late[2] = {false, false};  // per A1 buffer: its rows to fill once the MTE1 takes it
};

template <class T, class... R>
void run_t(isa::IInstrSink& sink, const ConvCubePlan& p, R... range) {
    switch (p.out) {
        case isa::DType::FP16: return ConvKernel<T, half>(sink, p, range...).run();
        case isa::DType::BF16: return ConvKernel<T, bfloat16>(sink, p, range...).run();
        default: return ConvKernel<T, float>(sink, p, range...).run();
    }
}

template <class... R>
void run_in(isa::IInstrSink& sink, const ConvCubePlan& p, R... range) {
    switch (p.in) {
        case isa::DType::FP16: return run_t<half>(sink, p, range...);
        case isa::DType::BF16: return run_t<bfloat16>(sink, p, range...);
        case isa::DType::FP32: return run_t<float>(sink, p, range...);
        default: throw InputError(std::string("conv: unsupported input type ") + isa::dtype_name(p.in));
    }
}

// The cheapest tiling with l1b L1 buffers (its estimated cost; -1 if none fits).
double search_tiling(ConvCubePlan& p, const DeviceInfo& dev, uint32_t l1b) {
    const uint32_t es = isa::dtype_size(p.in), c0 = p.c0(), L = p.kh * p.kw * c0;
    const uint32_t cores = std::max<uint32_t>(1, dev.cube_cores), pix = p.oh * p.ow;
    const double rate = dev.core_read_max_bytes_per_cycle > 0 ? dev.core_read_max_bytes_per_cycle : 64.0;
    const double macs = dev.cube_macs_fp16 > 0 ? dev.cube_macs_fp16 : 4096.0;
    double best = -1;
    ConvCubePlan t = p;
    for (uint32_t bufs : {2u, 1u})
        for (uint32_t bm = 256; bm >= 16; bm /= 2) {
            if (bm > rup(p.mg, 16) && bm / 2 >= rup(p.mg, 16)) continue;
            for (uint32_t bn = 256; bn >= 16; bn /= 2) {
                if (bn > rup(pix, 16) && bn / 2 >= rup(pix, 16)) continue;
                t.base_m = std::min(bm, rup(p.mg, 16)), t.base_n = std::min(bn, rup(pix, 16)),
                t.l0c_buffers = bufs;
                if (uint64_t{bufs} * t.base_m * t.base_n * 4 > dev.l0c_bytes) continue;
                if (dev.arch == "coupled" && uint64_t{bufs} * t.base_m * rup(t.base_n * 4, 32) > dev.ub_bytes)
                    continue;
                // base_k: the largest multiple of C0 (up to one channel block's K, at most 256
                // elements... or more when one block is bigger) whose double-buffered L0 tiles fit.
                uint32_t bk = std::min<uint32_t>(256 / c0 * c0, p.kdim());
                // y_5hd: the pixels are A (L0A), the channels B (L0B).
                const uint64_t la = p.y_5hd ? t.base_n : t.base_m, lb = p.y_5hd ? t.base_m : t.base_n;
                while (bk > c0 &&
                       (2ull * la * bk * es > dev.l0a_bytes || 2ull * bk * lb * es > dev.l0b_bytes))
                    bk -= c0;
                if (2ull * la * bk * es > dev.l0a_bytes || 2ull * bk * lb * es > dev.l0b_bytes) continue;
                t.base_k = bk;
                t.rows_l1 = window_rows(p, t.base_n);
                const uint64_t per_c1 =
                    uint64_t{l1b} * (uint64_t{t.base_m} * L + uint64_t{t.rows_l1} * p.wi * c0) * es;
                const uint64_t extra = p.bias_en ? uint64_t{l1b} * t.base_m * c0 * es : 0;
                if (dev.l1_bytes <= extra) continue;
                const uint64_t fit = std::min<uint64_t>({(dev.l1_bytes - extra) / per_c1, p.c1, 65535 / L});
                if (fit == 0) continue;
                t.c1_l1 = static_cast<uint32_t>(fit);
                t.tiles_m = (p.mg + t.base_m - 1) / t.base_m, t.tiles_n = (pix + t.base_n - 1) / t.base_n;
                t.block_dim = std::min(t.tiles(), cores);
                // Per core (the busiest): tpc tiles in the weight-major order; the input window
                // loads every tile, the weights every tile unless the whole K fits one L1 chunk,
                // then once per buffer and (group, channel tile) run of the core's range.
                const uint64_t tpc = (t.tiles() + t.block_dim - 1) / t.block_dim, per = uint64_t{p.n} * t.tiles_n;
                const uint64_t runs = std::min<uint64_t>(tpc, (tpc + per - 2) / per + 1);
                const double w_loads = t.c1_l1 >= p.c1 ? double(std::min<uint64_t>(tpc, l1b * runs)) : double(tpc);
                const double cube = double(tpc) * t.base_m * t.base_n * p.kdim() / macs * (16.0 / c0);
                const double load = (double(tpc) * p.c1 * t.rows_l1 * p.wi * c0 +
                                     w_loads * t.base_m * p.kdim()) * es / rate;
                // The MTE1: the weights (A, or B when y_5hd) and the img2col matrix per tile.
                const double wr = p.y_5hd ? dev.l1_l0b_bytes_per_cycle : dev.l1_l0a_bytes_per_cycle,
                             xr = p.y_5hd ? dev.l1_l0a_bytes_per_cycle : dev.l1_l0b_bytes_per_cycle;
                const double mte1 = double(tpc) * p.kdim() * es *
                                    (t.base_m / std::max(1.0, wr) + t.base_n / std::max(1.0, xr));
                const double cost = std::max(l1b == 1 ? cube + load : std::max(cube, load), mte1) +
                                    (bufs == 1 ? double(tpc) * t.base_m * t.base_n * 4.0 / rate : 0.0);
                if (best < 0 || cost < best - 1e-9)
                    best = cost, p.base_m = t.base_m, p.base_n = t.base_n, p.base_k = t.base_k,
                    p.c1_l1 = t.c1_l1, p.rows_l1 = t.rows_l1, p.tiles_m = t.tiles_m, p.tiles_n = t.tiles_n,
                    p.block_dim = t.block_dim, p.l0c_buffers = bufs, p.l1_buffers = l1b;
            }
        }
    return best;
}

}  // namespace

void plan_conv(ConvCubePlan& p, const DeviceInfo& dev) {
    for (uint32_t v : {p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pt, p.pb, p.pl, p.pr})
        if (v > 255)
            throw InputError("conv: kernel, stride, dilation and pads must be at most 255 (load3d fields)");
    if (p.pt >= p.ext_h() || p.pb >= p.ext_h())
        throw InputError("conv: top/bottom pads must be smaller than the dilated kernel height");
    // Single-buffered L1 only when no tile fits double buffered (the loads then stop the cube).
    double best = search_tiling(p, dev, 2);
    if (best < 0) best = search_tiling(p, dev, 1);
    if (best < 0)
        throw InputError("conv: L0/L1 buffers too small for a 16 x 16 output tile and one channel block");
    p.nd2nz_instr = dev.arch != "coupled";
    if (p.y_5hd && p.g != 1 && p.mg % 16 != 0)
        throw InputError("conv: an NC1HWC0 output needs one group (or groups of 16 output channels)");
}

void run_conv_kernel(isa::IInstrSink& sink, const ConvCubePlan& p) { run_in(sink, p); }

void run_conv_phases(isa::IInstrSink& sink, const std::vector<ConvCubePlan>& ps) {
    // Work in tiles x K: a plan's tile t covers [w0 + t k, w0 + (t + 1) k); the block takes the
    // tiles whose start lies in its share [lo, hi) of the total.
    uint64_t total = 0;
    for (const ConvCubePlan& p : ps) total += uint64_t{p.tiles()} * p.kdim();
    const uint64_t b = sink.block_idx(), nb = std::max<uint32_t>(1, sink.block_num());
    const uint64_t lo = total * b / nb, hi = total * (b + 1) / nb;
    uint64_t w0 = 0;
    for (const ConvCubePlan& p : ps) {
        const uint64_t k = p.kdim(), n = p.tiles();
        auto first_at = [&](uint64_t w) { return w <= w0 ? 0 : std::min(n, (w - w0 + k - 1) / k); };
        const uint64_t f = first_at(lo), e = first_at(hi);
        if (f < e) run_in(sink, p, static_cast<uint32_t>(f), static_cast<uint32_t>(e));
        w0 += n * k;
    }
}

}  // namespace sfumato::ops
