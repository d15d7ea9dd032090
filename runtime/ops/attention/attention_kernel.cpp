// The FusedAttention kernel (see attention.h). A block walks its items as one flat sequence of
// steps n = (item, key block j); workspace slots and cross-core flags are indexed by n, so the
// cube side and the vector side stay in lockstep across items.
//
// Cube side (the AIC): S_0 .. S_{a-1} (a = ahead); then per n: load K/V of n + a, S_{n+a}, wait
// for P_n, O_n. Vector side (each AIV): per n: S_n -> P_n, then O_{n-1} accumulated (at an item
// boundary O_{n-1} and the item's finish come before P_n instead). The coupled core interleaves
// both with a = 1. Why the slots suffice (split): the cube writes S_{n+a} after waiting for
// P_{n-1}, which the vector side wrote after reading S_{n-1} (a + 1 slots of S); the vector side writes
// P_{n+2} after accumulating O_n, which the cube drained after its mad read P_n; the cube
// writes O_{n+2} after waiting for P_{n+2}, written after O_n was read. Cross-core flag waits
// block the MTE2 pipe in front of the loads they guard; sets follow the pipe that wrote.
//
// Vector arithmetic is fp32 on rows of bc lanes (row stride bc * 4 bytes): per-row values
// (max, alpha, 1 / l) are spread over one 256-byte vector per row (Brcb + expansion) and
// applied with a repeat-stride-0 operand; row reductions fold 64-lane units pairwise and reduce
// the last unit (runtime/ops/norm/vec_nest.h). Key columns past Sk in a ragged last block and,
// under the causal mask, columns right of a row's diagonal become -inf before the maximum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernel/api.h"
#include "runtime/ops/attention/attention.h"
#include "runtime/ops/norm/vec_nest.h"
#include "sim/error.h"

