// The reduction kernel's UB buffers (runtime/ops/norm/reduce_kernel.h): their sizes in the
// sequential layout, and their placement for the 220x bank rules (ub_place.h): the input
// buffers apart from the fp32 copy they convert into, the folded tile apart from the fold
// scratch (the fold's levels alternate between the two, never a level into the bank it reads),
// the accumulator and the output buffers apart from what they are written from.
#pragma once
#include <cstdint>

#include "runtime/ops/norm/reduce_kernel.h"

namespace sfumato::ops::norm {

inline bool is_arg(const ReducePlan& p) { return p.op == ReducePlan::Op::ArgMax || p.op == ReducePlan::Op::ArgMin; }

// Buffer sizes, each staggered (vec_nest.h) for the sequential layout; 0 = not used.
struct RLayout {
    uint64_t in, out, xf, t, scr, acc, e, vals, blocks, cmp, pblk, iota, sent, bits;
};
RLayout rlayout(const ReducePlan& p);

// Offsets of the placed buffers within a reserve of the whole UB (p.ub bytes); placed = false
// for ArgMax/ArgMin, one buffer per queue, or buffers that do not fit whole inside bank spans:
// the kernel then keeps the sequential layout.
struct RPlace {
    bool placed = false;
    uint64_t stagger = 0;  // bytes of each staggered size the placement leaves out
    uint64_t in[2] = {0, 0}, out[2] = {0, 0}, xf = 0, t = 0, scr = 0, acc = 0, e = 0, vals = 0, blocks = 0, cmp = 0,
             pblk = 0;
};
RPlace place_reduce(const ReducePlan& p, const RLayout& l);

}  // namespace sfumato::ops::norm
