// Parameters of one AI core (scalar unit, pipes, local buffers), read from `chip.aicore.*`.
// Plain C++: loading them needs no SystemC, so `sfumato params`/`info` never elaborate a core.
#pragma once
#include "isa/instr.h"
#include "models/aicore/scalar_mem_params.h"
#include "sim/config.h"

namespace sfumato {

struct BufferParams {
    Param<uint64_t> size;
    Param<uint64_t> align;
    BufferParams(const ParamScope& s, uint64_t size_def, uint64_t align_def, const char* what);
};

struct CoreParams {
    explicit CoreParams(const ParamScope& s);
    ParamScope scope;
    // Scalar unit and pipe queues. Issuing an instruction costs issue_cycles plus setup_cycles
    // per scalar register value it takes (isa::scalar_setup_words).
    Param<uint32_t> scalar_issue_cycles;
    Param<uint32_t> scalar_setup_cycles;
    Param<uint32_t> queue_depth;
    Param<uint32_t> event_ids;
    Param<uint32_t> flag_latency;
    Param<bool> set_flag_blocks;
    // Local buffers.
    BufferParams ub, l1, l0a, l0b, l0c, fb, bt;
    // Vector unit.
    Param<uint32_t> vec_cycles_per_repeat;
    Param<uint32_t> vec_transcendental_cycles_per_repeat;
    Param<uint32_t> vec_reduce_cycles_per_repeat;
    Param<uint32_t> vec_gather_cycles_per_repeat;
    // Sorts (vbitsort, vmrgsort4): bytes of (score, index) structures written per cycle, by score type.
    Param<uint32_t> vec_sort_fp16_bpc, vec_sort_fp32_bpc;
    Param<uint32_t> vec_startup;
    // UB banks (the vendor's 220x layout): rows of `bank_bytes` interleave over `bank_groups`
    // groups; a bank is `bank_rows` rows of one group, so the group's banks follow each other
    // every bank_groups x bank_rows x bank_bytes. Per cycle each group serves one read and one
    // write, each bank one access; a repeat that needs more pays bank_conflict_cycles per extra cycle.
    Param<uint32_t> ub_bank_bytes, ub_bank_groups, ub_bank_rows, ub_bank_conflict_cycles;
    // Cube unit (a fractal step: m0 x k0 x n0 MACs per cycle; k0 depends on the input type).
    Param<uint32_t> cube_m0, cube_n0, cube_k0_16bit, cube_k0_int8, cube_k0_int4, cube_k0_fp32;
    Param<uint32_t> cube_cycles_per_step;
    Param<uint32_t> cube_fill;
    // On-chip paths (bytes per cycle) and startups.
    Param<uint32_t> mte1_l1_l0a_bpc, mte1_l1_l0b_bpc, mte1_l1_ub_bpc, mte1_fill_bpc, mte1_startup;
    Param<uint32_t> fix_l0c_bpc, fix_l1_fb_bpc, fix_startup;
    Param<uint32_t> l0c_ub_bpc, ub_l1_bpc;
    // Cross-core flags (split parts).
    Param<uint32_t> cross_flag_latency;
    // Race checking (a run option: `--check-races` sets it).
    Param<bool> check_races;
    // MTE pipes.
    Param<uint32_t> mte_request_bytes;
    Param<uint32_t> mte_max_outstanding;
    Param<uint32_t> mte2_startup;
    Param<uint32_t> mte3_startup;
    // The scalar unit's caches and TLB, block start-up.
    ScalarMemParams smem;
    // Scalar cycles to issue `in` (issue plus register setup).
    uint32_t issue_cost(const isa::Instr& in) const;
};

}  // namespace sfumato