namespace sfumato::ops::attention {

namespace {

using namespace sfumato::kernel;
using isa::Opcode;
using norm::vblock;
using norm::vop;
using norm::vrow;
using norm::vrun;

constexpr isa::DType F32 = isa::DType::FP32;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Flag ids: S and O ready (AIC -> each AIV), P ready from AIV i (AIV -> AIC): one id per AIV,
// since the AIC's counter of an id is shared by its AIVs and one AIV may run a step ahead.
constexpr uint8_t kFlagS = 1, kFlagO = 2, kFlagP = 3;

uint32_t rup(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// One step of a block's walk.
struct Step {
    bool valid = false;
    uint64_t n = 0;  // index in the block's sequence
    uint32_t g = 0, i0 = 0, tm = 0;  // head, first query row, rows
    uint32_t j = 0, steps = 0;       // key block, key blocks of the item
};

template <class T, class W>
class Attn {
public:
    Attn(isa::IInstrSink& sink, const AttnPlan& p) : m_ctx(sink), m_p(p), m_pipe(m_ctx) {
        m_kind = m_ctx.sink().core_kind();
        m_cube = m_kind != isa::CoreKind::Vector;
        m_vec = m_kind != isa::CoreKind::Cube;
        m_sub = m_kind == isa::CoreKind::Vector ? m_ctx.sub_block_idx() : 0;
        m_narrow = kNarrowType && p.split && p.bc >= 128;
    }

    void run() {
        init_buffers();
        m_gq.SetGlobalBuffer(m_p.q, ~0ull / 8);
        m_gk.SetGlobalBuffer(m_p.k, ~0ull / 8);
        m_gv.SetGlobalBuffer(m_p.v, ~0ull / 8);
        m_go.SetGlobalBuffer(m_p.o, ~0ull / 8);
        const uint64_t base = m_p.ws + uint64_t{m_ctx.block_idx()} * m_p.ws_block_bytes();
        m_ws_s = base;
        m_ws_p = m_ws_s + uint64_t{m_p.ahead + 1} * m_p.br * m_p.bc * kWs;
        m_ws_o = m_ws_p + 2ull * m_p.br * m_p.bc * sizeof(T);
        if (m_vec && m_p.causal) setup_causal();
        if (!m_p.split) return coupled();
        if (m_cube) return cube_side();
        return vector_side();
    }

private:
    static constexpr uint32_t kEs = sizeof(T);
    static constexpr uint32_t kWs = sizeof(W);  // workspace S and O elements
    static constexpr bool kWide = sizeof(W) == 4;
    // fp16 scores with fp16 inputs: the maximum, S - m and exp run on fp16 lanes (128 per
    // repeat) and exp writes P directly; the row sum widens P to fp32.
    // (Rows of at least one 128-lane repeat: bc >= 128.)
    static constexpr bool kNarrowType = std::is_same_v<T, half> && std::is_same_v<W, half>;
    static constexpr isa::DType F16 = isa::DType::FP16;
    static constexpr uint32_t kK0 = 32 / kEs;
    static constexpr uint32_t kFrac = isa::kFractalBytes / kEs;

    // ---- the walk ----
    Step first() const { return item_step(m_ctx.block_idx(), 0, 0); }
    Step item_step(uint64_t t, uint32_t j, uint64_t n) const {
        Step s;
        if (t >= m_p.items()) return s;
        if (m_p.list) {
            const AttnItem& it = m_p.list->items[t];
            s.valid = true;
            s.n = n;
            s.g = static_cast<uint32_t>(t);
            s.i0 = it.i0, s.tm = it.tm;
            s.j = j;
            s.steps = (it.keys + m_p.bc - 1) / m_p.bc;
            return s;
        }
        const uint32_t tiles = m_p.row_tiles();
        s.valid = true;
        s.n = n;
        s.g = static_cast<uint32_t>(t % m_p.G);
        s.i0 = (tiles - 1 - static_cast<uint32_t>(t / m_p.G)) * m_p.br;
        s.tm = std::min(m_p.br, m_p.Sq - s.i0);
        s.j = j;
        s.steps = m_p.steps(s.i0, s.tm);
        return s;
    }
    Step next(const Step& s) const {
        if (s.j + 1 < s.steps) {
            Step r = s;
            ++r.j, ++r.n;
            return r;
        }
        const uint64_t t = item_of(s) + m_ctx.block_num();
        return item_step(t, 0, s.n + 1);
    }
    uint64_t item_of(const Step& s) const {
        if (m_p.list) return s.g;
        return uint64_t{m_p.row_tiles() - 1 - s.i0 / m_p.br} * m_p.G + s.g;
    }
    uint32_t kc(const Step& s) const { return std::min(m_p.bc, (m_p.list ? item(s).keys : m_p.Sk) - s.j * m_p.bc); }
    const AttnItem& item(const Step& s) const { return m_p.list->items[s.g]; }
    // Absolute index of the step's first key, and the causal shift (key j visible to row i
    // when j <= i + shift).
    int64_t key_of(const Step& s) const { return (m_p.list ? item(s).key0 : 0) + int64_t{s.j} * m_p.bc; }
    int64_t shift_of(const Step& s) const { return m_p.list ? item(s).shift : 0; }
    // Whether some column of the step lies right of the diagonal of the vector part's first row.
    bool masked(const Step& s) const {
        const int64_t row0 = int64_t{s.i0} + m_sub * m_p.h;
        return m_p.causal && key_of(s) + kc(s) - 1 > row0 + shift_of(s);
    }

    // ---- buffers ----
    void init_buffers() {
        const AttnPlan& p = m_p;
        if (m_cube) {
            m_pipe.InitBuffer(m_qq, 1, rup(p.br, 16) * p.D * kEs);
            m_pipe.InitBuffer(m_qkv, p.ahead + 1, p.bc * (p.D + p.Dv) * kEs);
            if (p.split)
                m_pipe.InitBuffer(m_qp1, 2, rup(p.br, 16) * p.bc * kEs);
            else
                m_pipe.InitBuffer(m_qp1, 2, rup(p.br, 16) * p.bc * kEs, QueuePipes{Pipe::MTE3, Pipe::MTE1});
            m_pipe.InitBuffer(m_qa2, p.a2_bufs, rup(p.br, 16) * std::max(p.D, p.bc) * kEs);
            m_pipe.InitBuffer(m_qb2, p.b2_bufs, p.bc * std::max(p.D, p.Dv) * kEs);
            m_pipe.InitBuffer(m_qc, 2, rup(p.br, 16) * std::max(p.bc, p.Dv) * 4);
        }
        if (!m_vec) return;
        const uint32_t h = p.h;
        if (p.split) {
            m_pipe.InitBuffer(m_qs, p.s_bufs, h * p.bc * kWs);
            m_pipe.InitBuffer(m_qo, 1, h * p.Dv * kWs);
            if (!kWide) m_pipe.InitBuffer(m_wbuf, h * std::max(p.bc, p.Dv) * 4);
        } else {
            m_pipe.InitBuffer(m_sbuf, h * p.bc * 4);
            m_pipe.InitBuffer(m_obuf, h * p.Dv * 4);
        }
        m_pipe.InitBuffer(m_qpo, p.p_bufs, h * std::max(p.bc, p.Dv) * kEs);
        m_pipe.InitBuffer(m_oacc, h * p.Dv * 4);
        m_pipe.InitBuffer(m_ebuf, h * 256);
        m_pipe.InitBuffer(m_blk, rup(h, 8) * 32);
        m_pipe.InitBuffer(m_vals, 8 * rup(h, 64) * 4);
        if (p.causal) {
            m_pipe.InitBuffer(m_ciota, p.bc * 4);
            m_pipe.InitBuffer(m_ctmp, p.bc * 4);
            m_pipe.InitBuffer(m_thr, rup(h, 8) * 32 + 32);
            m_pipe.InitBuffer(m_bits, 4096);
        }
    }
    uint32_t vals(int i) const { return m_vals.Get<uint8_t>().address() + static_cast<uint32_t>(i * rup(m_p.h, 64) * 4); }
    uint32_t ebuf() const { return m_ebuf.Get<uint8_t>().address(); }
    uint32_t oacc() const { return m_oacc.Get<uint8_t>().address(); }
    enum { kM0 = 0, kM1 = 1, kL = 2, kCur = 3, kA0 = 4, kA1 = 5, kR = 6, kTmp = 7 };

    // ---- cube side ----
    // rows x cols of a row-major matrix (row stride ld) into L1 as NZ with rows_pad rows per
    // column group of 16 (ND2NZ, or one burst copy per group on parts without it).
    void load_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols, uint64_t ld,
                 uint32_t rows_pad) {
        if (m_p.nd2nz) {
            DataCopy(dst, src,
                     Nd2NzParams{1, static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), 0,
                                 static_cast<uint32_t>(ld), static_cast<uint16_t>(rows_pad), 1, 0});
            return;
        }
        for (uint32_t g = 0; g * kK0 < cols; ++g) {
            const uint32_t w = std::min(kK0, cols - g * kK0);
            DataCopyPad(dst[g * rows_pad * kK0], src[g * kK0],
                        DataCopyExtParams{rows, w * kEs, static_cast<uint32_t>((ld - w) * kEs), 0});
        }
    }
    void load_q(const Step& s) {
        LocalTensor<T> q = m_qq.template AllocTensor<T>();
        if (m_p.list) {
            GlobalTensor<T> gq;
            gq.SetGlobalBuffer(item(s).q, ~0ull / 8);
            load_nz(q, gq, s.tm, m_p.D, item(s).ldq, rup(s.tm, 16));
        } else {
            load_nz(q, m_gq[(uint64_t{s.g} * m_p.Sq + s.i0) * m_p.D], s.tm, m_p.D, m_p.D, rup(s.tm, 16));
        }
        m_qq.EnQue(q);
        m_q1 = m_qq.template DeQue<T>();
    }
    void load_kv(const Step& s) {
        m_ctx.scalar(4);
        if (s.j == 0) {
            if (m_q1.valid()) m_qq.FreeTensor(m_q1);
            load_q(s);
        }
        const uint32_t c = kc(s), cp = rup(c, 16);
        LocalTensor<T> kv = m_qkv.template AllocTensor<T>();  // K, then V at bc * D
        if (m_p.list) {  // the step's keys lie in one cache block
            const KvSource& src = m_p.list->srcs[item(s).src];
            const uint64_t x = static_cast<uint64_t>(key_of(s));
            const uint64_t row = static_cast<uint64_t>(src.blocks[x / src.bs]) * src.bs + x % src.bs;
            m_ctx.scalar(3);  // block table lookup
            GlobalTensor<T> gk, gv;
            gk.SetGlobalBuffer(src.k + row * src.ld * kEs, ~0ull / 8);
            gv.SetGlobalBuffer(src.v + row * src.ld * kEs, ~0ull / 8);
            load_nz(kv, gk, c, m_p.D, src.ld, cp);
            load_nz(kv[m_p.bc * m_p.D], gv, c, m_p.Dv, src.ld, cp);
        } else {
            const uint64_t row = uint64_t{s.g} * m_p.Sk + uint64_t{s.j} * m_p.bc;
            load_nz(kv, m_gk[row * m_p.D], c, m_p.D, m_p.D, cp);
            load_nz(kv[m_p.bc * m_p.D], m_gv[row * m_p.Dv], c, m_p.Dv, m_p.Dv, cp);
        }
        m_qkv.EnQue(kv);
    }
    // L0A <- the NZ matrix in L1 with mp rows per group, k columns (kk / 16 groups).
    void move_a(const LocalTensor<T>& a2, const LocalTensor<T>& a1, uint32_t mp, uint32_t kk) {
        const uint32_t m1 = mp / 16, k1 = kk / kK0;
        for (uint32_t kb = 0; kb < k1; ++kb)
            LoadData(a2[kb * kFrac], a1,
                     LoadData2DParams{static_cast<uint16_t>(kb * m1), static_cast<uint16_t>(m1), 1,
                                      static_cast<uint16_t>(k1 - 1), false});
    }
    // S = Q K^T (scaled by the drain).
    void s_product(const Step& s) {
        const uint32_t mp = rup(s.tm, 16), np = rup(kc(s), 16), n1 = np / 16, k1 = m_p.D / kK0;
        const LocalTensor<T> kt = m_kv[s.n % (m_p.ahead + 1)] = m_qkv.template DeQue<T>();
        LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
        move_a(a2, m_q1, mp, m_p.D);
        m_qa2.EnQue(a2);
        LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
        for (uint32_t kb = 0; kb < k1; ++kb)  // NZ of K (n x k) is ZN already
            LoadData(b2[kb * n1 * kFrac], kt,
                     LoadData2DParams{static_cast<uint16_t>(kb * n1), static_cast<uint16_t>(n1), 1, 0, false});
        m_qb2.EnQue(b2);
        a2 = m_qa2.template DeQue<T>();
        b2 = m_qb2.template DeQue<T>();
        LocalTensor<float> c = m_qc.template AllocTensor<float>();
        Mmad(c, a2, b2,
             MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(np), static_cast<uint16_t>(m_p.D), true});
        m_qa2.FreeTensor(a2);
        m_qb2.FreeTensor(b2);
        m_qc.EnQue(c);
        c = m_qc.template DeQue<float>();
        FixpipeParams fp{static_cast<uint16_t>(kc(s)), static_cast<uint16_t>(s.tm), static_cast<uint16_t>(mp), m_p.bc};
        if (m_p.scale != 1.0) fp.quantPre = isa::QuantMode::SCALAR, fp.deqScalar = m_p.scale;
        if (m_p.split) {
            GlobalTensor<W> gs;
            gs.SetGlobalBuffer(m_ws_s + (s.n % (m_p.ahead + 1)) * m_p.br * m_p.bc * kWs, uint64_t{m_p.br} * m_p.bc);
            Fixpipe(gs, c, fp);
            CrossCoreSetFlag(m_ctx, 2, kFlagS, Pipe::FIX);
        } else {
            DataCopy(m_sbuf.Get<float>(), c, fp);
        }
        m_qc.FreeTensor(c);
    }
    // P_n into L1 (split: from the workspace once every AIV flagged it).
    LocalTensor<T> load_p(const Step& s) {
        LocalTensor<T> p1 = m_qp1.template AllocTensor<T>();
        for (uint32_t i = 0; i < m_p.aiv; ++i) CrossCoreWaitFlag(m_ctx, 2, static_cast<uint8_t>(kFlagP + i), Pipe::MTE2);
        GlobalTensor<T> gp;
        gp.SetGlobalBuffer(m_ws_p + (s.n % 2) * m_p.br * m_p.bc * kEs, uint64_t{m_p.br} * m_p.bc);
        load_nz(p1, gp, s.tm, rup(kc(s), 16), m_p.bc, rup(s.tm, 16));
        m_qp1.EnQue(p1);
        return m_qp1.template DeQue<T>();
    }
    // O_n = P_n V_n.
    void o_product(const Step& s, const LocalTensor<T>& p1) {
        const uint32_t mp = rup(s.tm, 16), kp = rup(kc(s), 16), n1 = m_p.Dv / 16, k1 = kp / kK0;
        const LocalTensor<T> kv = m_kv[s.n % (m_p.ahead + 1)], v1 = kv[m_p.bc * m_p.D];
        LocalTensor<T> a2 = m_qa2.template AllocTensor<T>();
        move_a(a2, p1, mp, kp);
        m_qa2.EnQue(a2);
        LocalTensor<T> b2 = m_qb2.template AllocTensor<T>();
        for (uint32_t kb = 0; kb < k1; ++kb)  // NZ of V (k x n), each fractal transposed
            LoadData(b2[kb * n1 * kFrac], v1,
                     LoadData2DParams{static_cast<uint16_t>(kb), static_cast<uint16_t>(n1),
                                      static_cast<uint16_t>(kp / 16), 0, true});
        m_qb2.EnQue(b2);
        m_qkv.FreeTensor(kv);
        m_qp1.FreeTensor(p1);
        a2 = m_qa2.template DeQue<T>();
        b2 = m_qb2.template DeQue<T>();
        LocalTensor<float> c = m_qc.template AllocTensor<float>();
        // k = the step's keys, not kp: V's rows past them in the last fractal are whatever L1
        // held before (another kernel's int8 data can read as fp16 NaN), and 0 * NaN is NaN.
        Mmad(c, a2, b2,
             MmadParams{static_cast<uint16_t>(s.tm), static_cast<uint16_t>(m_p.Dv), static_cast<uint16_t>(kc(s)),
                        true});
        m_qa2.FreeTensor(a2);
        m_qb2.FreeTensor(b2);
        m_qc.EnQue(c);
        c = m_qc.template DeQue<float>();
        FixpipeParams fp{static_cast<uint16_t>(m_p.Dv), static_cast<uint16_t>(s.tm), static_cast<uint16_t>(mp), m_p.Dv};
        if (m_p.split) {
            GlobalTensor<W> go;
            go.SetGlobalBuffer(m_ws_o + (s.n % 2) * m_p.br * m_p.Dv * kWs, uint64_t{m_p.br} * m_p.Dv);
            Fixpipe(go, c, fp);
            CrossCoreSetFlag(m_ctx, 2, kFlagO, Pipe::FIX);
        } else {
            DataCopy(m_obuf.Get<float>(), c, fp);
        }
        m_qc.FreeTensor(c);
    }
    void cube_side() {
        Step cur = first();
        if (!cur.valid) return;
        // S runs `ahead` steps in front of O.
        Step last = cur;  // the last step whose S was issued
        load_kv(cur);
        s_product(cur);
        auto issue_next = [&] {
            if (!last.valid) return;
            last = next(last);
            if (!last.valid) return;
            load_kv(last);
            s_product(last);
        };
        for (uint32_t a = 1; a < m_p.ahead; ++a) issue_next();
        for (; cur.valid; cur = next(cur)) {
            m_ctx.scalar(2);
            issue_next();
            o_product(cur, load_p(cur));
        }
        if (m_q1.valid()) m_qq.FreeTensor(m_q1);
    }

