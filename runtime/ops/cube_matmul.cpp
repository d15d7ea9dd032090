// The cube matmul kernel (see cube_matmul.h): one step = one k chunk of one
// output tile. The L1 loads of the next step are issued before the current
// step's L1 -> L0 moves and mads (across tiles too), so MTE2 fills the second
// L1 buffer while the cube works on the first and a tile starts without a load
// bubble. L0C holds one or two tiles (the tiling's choice); the FixPipe (split)
// or the vector pipe + MTE3 (coupled) drains a finished tile while the next one
// accumulates when there are two.
#include "runtime/ops/cube_matmul.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "runtime/kernel/api.h"
#include "runtime/ops/cube_load.h"
#include "runtime/ops/cube_store.h"
#include "runtime/ops/cube_walk.h"
#include "runtime/ops/op_util.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

template <class T, class U, class C>
class CubeMatmul {
public:
    CubeMatmul(isa::IInstrSink& sink, const CubeMatmulPlan& p)
        : m_ctx(sink), m_p(p), m_t(p.t), m_pipe(m_ctx), m_w(p, kEs, m_ctx.block_idx()) {}

    void run() {
        const isa::CoreKind kind = m_ctx.sink().core_kind();
        if (kind == isa::CoreKind::Vector) return prefetch();
        const bool coupled = kind == isa::CoreKind::Coupled;
        // The cube tells its AIVs each completed load (see MatmulTiling::pf_ahead).
        const uint32_t signals =
            kind == isa::CoreKind::Cube ? CubeWalk::pf_signals(m_w.pf_items(), m_t.pf_ahead) : 0;
        uint32_t loads = 0;
        auto loaded = [&] {
            if (loads++ < signals) CrossCoreSetFlag(m_ctx, 2, kPfFlag, Pipe::MTE2);
        };
        const uint32_t eo = sizeof(U);
        // A resident (MatmulTiling::a_slots): the chunks live in their slots of one L1 buffer and
        // the A1 queue's buffers only carry the load -> move order.
        if (m_t.a_slots) {
            m_pipe.InitBuffer(m_qa1, m_t.buffers, kA1Token);
            m_pipe.InitBuffer(m_ares, m_t.a_slots * static_cast<uint32_t>(m_w.a1_stride()));
        } else {
            m_pipe.InitBuffer(m_qa1, m_t.buffers, static_cast<uint32_t>(m_t.a1_bytes(kEs)));
        }
        m_a1_key.assign(m_t.a_slots ? m_t.a_slots : m_t.buffers, std::nullopt);
        m_b1_key.assign(m_t.buffers, std::nullopt);
        m_pipe.InitBuffer(m_qb1, m_t.buffers, static_cast<uint32_t>(m_t.b1_bytes(kEs)));
        m_pipe.InitBuffer(m_qa2, m_t.buffers, static_cast<uint32_t>(m_t.a2_bytes(kEs)));
        m_pipe.InitBuffer(m_qb2, m_t.buffers, static_cast<uint32_t>(m_t.b2_bytes(kEs)));
        m_pipe.InitBuffer(m_qc1, m_t.l0c_buffers, static_cast<uint32_t>(m_t.c1_bytes()));
        if (coupled) m_pipe.InitBuffer(m_qc2, m_t.l0c_buffers, static_cast<uint32_t>(m_t.c2_bytes(eo)));
        m_ga.SetGlobalBuffer(m_p.a, ~0ull / 8);
        m_gb.SetGlobalBuffer(m_p.b, ~0ull / 8);
        m_gc.SetGlobalBuffer(m_p.c, ~0ull / 8);
        m_gbias.SetGlobalBuffer(m_p.bias, ~0ull / 8);

        Step cur = at(0, 0);
        if (m_t.k_split > 1 && !coupled && !m_t.two_pass()) zero_and_meet();
        if (cur.valid) load(cur), loaded();
        LocalTensor<C> c;
        for (; cur.valid; cur = next(cur)) {
            m_ctx.scalar(2);
            const Step nx = next(cur);
            if (nx.valid) load(nx), loaded();
            if (cur.kidx == 0) c = m_qc1.template AllocTensor<C>();
            compute(cur, c);
            if (!m_p.skip_ab && cur.kidx + 1 < cur.nk) continue;
            m_qc1.EnQue(c);
            c = m_qc1.template DeQue<C>();
            drain(cur, c, coupled);
            m_qc1.FreeTensor(c);
        }
    }

private:
    static constexpr uint32_t kEs = sizeof(T);
    static constexpr uint32_t kK0 = 32 / kEs;                    // k per fractal row (= L1 C0)
    static constexpr uint32_t kFrac = isa::kFractalBytes / kEs;  // elements per fractal

