// A collective as a plan: per step, transfers between ranks (peer copies) and local operations
// on each rank (copies and reductions run as vector kernels). Every rank has three symmetric
// buffers, in elements: In (its staged input), Out (its staged output) and Scratch. Ordering the
// executor (comm/communicator.cpp) guarantees, and plans rely on:
//  - a rank sends step s's transfers once its own local operations of steps < s are done;
//  - a rank runs step s's local operations once the transfers into it of steps <= s have
//    arrived and its own transfers of step s have completed.
// Ranks run ahead of each other, so plans follow rules the checker enforces: each element of a
// rank's buffers is the destination of at most one transfer; nothing reads or writes it before
// the step of that transfer, and other transfers forward it only in later steps.
// Plain C++; run_on_host() executes a plan on host arrays (the reference the tests check the
// algorithms with, and the checker of those rules).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/comm/comm_types.h"

namespace sfumato::comm {

enum class Buf : uint8_t { In, Out, Scratch };
const char* buf_name(Buf b);

struct Region {
    Buf buf = Buf::In;
    uint64_t off = 0;  // elements
    Region at(uint64_t delta) const { return {buf, off + delta}; }
    bool operator==(const Region& o) const { return buf == o.buf && off == o.off; }
};

struct Xfer {
    uint32_t src = 0, dst = 0;
    Region from, to;
    uint64_t count = 0;
    // Reduce into the destination instead of overwriting it (the SDMA's inline reduction): the
    // destination holds a value from an earlier step, and several reducing transfers may target
    // it in one step (in any order).
    bool reduce = false;
    // Issued by the destination rank, reading the source's buffer (the vendor's direct all-gather
    // pulls peers' slices into its own output); otherwise by the source rank.
    bool pull = false;
    uint32_t issuer() const { return pull ? dst : src; }
    uint32_t partner() const { return pull ? src : dst; }
};

struct LocalOp {
    enum class Kind : uint8_t { Copy, Reduce };
    Kind kind = Kind::Copy;
    uint32_t rank = 0;
    Region dst;
    std::vector<Region> srcs;  // Copy: one; Reduce: reduced in this order
    uint64_t count = 0;
};

struct Step {
    std::vector<Xfer> xfers;
    std::vector<LocalOp> ops;
};

struct Plan {
    uint32_t ranks = 0;
    Algo algo = Algo::Ring;
    std::vector<Step> steps;
    uint64_t scratch = 0;  // elements of Scratch every rank needs
    // In and Out are the user's send and receive buffers themselves (no staging copies; the
    // vendor's direct mesh executors), and local copies run on the chip's SDMA.
    bool direct = false;
};

class PlanBuilder {
public:
    explicit PlanBuilder(uint32_t ranks) : m_plan{ranks, Algo::Ring, {}, 0} {}
    uint32_t ranks() const { return m_plan.ranks; }
    // Scratch elements at the same offset on every rank.
    uint64_t alloc(uint64_t elems);
    // Ignored when count is 0 or (for copies) source and destination coincide.
    void xfer(size_t step, uint32_t src, Region from, uint32_t dst, Region to, uint64_t count);
    void xfer_reduce(size_t step, uint32_t src, Region from, uint32_t dst, Region to, uint64_t count);
    void xfer_pull(size_t step, uint32_t src, Region from, uint32_t dst, Region to, uint64_t count);
    void set_direct() { m_plan.direct = true; }
    void copy(size_t step, uint32_t rank, Region dst, Region src, uint64_t count);
    void reduce(size_t step, uint32_t rank, Region dst, std::vector<Region> srcs, uint64_t count);
    // Merges consecutive transfers (and local operations) over adjacent ranges.
    Plan finish(Algo algo);

private:
    Step& step(size_t s);
    Plan m_plan;
};

// Splits `count` elements into `parts` blocks whose sizes are multiples of `align` elements
// (the last non-empty one takes the rest); later blocks may be empty.
std::vector<uint64_t> split(uint64_t count, uint32_t parts, uint64_t align);
std::vector<uint64_t> offsets(const std::vector<uint64_t>& sizes);

// Host execution: `in`, `out` per rank (scratch is allocated here). Checks the plan's rules and
// returns an empty string, or the first violation.
struct HostBuffers {
    std::vector<std::vector<double>> in, out;
};
std::string run_on_host(const Plan& p, RedOp op, HostBuffers& b);

}  // namespace sfumato::comm