    // ---- vector side ----
    uint32_t rows(const Step& s) const {
        const uint32_t r0 = m_sub * m_p.h;
        return s.tm > r0 ? std::min(m_p.h, s.tm - r0) : 0;
    }
    void per_row(uint32_t v, uint32_t len) {
        const uint32_t blk = m_blk.Get<uint8_t>().address();
        norm::brcb(m_ctx, F32, blk, v, len);
        norm::expand_blocks(m_ctx, F32, ebuf(), blk, len);
    }
    void setup_causal() {
        // Column index per lane; per row r the threshold sub * h + r (a column c of block j
        // is masked in row r when c + j0 - i0 > threshold), spread over one block per row.
        norm::iota(m_ctx, F32, m_ciota.Get<uint8_t>().address(), m_p.bc);
        const uint32_t thr = m_thr.Get<uint8_t>().address(), tmp = vals(kTmp);
        norm::iota(m_ctx, F32, tmp, m_p.h);
        vrun(m_ctx, Opcode::VADDS, F32, vop(tmp), vop(tmp), {}, 1, 1, m_p.h, double(m_sub * m_p.h));
        const isa::DType sd = m_narrow ? F16 : F32;
        if (m_narrow) {  // fp16 copies (small integers, exact)
            const uint32_t ci = m_ciota.Get<uint8_t>().address();
            vrun(m_ctx, Opcode::VCONV, F16, vop(ci), vop(ci), {}, 1, 1, m_p.bc, 0, F32);
            vrun(m_ctx, Opcode::VCONV, F16, vop(vals(kR)), vop(tmp), {}, 1, 1, m_p.h, 0, F32);
        }
        norm::brcb(m_ctx, sd, thr, m_narrow ? vals(kR) : tmp, m_p.h);
        vrun(m_ctx, Opcode::VDUP, sd, vop(thr + rup(m_p.h, 8) * 32), {}, {}, 1, 1, m_narrow ? 16 : 8, -kInf);
    }
    // Spreads len fp16 values at v over one 256-byte vector per row in ebuf.
    void per_row16(uint32_t v, uint32_t len) {
        const uint32_t blk = m_blk.Get<uint8_t>().address();
        norm::brcb(m_ctx, F16, blk, v, len);
        norm::expand_blocks(m_ctx, F16, ebuf(), blk, len);
    }
    // The fp16 form of softmax(): S_n (fp16 rows at sa) -> P_n (fp16 rows at pa).
    void softmax16(const Step& s, uint32_t sa, uint32_t pa, uint32_t r) {
        const uint32_t bc = m_p.bc, c = kc(s), L = 128;
        const int64_t rs = int64_t{bc} * 2;
        if (c < bc) {
            if (c % L) norm::fill_tail(m_ctx, F16, sa + c / L * 256, r, rs, c % L, -kInf);
            const uint32_t full = rup(c, L);
            if (full < bc) vrun(m_ctx, Opcode::VDUP, F16, vop(sa + full * 2, 0, rs), {}, {}, 1, r, bc - full, -kInf);
        }
        if (masked(s)) {
            const uint32_t ci = m_ciota.Get<uint8_t>().address(), ct = m_ctmp.Get<uint8_t>().address();
            const uint32_t thr = m_thr.Get<uint8_t>().address();
            vrun(m_ctx, Opcode::VADDS, F16, vop(ct), vop(ci), {}, 1, 1, bc, double(key_of(s) - s.i0 - shift_of(s)));
            norm::vselect_cmp(m_ctx, F16, isa::CmpMode::GT, vop(ct, 0, 0), vblock(thr, 0, 32), F16, vop(sa, 0, rs),
                              vblock(thr + rup(m_p.h, 8) * 32, 0, 0), vop(sa, 0, rs), m_bits.Get<uint8_t>().address(),
                              1, r, bc);
        }
        // Row maximum in fp16 (exact), folded into the P buffer (free until exp writes it).
        const uint32_t m16 = vals(kTmp);
        if (bc <= L) {
            norm::lane_reduce(m_ctx, Opcode::VRED_MAX, F16, sa, m16, r, rs, bc);
        } else {
            const uint32_t units = bc / L;
            const int64_t gs = int64_t{units / 2} * 256;
            norm::fold(m_ctx, Opcode::VMAX, F16, sa, pa, r, rs, gs, units, 256, L);
            norm::lane_reduce(m_ctx, Opcode::VRED_MAX, F16, pa, m16, r, gs, L);
        }
        vrun(m_ctx, Opcode::VCONV, F32, vop(vals(kCur)), vop(m16), {}, 1, 1, r, 0, F16);
        const int mo = m_m, mn = 1 - m_m, al = (s.n % 2) ? kA1 : kA0;
        auto one = [&](Opcode op, int d, int a, int b) {
            vrun(m_ctx, op, F32, vop(vals(d)), vop(vals(a)), vop(vals(b)), 1, 1, r);
        };
        one(Opcode::VMAX, mn, mo, kCur);  // m' = max(m, rowmax)
        one(Opcode::VSUB, al, mo, mn);    // m - m'
        vrun(m_ctx, Opcode::VEXP, F32, vop(vals(al)), vop(vals(al)), {}, 1, 1, r);  // alpha
        m_m = mn;
        vrun(m_ctx, Opcode::VCONV, F16, vop(m16), vop(vals(mn)), {}, 1, 1, r, 0, F32);  // exact: an S value
        per_row16(m16, r);
        vrun(m_ctx, Opcode::VSUB, F16, vop(sa, 0, rs), vop(sa, 0, rs), vrow(ebuf(), 0, 256), 1, r, bc);
        vrun(m_ctx, Opcode::VEXP, F16, vop(pa), vop(sa), {}, 1, 1, uint64_t{r} * bc);
        // Row sum of the fp16 P the cube multiplies, in fp32; l = alpha l + rowsum.
        const uint32_t w = m_wbuf.template Get<uint8_t>().address();
        const int64_t ws = int64_t{bc} * 4;
        vrun(m_ctx, Opcode::VCONV, F32, vop(w), vop(pa), {}, 1, 1, uint64_t{r} * bc, 0, F16);
        if (bc > 64) norm::fold(m_ctx, Opcode::VADD, F32, w, w, r, ws, ws, bc / 64, 256, 64);
        norm::lane_reduce(m_ctx, Opcode::VRED_SUM, F32, w, vals(kCur), r, ws, 64);
        one(Opcode::VMADD, kL, al, kCur);
    }
    void init_item(const Step& s) {
        const uint32_t r = rows(s);
        if (!r) return;
        vrun(m_ctx, Opcode::VDUP, F32, vop(oacc()), {}, {}, 1, 1, uint64_t{r} * m_p.Dv, 0.0);
        vrun(m_ctx, Opcode::VDUP, F32, vop(vals(kM0)), {}, {}, 1, 1, r, -kInf);
        vrun(m_ctx, Opcode::VDUP, F32, vop(vals(kL)), {}, {}, 1, 1, r, 0.0);
        m_m = kM0;
    }
    // S_n (fp32 rows at sa) -> P_n (type T rows at pa); updates m and l, alpha into its slot.
    void softmax(const Step& s, uint32_t sa, uint32_t pa, uint32_t r) {
        const uint32_t bc = m_p.bc, c = kc(s);
        const int64_t rs = int64_t{bc} * 4;
        if (c < bc) {
            if (c % 64) norm::fill_tail(m_ctx, F32, sa + c / 64 * 256, r, rs, c % 64, -kInf);
            const uint32_t full = rup(c, 64);
            if (full < bc) vrun(m_ctx, Opcode::VDUP, F32, vop(sa + full * 4, 0, rs), {}, {}, 1, r, bc - full, -kInf);
        }
        if (masked(s)) {
            const uint32_t ci = m_ciota.Get<uint8_t>().address(), ct = m_ctmp.Get<uint8_t>().address();
            const uint32_t thr = m_thr.Get<uint8_t>().address();
            vrun(m_ctx, Opcode::VADDS, F32, vop(ct), vop(ci), {}, 1, 1, bc, double(key_of(s) - s.i0 - shift_of(s)));
            norm::vselect_cmp(m_ctx, F32, isa::CmpMode::GT, vop(ct, 0, 0), vblock(thr, 0, 32), F32, vop(sa, 0, rs),
                              vblock(thr + rup(m_p.h, 8) * 32, 0, 0), vop(sa, 0, rs), m_bits.Get<uint8_t>().address(),
                              1, r, bc);
        }
        const uint32_t units = bc / 64;
        // Row maximum (folded into the P buffer, free until the cast).
        if (units == 1) {
            norm::lane_reduce(m_ctx, Opcode::VRED_MAX, F32, sa, vals(kCur), r, rs, 64);
        } else {
            const int64_t gs = int64_t{units / 2} * 256;
            norm::fold(m_ctx, Opcode::VMAX, F32, sa, pa, r, rs, gs, units, 256, 64);
            norm::lane_reduce(m_ctx, Opcode::VRED_MAX, F32, pa, vals(kCur), r, gs, 64);
        }
        const int mo = m_m, mn = 1 - m_m, al = (s.n % 2) ? kA1 : kA0;
        auto one = [&](Opcode op, int d, int a, int b) {
            vrun(m_ctx, op, F32, vop(vals(d)), vop(vals(a)), vop(vals(b)), 1, 1, r);
        };
        one(Opcode::VMAX, mn, mo, kCur);  // m' = max(m, rowmax)
        one(Opcode::VSUB, al, mo, mn);    // m - m'
        vrun(m_ctx, Opcode::VEXP, F32, vop(vals(al)), vop(vals(al)), {}, 1, 1, r);  // alpha
        m_m = mn;
        per_row(vals(mn), r);
        vrun(m_ctx, Opcode::VSUB, F32, vop(sa, 0, rs), vop(sa, 0, rs), vrow(ebuf(), 0, 256), 1, r, bc);
        vrun(m_ctx, Opcode::VEXP, F32, vop(sa), vop(sa), {}, 1, 1, uint64_t{r} * bc);
        vrun(m_ctx, Opcode::VCONV, isa::DTypeOf<T>::v, vop(pa), vop(sa), {}, 1, 1, uint64_t{r} * bc, 0, F32);
        // Row sum (in place), l = alpha l + rowsum.
        if (units > 1) norm::fold(m_ctx, Opcode::VADD, F32, sa, sa, r, rs, rs, units, 256, 64);
        norm::lane_reduce(m_ctx, Opcode::VRED_SUM, F32, sa, vals(kCur), r, rs, 64);
        one(Opcode::VMADD, kL, al, kCur);
    }
    // O = alpha_n O + O_n (fp32 rows at oa).
    void accumulate(const Step& s, uint32_t oa, uint32_t r) {
        per_row(vals((s.n % 2) ? kA1 : kA0), r);
        const int64_t rs = int64_t{m_p.Dv} * 4;
        vrun(m_ctx, Opcode::VMADD, F32, vop(oacc(), 0, rs), vrow(ebuf(), 0, 256), vop(oa, 0, rs), 1, r, m_p.Dv);
    }
    // O / l, cast and stored.
    void finish(const Step& s) {
        const uint32_t r = rows(s);
        if (!r) return;
        const int64_t rs = int64_t{m_p.Dv} * 4;
        vrun(m_ctx, Opcode::VREC, F32, vop(vals(kR)), vop(vals(kL)), {}, 1, 1, r);
        per_row(vals(kR), r);
        vrun(m_ctx, Opcode::VMUL, F32, vop(oacc(), 0, rs), vop(oacc(), 0, rs), vrow(ebuf(), 0, 256), 1, r, m_p.Dv);
        if (m_p.list) return finish_item(s, r);
        LocalTensor<T> y = m_qpo.template AllocTensor<T>();
        vrun(m_ctx, Opcode::VCONV, isa::DTypeOf<T>::v, vop(y.address()), vop(oacc()), {}, 1, 1, uint64_t{r} * m_p.Dv, 0,
             F32);
        m_qpo.EnQue(y);
        y = m_qpo.template DeQue<T>();
        DataCopy(m_go[(uint64_t{s.g} * m_p.Sq + s.i0 + m_sub * m_p.h) * m_p.Dv], y, r * m_p.Dv);
        m_qpo.FreeTensor(y);
    }
    // An item's O / l (fp32 in oacc): cast and stored with its row stride, or kept in fp32 with
    // m + ln l in its partial slot.
    void finish_item(const Step& s, uint32_t r) {
        const AttnItem& it = item(s);
        const uint32_t dv = m_p.Dv, r0 = m_sub * m_p.h;
        if (it.part < 0) {
            LocalTensor<T> y = m_qpo.template AllocTensor<T>();
            vrun(m_ctx, Opcode::VCONV, isa::DTypeOf<T>::v, vop(y.address()), vop(oacc()), {}, 1, 1, uint64_t{r} * dv, 0, F32);
            m_qpo.EnQue(y);
            y = m_qpo.template DeQue<T>();
            GlobalTensor<T> go;
            go.SetGlobalBuffer(it.o + uint64_t{r0} * it.ldo * kEs, ~0ull / 8);
            DataCopyPad(go, y, DataCopyExtParams{r, dv * kEs, 0, (it.ldo - dv) * kEs});
            m_qpo.FreeTensor(y);
            return;
        }
        const uint64_t slot = m_p.list->partial + static_cast<uint64_t>(it.part) * partial_slot_bytes(m_p.br, dv);
        // fp32 rows through the output queue, as many rows per trip as its buffer holds.
        const uint32_t per = std::max(1u, m_p.h * std::max(m_p.bc, dv) * kEs / (dv * 4));
        for (uint32_t a = 0; a < r; a += per) {
            const uint32_t n = std::min(per, r - a);
            LocalTensor<float> y = m_qpo.template AllocTensor<float>();
            vrun(m_ctx, Opcode::VMULS, F32, vop(y.address()), vop(oacc() + a * dv * 4), {}, 1, 1, uint64_t{n} * dv, 1.0);
            m_qpo.EnQue(y);
            y = m_qpo.template DeQue<float>();
            GlobalTensor<float> go;
            go.SetGlobalBuffer(slot + uint64_t{r0 + a} * dv * 4, uint64_t{n} * dv);
            DataCopy(go, y, n * dv);
            m_qpo.FreeTensor(y);
        }
        LocalTensor<float> lse = m_qpo.template AllocTensor<float>();
        vrun(m_ctx, Opcode::VLN, F32, vop(lse.address()), vop(vals(kL)), {}, 1, 1, r);
        vrun(m_ctx, Opcode::VADD, F32, vop(lse.address()), vop(lse.address()), vop(vals(m_m)), 1, 1, r);
        m_qpo.EnQue(lse);
        lse = m_qpo.template DeQue<float>();
        GlobalTensor<float> gl;
        gl.SetGlobalBuffer(slot + uint64_t{m_p.br} * dv * 4 + uint64_t{r0} * 4, r);
        DataCopy(gl, lse, r);
        m_qpo.FreeTensor(lse);
    }
    void vec_p(const Step& s) {
        const uint32_t r = rows(s);
        m_ctx.scalar(4);
        LocalTensor<W> sb = m_qs.template AllocTensor<W>();
        CrossCoreWaitFlag(m_ctx, 2, kFlagS, Pipe::MTE2);
        GlobalTensor<W> gs;
        gs.SetGlobalBuffer(m_ws_s + ((s.n % (m_p.ahead + 1)) * m_p.br + uint64_t{m_sub} * m_p.h) * m_p.bc * kWs,
                           uint64_t{m_p.h} * m_p.bc);
        if (r) DataCopy(sb, gs, r * m_p.bc);
        m_qs.EnQue(sb);
        sb = m_qs.template DeQue<W>();
        if (r) {
            LocalTensor<T> pb = m_qpo.template AllocTensor<T>();
            uint32_t sa = sb.address();
            if (m_narrow) {
                softmax16(s, sa, pb.address(), r);
            } else if (!kWide) {  // widen to fp32
                sa = m_wbuf.template Get<uint8_t>().address();
                vrun(m_ctx, Opcode::VCONV, F32, vop(sa), vop(sb.address()), {}, 1, 1, uint64_t{r} * m_p.bc, 0,
                     isa::DTypeOf<W>::v);
            }
            if (!m_narrow) softmax(s, sa, pb.address(), r);
            m_qpo.EnQue(pb);
            pb = m_qpo.template DeQue<T>();
            GlobalTensor<T> gp;
            gp.SetGlobalBuffer(m_ws_p + (s.n % 2) * m_p.br * m_p.bc * kEs + uint64_t{m_sub} * m_p.h * m_p.bc * kEs,
                               uint64_t{m_p.h} * m_p.bc);
            DataCopy(gp, pb, r * m_p.bc);
            m_qpo.FreeTensor(pb);
        }
        m_qs.FreeTensor(sb);
        CrossCoreSetFlag(m_ctx, 2, static_cast<uint8_t>(kFlagP + m_sub), Pipe::MTE3);
    }
    void vec_o(const Step& s) {
        const uint32_t r = rows(s);
        LocalTensor<W> ob = m_qo.template AllocTensor<W>();
        CrossCoreWaitFlag(m_ctx, 2, kFlagO, Pipe::MTE2);
        GlobalTensor<W> go;
        go.SetGlobalBuffer(m_ws_o + ((s.n % 2) * m_p.br + uint64_t{m_sub} * m_p.h) * m_p.Dv * kWs,
                           uint64_t{m_p.h} * m_p.Dv);
        if (r) DataCopy(ob, go, r * m_p.Dv);
        m_qo.EnQue(ob);
        ob = m_qo.template DeQue<W>();
        if (r) {
            uint32_t oa = ob.address();
            if constexpr (!kWide) {  // widen to fp32 (the S work buffer is free between softmaxes)
                oa = m_wbuf.template Get<uint8_t>().address();
                vrun(m_ctx, Opcode::VCONV, F32, vop(oa), vop(ob.address()), {}, 1, 1, uint64_t{r} * m_p.Dv, 0,
                     isa::DTypeOf<W>::v);
            }
            accumulate(s, oa, r);
        }
        m_qo.FreeTensor(ob);
    }
    void vector_side() {
        Step prev;
        for (Step cur = first(); cur.valid; cur = next(cur)) {
            if (cur.j == 0) {
                if (prev.valid) {
                    vec_o(prev);
                    finish(prev);
                }
                init_item(cur);
            }
            vec_p(cur);
            if (cur.j > 0) vec_o(prev);
            prev = cur;
        }
        if (prev.valid) {
            vec_o(prev);
            finish(prev);
        }
    }

