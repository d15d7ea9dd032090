// Per-instruction timing of an AI core's pipes, computed arithmetically from the core's
// parameters: pipe occupancy (the throughput cost: the pipe can start its next instruction after
// it) and latency beyond it (pipeline depth, fill, startup). Compute instructions only; GM
// transfers are timed by the memory system (see gm_pattern.h). UB bank conflicts are derived per
// repeat from the 32-byte blocks an instruction's operands touch (a few integer operations per
// block, no per-element work; a block read with block stride 0 is one access, broadcast), by the
// vendor's published rules for its 220x UB (CoreParams: rows interleave over bank groups; a group
// reads one row and writes one row per cycle, a bank serves one access): the sources and the
// destination of a repeat count as accessed together, so an instruction that writes where it
// reads (x = x * y) or reads one buffer twice pays a conflict, as the rules say.
// Simplified: one bank-conflict rule for every vector op that reads
// and writes UB blocks; reductions, gathers and transposes are charged by op class only.
#pragma once
#include <cstdint>

#include "isa/instr.h"
#include "models/aicore/core_params.h"

namespace sfumato {

// Timing of a compute instruction: pipe occupancy (throughput) and extra latency to completion.
struct ComputeTiming {
    uint64_t occupancy = 1;
    uint64_t latency = 0;
    uint64_t ub_conflict = 0;  // of the occupancy: cycles lost to UB bank conflicts
};

ComputeTiming compute_timing(const isa::Instr& in, const CoreParams& p);

// Extra cycles an instruction pays for UB bank and bank-group conflicts, over all repeats.
uint64_t ub_conflict_cycles(const isa::Instr& in, const CoreParams& p);

// Cube cycles (occupancy) of a MAD: ceil(m/m0) * ceil(k/k0) * ceil(n/n0) * cycles per step.
uint64_t mad_cycles(const isa::Instr& in, const CoreParams& p);

}  // namespace sfumato