    using Step = CubeWalk::Step;
    using Key = CubeWalk::Key;
    using NzRun = CubeWalk::NzRun;
    using PfItem = CubeWalk::PfItem;
    static constexpr uint32_t kA1Token = CubeWalk::kA1Token;

    Step at(uint32_t seg, uint32_t kidx) const { return m_w.at(seg, kidx); }
    Step next(const Step& s) const { return m_w.next(s); }
    bool has_bias(const Step& s) const { return m_w.has_bias(s); }
    uint32_t m_pad(const Step& s) const { return m_w.m_pad(s); }
    uint32_t n_pad(const Step& s) const { return m_w.n_pad(s); }
    uint32_t k_rows_pad(uint32_t kc) const { return m_w.k_rows_pad(kc); }
    size_t a1_slot(const Step& s, uint32_t p) const { return m_w.a1_slot(s, p); }
    // Where a step's A chunk lives in L1: its slot (A resident) or the queue's buffer.
    LocalTensor<T> a1_of(const LocalTensor<T>& token, const Step& s) const {
        if (!m_t.a_slots) return token;
        return m_ares.template Get<T>()[static_cast<uint32_t>(a1_slot(s, 0) * m_w.a1_stride() / kEs)];
    }

    // ---- split-K (MatmulTiling::k_split) ----
    static constexpr uint8_t kZeroedFlag = 1, kGoFlag = 2;  // mode 0: all cube cores
    // C must be zero before any part adds into it: each block zeroes the tiles whose first chunk
    // it runs (a zero mad into L0C, drained by the FixPipe) and counts once to block 0, which
    // collects one count per zeroing block and then releases the others, all in the FixPipe pipe:
    // the first atomic drain of any block follows every zeroing write. Blocks that zero nothing
    // are not waited for (the scheduler starts the blocks one after another; a barrier over all
    // of them would hold every block's first drain until the last one has started). Loads and
    // mads are not held.
    void zero_and_meet() {
        const uint32_t split = std::max<uint32_t>(1, m_t.k_split);
        for (Step s = at(0, 0); s.valid; s = at(s.seg + 1, 0)) {
            if (!s.tile_first) continue;
            m_ctx.scalar(2);
            const uint32_t m1 = m_pad(s) / 16, n1 = n_pad(s) / 16;
            LocalTensor<C> c = m_qc1.template AllocTensor<C>();
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            InitConstValue(a2, InitConstValueParams{1, static_cast<uint16_t>(m1 * 16), 0, 0.0});
            InitConstValue(b2, InitConstValueParams{1, static_cast<uint16_t>(n1 * 16), 0, 0.0});
            m_qa2.EnQue(a2);
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(n_pad(s)),
                            static_cast<uint16_t>(kK0), true});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
            m_qc1.EnQue(c);
            c = m_qc1.template DeQue<C>();
            drain(s, c, false, true);
            m_qc1.FreeTensor(c);
        }
        if (CubeWalk::zeroes(m_w.segs(), split)) CrossCoreSetFlag(m_ctx, 0, kZeroedFlag, Pipe::FIX);
        if (m_ctx.block_idx() == 0) {
            for (uint32_t b = 0; b < m_ctx.block_num(); ++b)
                if (CubeWalk::zeroes(block_segments(m_t, b), split))
                    CrossCoreWaitFlag(m_ctx, 0, kZeroedFlag, Pipe::FIX);
            for (uint32_t i = 1; i < m_ctx.block_num(); ++i) CrossCoreSetFlag(m_ctx, 0, kGoFlag, Pipe::FIX);
        } else {
            CrossCoreWaitFlag(m_ctx, 0, kGoFlag, Pipe::FIX);
        }
    }

    // ---- L2 prefetch by the AIVs (see MatmulTiling::pf_ahead) ----
    static constexpr uint8_t kPfFlag = 0;
    // An AIV's side: its share of the items (pf_owners), each read into a UB scratch buffer once
    // the cube's loads are no more than pf_ahead steps behind it.
    void prefetch() {
        const std::vector<PfItem> items = m_w.pf_items();
        const uint32_t signals = CubeWalk::pf_signals(items, m_t.pf_ahead);
        if (items.empty()) return;
        const std::vector<uint32_t> owner = m_w.pf_owners(items);
        TBuf<TPosition::VECIN> scratch;
        m_pipe.InitBuffer(scratch, m_t.pf_buf);
        const LocalTensor<T> ub = scratch.template Get<T>();
        GlobalTensor<T> g[2];
        g[0].SetGlobalBuffer(m_p.a, ~0ull / 8);
        g[1].SetGlobalBuffer(m_p.b, ~0ull / 8);
        uint32_t got = 0;
        for (size_t j = 0; j < items.size(); ++j) {
            if (owner[j] != m_ctx.sub_block_idx()) continue;
            m_ctx.scalar(4);
            const PfItem& it = items[j];
            const uint32_t need = it.p + 1 > m_t.pf_ahead ? it.p + 1 - m_t.pf_ahead : 0;
            for (; got < need; ++got) CrossCoreWaitFlag(m_ctx, 2, kPfFlag, Pipe::MTE2);
            const CubeWalk::Region r = m_w.pf_region(it);
            const uint32_t row = rup(r.len, 32);
            if (r.rows == 0 || row > m_t.pf_buf) continue;
            const uint32_t per = m_t.pf_buf / row;
            for (uint32_t r0 = 0; r0 < r.rows; r0 += per)
                DataCopyPad(ub, g[it.b ? 1 : 0][r.at + uint64_t{r0} * r.ld],
                            DataCopyExtParams{std::min(per, r.rows - r0), r.len,
                                              static_cast<uint32_t>(r.ld * kEs - r.len), 0});
        }
        for (; got < signals; ++got) CrossCoreWaitFlag(m_ctx, 2, kPfFlag, Pipe::MTE2);
    }

    // rows x cols of a row-major matrix into L1 as NZ (runtime/ops/cube_load.h).
    void load_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols,
                 uint64_t ld, uint32_t rows_pad) {
        ops::load_nz(dst, src, rows, cols, ld, rows_pad, m_t.nd2nz_instr);
    }
    // fp32 tiles a square transpose reads: NZ fractals ordered row block by row
    // block (the two column groups of a 16 x 16 square adjacent), groups = padded
    // columns / 8.
    void load_zorder(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols,
                     uint64_t ld, uint32_t groups) {
        const uint32_t full = rows / 16, tail = rows % 16;
        const uint32_t row_block = groups * kFrac;  // elements per 16-row block
        if (m_t.nd2nz_instr) {
            if (full)
                DataCopy(dst, src,
                         Nd2NzParams{static_cast<uint16_t>(full), 16, static_cast<uint16_t>(cols),
                                     static_cast<uint32_t>(16 * ld), static_cast<uint32_t>(ld), 16, 1,
                                     static_cast<uint32_t>(groups * 16)});
            if (tail)
                DataCopy(dst[full * row_block], src[uint64_t{full} * 16 * ld],
                         Nd2NzParams{1, static_cast<uint16_t>(tail), static_cast<uint16_t>(cols), 0,
                                     static_cast<uint32_t>(ld), 16, 1, 0});
            return;
        }
        for (uint32_t rb = 0; rb * 16 < rows; ++rb)
            for (uint32_t g = 0; g * kK0 < cols; ++g) {
                const uint32_t w = std::min(kK0, cols - g * kK0), r = std::min(16u, rows - rb * 16);
                DataCopyPad(dst[rb * row_block + g * kFrac], src[uint64_t{rb} * 16 * ld + g * kK0],
                            DataCopyExtParams{r, w * kEs, static_cast<uint32_t>((ld - w) * kEs), 0});
            }
    }
    // Rows [r0, r0 + rows_pad) of column groups [c0 / 16, c0 / 16 + groups) of an
    // NZ matrix with `rows` rows in GM (16-bit elements) into L1 as NZ with
    // rows_pad rows per group.
    void load_from_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t r0,
                      uint32_t c0, uint32_t groups, uint32_t rows_pad) {
        const uint32_t total = rup(rows, 16);
        const uint64_t idx = (uint64_t{c0 / 16} * total + r0) * 16 + c0 % 16;
        DataCopyPad(dst, src[idx], DataCopyExtParams{groups, rows_pad * 32, (total - rows_pad) * 32, 0});
    }
    void load_nz_run(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const NzRun& z) {
        load_from_nz(dst, src, z.rows, z.r0, z.c0, z.groups, z.rows_pad);
    }
    // The bias vector of a tile as the transpose of a K0-deep operand (v in
    // column 0, zeros elsewhere): `count` elements from src (stride 0 for a
    // scalar) as NZ rows of one group.
    void load_bias(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, bool scalar) {
        if (m_t.nd2nz_instr) {
            if (scalar)
                DataCopy(dst, src, Nd2NzParams{static_cast<uint16_t>(count), 1, 1, 0, 1, 1, 1, 1});
            else
                DataCopy(dst, src, Nd2NzParams{1, static_cast<uint16_t>(count), 1, 0, 1, 1, 1, 0});
            return;
        }
        if (!scalar) {
            DataCopyPad(dst, src, DataCopyExtParams{count, kEs, 0, 0});
            return;
        }
        for (uint32_t i = 0; i < count; ++i) DataCopyPad(dst[i * kK0], src, DataCopyExtParams{1, kEs, 0, 0});
    }

    void load(const Step& s) {
        m_ctx.scalar(4);  // tile coordinates
        const uint32_t mp = m_pad(s), np = n_pad(s);
        // A buffer that still holds this chunk (a core's consecutive tiles sharing a row panel
        // or a column panel, k in one chunk) is not loaded again; its bias tail came with it.
        const uint64_t kb = uint64_t{s.k0} * 2 + (has_bias(s) ? 1 : 0);
        const LocalTensor<T> a1_token = m_qa1.template AllocTensor<T>();
        const LocalTensor<T> a1 = a1_of(a1_token, s);
        const size_t a_key = m_t.a_slots ? a1_slot(s, 0) : static_cast<size_t>(a1_token.buffer_index());
        const bool a_fresh = CubeWalk::swap_key(m_a1_key[a_key], {s.ao, s.m0, kb});
        if (s.kc && a_fresh) {
            if (m_t.gm_nz)
                load_nz_run(a1, m_ga, m_w.nz_run_a(s));
            else if (!m_t.trans_a)
                load_nz(a1, m_ga[s.ao + s.m0 * m_p.lda + s.k0], s.tm, s.kc, m_p.lda, mp);
            else if (kEs == 4)
                load_zorder(a1, m_ga[s.ao + uint64_t{s.k0} * m_p.lda + s.m0], s.kc, s.tm, m_p.lda, mp / 8);
            else
                load_nz(a1, m_ga[s.ao + uint64_t{s.k0} * m_p.lda + s.m0], s.kc, s.tm, m_p.lda,
                        k_rows_pad(s.kc));
        }
        if (a_fresh && has_bias(s) && m_p.bias_form == BiasForm::Col)
            load_bias(a1[m_t.base_m * m_t.k_l1], m_gbias[s.m0], s.tm, false);
        m_qa1.EnQue(a1_token);
        LocalTensor<T> b1 = m_qb1.template AllocTensor<T>();
        const size_t b_key = static_cast<size_t>(b1.buffer_index());
        const bool b_fresh = CubeWalk::swap_key(m_b1_key[b_key], {s.bo, s.n0, kb});
        if (s.kc && b_fresh) {
            if (m_t.gm_nz)
                load_nz_run(b1, m_gb, m_w.nz_run_b(s));
            else if (m_t.trans_b)
                load_nz(b1, m_gb[s.bo + uint64_t{s.n0} * m_p.ldb + s.k0], s.tn, s.kc, m_p.ldb, np);
            else if (kEs == 4)
                load_zorder(b1, m_gb[s.bo + uint64_t{s.k0} * m_p.ldb + s.n0], s.kc, s.tn, m_p.ldb, np / 8);
            else
                load_nz(b1, m_gb[s.bo + uint64_t{s.k0} * m_p.ldb + s.n0], s.kc, s.tn, m_p.ldb,
                        k_rows_pad(s.kc));
        }
        if (b_fresh && has_bias(s) && m_p.bias_form != BiasForm::Col) {
            const bool scalar = m_p.bias_form == BiasForm::Scalar;
            load_bias(b1[m_t.k_l1 * m_t.base_n], m_gbias[scalar ? 0 : s.n0], s.tn, scalar);
        }
        m_qb1.EnQue(b1);
    }

    // L1 -> L0A (ZZ: fractal (mb, kb) at mb * k1 + kb) for k step [ks, ks + kk)
    // of the chunk.
    void move_a(const LocalTensor<T>& a2, const LocalTensor<T>& a1, const Step& s, uint32_t ks, uint32_t kk) {
        const uint32_t mp = m_pad(s), m1 = mp / 16, k1 = isa::ceil_div(kk, kK0), kb0 = ks / kK0;
        if (!m_t.trans_a) {  // NZ of A: fractal (mb, kg) at kg * m1 + mb
            for (uint32_t kb = 0; kb < k1; ++kb)
                LoadData(a2[kb * kFrac], a1,
                         LoadData2DParams{static_cast<uint16_t>((kb0 + kb) * m1), static_cast<uint16_t>(m1),
                                          1, static_cast<uint16_t>(k1 - 1), false});
        } else if (kEs == 2) {  // NZ of A^T (k x m): fractal (kr, mb) at mb * kr1 +
                                // kr, transposed
            const uint32_t kr1 = k_rows_pad(s.kc) / 16;
            for (uint32_t mb = 0; mb < m1; ++mb)
                LoadData(a2[mb * k1 * kFrac], a1,
                         LoadData2DParams{static_cast<uint16_t>(mb * kr1 + kb0), static_cast<uint16_t>(k1), 1,
                                          0, true});
        } else if (kEs == 4) {  // row-block order of A^T: square (kr, h) at kr * m1 + h
            for (uint32_t h = 0; h < m1; ++h)
                LoadDataWithTranspose(a2[h * k1 * kFrac], a1,
                                      LoadData2dTransposeParams{static_cast<uint16_t>(ks / 16 * m1 + h),
                                                                static_cast<uint16_t>(isa::ceil_div(kk, 16)),
                                                                static_cast<uint16_t>(m1), 1, 0});
        } else {  // int8 NZ of A^T: square (kb, mg) at mg * KR / 2 + kb
            const uint32_t kr = k_rows_pad(s.kc) / 16;
            for (uint32_t mg = 0; mg < mp / 32; ++mg)
                LoadDataWithTranspose(a2[2 * mg * k1 * kFrac], a1,
                                      LoadData2dTransposeParams{static_cast<uint16_t>(mg * kr / 2 + kb0),
                                                                static_cast<uint16_t>(k1), 1, 0,
                                                                static_cast<uint16_t>(k1 - 1)});
        }
    }

    // L1 -> L0B (ZN: fractal (kb, nb) at kb * n1 + nb).
    void move_b(const LocalTensor<T>& b2, const LocalTensor<T>& b1, const Step& s, uint32_t ks, uint32_t kk) {
        const uint32_t np = n_pad(s), n1 = np / 16, k1 = isa::ceil_div(kk, kK0), kb0 = ks / kK0;
        if (m_t.trans_b) {  // NZ of B^T (n x k) is ZN already
            for (uint32_t kb = 0; kb < k1; ++kb)
                LoadData(b2[kb * n1 * kFrac], b1,
                         LoadData2DParams{static_cast<uint16_t>((kb0 + kb) * n1), static_cast<uint16_t>(n1),
                                          1, 0, false});
        } else if (kEs == 2) {  // NZ of B: fractal (kr, nb) at nb * kr1 + kr, transposed
            const uint32_t kr1 = (m_t.gm_nz ? rup(s.kc, 16) : k_rows_pad(s.kc)) / 16;
            for (uint32_t kb = 0; kb < k1; ++kb)
                LoadData(b2[kb * n1 * kFrac], b1,
                         LoadData2DParams{static_cast<uint16_t>(kb0 + kb), static_cast<uint16_t>(n1),
                                          static_cast<uint16_t>(kr1), 0, true});
        } else if (kEs == 4) {  // row-block order of B: square (kr, h) at kr * n1 + h
            for (uint32_t i = 0; i * 16 < kk; ++i)
                LoadDataWithTranspose(b2[2 * i * n1 * kFrac], b1,
                                      LoadData2dTransposeParams{static_cast<uint16_t>((ks / 16 + i) * n1),
                                                                static_cast<uint16_t>(n1), 1, 0,
                                                                static_cast<uint16_t>(n1 - 1)});
        } else {  // int8 NZ of B: square (kb, ng) at ng * KR / 2 + kb
            const uint32_t kr = k_rows_pad(s.kc) / 16;
            for (uint32_t kb = 0; kb < k1; ++kb)
                LoadDataWithTranspose(
                    b2[kb * n1 * kFrac], b1,
                    LoadData2dTransposeParams{static_cast<uint16_t>(kb0 + kb), static_cast<uint16_t>(n1 / 2),
                                              static_cast<uint16_t>(kr / 2), 1, 0});
        }
    }

    // The bias as one K0-deep mad that overwrites C (see cube_matmul.h).
    void bias_mad(const Step& s, const LocalTensor<C>& c, const LocalTensor<T>& a1,
                  const LocalTensor<T>& b1) {
        const uint32_t m1 = m_pad(s) / 16, n1 = n_pad(s) / 16;
        LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
        LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
        if (m_p.bias_form == BiasForm::Col) {
            LoadData(a2, a1[m_t.base_m * m_t.k_l1],
                     LoadData2DParams{0, static_cast<uint16_t>(m1), 1, 0, false});
            InitConstValue(b2, InitConstValueParams{1, static_cast<uint16_t>(n1 * 16), 0, m_p.bias_scale});
        } else {
            InitConstValue(a2, InitConstValueParams{1, static_cast<uint16_t>(m1 * 16), 0, m_p.bias_scale});
            LoadData(b2, b1[m_t.k_l1 * m_t.base_n],
                     LoadData2DParams{0, static_cast<uint16_t>(n1), 1, 0, false});
        }
        m_qa2.EnQue(a2);
        m_qb2.EnQue(b2);
        a2 = m_qa2.template DeQue<T>();
        b2 = m_qb2.template DeQue<T>();
        Mmad(c, a2, b2,
             MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(n_pad(s)),
                        static_cast<uint16_t>(kK0), true});
        m_qa2.FreeTensor(a2);
        m_qb2.FreeTensor(b2);
    }

    void compute(const Step& s, const LocalTensor<C>& c) {
        const LocalTensor<T> a1_token = m_qa1.template DeQue<T>();
        const LocalTensor<T> a1 = a1_of(a1_token, s);
        LocalTensor<T> b1 = m_qb1.template DeQue<T>();
        if (has_bias(s)) bias_mad(s, c, a1, b1);
        for (uint32_t ks = 0; ks < s.kc; ks += m_t.base_k) {
            m_ctx.scalar(2);
            const uint32_t kk = std::min(m_t.base_k, s.kc - ks);
            LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
            move_a(a2, a1, s, ks, kk);
            m_qa2.EnQue(a2);
            LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
            move_b(b2, b1, s, ks, kk);
            m_qb2.EnQue(b2);
            a2 = m_qa2.template DeQue<T>();
            b2 = m_qb2.template DeQue<T>();
            const bool first = s.kidx == 0 && ks == 0 && !has_bias(s);
            Mmad(c, a2, b2,
                 MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(n_pad(s)),
                            static_cast<uint16_t>(kk), first});
            m_qa2.FreeTensor(a2);
            m_qb2.FreeTensor(b2);
        }
        m_qa1.FreeTensor(a1_token);
        m_qb1.FreeTensor(b1);
    }

    // A finished tile (or, with split-K, a part's partial sum, added into C) to GM; `plain`:
    // the zeroing write (no scale, no atomic).
    void drain(const Step& s, const LocalTensor<C>& c, bool coupled, bool plain = false) {
        FixpipeParams fp{static_cast<uint16_t>(s.tn), static_cast<uint16_t>(s.tm),
                         static_cast<uint16_t>(rup(s.tm, 16)), static_cast<uint32_t>(m_p.ldc)};
        if (!plain && m_p.alpha != 1.0) fp.quantPre = isa::QuantMode::SCALAR, fp.deqScalar = m_p.alpha;
        fp.reluEn = !plain && m_p.relu;
        fp.atomicAdd = !plain && m_t.k_split > 1 && !m_t.two_pass();
        const uint64_t slice = m_t.two_pass() ? s.part * m_p.c_part_stride : 0;
        store_l0c_tile(m_gc[slice + s.co + uint64_t{s.m0} * m_p.ldc + s.n0], c, fp, coupled, m_qc2,
                       MatmulTiling::ub_row(s.tn, sizeof(U)), s.tm, s.tn, m_p.ldc);
    }

    KernelContext m_ctx;
    const CubeMatmulPlan& m_p;
    const MatmulTiling& m_t;
    TPipe m_pipe;
    TQue<TPosition::A1> m_qa1;
    TQue<TPosition::B1> m_qb1;
    TQue<TPosition::A2> m_qa2;
    TQue<TPosition::B2> m_qb2;
    TQue<TPosition::CO1> m_qc1;
    TQue<TPosition::CO2> m_qc2;
    GlobalTensor<T> m_ga, m_gb, m_gbias;
    GlobalTensor<U> m_gc;
    TBuf<TPosition::A1> m_ares;  // A's slots (a_slots)
    // What each A slot (A resident) or A1 buffer, and each B1 buffer, holds.
    std::vector<std::optional<Key>> m_a1_key, m_b1_key;
    CubeWalk m_w;  // this block's walk
};