    // ---- coupled: both sides on one core, S and O drained into UB, P moved UB -> L1 ----
    LocalTensor<T> coupled_p(const Step& s) {
        const uint32_t r = s.tm;
        LocalTensor<T> pb = m_qpo.template AllocTensor<T>();
        softmax(s, m_sbuf.Get<uint8_t>().address(), pb.address(), r);
        m_qpo.EnQue(pb);
        pb = m_qpo.template DeQue<T>();
        LocalTensor<T> p1 = m_qp1.template AllocTensor<T>();
        const uint32_t mp = rup(s.tm, 16);
        for (uint32_t g = 0; g < rup(kc(s), 16) / 16; ++g)  // column group g: 32-byte row pieces
            DataCopy(p1[g * mp * 16], pb[g * 16],
                     DataCopyParams{static_cast<uint16_t>(r), static_cast<uint16_t>(32 / 32),
                                    static_cast<uint16_t>(m_p.bc * kEs / 32 - 1), 0});
        m_qpo.FreeTensor(pb);
        m_qp1.EnQue(p1);
        return m_qp1.template DeQue<T>();
    }
    void coupled() {
        Step cur = first();
        if (!cur.valid) return;
        init_item(cur);
        load_kv(cur);
        s_product(cur);
        for (; cur.valid;) {
            m_ctx.scalar(2);
            const LocalTensor<T> p1 = coupled_p(cur);
            const Step nx = next(cur);
            if (nx.valid) load_kv(nx);
            o_product(cur, p1);
            accumulate(cur, m_obuf.Get<uint8_t>().address(), cur.tm);
            if (nx.valid && nx.j == 0) {
                finish(cur);
                init_item(nx);
            }
            if (nx.valid) s_product(nx);
            if (!nx.valid) finish(cur);
            cur = nx;
        }
        if (m_q1.valid()) m_qq.FreeTensor(m_q1);
    }

