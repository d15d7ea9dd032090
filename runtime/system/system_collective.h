// One collective on a system of chips as a library (the host side of `sfumato collective`,
// cli/cmd_collective.cpp, which parses, calls this and prints; a user's C++ program does the
// same): over a sys::SystemRun (system_run.h; split over ranks or not) it opens the communicator
// over chips 0..R-1 (runtime/comm), runs each local rank's host program (inputs copied in, the
// collective `iters` times back to back, the output copied out), times it from the first task of
// the collective to the last over all ranks, checks every local rank's output against the
// collective's definition in functional mode (inputs are small integers: every summation order is
// exact, so the check is exact) and makes summary.json's sections:
//
//   sys::SystemRun s(system, host_params, &trace, stats_root);   // system: models/link's System
//   sys::CollectiveSpec c;  c.call.op = comm::Op::AllReduce;  c.bytes = 1 << 20;
//   const sys::CollectiveRun run = sys::run_collective(s, c, comm_params, functional);
//   ... run.time_us, run.algbw_gbps, sys::collective_json(s, run) ...
// (The communicator lives in runtime/comm, inside sfumato_runtime, which runtime/system builds on;
// the run over a system is therefore here.)
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>

#include "runtime/comm/communicator.h"
#include "runtime/system/system_run.h"

namespace sfumato::sys {

struct CollectiveSpec {
    // op, dtype, redop, root, algo (count is set from bytes; send and recv by each rank).
    comm::Communicator::Call call;
    // The message as algorithm bandwidth counts it: the vector (all_reduce, broadcast, reduce),
    // the gathered output (all_gather), the scattered input (reduce_scatter), each rank's send
    // buffer (all_to_all).
    uint64_t bytes = 0;
    uint32_t ranks = 0;  // chips 0..R-1 (0: every chip)
    uint32_t iters = 1;  // back-to-back repetitions (time is per repetition)
};

// The spec's ranks (0 resolved to every chip) and the call's count; InputError (naming --ranks,
// --bytes, --root) when the system has too few chips, the bytes are not a positive multiple of
// the element size (times the ranks where the message is per rank), or the root is not a rank.
CollectiveSpec resolve_collective(const SystemRun& s, const CollectiveSpec& spec);

// The bus bandwidth factor of op on n ranks (busbw = algbw x factor: 2 (n-1)/n for all_reduce,
// 1 for broadcast and reduce, (n-1)/n for the others).
double bus_factor(comm::Op op, uint32_t n);

struct CollectiveRun {
    CollectiveSpec spec;  // resolved
    comm::Algo algo = comm::Algo::Auto;  // the algorithm the communicator chose
    uint64_t loops = 0;                  // pieces the vector is run in (comm buffers)
    uint64_t t0_ps = 0, t1_ps = 0;       // first task start, last task end, over all ranks
    double time_us = 0;                  // per repetition
    double algbw_gbps = 0, busbw_gbps = 0;
    nlohmann::json check = {{"checked", false}};  // {"checked", "passed", "compared", "mismatches"[, "first_mismatch"]}
    bool passed = true;
};

// Runs the collective (resolve_collective first) on s to completion. Split over ranks, every
// process calls it; the time and the check's counts are over every process's ranks.
CollectiveRun run_collective(SystemRun& s, const CollectiveSpec& spec, const comm::CommParams& cp, bool functional);

// summary.json's sections: collective (op, bytes, dtype, redop, ranks, root, iters, count, loops),
// algo, time_us, algbw_gbps, busbw_gbps, links (over the collective) and check. Split over
// ranks, every process calls it (links_json is collective then).
nlohmann::json collective_json(const SystemRun& s, const CollectiveRun& run);

}  // namespace sfumato::sys
