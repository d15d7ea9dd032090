#include "models/ts/task_scheduler.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato::ts {

namespace {
constexpr Range<uint32_t> kLatRange{0, 100'000'000};
}

TsParams::TsParams(const ParamScope& s)
    : doorbell_cycles(s, "doorbell_cycles", 100, "cycle", "host submit to task visible in its hardware queue", kLatRange),
      dispatch_cycles(s, "dispatch_cycles", 200, "cycle", "task at queue head with free resources to its first block start",
               kLatRange),
      block_dispatch_cycles(s, "block_dispatch_cycles", 8, "cycle",
                            "dispatcher time per block (its descriptor); blocks are dispatched one after another", kLatRange),
      core_start_cycles(s, "core_start_cycles", 200, "cycle",
                        "dispatcher time per core a block starts on (writing its start registers and starting it)", kLatRange),
      core_done_cycles(s, "core_done_cycles", 50, "cycle",
                       "completion-report handling per core of a finished block (serial); its cores are free after it", kLatRange),
      completion_cycles(s, "completion_cycles", 100, "cycle", "last block retired or copy done to task reported complete", kLatRange),
      event_cycles(s, "event_cycles", 50, "cycle", "an event record, or a wait whose event is already recorded", kLatRange) {}

TaskScheduler::TaskScheduler(sc_core::sc_module_name name, const TsParams& params, ClockDomain clock,
                             const DeviceInfo& info, IBlockRunner& runner, IDmaEngine& dma, StatGroup* stats_parent,
                             TraceHub* trace)
    : sc_module(name),
      m_p(params),
      m_clock(clock),
      m_runner(runner),
      m_dma(dma),
      m_trace(trace),
      m_cores(info.cube_cores, info.vector_cores, info.aiv_per_aic),
      m_cube_busy(info.cube_cores, 0),
      m_vec_busy(info.aiv_per_aic ? info.vector_cores : 0, 0),
      m_stats(stats_parent, "ts"),
      m_tasks(m_stats, "tasks", "task", "tasks completed"),
      m_kernels(m_stats, "kernels", "task", "kernel tasks started"),
      m_blocks_run(m_stats, "blocks", "block", "kernel blocks run"),
      m_copies(m_stats, "copies", "task", "memcpy tasks started"),
      m_events(m_stats, "events", "task", "event record and wait tasks started"),
      m_queue_wait(m_stats, "queue_wait", "cycle", "from a task visible in its queue to its start"),
      m_dispatch_latency(m_stats, "dispatch_latency", "cycle", "from a task reaching its queue head to its start"),
      m_copy_cycles(m_stats, "copy_cycles", "cycle", "time a memcpy task spends in the SDMA engines") {
    auto add_occ = [&](const std::string& n, const std::vector<uint64_t>& busy, size_t i) {
        m_occupancy.push_back(std::make_unique<Formula>(m_stats, n + std::to_string(i) + "_occupancy", "ratio",
                                                        "fraction of simulated time the core ran blocks", [&busy, i] {
                                                            const uint64_t now = now_tick().v;
                                                            return now ? static_cast<double>(busy[i]) / static_cast<double>(now) : 0.0;
                                                        }));
    };
    const std::string cube_name = info.aiv_per_aic ? "aic" : "core";
    for (size_t i = 0; i < m_cube_busy.size(); ++i) add_occ(cube_name, m_cube_busy, i);
    for (size_t i = 0; i < m_vec_busy.size(); ++i) add_occ("aiv", m_vec_busy, i);
    SC_METHOD(wake);
    sensitive << m_wake;
    dont_initialize();
}

uint32_t TaskScheduler::open_queue(int priority) {
    const uint32_t id = static_cast<uint32_t>(m_queues.size());
    m_queues.push_back(Queue{});
    m_queues.back().priority = priority;
    m_order.push_back(id);
    std::stable_sort(m_order.begin(), m_order.end(),
                     [&](uint32_t a, uint32_t b) { return m_queues[a].priority < m_queues[b].priority; });
    if (m_trace && m_trace->on(TraceLevel::Task)) {
        m_queues.back().depth_track = m_trace->sink()->counter_track(m_fabric ? "chip" + std::to_string(m_device_id) : "device", "queue " + std::to_string(id) + " depth");
    }
    return id;
}

uint32_t TaskScheduler::create_event() {
    m_event_seq.push_back(0);
    return static_cast<uint32_t>(m_event_seq.size() - 1);
}

uint32_t TaskScheduler::create_notify() {
    m_notify_count.push_back(0);
    return static_cast<uint32_t>(m_notify_count.size() - 1);
}