    KernelContext m_ctx;
    const AttnPlan& m_p;
    TPipe m_pipe;
    isa::CoreKind m_kind;
    bool m_cube = false, m_vec = false, m_narrow = false;
    uint32_t m_sub = 0;
    int m_m = kM0;
    uint64_t m_ws_s = 0, m_ws_p = 0, m_ws_o = 0;
    GlobalTensor<T> m_gq, m_gk, m_gv, m_go;
    // cube
    TQue<TPosition::A1> m_qq, m_qp1;
    TQue<TPosition::B1> m_qkv;
    LocalTensor<T> m_kv[3];  // K and V of steps n .. n + ahead (dequeued by S, freed by O)
    TQue<TPosition::A2> m_qa2;
    TQue<TPosition::B2> m_qb2;
    TQue<TPosition::CO1> m_qc;
    LocalTensor<T> m_q1;
    // vector
    TQue<TPosition::VECIN> m_qs, m_qo;
    TQue<TPosition::VECOUT> m_qpo;
    TBuf<TPosition::VECCALC> m_sbuf, m_obuf, m_wbuf, m_oacc, m_ebuf, m_blk, m_vals, m_ciota, m_ctmp, m_thr, m_bits;
};

}  // namespace

uint32_t AttnPlan::steps(uint32_t i0, uint32_t rows) const {
    const uint32_t all = kv_blocks();
    if (!causal) return all;
    const uint32_t last = i0 + rows - 1;  // the last row sees keys 0..last
    return std::min(all, last / bc + 1);
}

