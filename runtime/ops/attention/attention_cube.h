// The cube side (the AIC) of the FusedAttention kernel (class Attn, attention_attn.h): Q and the K/V
// blocks into L1 (ND -> NZ), S = Q K^T and O_n = P_n V_n on the cube, their drains through the
// FixPipe (the scale applied there) into the block's workspace, and the cross-core flags that pace
// it against the vector side. Simplified: as the class.
#pragma once
#include "runtime/ops/attention/attention_attn.h"
#include "runtime/ops/cube_load.h"

namespace sfumato::ops::attention::detail {

// rows x cols of a row-major matrix into L1 as NZ (runtime/ops/cube_load.h).
template <class T, class W>
void Attn<T, W>::load_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols,
                         uint64_t ld, uint32_t rows_pad) {
    ops::load_nz(dst, src, rows, cols, ld, rows_pad, m_p.nd2nz);
}

template <class T, class W>
void Attn<T, W>::load_q(const Step& s) {
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

template <class T, class W>
void Attn<T, W>::load_kv(const Step& s) {
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
template <class T, class W>
void Attn<T, W>::move_a(const LocalTensor<T>& a2, const LocalTensor<T>& a1, uint32_t mp, uint32_t kk) {
    const uint32_t m1 = mp / 16, k1 = kk / kK0;
    for (uint32_t kb = 0; kb < k1; ++kb)
        LoadData(a2[kb * kFrac], a1,
                 LoadData2DParams{static_cast<uint16_t>(kb * m1), static_cast<uint16_t>(m1), 1,
                                  static_cast<uint16_t>(k1 - 1), false});
}

// S = Q K^T (scaled by the drain).
template <class T, class W>
void Attn<T, W>::s_product(const Step& s) {
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
template <class T, class W>
LocalTensor<T> Attn<T, W>::load_p(const Step& s) {
    LocalTensor<T> p1 = m_qp1.template AllocTensor<T>();
    for (uint32_t i = 0; i < m_p.aiv; ++i) CrossCoreWaitFlag(m_ctx, 2, static_cast<uint8_t>(kFlagP + i), Pipe::MTE2);
    GlobalTensor<T> gp;
    gp.SetGlobalBuffer(m_ws_p + (s.n % 2) * m_p.br * m_p.bc * kEs, uint64_t{m_p.br} * m_p.bc);
    load_nz(p1, gp, s.tm, rup(kc(s), 16), m_p.bc, rup(s.tm, 16));
    m_qp1.EnQue(p1);
    return m_qp1.template DeQue<T>();
}

// O_n = P_n V_n.
template <class T, class W>
void Attn<T, W>::o_product(const Step& s, const LocalTensor<T>& p1) {
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

template <class T, class W>
void Attn<T, W>::cube_side() {
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

}  // namespace sfumato::ops::attention::detail
