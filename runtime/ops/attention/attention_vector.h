// The vector side (each AIV) of the FusedAttention kernel (class Attn, attention_attn.h): per step
// S_n rows from the workspace into UB, the online softmax (running maximum and sum, P_n in the
// input type back to the workspace for the cube), O = alpha O + O_n, and at an item's end O / l
// cast and stored (or kept in a partial slot); also the causal mask. Simplified: as the class.
#pragma once
#include "runtime/ops/attention/attention_attn.h"

namespace sfumato::ops::attention::detail {

template <class T, class W>
uint32_t Attn<T, W>::rows(const Step& s) const {
    const uint32_t r0 = m_sub * m_p.h;
    return s.tm > r0 ? std::min(m_p.h, s.tm - r0) : 0;
}

template <class T, class W>
void Attn<T, W>::per_row(uint32_t v, uint32_t len) {
    const uint32_t blk = m_blk.Get<uint8_t>().address();
    norm::brcb(m_ctx, F32, blk, v, len);
    norm::expand_blocks(m_ctx, F32, ebuf(), blk, len);
}

template <class T, class W>
void Attn<T, W>::setup_causal() {
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
template <class T, class W>
void Attn<T, W>::per_row16(uint32_t v, uint32_t len) {
    const uint32_t blk = m_blk.Get<uint8_t>().address();
    norm::brcb(m_ctx, F16, blk, v, len);
    norm::expand_blocks(m_ctx, F16, ebuf(), blk, len);
}

// The fp16 form of softmax(): S_n (fp16 rows at sa) -> P_n (fp16 rows at pa).
template <class T, class W>
void Attn<T, W>::softmax16(const Step& s, uint32_t sa, uint32_t pa, uint32_t r) {
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

template <class T, class W>
void Attn<T, W>::init_item(const Step& s) {
    const uint32_t r = rows(s);
    if (!r) return;
    vrun(m_ctx, Opcode::VDUP, F32, vop(oacc()), {}, {}, 1, 1, uint64_t{r} * m_p.Dv, 0.0);
    vrun(m_ctx, Opcode::VDUP, F32, vop(vals(kM0)), {}, {}, 1, 1, r, -kInf);
    vrun(m_ctx, Opcode::VDUP, F32, vop(vals(kL)), {}, {}, 1, 1, r, 0.0);
    m_m = kM0;
}

// S_n (fp32 rows at sa) -> P_n (type T rows at pa); updates m and l, alpha into its slot.
template <class T, class W>
void Attn<T, W>::softmax(const Step& s, uint32_t sa, uint32_t pa, uint32_t r) {
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
template <class T, class W>
void Attn<T, W>::accumulate(const Step& s, uint32_t oa, uint32_t r) {
    per_row(vals((s.n % 2) ? kA1 : kA0), r);
    const int64_t rs = int64_t{m_p.Dv} * 4;
    vrun(m_ctx, Opcode::VMADD, F32, vop(oacc(), 0, rs), vrow(ebuf(), 0, 256), vop(oa, 0, rs), 1, r, m_p.Dv);
}

// O / l, cast and stored.
template <class T, class W>
void Attn<T, W>::finish(const Step& s) {
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
template <class T, class W>
void Attn<T, W>::finish_item(const Step& s, uint32_t r) {
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

// S_n's rows into UB (the MTE2 side of vec_p).
template <class T, class W>
LocalTensor<W> Attn<T, W>::load_s(const Step& s) {
    const uint32_t r = rows(s);
    m_ctx.scalar(4);
    LocalTensor<W> sb = m_qs.template AllocTensor<W>();
    CrossCoreWaitFlag(m_ctx, 2, kFlagS, Pipe::MTE2);
    GlobalTensor<W> gs;
    gs.SetGlobalBuffer(m_ws_s + ((s.n % (m_p.ahead + 1)) * m_p.br + uint64_t{m_sub} * m_p.h) * m_p.bc * kWs,
                       uint64_t{m_p.h} * m_p.bc);
    if (r) DataCopy(sb, gs, r * m_p.bc);
    m_qs.EnQue(sb);
    return sb;
}

template <class T, class W>
void Attn<T, W>::vec_p(const Step& s, LocalTensor<W> sb) {
    const uint32_t r = rows(s);
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

template <class T, class W>
void Attn<T, W>::vec_o(const Step& s) {
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

// S_{n+1}'s load is issued before the wait for O_{n-1}: the AIV's MTE2 runs in order, and
// O_{n-1} comes back only after a round trip through the cube (P_{n-1} into L1, the mad, the
// FixPipe's drain), while the cube produced S_{n+1} before it (AttnPlan::ahead).
template <class T, class W>
void Attn<T, W>::vector_side() {
    Step prev;
    Step cur = first();
    LocalTensor<W> sb;
    if (cur.valid) sb = load_s(cur);
    for (; cur.valid;) {
        const Step nx = next(cur);
        if (cur.j == 0) {
            if (prev.valid) {
                vec_o(prev);
                finish(prev);
            }
            init_item(cur);
        }
        vec_p(cur, sb);
        if (nx.valid) sb = load_s(nx);
        if (cur.j > 0) vec_o(prev);
        prev = cur;
        cur = nx;
    }
    if (prev.valid) {
        vec_o(prev);
        finish(prev);
    }
}

}  // namespace sfumato::ops::attention::detail
