// Runs the task scheduler's blocks on the chip's AI cores: a block on a CoreSlot becomes one
// BlockAssignment per core of the slot (a Mix block on a split chip: the AIC and each of its AIVs,
// told apart by sub_block_idx), and the block is done when every part is. It also charges each
// kernel task with its cores' pipe busy cycles and counts the distinct cores that ran it (for the
// per-op pipe utilisation in summary.json). Each launch gets an argument slot and its code images
// (one per core kind) in the chip's system region, and a launch number, so a core given a block
// of a new launch starts with cold caches. Plain bookkeeping: no timing of its own.
#pragma once
#include <unordered_map>
#include <vector>

#include "models/aicore/ai_core.h"
#include "models/ts/i_block_runner.h"

namespace sfumato::ts {

class AiCoreRunner : public IBlockRunner, public ICoreListener {
public:
    AiCoreRunner(std::vector<AiCore*> cube, std::vector<AiCore*> vector, ClockDomain clock, SystemRegion& region);
    void run_block(const CoreSlot& slot, Task& task, uint32_t block_idx, IBlockDone& done, uint64_t cookie) override;
    void block_done(AiCore& core) override;

private:
    struct Part {
        Task* task = nullptr;
        IBlockDone* done = nullptr;
        uint64_t cookie = 0;
        uint64_t busy_at_start[isa::kNumPipes] = {};
    };
    struct Usage {
        std::vector<bool> cube, vector;
        uint32_t blocks_left;
        uint64_t launch = 0, args_addr = 0;
    };
    void start(AiCore* core, Task& task, const Usage& u, uint32_t block_idx, uint32_t sub_block, IBlockDone& done,
               uint64_t cookie);

    std::vector<AiCore*> m_cube, m_vector;
    ClockDomain m_clock;
    SystemRegion& m_region;
    uint64_t m_launches = 0;
    std::unordered_map<const AiCore*, Part> m_parts;      // cores running a part
    std::unordered_map<uint64_t, uint32_t> m_parts_left;  // cookie -> parts still running
    std::unordered_map<const Task*, Usage> m_usage;
};

}  // namespace sfumato::ts
