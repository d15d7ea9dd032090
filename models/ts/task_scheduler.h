// Hardware task scheduler: one in-order hardware queue per runtime stream, served by strict
// priority (smaller number first; equal priorities by queue id). A kernel starts when its
// engine has the cores it needs for its first wave; its blocks are dispatched to free cores
// wave by wave (several kernels share the chip when cores allow). Memcpy tasks go to the DMA
// engine; event record/wait tasks complete or block their queue; dispatch and completion
// latencies are parameters. The scheduler is one SC_METHOD woken by submissions and
// completions; it never ticks.
#pragma once
#include <deque>
#include <memory>
#include <systemc>
#include <vector>

#include "models/aicore/ai_core.h"
#include "models/dma/i_dma.h"
#include "sim/config.h"
#include "sim/device_if.h"
#include "sim/stats.h"
#include "sim/trace.h"

namespace sfumato {

struct TaskSchedulerParams {
    explicit TaskSchedulerParams(const ParamScope& s);
    Param<uint32_t> dispatch_cycles;
    Param<uint32_t> completion_cycles;
};

class TaskScheduler : public sc_core::sc_module, public ICoreListener, public IDmaClient {
public:
    SC_HAS_PROCESS(TaskScheduler);
    TaskScheduler(sc_core::sc_module_name name, const TaskSchedulerParams& p, ClockDomain clock,
                  std::vector<AiCore*> cube_cores, std::vector<AiCore*> vector_cores, uint32_t aiv_per_aic,
                  IDmaEngine& dma, TraceHub& trace, StatGroup& parent);

    uint32_t open_queue(int priority);
    void submit(uint32_t queue, std::shared_ptr<Task> task);
    uint32_t create_event();
    std::string describe_state() const;

    void block_done(AiCore& core) override;
    void dma_done(uint64_t cookie) override;

private:
    struct Queue {
        uint32_t id;
        int priority;
        std::deque<std::shared_ptr<Task>> tasks;
        bool head_started = false;
        TrackId track = 0;
    };
    struct Running {  // a kernel with blocks still to dispatch or finish
        std::shared_ptr<Task> task;
        uint32_t queue = 0;
        int priority = 0;
        uint32_t next_block = 0, parts_done = 0;
        uint32_t parts_per_block = 1;
        std::vector<bool> cube_used, vector_used;
    };
    struct CoreSlot {
        AiCore* core = nullptr;
        Running* running = nullptr;  // null when free
        uint64_t busy_at_start[isa::kNumPipes] = {};
    };
    static constexpr int kNoWait = 1 << 30;
    struct Pending {
        Tick at;
        std::shared_ptr<Task> task;
        uint32_t queue;
    };

    void schedule();
    bool try_start(Queue& q);
    void dispatch_blocks();
    bool dispatch_one(Running& r);
    void assign(CoreSlot& slot, Running& r, uint32_t block, uint32_t sub_block);
    int pool_of(KernelKind k) const;
    uint32_t free_units(KernelKind k) const;
    bool group_free(size_t g) const;
    void finish(uint32_t queue, const std::shared_ptr<Task>& t, Tick end);
    Cycle now_cycle() const;
    std::vector<Queue*> by_priority();

    const TaskSchedulerParams& m_p;
    ClockDomain m_clock;
    std::vector<CoreSlot> m_cube, m_vector;
    uint32_t m_aiv_per_aic;
    bool m_coupled;
    IDmaEngine& m_dma;
    TraceHub& m_trace;
    std::vector<std::unique_ptr<Queue>> m_queues;
    std::vector<std::unique_ptr<Running>> m_running;
    int m_wait_prio[2] = {kNoWait, kNoWait};  // per engine: most urgent kernel waiting for cores
    uint64_t m_kernels_started = 0;
    std::vector<Pending> m_pending;
    std::vector<uint64_t> m_event_done;  // latest completed record sequence per event
    std::vector<std::pair<uint32_t, std::shared_ptr<Task>>> m_dma_jobs;
    sc_core::sc_event m_wake;

    StatGroup m_stats;
    Counter m_kernels, m_blocks, m_copies, m_tasks;
    Average m_queue_wait;
};

}  // namespace sfumato