void TaskScheduler::notify_arrived(uint32_t slot) {
    if (slot >= m_notify_count.size()) {
        record_failure(std::make_exception_ptr(ModelError(name(), "notify for unknown slot " + std::to_string(slot))));
        return;
    }
    ++m_notify_count[slot];
    m_wake.notify(sc_core::SC_ZERO_TIME);  // a queue may wait for it
}

void TaskScheduler::submit(uint32_t queue, std::shared_ptr<Task> task) {
    if (queue >= m_queues.size()) throw ModelError(name(), "submit to unknown queue " + std::to_string(queue));
    if (task->kind == TaskKind::Kernel) {
        if (task->kernel.block_dim == 0)
            throw ModelError(name(), "kernel '" + task->kernel.name + "' launched with block_dim 0");
        if (m_cores.capacity(task->kernel.kind) == 0)
            throw ModelError(name(), "kernel '" + task->kernel.name + "' needs cores this chip does not have");
    }
    if ((task->kind == TaskKind::EventRecord || task->kind == TaskKind::EventWait) && task->event >= m_event_seq.size())
        throw ModelError(name(), "task uses unknown event slot " + std::to_string(task->event));
    if (task->kind == TaskKind::NotifyWait && task->event >= m_notify_count.size())
        throw ModelError(name(), "notify wait on unknown notify slot " + std::to_string(task->event));
    if (task->kind == TaskKind::NotifyRecord && !m_fabric)
        throw ModelError(name(), "notify record on a chip without peers");
    if (task->kind == TaskKind::Memcpy && task->copy.dir == CopyDir::P2P && !m_fabric)
        throw ModelError(name(), "peer copy on a chip without peers");
    const uint64_t now = now_tick().v;
    task->issue_tick = Tick(now);
    task->done = false;
    Queue& q = m_queues[queue];
    q.waiting.push_back(std::move(task));
    ++q.in_doorbell;
    schedule(now + cyc(m_p.doorbell_cycles), Act::Visible, queue);
}

void TaskScheduler::schedule(uint64_t tick, Act act, uint64_t a) {
    m_actions.push(Action{tick, m_seq++, act, a});
    const uint64_t now = now_tick().v;
    m_wake.notify(to_sc_time(Tick(tick > now ? tick - now : 0)));
}

void TaskScheduler::block_done(uint64_t cookie) {
    const uint64_t now = now_tick().v;
    const BlockRun& b = m_blocks[cookie];
    if (b.slot.cube >= 0) m_cube_busy[static_cast<size_t>(b.slot.cube)] += now - b.start;
    for (uint32_t v = 0; v < b.slot.vec_count; ++v) m_vec_busy[static_cast<size_t>(b.slot.vec_first) + v] += now - b.start;
    // The execution span ends when the last block is done on its core (its report comes after).
    Task& t = *m_queues[b.queue].active;
    t.exec_end_tick = max(t.exec_end_tick, Tick(now));
    // Reports are handled one after another; the block's cores are free once its report is.
    m_report_free = after_edges(std::max(m_report_free, now), uint64_t{m_p.core_done_cycles} * slot_cores(b.slot));
    if (m_report_free == now) {
        retire_block(cookie, now);
        m_wake.notify(sc_core::SC_ZERO_TIME);  // freed cores: arbitrate again
    } else {
        schedule(m_report_free, Act::BlockRetire, cookie);
    }
}

void TaskScheduler::retire_block(uint64_t cookie, uint64_t now) {
    const BlockRun b = m_blocks[cookie];
    m_free_blocks.push_back(cookie);
    m_cores.give(b.slot);
    Queue& q = m_queues[b.queue];
    if (++q.blocks_done == q.active->kernel.block_dim) schedule(now + cyc(m_p.completion_cycles), Act::Complete, b.queue);
}

void TaskScheduler::dma_done(uint64_t cookie) {
    const uint64_t now = now_tick().v;
    const Task& t = *m_queues[cookie].active;
    m_copy_cycles.sample(static_cast<double>(m_clock.cycles_in(now - t.start_tick.v - cyc(m_p.dispatch_cycles))));
    schedule(now + cyc(m_p.completion_cycles), Act::Complete, cookie);
}

void TaskScheduler::wake() {
    try {
        step();
    } catch (...) {
        record_failure(std::current_exception());
    }
}