uint64_t AttnPlan::ws_block_bytes() const {
    const uint64_t w = isa::dtype_size(wt);
    const uint64_t s = uint64_t{br} * bc * w, pp = uint64_t{br} * bc * isa::dtype_size(dt),
                   o = uint64_t{br} * Dv * w;
    return (ahead + 1) * s + 2 * (pp + o);
}

double AttnPlan::visible_pairs() const {
    if (!causal) return double(Sq) * double(Sk);
    double v = 0;
    for (uint32_t i = 0; i < Sq; ++i) v += std::min<double>(Sk, i + 1.0);
    return v;
}

double AttnPlan::flops() const { return double(G) * visible_pairs() * 2.0 * (D + Dv); }

void attention_kernel(isa::IInstrSink& sink, const AttnPlan& p) {
    const bool wide = p.wt == isa::DType::FP32;
    if (p.dt == isa::DType::FP16 && wide)
        Attn<half, float>(sink, p).run();
    else if (p.dt == isa::DType::FP16)
        Attn<half, half>(sink, p).run();
    else if (p.dt == isa::DType::BF16 && wide)
        Attn<bfloat16, float>(sink, p).run();
    else if (p.dt == isa::DType::BF16)
        Attn<bfloat16, half>(sink, p).run();
    else
        throw InputError(std::string("attention: unsupported type ") + isa::dtype_name(p.dt));
}

}  // namespace sfumato::ops::attention
