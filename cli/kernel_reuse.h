// Kernel timing re-use (`sfumato train-step --reuse-timing on`), a stated modelling shortcut for
// timing-mode speed: a kernel launch identical to an earlier one on the same context (same node
// op type, opset, attributes, constant inputs, operand shapes, dtypes, formats, strides and
// address alignment, same launch part, block count, core kind, argument and code sizes) runs as
// a stand-in whose blocks occupy the same cores for the time the first occurrence took, instead
// of the first one's instructions and memory requests. Block b of the stand-in belongs to wave
// b / cores; the first occurrence's span is split evenly over its waves, and a wave's blocks, which
// the scheduler starts one dispatch interval apart, each charge that span less the dispatch spread
// of the wave and less the first's longest block start-up (their own start-up comes before their
// bodies) as scalar work: they end staggered as the first's blocks did, the last at the wave's end. Only launches that carry a node (a NodeLaunch
// origin) are candidates; the first occurrence must have completed when a stand-in block starts
// (one in-order stream), otherwise that block runs the real kernel.
// What it leaves out, so what the error is made of: the stand-in moves no data, so its L2 and
// HBM traffic (and the contention it would cause a concurrent collective, and the L2 contents
// the next kernel finds) is missing; its start-up differs from the first's; a kernel whose time
// depends on what ran before it (a warm or cold L2) gets the first's time. Timing mode only
// (no data is computed). tests/regression/train_step_cli_test.cpp measures the error on a small
// ResNet; docs/multichip.md states it.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "runtime/rt/context.h"

namespace sfumato::cli {

class KernelReuse {
public:
    // Installs the launch hook on ctx (which must outlive this object's use); dev: its core counts
    // (waves of a launch with more blocks than cores); the task scheduler's dispatch time per
    // block and per core a block starts on (chip.ts.block_dispatch_cycles, core_start_cycles).
    KernelReuse(rt::Context& ctx, const DeviceInfo& dev, uint32_t block_dispatch_cycles, uint32_t core_start_cycles);
    ~KernelReuse();  // removes the hook
    KernelReuse(const KernelReuse&) = delete;
    KernelReuse& operator=(const KernelReuse&) = delete;
    uint64_t reused() const { return m_reused; }      // launches given a stand-in
    uint64_t candidates() const { return m_candidates; }  // launches with a node
    uint64_t unique() const { return m_first.size(); }

private:
    void on_launch(KernelDesc& k);
    rt::Context& m_ctx;
    uint32_t m_cube, m_vector, m_aiv_per_aic, m_block_cycles, m_core_cycles;
    std::map<std::string, size_t> m_first;  // key -> task record index of its first launch
    uint64_t m_reused = 0, m_candidates = 0;
};

// The identity of a launch for re-use (empty: not a candidate).
std::string kernel_reuse_key(const KernelDesc& k);

}  // namespace sfumato::cli
