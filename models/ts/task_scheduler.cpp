#include "models/ts/task_scheduler.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

TaskSchedulerParams::TaskSchedulerParams(const ParamScope& s)
    : dispatch_cycles(s, "dispatch_cycles", 100, "cycle", "from a block's dispatch until its core starts it", {0, 1000000}),
      completion_cycles(s, "completion_cycles", 50, "cycle", "from a task's last block until its completion is reported", {0, 1000000}) {}

TaskScheduler::TaskScheduler(sc_core::sc_module_name name, const TaskSchedulerParams& p, ClockDomain clock,
                             std::vector<AiCore*> cube_cores, std::vector<AiCore*> vector_cores, uint32_t aiv_per_aic,
                             IDmaEngine& dma, TraceHub& trace, StatGroup& parent)
    : sc_core::sc_module(name),
      m_p(p),
      m_clock(clock),
      m_aiv_per_aic(aiv_per_aic),
      m_coupled(vector_cores.empty()),
      m_dma(dma),
      m_trace(trace),
      m_stats(&parent, "ts"),
      m_kernels(m_stats, "kernels", "task", "kernel tasks completed"),
      m_blocks(m_stats, "blocks", "block", "blocks dispatched"),
      m_copies(m_stats, "memcpys", "task", "memcpy tasks completed"),
      m_tasks(m_stats, "tasks", "task", "tasks completed"),
      m_queue_wait(m_stats, "queue_wait", "cycle", "cycles from submission until a task starts") {
    for (AiCore* c : cube_cores) m_cube.push_back({c});
    for (AiCore* c : vector_cores) m_vector.push_back({c});
    SC_METHOD(schedule);
    sensitive << m_wake;
    dont_initialize();
}

Cycle TaskScheduler::now_cycle() const { return m_clock.ceil_cycle(now_tick()); }

uint32_t TaskScheduler::open_queue(int priority) {
    auto q = std::make_unique<Queue>();
    q->id = static_cast<uint32_t>(m_queues.size());
    q->priority = priority;
    if (m_trace.on(TraceLevel::Task)) q->track = m_trace.sink()->track("device", "stream " + std::to_string(q->id), 100 + static_cast<int>(q->id));
    m_queues.push_back(std::move(q));
    return m_queues.back()->id;
}

uint32_t TaskScheduler::create_event() {
    m_event_done.push_back(0);
    return static_cast<uint32_t>(m_event_done.size() - 1);
}

void TaskScheduler::submit(uint32_t queue, std::shared_ptr<Task> task) {
    if (queue >= m_queues.size()) throw ModelError(name(), "submit to unknown queue " + std::to_string(queue));
    task->issue_tick = now_tick();
    m_queues[queue]->tasks.push_back(std::move(task));
    m_wake.notify(sc_core::SC_ZERO_TIME);
}

std::vector<TaskScheduler::Queue*> TaskScheduler::by_priority() {
    std::vector<Queue*> qs;
    for (auto& q : m_queues) qs.push_back(q.get());
    std::stable_sort(qs.begin(), qs.end(), [](Queue* a, Queue* b) { return a->priority < b->priority; });
    return qs;
}

namespace {
uint32_t units_for(KernelKind k, bool coupled, size_t cube, size_t vec) {
    if (coupled) return static_cast<uint32_t>(cube);
    return static_cast<uint32_t>(k == KernelKind::Vector ? vec : cube);
}
}  // namespace

void TaskScheduler::schedule() {
    try {
        const Tick now = now_tick();
        // Completions whose reporting latency has elapsed.
        for (size_t i = 0; i < m_pending.size();) {
            if (m_pending[i].at <= now) {
                Pending p = m_pending[i];
                m_pending.erase(m_pending.begin() + static_cast<long>(i));
                finish(p.queue, p.task, p.at);
            } else {
                ++i;
            }
        }
        bool changed = true;
        while (changed) {
            changed = false;
            m_wait_prio[0] = m_wait_prio[1] = kNoWait;
            for (Queue* q : by_priority()) {
                if (!q->tasks.empty() && !q->head_started && try_start(*q)) changed = true;
            }
        }
        dispatch_blocks();
        Tick next(~0ull);
        for (const auto& p : m_pending) next = std::min(next, p.at);
        if (next.v != ~0ull) m_wake.notify(to_sc_time(next - now));
    } catch (...) {
        record_failure(std::current_exception());
    }
}

