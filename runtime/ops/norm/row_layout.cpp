// The row kernel's UB buffers (runtime/ops/norm/row_layout.h).
#include "runtime/ops/norm/row_layout.h"

#include <algorithm>
#include <vector>

#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

Layout layout(const RowPlan& p, uint32_t k) {
    const uint64_t ex = isa::dtype_size(p.xt), ey = isa::dtype_size(p.yt);
    const uint64_t c = p.cp / 64, keep = cdiv(c, 2);
    const uint64_t f32 = uint64_t{k} * p.cp * 4;
    Layout l{};
    l.in = staggered(uint64_t{k} * p.cp * ex);
    l.out = staggered(uint64_t{k} * p.cp * ey);
    l.xf = p.xt == F32 ? 0 : staggered(f32);
    l.t = staggered(f32);
    l.scr = staggered(uint64_t{k} * keep * 256);
    l.e = staggered(uint64_t{std::max(k, 3u)} * 512);  // two copies of each per-row vector (apply_rows)
    l.vals = 6 * up(k, 64) * 4;
    l.blocks = (up(k, 8) + 16) * kBlk;  // per-row blocks, then 16 parameter blocks
    if (p.affine == RowPlan::Affine::Lanes) {
        l.gstage = up(uint64_t{p.cp} * 4, kBlk);  // widest storage type
        l.gvec = staggered(2 * uint64_t{p.cp} * 4);
    }
    if (p.affine == RowPlan::Affine::PerP) l.par = 2 * kBlk;
    if (p.mean || p.rstd) l.stat = 2 * up(k, 8) * 4;
    return l;
}

uint64_t row_ub_bytes(const RowPlan& p, uint32_t k) {
    const Layout l = layout(p, k);
    return p.buffers * (l.in + l.out) + l.xf + l.t + l.scr + l.e + l.vals + l.blocks + l.gstage + l.gvec +
           2 * l.par + 2 * l.stat + 1024;
}


RowPlacement place_row(const RowPlan& p, const Layout& l, uint64_t ub) {
    RowPlacement r;
    if (p.buffers != 2 || !p.nch) return r;
    const bool x32 = p.xt == F32, y32 = p.yt == F32;
    const uint64_t ex = isa::dtype_size(p.xt), ey = isa::dtype_size(p.yt), k = p.k, c = p.cp / 64;
    r.in_bytes = up(k * p.cp * ex, kBlk), r.out_bytes = up(k * p.cp * ey, kBlk), r.f32_bytes = k * p.cp * 4;
    r.scr_bytes = l.scr - 256, r.e_bytes = l.e - 256, r.gvec_bytes = l.gvec ? l.gvec - 256 : 0;
    enum { In0, In1, Out0, Out1, Xf, T, Scr, E, Vals, Blocks, Gvec, Gstage, Par, Stat, N };
    std::vector<UbItem> it(N);
    // fp32 rows are read in the input queue's buffers (no xf); at the phase xf would take.
    it[In0] = it[In1] = {r.in_bytes, 0};
    it[Out0] = it[Out1] = {r.out_bytes, 0};
    it[Xf] = {x32 ? 0 : r.f32_bytes, 0};
    it[T] = {r.f32_bytes, 0};
    it[Scr] = {r.scr_bytes, 0};
    it[E] = {r.e_bytes, 0};
    it[Vals] = {l.vals, 0};
    it[Blocks] = {l.blocks, 0};
    it[Gvec] = {r.gvec_bytes, 256};
    it[Gstage] = {l.gstage, 0};
    it[Par] = {2 * l.par, 0};
    it[Stat] = {2 * l.stat, 0};
    const uint32_t w = static_cast<uint32_t>(c);
    const bool ln = p.kind == RowPlan::Kind::LayerNorm;
    // x: xf, or the input buffers themselves for fp32 rows. The output is converted from the
    // result (softmax: t, layernorm: x) or, for fp32 output, written by the last application
    // (softmax: from x, layernorm: from t).
    const std::vector<int> xs = x32 ? std::vector<int>{In0, In1} : std::vector<int>{Xf};
    std::vector<UbApart> apart;
    if (!x32) apart = {{In0, Xf, w}, {In1, Xf, w}};
    for (int x : xs) apart.push_back({x, T, 3 * w}), apart.push_back({x, Scr, w});
    apart.push_back({Scr, Out0, w / 2 + 1}), apart.push_back({Scr, Out1, w / 2 + 1});
    const std::vector<int> res = (ln != y32) ? xs : std::vector<int>{T};
    for (int x : res) apart.push_back({x, Out0, w}), apart.push_back({x, Out1, w});
    if (ln) apart.push_back({T, Scr, w});
    const std::vector<uint64_t> at = place_apart(it, apart, ub, kBankSpan);
    if (at.empty()) return r;
    r.placed = true;
    r.reserve = ub;
    r.in[0] = at[In0], r.in[1] = at[In1], r.out[0] = at[Out0], r.out[1] = at[Out1];
    r.xf = at[Xf], r.t = at[T], r.scr = at[Scr], r.e = at[E], r.vals = at[Vals], r.blocks = at[Blocks];
    r.gvec = at[Gvec], r.gstage = at[Gstage], r.par = at[Par], r.stat = at[Stat];
    return r;
}

}  // namespace sfumato::ops::norm
