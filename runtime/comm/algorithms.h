// Collective algorithms as plans (comm/plan.h). Building blocks work on a list of participants
// (communicator ranks) and blocks of elements, so that one implementation serves a whole
// communicator, one server's chips or the chips with the same index in every server:
//  - reduce-scatter: participant q holds its contribution to block b at src(q, b); afterwards
//    participant b holds the reduction of block b at dst(b);
//  - all-gather: participant b holds block b at pos(b, b); afterwards every participant q holds
//    every block b at pos(q, b).
// Ring: one neighbour per step (n - 1 steps); mesh: everyone at once (one step);
// halving-doubling: log2 steps at distances n/2, n/4, ... (reduce-scatter) and 1, 2, ...
// (all-gather); a non-power-of-two n folds the first 2e ranks in pairs first (extra traffic and
// two more steps, as the vendor library documents); double ring: each block split in two, one
// half around the ring each way. build_plan() composes them into the six collectives for one
// loop (comm/communicator.h stages data through the buffers loop by loop); hierarchical plans
// run an intra-group phase (mesh on fully connected groups, else ring), an inter-group phase
// among the ranks with the same index in every group (halving-doubling when the group count is a
// power of two, else ring) and an intra-group phase again.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/comm/plan.h"

namespace sfumato::comm {

struct RsSpec {
    std::vector<uint32_t> ranks;
    std::vector<uint64_t> size;  // per block
    std::function<Region(uint32_t q, uint32_t b)> src;
    std::function<Region(uint32_t b)> dst;
};
struct AgSpec {
    std::vector<uint32_t> ranks;
    std::vector<uint64_t> size;
    std::function<Region(uint32_t q, uint32_t b)> pos;
};

// Each returns the first step after the ones it used (the next phase starts there).
size_t rs_mesh(PlanBuilder& pb, size_t s0, const RsSpec& s);
size_t rs_ring(PlanBuilder& pb, size_t s0, const RsSpec& s, bool reverse);
size_t rs_hd(PlanBuilder& pb, size_t s0, const RsSpec& s);
size_t ag_mesh(PlanBuilder& pb, size_t s0, const AgSpec& s);
size_t ag_ring(PlanBuilder& pb, size_t s0, const AgSpec& s, bool reverse);
size_t ag_hd(PlanBuilder& pb, size_t s0, const AgSpec& s);
// Flat algorithms (ring, halving-doubling, mesh, double ring) by name.
size_t run_rs(PlanBuilder& pb, size_t s0, Algo a, const RsSpec& s);
size_t run_ag(PlanBuilder& pb, size_t s0, Algo a, const AgSpec& s);
// Participants' Out[0, count): from participant `root` to all (it holds them at s0).
size_t bcast(PlanBuilder& pb, size_t s0, Algo a, const std::vector<uint32_t>& ranks, uint32_t root, uint64_t count,
             uint64_t align);
// Reduction of every participant's `acc` region (Out[0, count) unless given) into participant
// `root`'s Out[0, count).
size_t reduce_to(PlanBuilder& pb, size_t s0, Algo a, const std::vector<uint32_t>& ranks, uint32_t root,
                 uint64_t count, uint64_t align, const std::function<Region(uint32_t q)>& input);

struct PlanRequest {
    Op op = Op::AllReduce;
    Algo algo = Algo::Ring;  // not Auto
    uint32_t ranks = 1;
    uint64_t count = 0;      // elements: see in_elems/out_elems
    uint32_t root = 0;       // broadcast, reduce
    uint64_t align = 1;      // block sizes are multiples of this (elements) when large enough
    // Hierarchical: the group of every rank (server, or link group), and whether a group's
    // chips are fully connected.
    std::vector<uint32_t> group;
    bool group_full_mesh = true;
};
// Throws InputError when the algorithm does not apply (hierarchical with unequal groups).
Plan build_plan(const PlanRequest& r);
// Elements of In and Out one loop of `count` uses (count as PlanRequest defines it: the vector
// for all_reduce/broadcast/reduce, per rank for all_gather/reduce_scatter, per pair for all_to_all).
uint64_t in_elems(Op op, uint32_t ranks, uint64_t count);
uint64_t out_elems(Op op, uint32_t ranks, uint64_t count);

}  // namespace sfumato::comm
