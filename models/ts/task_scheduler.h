// The chip's hardware task scheduler: one hardware queue per runtime stream, served by strict
// priority (smaller number first, queue id breaking ties) and in order within a queue (a queue
// runs one task at a time, as a stream does). A kernel task starts when the cores it needs for one
// full wave (min(block_dim, cores of its kind)) are free, then its remaining blocks go to cores as
// they free, wave by wave; kernels on different queues share the chip when cores allow, and while
// a more urgent kernel waits for cores no less urgent kernel takes any. Memcpy tasks go to the SDMA
// engines (IDmaEngine), event record/wait tasks are resolved here, host callbacks run when reached.
// In a system of chips, notify records go to a peer chip's scheduler through the fabric and
// notify waits block their queue until their slot has been set (each wait consumes one setting).
// Latencies (doorbell, task dispatch, per-block dispatch, completion, event) are parameters in
// cycles of the scheduler's clock; nothing ticks: one SC_METHOD sleeps until the next timed action.
// Block start-up is serial, as on the chip, where one scheduler core writes each AI core's start
// registers in turn: a block starts once the dispatcher has spent block_dispatch_cycles on it plus
// core_start_cycles on each core of its slot (3 for a mix block on a split part), after every
// block dispatched before it (of any kernel). Completion reports are serial too: a finished block
// is retired core_done_cycles per core after the previous report, and only then are its cores free
// again; the task completes completion_cycles after its last block is retired. So an empty
// kernel's task duration grows with the number of cores it launches.
// A task's start_tick is when the scheduler takes it (its blocks or copy begin dispatch_cycles
// later); end_tick is when its completion is reported: end - start is the task duration the
// vendor's profiler reports. A kernel's execution span runs from its first block's start on a core
// (the core's own start-up, code fetch and initialisation, lies inside it) to its last block's end
// on its core, before that block's completion report (Task::exec_*_tick); Task::cycles is that span
// in core-clock edges. Simplified: no queue depth limit, no preemption of running blocks, no
// descriptor fetch traffic.
#pragma once
#include <functional>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <systemc>
#include <vector>

#include "models/dma/i_dma.h"
#include "models/link/i_fabric.h"
#include "models/ts/core_pool.h"
#include "models/ts/i_block_runner.h"
#include "sim/config.h"
#include "sim/device_if.h"
#include "sim/stats.h"
#include "sim/trace.h"

namespace sfumato::ts {

struct TsParams {
    explicit TsParams(const ParamScope& s);
    Param<uint32_t> doorbell_cycles;        // host submit -> task visible in its queue
    Param<uint32_t> dispatch_cycles;        // task at queue head with resources -> first block starts
    Param<uint32_t> block_dispatch_cycles;  // dispatcher time per block (its descriptor)
    Param<uint32_t> core_start_cycles;      // dispatcher time per core a block starts on
    Param<uint32_t> core_done_cycles;       // completion-report time per core of a finished block
    Param<uint32_t> completion_cycles;      // last block retired / copy done -> task reported complete
    Param<uint32_t> event_cycles;           // an event record or satisfied wait
};

class TaskScheduler : public sc_core::sc_module, public IBlockDone, public IDmaClient, public INotifySink {
public:
    SC_HAS_PROCESS(TaskScheduler);
    TaskScheduler(sc_core::sc_module_name name, const TsParams& params, ClockDomain clock,
                  const DeviceInfo& info, IBlockRunner& runner, IDmaEngine& dma, StatGroup* stats_parent,
                  TraceHub* trace = nullptr);

    uint32_t open_queue(int priority);
    void submit(uint32_t queue, std::shared_ptr<Task> task);
    uint32_t create_event();
    uint32_t create_notify();
    // The chip's peers: where its notify records go (none for a lone chip).
    void set_fabric(IFabric* fabric, uint32_t device_id) {
        m_fabric = fabric;
        m_device_id = device_id;
    }
    void notify_arrived(uint32_t slot) override;
    // Told when a kernel starts executing (its first block starts) and when it completes, with
    // the tick (ps): the chip's energy bookkeeping (models/power/energy_attributor.h).
    using KernelSpanHook = std::function<void(const Task&, bool started, uint64_t tick)>;
    void set_kernel_span_hook(KernelSpanHook h) { m_span_hook = std::move(h); }