bool TaskScheduler::try_start(Queue& q) {
    std::shared_ptr<Task> t = q.tasks.front();
    const Tick now = now_tick();
    switch (t->kind) {
        case TaskKind::Kernel: {
            const KernelDesc& k = t->kernel;
            const uint32_t units = units_for(k.kind, m_coupled, m_cube.size(), m_vector.size());
            if (units == 0) throw ModelError(name(), "kernel '" + k.name + "' needs cores this chip does not have");
            const uint32_t needed = std::min(k.block_dim, units);
            const int pool_id = pool_of(k.kind);
            const uint32_t free = free_units(k.kind);
            // Strict priority: a kernel waiting for cores reserves its engine against later queues.
            if (free < needed || m_wait_prio[pool_id] != kNoWait) {
                m_wait_prio[pool_id] = std::min(m_wait_prio[pool_id], q.priority);
                return false;
            }
            auto r = std::make_unique<Running>();
            r->task = t;
            r->queue = q.id;
            r->priority = q.priority;
            ++m_kernels_started;
            r->parts_per_block = (!m_coupled && k.kind == KernelKind::Mix) ? 1 + m_aiv_per_aic : 1;
            m_running.push_back(std::move(r));
            break;
        }
        case TaskKind::Memcpy:
            m_dma_jobs.push_back({q.id, t});
            m_dma.start(t->copy, *this, m_dma_jobs.size() - 1);
            break;
        case TaskKind::EventRecord:
            t->start_tick = now;
            q.head_started = true;
            if (t->event >= m_event_done.size()) throw ModelError(name(), "record of unknown event " + std::to_string(t->event));
            m_event_done[t->event] = std::max(m_event_done[t->event], t->event_seq);
            finish(q.id, t, now);
            return true;
        case TaskKind::EventWait:
            if (t->event >= m_event_done.size()) throw ModelError(name(), "wait on unknown event " + std::to_string(t->event));
            if (m_event_done[t->event] < t->event_seq) return false;
            t->start_tick = now;
            q.head_started = true;
            finish(q.id, t, now);
            return true;
        case TaskKind::Callback:
            t->start_tick = now;
            q.head_started = true;
            if (t->callback) t->callback();
            finish(q.id, t, now);
            return true;
        default:
            throw ModelError(name(), "unknown task kind");
    }
    t->start_tick = now;
    q.head_started = true;
    m_queue_wait.sample(static_cast<double>(m_clock.floor_cycle(now - t->issue_tick).v));
    return true;
}

int TaskScheduler::pool_of(KernelKind k) const { return (!m_coupled && k == KernelKind::Vector) ? 1 : 0; }

uint32_t TaskScheduler::free_units(KernelKind k) const {
    uint32_t n = 0;
    if (m_coupled || k == KernelKind::Cube) {
        for (const auto& s : m_cube) n += s.running == nullptr;
    } else if (k == KernelKind::Vector) {
        for (const auto& s : m_vector) n += s.running == nullptr;
    } else {  // Mix: whole groups of 1 AIC + its AIVs
        for (size_t g = 0; g < m_cube.size(); ++g) n += group_free(g);
    }
    return n;
}

bool TaskScheduler::group_free(size_t g) const {
    if (m_cube[g].running) return false;
    for (uint32_t i = 0; i < m_aiv_per_aic; ++i)
        if (m_vector[g * m_aiv_per_aic + i].running) return false;
    return true;
}

void TaskScheduler::assign(CoreSlot& slot, Running& r, uint32_t block, uint32_t sub_block) {
    const KernelDesc& k = r.task->kernel;
    slot.running = &r;
    for (int p = 0; p < isa::kNumPipes; ++p) slot.busy_at_start[p] = slot.core->pipe_busy(static_cast<isa::Pipe>(p));
    BlockAssignment a;
    a.body = k.body;
    a.block_idx = block;
    a.block_num = k.block_dim;
    a.sub_block_idx = sub_block;
    a.start_cycle = (now_cycle() + Cycle(m_p.dispatch_cycles)).v;
    slot.core->assign(std::move(a), *this);
    const bool cube = m_coupled || slot.core->core_kind() == isa::CoreKind::Cube;
    auto& used = cube ? r.cube_used : r.vector_used;
    const size_t idx = slot.core->index();
    if (idx >= used.size()) used.resize(idx + 1, false);
    used[idx] = true;
}

bool TaskScheduler::dispatch_one(Running& r) {
    const KernelDesc& k = r.task->kernel;
    const uint32_t block = r.next_block;
    if (m_coupled || k.kind == KernelKind::Cube || k.kind == KernelKind::Vector) {
        auto& pool = (!m_coupled && k.kind == KernelKind::Vector) ? m_vector : m_cube;
        for (auto& s : pool) {
            if (s.running) continue;
            assign(s, r, block, 0);
            ++r.next_block;
            ++m_blocks;
            return true;
        }
        return false;
    }
    for (size_t g = 0; g < m_cube.size(); ++g) {
        if (!group_free(g)) continue;
        assign(m_cube[g], r, block, 0);
        for (uint32_t i = 0; i < m_aiv_per_aic; ++i) assign(m_vector[g * m_aiv_per_aic + i], r, block, i);
        ++r.next_block;
        ++m_blocks;
        return true;
    }
    return false;
}