template <class T, class U, class C>
void run(isa::IInstrSink& sink, const CubeMatmulPlan& p) {
    CubeMatmul<T, U, C>(sink, p).run();
}

template <class T>
void run_float(isa::IInstrSink& sink, const CubeMatmulPlan& p) {
    switch (p.out) {
        case isa::DType::FP32: return run<T, float, float>(sink, p);
        case isa::DType::FP16: return run<T, half, float>(sink, p);
        case isa::DType::BF16: return run<T, bfloat16, float>(sink, p);
        default:
            throw InputError(std::string("cube matmul: unsupported output type ") + isa::dtype_name(p.out));
    }
}

}  // namespace

void run_cube_matmul(isa::IInstrSink& sink, const CubeMatmulPlan& p) {
    if (p.t.two_pass() && p.out != isa::DType::FP32)
        throw InputError("cube matmul: two-pass split-K drains fp32 partial sums (out must be fp32)");
    switch (p.in) {
        case isa::DType::FP16: return run_float<half>(sink, p);
        case isa::DType::BF16: return run_float<bfloat16>(sink, p);
        case isa::DType::FP32: return run_float<float>(sink, p);
        case isa::DType::INT8:
            if (p.out != isa::DType::INT32) throw InputError("cube matmul: int8 inputs give int32 outputs");
            return run<int8_t, int32_t, int32_t>(sink, p);
        default:
            throw InputError(std::string("cube matmul: unsupported input type ") + isa::dtype_name(p.in));
    }
}

}  // namespace sfumato::ops
