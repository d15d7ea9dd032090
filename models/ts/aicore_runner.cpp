#include "models/ts/aicore_runner.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::ts {

AiCoreRunner::AiCoreRunner(std::vector<AiCore*> cube, std::vector<AiCore*> vector, ClockDomain clock, SystemRegion& region)
    : m_cube(std::move(cube)), m_vector(std::move(vector)), m_clock(clock), m_region(region) {}

void AiCoreRunner::start(AiCore* core, Task& task, const Usage& u, uint32_t block_idx, uint32_t sub_block,
                         IBlockDone& done, uint64_t cookie) {
    Part& p = m_parts[core];
    p = Part{&task, &done, cookie, {}};
    for (int i = 0; i < isa::kNumPipes; ++i) p.busy_at_start[i] = core->pipe_busy(static_cast<isa::Pipe>(i));
    BlockAssignment a;
    a.body = task.kernel.body;
    a.block_idx = block_idx;
    a.block_num = task.kernel.block_dim;
    a.sub_block_idx = sub_block;
    a.start_cycle = m_clock.ceil_cycle(now_tick()).v;
    const KernelDesc& k = task.kernel;
    a.image = &m_region.image(k.type.empty() ? k.name : k.type, core->core_kind(), k.code_bytes);
    a.args_addr = u.args_addr;
    a.args_bytes = k.args_bytes;
    a.task_seq = u.launch;
    const bool cube = core->core_kind() != isa::CoreKind::Vector;
    const uint32_t per_aic = m_cube.empty() ? 1 : static_cast<uint32_t>(m_vector.size() / m_cube.size());
    a.kind_cores = k.block_dim * (!cube && k.kind == KernelKind::Mix ? std::max(per_aic, 1u) : 1u);
    core->assign(std::move(a), *this);
}

void AiCoreRunner::run_block(const CoreSlot& slot, Task& task, uint32_t block_idx, IBlockDone& done, uint64_t cookie) {
    auto [u, fresh] = m_usage.try_emplace(&task);
    if (fresh) {
        u->second.cube.assign(m_cube.size(), false);
        u->second.vector.assign(m_vector.size(), false);
        u->second.blocks_left = task.kernel.block_dim;
        u->second.launch = ++m_launches;
        u->second.args_addr = m_region.args_addr(u->second.launch, task.kernel.args_bytes, task.kernel.name);
    }
    uint32_t parts = 0;
    if (slot.cube >= 0) {
        u->second.cube[static_cast<size_t>(slot.cube)] = true;
        ++parts;
    }
    for (uint32_t i = 0; i < slot.vec_count; ++i) {
        u->second.vector[static_cast<size_t>(slot.vec_first) + i] = true;
        ++parts;
    }
    m_parts_left[cookie] = parts;
    if (slot.cube >= 0) start(m_cube[static_cast<size_t>(slot.cube)], task, u->second, block_idx, 0, done, cookie);
    for (uint32_t i = 0; i < slot.vec_count; ++i)
        start(m_vector[static_cast<size_t>(slot.vec_first) + i], task, u->second, block_idx, i, done, cookie);
}

void AiCoreRunner::block_done(AiCore& core) {
    auto it = m_parts.find(&core);
    if (it == m_parts.end() || !it->second.task) throw ModelError(core.name(), "completion from an idle core");
    Part p = it->second;
    it->second.task = nullptr;
    for (int i = 0; i < isa::kNumPipes; ++i)
        p.task->pipe_busy[i] += core.pipe_busy(static_cast<isa::Pipe>(i)) - p.busy_at_start[i];
    p.task->startup_cycles = std::max(p.task->startup_cycles, core.last_startup_cycles());
    if (--m_parts_left[p.cookie] > 0) return;
    m_parts_left.erase(p.cookie);
    auto u = m_usage.find(p.task);
    if (--u->second.blocks_left == 0) {
        auto count = [](const std::vector<bool>& v) { return static_cast<uint32_t>(std::count(v.begin(), v.end(), true)); };
        p.task->cube_cores_used = count(u->second.cube);
        p.task->vector_cores_used = count(u->second.vector);
        m_usage.erase(u);
    }
    p.done->block_done(p.cookie);
}

}  // namespace sfumato::ts