void TaskScheduler::step() {
    const uint64_t now = now_tick().v;
    while (!m_actions.empty() && m_actions.top().tick <= now) {
        const Action a = m_actions.top();
        m_actions.pop();
        switch (a.act) {
            case Act::Visible: {
                Queue& q = m_queues[a.a];
                --q.in_doorbell;
                // The task became visible: it is head if nothing precedes it.
                if (!q.active && q.waiting.size() - q.in_doorbell == 1) q.head_since = now;
                trace_depth(static_cast<uint32_t>(a.a), now);
                break;
            }
            case Act::BlockStart: {
                BlockRun& b = m_blocks[a.a];
                ++m_blocks_run;
                b.start = now;
                if (b.block == 0) {
                    m_queues[b.queue].active->exec_start_tick = Tick(now);
                    if (m_span_hook) m_span_hook(*m_queues[b.queue].active, true, now);
                }
                m_runner.run_block(b.slot, *m_queues[b.queue].active, b.block, *this, a.a);
                break;
            }
            case Act::BlockRetire: retire_block(a.a, now); break;
            case Act::CopyStart: m_dma.start(m_queues[a.a].active->copy, *this, a.a); break;
            case Act::Callback: {
                Task& t = *m_queues[a.a].active;
                if (t.callback) t.callback();
                schedule(now + cyc(m_p.completion_cycles), Act::Complete, a.a);
                break;
            }
            case Act::Complete: complete(static_cast<uint32_t>(a.a), now); break;
            case Act::NotifySend: {
                const Task& t = *m_queues[a.a].active;
                m_fabric->send_notify(m_device_id, t.peer, t.event);
                complete(static_cast<uint32_t>(a.a), now);
                break;
            }
        }
    }
    arbitrate();
    if (!m_actions.empty()) m_wake.notify(to_sc_time(Tick(m_actions.top().tick - now)));
}

void TaskScheduler::arbitrate() {
    const uint64_t now = now_tick().v;
    bool cores_blocked = false;  // a more urgent kernel waits for cores
    for (uint32_t qi : m_order) {
        Queue& q = m_queues[qi];
        if (q.active) {
            if (q.active->kind == TaskKind::Kernel && q.next_block < q.active->kernel.block_dim && !cores_blocked) {
                cores_blocked = dispatch_blocks(qi, now);
            } else if (q.active->kind == TaskKind::Kernel && q.next_block < q.active->kernel.block_dim) {
                cores_blocked = true;
            }
            continue;
        }
        if (q.waiting.size() > q.in_doorbell) cores_blocked = try_start(qi, now, cores_blocked) || cores_blocked;
    }
}

bool TaskScheduler::try_start(uint32_t qi, uint64_t now, bool cores_blocked) {
    Queue& q = m_queues[qi];
    Task& t = *q.waiting.front();
    uint64_t start = now;
    switch (t.kind) {
        case TaskKind::Kernel: {
            const KernelKind k = t.kernel.kind;
            const uint32_t need = std::min(t.kernel.block_dim, m_cores.capacity(k));
            if (cores_blocked || m_cores.free_slots(k) < need) return true;
            start = now + cyc(m_p.dispatch_cycles);
            ++m_kernels;
            break;
        }
        case TaskKind::Memcpy:
            start = now + cyc(m_p.dispatch_cycles);
            schedule(start, Act::CopyStart, qi);
            ++m_copies;
            break;
        case TaskKind::EventRecord:
            schedule(now + cyc(m_p.event_cycles), Act::Complete, qi);
            ++m_events;
            break;
        case TaskKind::EventWait:
            if (m_event_seq[t.event] < t.event_seq) return false;  // blocks only its own queue
            schedule(now + cyc(m_p.event_cycles), Act::Complete, qi);
            ++m_events;
            break;
        case TaskKind::Callback:
            start = now + cyc(m_p.dispatch_cycles);
            schedule(start, Act::Callback, qi);
            break;
        case TaskKind::NotifyRecord:
            schedule(now + cyc(m_p.event_cycles), Act::NotifySend, qi);
            ++m_events;
            break;
        case TaskKind::NotifyWait:
            if (m_notify_count[t.event] == 0) return false;  // blocks only its own queue
            --m_notify_count[t.event];
            schedule(now + cyc(m_p.event_cycles), Act::Complete, qi);
            ++m_events;
            break;
        case TaskKind::kCount: break;
    }
    q.active = q.waiting.front();
    q.waiting.pop_front();
    q.next_block = q.blocks_done = 0;
    t.start_tick = Tick(now);  // taken by the scheduler; its blocks or copy begin after the dispatch latency
    m_queue_wait.sample(static_cast<double>(m_clock.cycles_in(start - t.issue_tick.v - cyc(m_p.doorbell_cycles))));
    m_dispatch_latency.sample(static_cast<double>(m_clock.cycles_in(start - q.head_since)));
    trace_depth(qi, now);
    if (t.kind == TaskKind::Kernel) return dispatch_blocks(qi, start);
    return false;
}

