// The reduction kernel's UB buffers (runtime/ops/norm/reduce_layout.h).
#include "runtime/ops/norm/reduce_layout.h"

#include <vector>

#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

RLayout rlayout(const ReducePlan& p) {
    RLayout l{};
    const uint64_t ex = isa::dtype_size(p.xt), ey = isa::dtype_size(p.yt);
    const bool cast = p.xt != p.ct, pre = p.pre != ReducePlan::Pre::None, lse = p.op == ReducePlan::Op::LogSumExp;
    if (p.rows) {
        const uint64_t elems = uint64_t{p.k} * p.cp, keep = cdiv(p.cp / 64, 2);
        l.in = staggered(elems * ex);
        l.out = staggered(up(p.k, 64) * std::max<uint64_t>(ey, 4));
        l.xf = cast ? staggered(elems * 4) : 0;
        l.t = pre || lse ? staggered(elems * 4) : 0;
        l.scr = staggered(uint64_t{p.k} * keep * 256);
        l.acc = p.nch > 1 ? staggered(uint64_t{p.k} * 256) : 0;
        l.e = lse ? staggered(uint64_t{p.k} * 256) : 0;
        l.vals = 2 * up(p.k, 64) * 4;
        l.blocks = up(p.k, 8) * kBlk;
        if (p.op == ReducePlan::Op::Prod) {
            l.cmp = up(uint64_t{p.k} * 32, 256);
            l.pblk = staggered(uint64_t{p.k} * 256);
        }
        if (is_arg(p)) {
            l.t = staggered(elems * 4);
            l.e = staggered(uint64_t{p.k} * 256);
            l.iota = staggered(uint64_t{p.cp} * 4);
        }
    } else {
        const uint64_t elems = uint64_t{p.g} * p.rc * p.icp, keep = cdiv(p.rc, 2);
        l.in = staggered(elems * ex);
        l.out = staggered(uint64_t{p.g} * p.icp * std::max<uint64_t>(ey, 4));
        l.xf = cast ? staggered(elems * 4) : 0;
        l.t = pre || lse ? staggered(elems * 4) : 0;
        l.scr = staggered(uint64_t{p.g} * keep * p.icp * 4);
        l.acc = p.rc < p.len ? staggered(uint64_t{p.icp} * 4) : 0;
        l.e = lse ? staggered(uint64_t{p.g} * p.icp * 4) : 0;
        if (is_arg(p)) {
            l.t = staggered(elems * 4);
            l.iota = staggered(up(p.len, 64) * 4 + up(p.len, 8) * kBlk);  // positions, then one block each
        }
    }
    if (is_arg(p)) l.sent = 256, l.bits = kBitsScratch;
    return l;
}

RPlace place_reduce(const ReducePlan& p, const RLayout& l) {
    RPlace r;
    if (is_arg(p) || p.buffers != 2 || p.ub < kBankSpan) return r;
    const bool cast = p.xt != p.ct, pre = p.pre != ReducePlan::Pre::None, lse = p.op == ReducePlan::Op::LogSumExp;
    enum { In0, In1, Out0, Out1, Xf, T, Scr, Acc, E, Vals, Blocks, Cmp, Pblk, N };
    // Rows: staggered sizes less their 256-byte stagger (a multiple of 2 KiB, at least the
    // buffer; rows are whole 64-lane units). Columns keep it: a masked repeat of a row narrower
    // than 64 lanes spans a whole 256-byte repeat past the buffer's last row.
    const uint64_t less = p.rows ? 256 : 0;
    auto bytes = [less](uint64_t staggered_bytes) { return staggered_bytes ? staggered_bytes - less : 0; };
    std::vector<UbItem> it(N);
    it[In0] = it[In1] = {bytes(l.in), 0};
    it[Out0] = it[Out1] = {bytes(l.out), 0};
    it[Xf] = {bytes(l.xf), 0}, it[T] = {bytes(l.t), 0}, it[Scr] = {bytes(l.scr), 0}, it[Acc] = {bytes(l.acc), 0};
    it[E] = {bytes(l.e), 0}, it[Vals] = {l.vals, 0}, it[Blocks] = {l.blocks, 0}, it[Cmp] = {l.cmp, 0};
    it[Pblk] = {bytes(l.pblk), 0};
    // x: the fp32 copy, else the input buffers; f: what the fold reads (the pre-op's result in
    // t; LogSumExp's exponentials, in x for rows and in t for columns).
    const std::vector<int> x = cast ? std::vector<int>{Xf} : std::vector<int>{In0, In1};
    const std::vector<int> f = pre || (lse && !p.rows) ? std::vector<int>{T} : x;
    std::vector<UbApart> apart;
    if (cast) apart.push_back({In0, Xf, 1}), apart.push_back({In1, Xf, 1});
    for (int i : f) apart.push_back({i, Scr, 2});
    if (pre || lse)
        for (int i : x) apart.push_back({i, T, 2});
    if (lse) apart.push_back({T, Scr, 1});
    for (int o : {Out0, Out1}) {
        apart.push_back({o, Scr, 1}), apart.push_back({o, Vals, 1});
        for (int i : f) apart.push_back({o, i, 1});
        if (l.acc) apart.push_back({o, Acc, 1});
    }
    if (l.acc) {
        apart.push_back({Acc, Scr, 1});
        for (int i : f) apart.push_back({Acc, i, 1});
    }
    const std::vector<uint64_t> at = place_apart(it, apart, p.ub, kBankSpan);
    if (at.empty()) return r;
    r.placed = true;
    r.stagger = less;
    r.in[0] = at[In0], r.in[1] = at[In1], r.out[0] = at[Out0], r.out[1] = at[Out1];
    r.xf = at[Xf], r.t = at[T], r.scr = at[Scr], r.acc = at[Acc], r.e = at[E], r.vals = at[Vals];
    r.blocks = at[Blocks], r.cmp = at[Cmp], r.pblk = at[Pblk];
    return r;
}

}  // namespace sfumato::ops::norm