    void block_done(uint64_t cookie) override;
    void dma_done(uint64_t cookie) override;

    // Tasks submitted and not complete (for end-of-run deadlock reports): one line each.
    std::vector<std::string> pending_report() const;
    std::string describe_state() const;
    size_t pending_tasks() const;
    const StatGroup& stats() const { return m_stats; }
    uint64_t core_busy_cycles(bool cube, uint32_t idx) const;

private:
    enum class Act : uint8_t { Visible, BlockStart, BlockRetire, CopyStart, Complete, Callback, NotifySend };
    struct Action {
        uint64_t tick, seq;
        Act act;
        uint64_t a;
        bool operator>(const Action& o) const { return tick != o.tick ? tick > o.tick : seq > o.seq; }
    };
    struct Queue {
        int priority;
        std::deque<std::shared_ptr<Task>> waiting;  // visible, not started
        std::shared_ptr<Task> active;               // started, not complete
        uint64_t head_since = 0;                    // tick the current head became head
        uint32_t next_block = 0, blocks_done = 0;   // active kernel's progress
        uint32_t in_doorbell = 0;                   // submitted, not yet visible
        TrackId depth_track = 0;
    };
    struct BlockRun {
        uint32_t queue;
        uint32_t block;
        CoreSlot slot;
        uint64_t start;
    };

    void wake();
    void step();
    void schedule(uint64_t tick, Act act, uint64_t a);
    void arbitrate();
    bool try_start(uint32_t qi, uint64_t now, bool cores_blocked);
    bool dispatch_blocks(uint32_t qi, uint64_t first_start);
    void retire_block(uint64_t cookie, uint64_t now);
    static uint32_t slot_cores(const CoreSlot& s) { return (s.cube >= 0 ? 1u : 0u) + s.vec_count; }
    void complete(uint32_t qi, uint64_t now);
    void trace_depth(uint32_t qi, uint64_t now);
    uint64_t cyc(uint64_t cycles) const { return m_clock.ticks(cycles); }
    // The clock edge `cycles` edges after the first edge at or after `tick`: the serial dispatcher
    // and report handler count whole cycles, so their sums never drift off the edges.
    uint64_t after_edges(uint64_t tick, uint64_t cycles) const {
        return m_clock.to_tick(Cycle(m_clock.ceil_cycle(Tick(tick)).v + cycles)).v;
    }

    const TsParams& m_p;
    ClockDomain m_clock;
    IBlockRunner& m_runner;
    IDmaEngine& m_dma;
    TraceHub* m_trace;
    KernelSpanHook m_span_hook;
    CorePool m_cores;
    std::vector<Queue> m_queues;
    std::vector<uint32_t> m_order;          // queue indices by (priority, id)
    std::vector<uint64_t> m_event_seq;      // per event slot: last completed record's sequence
    std::vector<uint64_t> m_notify_count;   // per notify slot: settings not yet consumed by a wait
    IFabric* m_fabric = nullptr;
    uint32_t m_device_id = 0;
    std::vector<BlockRun> m_blocks;         // indexed by cookie; reused through m_free_blocks
    std::vector<uint64_t> m_free_blocks;
    std::vector<uint64_t> m_cube_busy, m_vec_busy;  // per core busy ps
    std::priority_queue<Action, std::vector<Action>, std::greater<Action>> m_actions;
    uint64_t m_seq = 0;
    uint64_t m_dispatch_free = 0;  // tick the dispatcher finishes the blocks it was given
    uint64_t m_report_free = 0;    // tick the completion-report handler is free
    sc_core::sc_event m_wake;

    StatGroup m_stats;
    Counter m_tasks, m_kernels, m_blocks_run, m_copies, m_events;
    Average m_queue_wait;        // cycles from visible in the queue to start
    Average m_dispatch_latency;  // cycles from reaching the queue head to start
    Average m_copy_cycles;       // cycles a memcpy task spends in the SDMA engines
    std::vector<std::unique_ptr<Formula>> m_occupancy;
};

}  // namespace sfumato::ts

namespace sfumato {
using TaskSchedulerParams = ts::TsParams;  // as ChipParams names it
}
