// The FusedAttention kernel's class (internal to attention_kernel.cpp): the walk, the buffers and the
// members both sides share, the coupled schedule, and the declarations of the cube side
// (attention_cube.h) and the vector side (attention_vector.h). What the kernel does:
//
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
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernel/api.h"
#include "runtime/ops/attention/attention.h"
#include "runtime/ops/norm/vec_nest.h"
#include "sim/error.h"

namespace sfumato::ops::attention::detail {

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

inline uint32_t rup(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

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

    // ---- cube side (attention_cube.h) ----
    void load_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols, uint64_t ld,
                 uint32_t rows_pad);
    void load_q(const Step& s);
    void load_kv(const Step& s);
    void move_a(const LocalTensor<T>& a2, const LocalTensor<T>& a1, uint32_t mp, uint32_t kk);
    void s_product(const Step& s);
    LocalTensor<T> load_p(const Step& s);
    void o_product(const Step& s, const LocalTensor<T>& p1);
    void cube_side();

    // ---- vector side (attention_vector.h) ----
    uint32_t rows(const Step& s) const;
    void per_row(uint32_t v, uint32_t len);
    void setup_causal();
    void per_row16(uint32_t v, uint32_t len);
    void softmax16(const Step& s, uint32_t sa, uint32_t pa, uint32_t r);
    void init_item(const Step& s);
    void softmax(const Step& s, uint32_t sa, uint32_t pa, uint32_t r);
    void accumulate(const Step& s, uint32_t oa, uint32_t r);
    void finish(const Step& s);
    void finish_item(const Step& s, uint32_t r);
    LocalTensor<W> load_s(const Step& s);
    void vec_p(const Step& s, LocalTensor<W> sb);
    void vec_o(const Step& s);
    void vector_side();

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

}  // namespace sfumato::ops::attention::detail
