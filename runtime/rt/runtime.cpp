#include "runtime/rt/runtime.h"

#include <systemc>

#include "sim/error.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato::rt {

RuntimeParams::RuntimeParams(const ParamScope& s)
    : api_overhead_ns(s, "api_overhead_ns", 200, "ns", "host time of one runtime call", {0, 100000000}),
      launch_overhead_ns(s, "launch_overhead_ns", 1000, "ns", "host time of one kernel launch", {0, 100000000}),
      mem_align(s, "mem_align", 512, "B", "alignment of device allocations", {32, 1u << 20}) {}

Runtime::Runtime(IDevice& dev, const RuntimeParams& p, TraceHub& trace) : m_dev(dev), m_p(p), m_trace(trace) {
    m_holes[0] = dev.info().gm_bytes;
    if (trace.on(TraceLevel::Op)) m_track = trace.sink()->track("host", "runtime API", 0);
    m_default = create_stream(0);
}

void Runtime::charge(uint32_t ns, const char* what) {
    const Tick t0 = now_tick();
    if (ns) {
        work_begin();
        sc_core::wait(to_sc_time(Tick(static_cast<uint64_t>(ns) * 1000)));
        work_end();
    }
    if (m_trace.on(TraceLevel::Op)) m_trace.sink()->slice(m_track, what, t0, now_tick(), nullptr, 0);
}

DevPtr Runtime::malloc(uint64_t bytes) {
    charge(m_p.api_overhead_ns, "malloc");
    if (bytes == 0) throw InputError("malloc of 0 bytes");
    const uint64_t a = m_p.mem_align;
    const uint64_t size = (bytes + a - 1) / a * a;
    for (auto it = m_holes.begin(); it != m_holes.end(); ++it) {
        if (it->second < size) continue;
        const DevPtr p = it->first;
        const uint64_t rest = it->second - size;
        m_holes.erase(it);
        if (rest) m_holes[p + size] = rest;
        m_live[p] = size;
        m_in_use += size;
        return p;
    }
    throw InputError("device out of memory: malloc of " + std::to_string(bytes) + " bytes with " +
                     std::to_string(m_in_use) + " of " + std::to_string(m_dev.info().gm_bytes) + " in use");
}

void Runtime::free(DevPtr p) {
    charge(m_p.api_overhead_ns, "free");
    auto it = m_live.find(p);
    if (it == m_live.end()) throw InputError("free of an address that is not a live allocation (double free or bad pointer)");
    uint64_t addr = p, size = it->second;
    m_live.erase(it);
    m_in_use -= size;
    auto next = m_holes.lower_bound(addr);
    if (next != m_holes.end() && next->first == addr + size) {
        size += next->second;
        next = m_holes.erase(next);
    }
    if (next != m_holes.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == addr) {
            addr = prev->first;
            size += prev->second;
            m_holes.erase(prev);
        }
    }
    m_holes[addr] = size;
}

void Runtime::check_range(DevPtr p, uint64_t bytes, const char* what) const {
    auto it = m_live.upper_bound(p);
    if (it == m_live.begin() || std::prev(it)->first + std::prev(it)->second < p + bytes)
        throw InputError(std::string(what) + ": device range is not inside a live allocation");
}

Stream Runtime::create_stream(int priority) {
    Stream s{static_cast<uint32_t>(m_streams.size()), m_dev.open_queue(priority)};
    m_streams.push_back(s);
    m_last_on_stream.emplace_back();
    return s;
}

std::shared_ptr<Task> Runtime::submit(Stream s, std::shared_ptr<Task> t) {
    t->stream = s.id;
    t->id = m_tasks.size();
    m_tasks.push_back(t);
    m_last_on_stream[s.id] = t;
    m_dev.submit(s.queue, t);
    return t;
}

void Runtime::wait_task(const std::shared_ptr<Task>& t) {
    while (!t->done) sc_core::wait(t->done_event);
}

void Runtime::memcpy_h2d(DevPtr dst, const void* src, uint64_t bytes, bool pinned) {
    charge(m_p.api_overhead_ns, "memcpy_h2d");
    check_range(dst, bytes, "memcpy_h2d");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Memcpy;
    t->copy = {CopyDir::H2D, dst, 0, nullptr, src, bytes, pinned};
    wait_task(submit(m_default, t));
}

void Runtime::memcpy_d2h(void* dst, DevPtr src, uint64_t bytes, bool pinned) {
    charge(m_p.api_overhead_ns, "memcpy_d2h");
    check_range(src, bytes, "memcpy_d2h");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Memcpy;
    t->copy = {CopyDir::D2H, 0, src, dst, nullptr, bytes, pinned};
    wait_task(submit(m_default, t));
}

std::shared_ptr<Task> Runtime::launch(KernelDesc k, Stream s) {
    if (k.block_dim == 0 || k.block_dim > 65535)
        throw InputError("launch of '" + k.name + "' with block_dim " + std::to_string(k.block_dim) + " (valid: 1..65535)");
    if (s.id >= m_streams.size()) throw InputError("launch on an unknown stream");
    charge(m_p.launch_overhead_ns, "launch");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Kernel;
    t->kernel = std::move(k);
    return submit(s, t);
}

void Runtime::synchronize(Stream s) {
    charge(m_p.api_overhead_ns, "synchronize");
    if (auto t = m_last_on_stream.at(s.id)) wait_task(t);
}

void Runtime::synchronize_device() {
    charge(m_p.api_overhead_ns, "synchronize_device");
    for (auto& t : m_last_on_stream)
        if (t) wait_task(t);
}

}  // namespace sfumato::rt
