#include "traces/workload_replay.h"

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::workload {

Replayer::Replayer(rt::Context& ctx, const Workload& w, KernelFactory kernels)
    : m_ctx(ctx), m_w(w), m_kernels(std::move(kernels)), m_issued(w.tasks.size()) {}

void Replayer::check(rt::Status s, const Task& t) {
    if (s != rt::Status::Ok) {
        throw InputError("workload task " + std::to_string(t.index) + " (" + kind_name(t.kind) +
                         "): runtime error: " + m_ctx.last_error());
    }
}

rt::DevPtr Replayer::dev_buffer(uint64_t bytes, int which, const Task& t) {
    auto [it, fresh] = m_dev_bufs.try_emplace({bytes, which}, 0);
    if (fresh) {
        if (m_ctx.malloc(&it->second, bytes) != rt::Status::Ok) {
            m_dev_bufs.erase(it);
            throw InputError("workload task " + std::to_string(t.index) + " (" + kind_name(t.kind) + "): cannot allocate " +
                             std::to_string(bytes) + " device bytes: " + m_ctx.last_error());
        }
    }
    return it->second;
}

void* Replayer::host_buffer(uint64_t bytes, bool pinned, const Task& t) {
    auto [it, fresh] = m_host_bufs.try_emplace({bytes, pinned}, nullptr);
    if (fresh) {
        if (m_ctx.host_malloc(&it->second, bytes, pinned) != rt::Status::Ok) {
            m_host_bufs.erase(it);
            throw InputError("workload task " + std::to_string(t.index) + " (" + kind_name(t.kind) + "): cannot allocate " +
                             std::to_string(bytes) + " host bytes: " + m_ctx.last_error());
        }
    }
    return it->second;
}

void Replayer::setup() {
    for (const Stream& s : m_w.streams) {
        rt::StreamId id;
        if (m_ctx.stream_create(&id, s.priority) != rt::Status::Ok) throw InputError("workload setup: " + m_ctx.last_error());
        m_streams[s.id] = id;
    }
    for (const Task& t : m_w.tasks) {
        switch (t.kind) {
            case Kind::Memcpy:
                dev_buffer(t.bytes, 0, t);
                if (t.dir == CopyDir::D2D) dev_buffer(t.bytes, 1, t);
                else host_buffer(t.bytes, t.pinned, t);
                break;
            case Kind::Kernel: {
                KernelDesc k = m_kernels(m_ctx, t);  // the factory applies block_dim
                if (!t.name.empty()) k.name = t.name;
                m_kernel_of.emplace(t.index, std::move(k));
                break;
            }
            case Kind::Record:
            case Kind::Wait:
                if (!m_events.count(t.event)) {
                    rt::EventId e;
                    check(m_ctx.event_create(&e), t);
                    m_events[t.event] = e;
                }
                break;
            default: break;
        }
    }
}

void Replayer::run() {
    setup();
    for (const Task& t : m_w.tasks) {
        Issued& is = m_issued[t.index];
        is.issued = true;
        is.begin = now_tick().v;
        const size_t before = m_ctx.tasks().size();
        const rt::StreamId s = t.stream >= 0 ? m_streams.at(t.stream) : rt::kDefaultStream;
        switch (t.kind) {
            case Kind::Memcpy: {
                const rt::DevPtr d = dev_buffer(t.bytes, 0, t);
                if (t.dir == CopyDir::H2D) check(m_ctx.memcpy_h2d(d, host_buffer(t.bytes, t.pinned, t), t.bytes, s, true), t);
                else if (t.dir == CopyDir::D2H) check(m_ctx.memcpy_d2h(host_buffer(t.bytes, t.pinned, t), d, t.bytes, s, true), t);
                else check(m_ctx.memcpy_d2d(d, dev_buffer(t.bytes, 1, t), t.bytes, s, true), t);
                break;
            }
            case Kind::Kernel: check(m_ctx.launch(m_kernel_of.at(t.index), s), t); break;
            case Kind::Record: check(m_ctx.event_record(m_events.at(t.event), s), t); break;
            case Kind::Wait: check(m_ctx.stream_wait_event(s, m_events.at(t.event)), t); break;
            case Kind::HostDelay: m_ctx.host_delay_ns(static_cast<uint64_t>(t.us * 1000.0 + 0.5)); break;
            case Kind::Sync:
                check(t.stream >= 0 ? m_ctx.stream_synchronize(s) : m_ctx.device_synchronize(), t);
                break;
        }
        if (m_ctx.tasks().size() > before) is.task = m_ctx.tasks().back().task;
        is.end = now_tick().v;
        is.returned = true;
    }
    check(m_ctx.device_synchronize(), m_w.tasks.empty() ? Task{} : m_w.tasks.back());
    m_finished = true;
}

std::vector<TaskTimes> Replayer::times(ClockDomain clock) const {
    std::vector<TaskTimes> out;
    for (const Task& t : m_w.tasks) {
        const Issued& is = m_issued[t.index];
        TaskTimes tt{t.index, kind_name(t.kind), t.name, t.stream};
        if (tt.name.empty()) {
            if (t.kind == Kind::Kernel) tt.name = t.op;
            else if (t.kind == Kind::Memcpy) tt.name = std::string("memcpy ") + copy_dir_name(t.dir);
            else if (!t.event.empty()) tt.name = t.event;
            else tt.name = kind_name(t.kind);
        }
        if (is.task) {
            tt.issue_cycle = clock.ceil_cycle(is.task->issue_tick).v;
            tt.done = is.task->done;
            if (is.task->done) {
                tt.start_cycle = clock.ceil_cycle(is.task->start_tick).v;
                tt.end_cycle = clock.ceil_cycle(is.task->end_tick).v;
            }
        } else if (is.issued) {
            tt.issue_cycle = tt.start_cycle = clock.ceil_cycle(Tick(is.begin)).v;
            tt.end_cycle = clock.ceil_cycle(Tick(is.end)).v;
            tt.done = is.returned;
        }
        out.push_back(std::move(tt));
    }
    return out;
}

std::vector<std::string> Replayer::pending() const {
    std::vector<std::string> out;
    for (const Task& t : m_w.tasks) {
        const Issued& is = m_issued[t.index];
        if (!is.issued) continue;
        const std::string what = "task " + std::to_string(t.index) + " (" + kind_name(t.kind) +
                                 (t.stream >= 0 ? ", stream " + std::to_string(t.stream) : std::string()) + ")";
        if (is.task && !is.task->done) {
            out.push_back(what + (t.kind == Kind::Wait ? " waits on event '" + t.event + "'" : std::string(" is not complete")));
        } else if (!is.returned) {
            out.push_back(what + " never returned (the host is blocked in it)");
        }
    }
    return out;
}

nlohmann::json tasks_json(const std::vector<TaskTimes>& times) {
    nlohmann::json a = nlohmann::json::array();
    for (const TaskTimes& t : times) {
        a.push_back({{"index", t.index},
                     {"kind", t.kind},
                     {"stream", t.stream >= 0 ? nlohmann::json(t.stream) : nlohmann::json(nullptr)},
                     {"name", t.name},
                     {"issue_cycle", t.issue_cycle},
                     {"start_cycle", t.start_cycle},
                     {"end_cycle", t.end_cycle}});
    }
    return a;
}

}  // namespace sfumato::workload