void TaskScheduler::dispatch_blocks() {
    std::vector<Running*> order;
    for (auto& r : m_running) order.push_back(r.get());
    std::stable_sort(order.begin(), order.end(), [](Running* a, Running* b) { return a->priority < b->priority; });
    for (Running* r : order) {
        const int pool_id = pool_of(r->task->kernel.kind);
        // A more urgent kernel waiting for this engine gets freed cores first.
        if (m_wait_prio[pool_id] != kNoWait && m_wait_prio[pool_id] < r->priority) continue;
        while (r->next_block < r->task->kernel.block_dim && dispatch_one(*r)) {
        }
    }
}

void TaskScheduler::block_done(AiCore& core) {
    auto& pool = (m_coupled || core.core_kind() == isa::CoreKind::Cube) ? m_cube : m_vector;
    CoreSlot* slot = nullptr;
    for (auto& s : pool)
        if (s.core == &core) slot = &s;
    if (!slot || !slot->running) throw ModelError(name(), std::string("completion from idle core ") + core.name());
    Running& r = *slot->running;
    for (int p = 0; p < isa::kNumPipes; ++p)
        r.task->pipe_busy[p] += core.pipe_busy(static_cast<isa::Pipe>(p)) - slot->busy_at_start[p];
    slot->running = nullptr;
    ++r.parts_done;
    if (r.parts_done == r.task->kernel.block_dim * r.parts_per_block) {
        auto count = [](const std::vector<bool>& v) { return static_cast<uint32_t>(std::count(v.begin(), v.end(), true)); };
        r.task->cube_cores_used = count(r.cube_used);
        r.task->vector_cores_used = count(r.vector_used);
        const Tick end = m_clock.to_tick(now_cycle() + Cycle(m_p.completion_cycles));
        const uint32_t q = r.queue;
        auto t = r.task;
        m_running.erase(std::find_if(m_running.begin(), m_running.end(), [&](const auto& p) { return p.get() == &r; }));
        ++m_kernels;
        if (end <= now_tick()) finish(q, t, end);
        else m_pending.push_back({end, t, q});
    }
    m_wake.notify(sc_core::SC_ZERO_TIME);
}

void TaskScheduler::dma_done(uint64_t cookie) {
    auto [q, t] = m_dma_jobs[cookie];
    m_dma_jobs[cookie].second.reset();
    ++m_copies;
    finish(q, t, now_tick());
    m_wake.notify(sc_core::SC_ZERO_TIME);
}

void TaskScheduler::finish(uint32_t queue, const std::shared_ptr<Task>& t, Tick end) {
    Queue& q = *m_queues[queue];
    t->end_tick = end;
    t->cycles = m_clock.ceil_cycle(end).v - m_clock.floor_cycle(t->start_tick).v;
    t->done = true;
    t->done_event.notify(sc_core::SC_ZERO_TIME);
    if (m_trace.on(TraceLevel::Task)) {
        const std::string n = t->kind == TaskKind::Kernel ? t->kernel.name : std::string(task_kind_name(t->kind));
        TraceArg a[2] = {{"task_id", static_cast<int64_t>(t->id)}, {"block_dim", t->kind == TaskKind::Kernel ? t->kernel.block_dim : 0}};
        m_trace.sink()->slice_str(q.track, n, t->start_tick, end, a, t->kind == TaskKind::Kernel ? 2 : 1);
    }
    if (!q.tasks.empty() && q.tasks.front() == t) {
        q.tasks.pop_front();
        q.head_started = false;
    }
    ++m_tasks;
    note_progress();
}

std::string TaskScheduler::describe_state() const {
    std::string s;
    for (const auto& q : m_queues) {
        if (q->tasks.empty()) continue;
        const Task& t = *q->tasks.front();
        s += "  queue " + std::to_string(q->id) + " (priority " + std::to_string(q->priority) + "): " +
             std::to_string(q->tasks.size()) + " task(s); head task " + std::to_string(t.id) + " (" + task_kind_name(t.kind);
        if (t.kind == TaskKind::EventWait && t.event < m_event_done.size() && m_event_done[t.event] < t.event_seq)
            s += ", waits on event " + std::to_string(t.event) + " record #" + std::to_string(t.event_seq) + " that was never reached";
        else if (t.kind == TaskKind::Kernel)
            s += " '" + t.kernel.name + "', " + (q->head_started ? "running" : "waiting for cores");
        s += ")\n";
    }
    return s;
}

}  // namespace sfumato
