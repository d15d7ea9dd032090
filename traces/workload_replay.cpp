#include "traces/workload_replay.h"

#include <fstream>
#include <sstream>
#include <systemc>

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::workload {

uint64_t Placer::addr(const std::string& buffer, uint64_t offset) const {
    auto it = m_live.find(buffer);
    if (it == m_live.end()) throw InputError("buffer '" + buffer + "' is not allocated");
    if (offset > it->second.bytes)
        throw InputError("offset " + std::to_string(offset) + " is past the end of buffer '" + buffer + "' (" +
                         std::to_string(it->second.bytes) + " bytes)");
    return it->second.addr + offset;
}

Relocate Placer::relocation() const {
    auto ranges = std::make_shared<std::map<uint64_t, std::pair<uint64_t, uint64_t>>>();  // recorded -> (bytes, addr)
    for (const auto& [name, l] : m_live) {
        if (l.recorded) (*ranges)[l.recorded] = {l.bytes, l.addr};
    }
    return [ranges](uint64_t a) {
        auto it = ranges->upper_bound(a);
        if (it == ranges->begin()) return a;
        --it;
        if (a >= it->first + it->second.first) return a;
        return it->second.second + (a - it->first);
    };
}

void Placer::add(const Task& alloc, uint64_t replay_addr) { m_live[alloc.buffer] = Live{replay_addr, alloc.bytes, alloc.addr}; }

void Placer::remove(const std::string& buffer) { m_live.erase(buffer); }

Replayer::Replayer(rt::Context& ctx, const Workload& w, KernelFactory kernels, std::string dir, uint32_t device,
                   CollectiveHook coll)
    : m_ctx(ctx),
      m_w(w),
      m_kernels(std::move(kernels)),
      m_dir(std::move(dir)),
      m_device(device),
      m_coll(std::move(coll)),
      m_issued(w.tasks.size()) {}

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
    m_ctx.set_untimed(true);
    for (const Stream& s : m_w.streams) {
        rt::StreamId id = rt::kDefaultStream;
        if ((s.id != 0 || s.priority != 0) && m_ctx.stream_create(&id, s.priority) != rt::Status::Ok)
            throw InputError("workload setup: " + m_ctx.last_error());
        m_streams[s.id] = id;
    }
    for (const Task& t : m_w.tasks) {
        if (!t.on_device(m_device)) continue;
        switch (t.kind) {
            case Kind::Memcpy:
                if (t.dir != CopyDir::D2H && t.dst.empty()) dev_buffer(t.bytes, 0, t);
                if (t.dir != CopyDir::H2D && t.src.empty()) dev_buffer(t.bytes, 1, t);
                if (!t.save.empty()) {
                    void* p = nullptr;
                    if (m_ctx.host_malloc(&p, t.bytes, t.pinned) != rt::Status::Ok)
                        throw InputError("workload task " + std::to_string(t.index) + " (memcpy): cannot allocate " +
                                         std::to_string(t.bytes) + " host bytes: " + m_ctx.last_error());
                    m_save_bufs[t.index] = p;
                } else if (t.dir != CopyDir::D2D) {
                    host_buffer(t.bytes, t.pinned, t);
                }
                break;
            case Kind::Collective:
                if (!m_coll.init)
                    throw InputError("workload task " + std::to_string(t.index) +
                                     " (collective): a collective needs a system of chips (replay --system F)");
                m_coll.init(m_ctx, t, static_cast<uint32_t>(t.rank_of(m_device)));
                break;
            case Kind::Alloc:
                if (!t.init.empty()) {
                    const std::string path = t.init.front() == '/' || m_dir.empty() ? t.init : m_dir + "/" + t.init;
                    std::ifstream in(path, std::ios::binary);
                    if (!in) throw InputError("workload task " + std::to_string(t.index) + " (alloc): field 'init': cannot open '" + path + "'");
                    std::stringstream ss;
                    ss << in.rdbuf();
                    const std::string b = ss.str();
                    if (b.size() > t.bytes)
                        throw InputError("workload task " + std::to_string(t.index) + " (alloc): field 'init': '" + path + "' holds " +
                                         std::to_string(b.size()) + " bytes, the buffer " + std::to_string(t.bytes));
                    m_init[t.index].assign(b.begin(), b.end());
                }
                break;
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
    m_ctx.set_untimed(false);
}

void Replayer::issue(const Task& t) {
    Issued& is = m_issued[t.index];
    const size_t before = m_ctx.tasks().size();
    const rt::StreamId s = t.stream >= 0 ? m_streams.at(t.stream) : rt::kDefaultStream;
    switch (t.kind) {
        case Kind::Alloc: {
            rt::DevPtr p = 0;
            check(m_ctx.malloc(&p, t.bytes), t);
            m_placer.add(t, p);
            if (auto it = m_init.find(t.index); it != m_init.end())
                check(m_ctx.write_untimed(p, it->second.data(), it->second.size()), t);
            break;
        }
        case Kind::Free:
            check(m_ctx.free(m_placer.addr(t.buffer, 0)), t);
            m_placer.remove(t.buffer);
            break;
        case Kind::Memcpy: {
            const uint64_t dst = t.dir == CopyDir::D2H ? 0 : t.dst.empty() ? dev_buffer(t.bytes, 0, t) : m_placer.addr(t.dst, t.dst_offset);
            const uint64_t src = t.dir == CopyDir::H2D ? 0 : t.src.empty() ? dev_buffer(t.bytes, 1, t) : m_placer.addr(t.src, t.src_offset);
            if (t.dir == CopyDir::H2D) check(m_ctx.copy_explicit(CopyDir::H2D, dst, reinterpret_cast<uintptr_t>(host_buffer(t.bytes, t.pinned, t)), t.bytes, s, t.async, t.pinned), t);
            else if (t.dir == CopyDir::D2H) {
                void* h = t.save.empty() ? host_buffer(t.bytes, t.pinned, t) : m_save_bufs.at(t.index);
                check(m_ctx.copy_explicit(CopyDir::D2H, reinterpret_cast<uintptr_t>(h), src, t.bytes, s, t.async, t.pinned), t);
            }
            else check(m_ctx.copy_explicit(CopyDir::D2D, dst, src, t.bytes, s, t.async, true), t);
            break;
        }
        case Kind::Kernel: {
            std::vector<KernelDesc> ks = m_kernels(m_ctx, t, m_placer);
            for (KernelDesc& k : ks) check(m_ctx.launch(std::move(k), s), t);
            break;
        }
        case Kind::Record: check(m_ctx.event_record(m_events.at(t.event), s), t); break;
        case Kind::Wait: check(m_ctx.stream_wait_event(s, m_events.at(t.event)), t); break;
        case Kind::HostDelay: m_ctx.host_delay_ns(static_cast<uint64_t>(t.us * 1000.0 + 0.5)); break;
        case Kind::Flush: check(m_ctx.flush_caches(), t); break;
        case Kind::Sync:
            if (!t.event.empty()) check(m_ctx.event_synchronize(m_events.at(t.event)), t);
            else check(t.stream >= 0 ? m_ctx.stream_synchronize(s) : m_ctx.device_synchronize(), t);
            break;
        case Kind::Collective: m_coll.issue(m_ctx, t, static_cast<uint32_t>(t.rank_of(m_device)), m_placer, s); break;
    }
    for (size_t i = before; i < m_ctx.tasks().size(); ++i) is.tasks.push_back(m_ctx.tasks()[i].task);
}

void Replayer::run() {
    setup();
    for (const Task& t : m_w.tasks) {
        if (!t.on_device(m_device)) continue;
        if (t.gap_ns) m_ctx.host_delay_ns(t.gap_ns);
        Issued& is = m_issued[t.index];
        is.issued = true;
        is.begin = now_tick().v;
        issue(t);
        is.end = now_tick().v;
        is.returned = true;
    }
    // The device drains; the host waits without a runtime call (none was recorded).
    for (const Issued& is : m_issued) {
        for (const auto& d : is.tasks) {
            while (!d->done) sc_core::wait(d->done_event);
        }
    }
    m_finished = true;
}

std::vector<TaskTimes> Replayer::times(ClockDomain clock) const {
    std::vector<TaskTimes> out;
    for (const Task& t : m_w.tasks) {
        const Issued& is = m_issued[t.index];
        TaskTimes tt{t.index, kind_name(t.kind), t.name, t.stream};
        tt.mine = t.on_device(m_device);
        tt.device = t.kind == Kind::Collective ? m_device : t.device;
        if (tt.name.empty()) {
            if (t.kind == Kind::Kernel) tt.name = !t.op.empty() ? t.op : t.node.value("op_type", "kernel");
            else if (t.kind == Kind::Collective) tt.name = t.coll_op;
            else if (t.kind == Kind::Memcpy) tt.name = std::string("memcpy ") + copy_dir_name(t.dir);
            else if (!t.event.empty()) tt.name = t.event;
            else if (!t.buffer.empty()) tt.name = std::string(kind_name(t.kind)) + " " + t.buffer;
            else tt.name = kind_name(t.kind);
        }
        if (!is.tasks.empty()) {
            tt.issue_cycle = clock.ceil_cycle(is.tasks.front()->issue_tick).v;
            tt.done = true;
            for (const auto& d : is.tasks) tt.done = tt.done && d->done;
            if (tt.done) {
                tt.start_cycle = clock.ceil_cycle(is.tasks.front()->start_tick).v;
                tt.end_cycle = clock.ceil_cycle(is.tasks.back()->end_tick).v;
                for (const auto& d : is.tasks) {
                    tt.start_cycle = std::min(tt.start_cycle, clock.ceil_cycle(d->start_tick).v);
                    tt.end_cycle = std::max(tt.end_cycle, clock.ceil_cycle(d->end_tick).v);
                }
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

std::vector<std::pair<std::string, std::vector<uint8_t>>> Replayer::saved() const {
    std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
    // Timing mode moves no data: the save buffers are token addresses, never memory to read.
    if (!m_save_bufs.empty() && !m_ctx.device().dev().info().functional)
        throw InputError("workload task " + std::to_string(m_save_bufs.begin()->first) + " (memcpy, save '" +
                         m_w.tasks[m_save_bufs.begin()->first].save +
                         "'): saved bytes exist in functional mode only (timing mode moves no data)");
    for (const auto& [index, p] : m_save_bufs) {
        const Task& t = m_w.tasks[index];
        const auto* b = static_cast<const uint8_t*>(p);
        out.emplace_back(t.save, std::vector<uint8_t>(b, b + t.bytes));
    }
    return out;
}

std::vector<TaskTimes> merge_times(const std::vector<std::vector<TaskTimes>>& per_device) {
    std::vector<TaskTimes> out;
    if (per_device.empty()) return out;
    for (size_t i = 0; i < per_device.front().size(); ++i) {
        TaskTimes m = per_device.front()[i];
        bool any = false;
        for (const auto& dev : per_device) {
            const TaskTimes& t = dev[i];
            if (!t.mine) continue;
            if (!any) {
                m = t;
                any = true;
                continue;
            }
            // A collective: every rank's part.
            m.issue_cycle = std::min(m.issue_cycle, t.issue_cycle);
            m.start_cycle = std::min(m.start_cycle, t.start_cycle);
            m.end_cycle = std::max(m.end_cycle, t.end_cycle);
            m.done = m.done && t.done;
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<std::string> Replayer::pending() const {
    std::vector<std::string> out;
    for (const Task& t : m_w.tasks) {
        const Issued& is = m_issued[t.index];
        if (!is.issued) continue;
        const std::string what = "task " + std::to_string(t.index) + " (" + kind_name(t.kind) +
                                 (t.stream >= 0 ? ", stream " + std::to_string(t.stream) : std::string()) +
                                 (m_device ? ", device " + std::to_string(m_device) : std::string()) + ")";
        bool done = true;
        for (const auto& d : is.tasks) done = done && d->done;
        if (!done) {
            out.push_back(what + (t.kind == Kind::Wait ? " waits on event '" + t.event + "'" : std::string(" is not complete")));
        } else if (!is.returned) {
            out.push_back(what + " never returned (the host is blocked in it)");
        }
    }
    return out;
}

nlohmann::json tasks_json(const std::vector<TaskTimes>& times, bool with_device) {
    nlohmann::json a = nlohmann::json::array();
    for (const TaskTimes& t : times) {
        a.push_back({{"index", t.index},
                     {"kind", t.kind},
                     {"stream", t.stream >= 0 ? nlohmann::json(t.stream) : nlohmann::json(nullptr)},
                     {"name", t.name},
                     {"issue_cycle", t.issue_cycle},
                     {"start_cycle", t.start_cycle},
                     {"end_cycle", t.end_cycle}});
        if (with_device) a.back()["device"] = t.kind == "collective" ? nlohmann::json(nullptr) : nlohmann::json(t.device);
    }
    return a;
}

}  // namespace sfumato::workload