bool TaskScheduler::dispatch_blocks(uint32_t qi, uint64_t first_start) {
    Queue& q = m_queues[qi];
    const KernelDesc& k = q.active->kernel;
    const uint32_t n = std::min(k.block_dim - q.next_block, m_cores.free_slots(k.kind));
    for (uint32_t i = 0; i < n; ++i) {
        uint64_t cookie;
        if (m_free_blocks.empty()) {
            cookie = m_blocks.size();
            m_blocks.push_back({});
        } else {
            cookie = m_free_blocks.back();
            m_free_blocks.pop_back();
        }
        m_blocks[cookie] = BlockRun{qi, q.next_block++, m_cores.take(k.kind), 0};
        // The dispatcher starts blocks one after another: this one once every earlier one is out.
        m_dispatch_free = after_edges(std::max(m_dispatch_free, first_start),
                                      m_p.block_dispatch_cycles + uint64_t{m_p.core_start_cycles} * slot_cores(m_blocks[cookie].slot));
        schedule(m_dispatch_free, Act::BlockStart, cookie);
    }
    return q.next_block < k.block_dim;
}

void TaskScheduler::complete(uint32_t qi, uint64_t now) {
    Queue& q = m_queues[qi];
    std::shared_ptr<Task> t = std::move(q.active);
    q.active.reset();
    if (t->kind == TaskKind::EventRecord) m_event_seq[t->event] = std::max(m_event_seq[t->event], t->event_seq);
    t->end_tick = Tick(now);
    t->cycles = t->kind == TaskKind::Kernel
                    ? m_clock.ceil_cycle(t->exec_end_tick).v - m_clock.ceil_cycle(t->exec_start_tick).v
                    : m_clock.ceil_cycle(t->end_tick).v - m_clock.ceil_cycle(t->start_tick).v;
    t->done = true;
    if (m_span_hook && t->kind == TaskKind::Kernel) m_span_hook(*t, false, now);
    t->done_event.notify(sc_core::SC_ZERO_TIME);
    ++m_tasks;
    note_progress();
    if (q.waiting.size() > q.in_doorbell) q.head_since = now;
    trace_depth(qi, now);
}

void TaskScheduler::trace_depth(uint32_t qi, uint64_t now) {
    if (!m_trace || !m_trace->on(TraceLevel::Task)) return;
    const Queue& q = m_queues[qi];
    const double depth = static_cast<double>(q.waiting.size() - q.in_doorbell + (q.active ? 1 : 0));
    m_trace->sink()->counter(q.depth_track, Tick(now), depth);
}

size_t TaskScheduler::pending_tasks() const {
    size_t n = 0;
    for (const Queue& q : m_queues) n += q.waiting.size() + (q.active ? 1 : 0);
    return n;
}

std::vector<std::string> TaskScheduler::pending_report() const {
    std::vector<std::string> out;
    for (size_t qi = 0; qi < m_queues.size(); ++qi) {
        const Queue& q = m_queues[qi];
        auto line = [&](const Task& t, const std::string& state) {
            out.push_back("queue " + std::to_string(qi) + ": task " + std::to_string(t.id) + " (" +
                          task_kind_name(t.kind) + ") " + state);
        };
        if (q.active) line(*q.active, "started, not complete");
        for (size_t i = 0; i < q.waiting.size(); ++i) {
            const Task& t = *q.waiting[i];
            if (i == 0 && !q.active && t.kind == TaskKind::EventWait && m_event_seq[t.event] < t.event_seq) {
                line(t, "waits on event slot " + std::to_string(t.event) + " record #" + std::to_string(t.event_seq) +
                            " (recorded up to #" + std::to_string(m_event_seq[t.event]) + ")");
            } else if (i == 0 && !q.active && t.kind == TaskKind::NotifyWait && m_notify_count[t.event] == 0) {
                line(t, "waits on notify slot " + std::to_string(t.event) + " (not set)");
            } else {
                line(t, "queued");
            }
        }
    }
    return out;
}

std::string TaskScheduler::describe_state() const {
    std::string s;
    for (const std::string& l : pending_report()) s += "  " + l + "\n";
    return s.empty() ? "  (no pending tasks)\n" : s;
}

uint64_t TaskScheduler::core_busy_cycles(bool cube, uint32_t idx) const {
    return m_clock.cycles_in(cube ? m_cube_busy[idx] : m_vec_busy[idx]);
}

}  // namespace sfumato::ts
