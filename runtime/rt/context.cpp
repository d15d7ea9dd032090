#include "runtime/rt/context.h"

#include <algorithm>
#include <cstdlib>

#include <systemc>

#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato::rt {

const char* status_name(Status s) {
    constexpr const char* names[] = {"ok",           "invalid value", "bad pointer",    "double free", "out of memory",
                                     "invalid stream", "invalid event", "invalid handle", "not ready"};
    return names[static_cast<int>(s)];
}

RuntimeParams::RuntimeParams(const ParamScope& s)
    : api_overhead_ns(s, "api_overhead_ns", 200, "ns", "host time of a runtime call", {0, 1'000'000'000}),
      launch_overhead_ns(s, "launch_overhead_ns", 1000, "ns", "host time of a kernel launch (the launch overhead)", {0, 1'000'000'000}),
      device_malloc_ns(s, "device_malloc_ns", 20000, "ns",
                       "extra host time when malloc takes a new segment from the device", {0, 1'000'000'000}),
      sync_ns(s, "sync_ns", 1000, "ns", "extra host time for a synchronize to return", {0, 1'000'000'000}),
      mem_align(s, "mem_align", 512, "B", "device allocations are rounded up to this (power of two)", {32, 1u << 20}),
      alloc_min_block(s, "alloc_min_block", 2ull << 20, "B", "device-level allocation granule (power of two)",
                      {4096, 1ull << 40}) {}

// ---- Device ---------------------------------------------------------------------------------

namespace {
// Address 0 is never handed out (it reads as null), nor what the chip reserves there
// (DeviceInfo::reserved_bytes): the arena starts at the first granule past both.
uint64_t arena_base(const IDevice& d, uint64_t granule) {
    const uint64_t r = std::max(granule, d.info().reserved_bytes);
    return (r + granule - 1) / granule * granule;
}
uint64_t arena_size(const IDevice& d, uint64_t granule) {
    const uint64_t gm = d.info().gm_bytes, base = arena_base(d, granule);
    return gm > base ? gm - base : 0;
}
}  // namespace

Device::Device(IDevice& dev, const RuntimeParams& params, TraceHub* trace, StatGroup* stats_parent)
    : m_dev(dev),
      m_host(params),
      m_trace(trace),
      m_arena(arena_base(dev, m_host.alloc_min_block), arena_size(dev, m_host.alloc_min_block), m_host.alloc_min_block),
      m_stats(stats_parent, "runtime") {
    auto d = [](uint64_t v) { return static_cast<double>(v); };
    add_stat("mem_in_use", "B", "device bytes in live allocations (all contexts)", [=, this] { return d(memory_stats().in_use); });
    add_stat("mem_peak_in_use", "B", "peak of mem_in_use per context, summed", [=, this] { return d(memory_stats().peak_in_use); });
    add_stat("mem_reserved", "B", "device bytes the caching allocators hold", [=, this] { return d(memory_stats().reserved); });
    add_stat("mem_fragmentation", "ratio", "1 - largest cached free block / cached free bytes",
             [this] { return memory_stats().fragmentation(); });
    add_stat("device_allocs", "count", "segments taken from device memory", [=, this] { return d(memory_stats().device_allocs); });
    add_stat("physical_bytes", "B", "device memory physically allocated", [=, this] { return d(physical_bytes()); });
    add_stat("shared_saved_bytes", "B", "bytes imported by other contexts instead of copied", [=, this] { return d(m_shares.saved_bytes()); });
}

void Device::add_stat(const char* name, const char* unit, const char* desc, std::function<double()> f) {
    m_formulas.push_back(std::make_unique<Formula>(m_stats, name, unit, desc, std::move(f)));
}

AllocatorStats Device::memory_stats() const {
    AllocatorStats sum;
    for (const auto& c : m_contexts) {
        const AllocatorStats s = c->memory_stats();
        sum.in_use += s.in_use;
        sum.requested += s.requested;
        sum.peak_in_use += s.peak_in_use;
        sum.reserved += s.reserved;
        sum.peak_reserved += s.peak_reserved;
        sum.device_allocs += s.device_allocs;
        sum.device_frees += s.device_frees;
        sum.allocs += s.allocs;
        sum.frees += s.frees;
        sum.live_blocks += s.live_blocks;
        sum.largest_cached = std::max(sum.largest_cached, s.largest_cached);
    }
    return sum;
}

Device::~Device() = default;

bool Device::range_allocated(DevPtr p, uint64_t bytes) const {
    if (m_remote) return true;
    for (const auto& c : m_contexts) {
        if (c->owns_range(p, bytes)) return true;
    }
    return false;
}

Context& Device::open_context() {
    m_contexts.push_back(std::make_unique<Context>(*this, static_cast<uint32_t>(m_contexts.size())));
    return *m_contexts.back();
}

// ---- Context: basics ------------------------------------------------------------------------

namespace {
AllocatorParams allocator_params(const RuntimeParams& h) {
    AllocatorParams a;
    a.round = h.mem_align;
    return a;
}
}  // namespace

Context::Context(Device& d, uint32_t id) : m_dev(d), m_id(id), m_alloc(d.arena(), allocator_params(d.host())) {
    m_streams.push_back(Stream{d.dev().open_queue(0), 0, true, nullptr, 0});
    if (TraceHub* t = d.trace(); t && t->on(TraceLevel::Op)) {
        // A lone device's host calls go in the "host" process; a system's chips each get their own
        // ("chip3 host"), beside their "chip3" device tracks.
        const std::string process = d.trace_name() == "device" ? "host" : d.trace_name() + " host";
        m_api_track = t->sink()->track(process, "context " + std::to_string(id) + " API", static_cast<int>(id));
    }
}

Context::~Context() = default;

Status Context::fail(Status s, const std::string& msg) {
    m_error = std::string(status_name(s)) + ": " + msg;
    return s;
}

void Context::charge(uint64_t ns) {
    // Host time is work in flight for the run driver's deadlock check, and its end is progress.
    note_progress();
    if (!ns || m_untimed) return;
    work_begin();
    sc_core::wait(to_sc_time(Tick(ns * 1000)));
    work_end();
}

void Context::host_delay_ns(uint64_t ns) { charge(ns); }

void Context::log(ApiCall c, uint64_t begin) {
    if (!m_log_on || m_untimed) return;
    c.begin = begin;
    c.end = now_tick().v;
    m_log.push_back(c);
}

Status Context::write_untimed(DevPtr dst, const void* src, uint64_t bytes) {
    if (!device_range_ok(dst, bytes)) return fail(Status::BadPointer, "write_untimed: not inside a live device allocation");
    if (IBackingStore* gm = m_dev.dev().gm(); gm && src) gm->write(dst, src, bytes);
    return ok();
}

void Context::api_slice(const char* name, uint64_t begin) {
    TraceHub* t = m_dev.trace();
    if (t && t->on(TraceLevel::Op)) t->sink()->slice(m_api_track, name, Tick(begin), now_tick(), nullptr, 0);
}

Context::Stream* Context::stream(StreamId s) {
    return s < m_streams.size() && m_streams[s].live ? &m_streams[s] : nullptr;
}

Context::Event* Context::event(EventId e) { return e < m_events.size() && m_events[e].live ? &m_events[e] : nullptr; }

void Context::wait_done(const std::shared_ptr<Task>& t) {
    while (!t->done) sc_core::wait(t->done_event);
}

Status Context::submit(StreamId s, std::shared_ptr<Task> t, const std::string& name, uint64_t begin) {
    Stream* st = stream(s);
    t->stream = s;
    t->id = m_next_task_id++;
    m_records.push_back(TaskRecord{m_records.size(), name, s, t, begin});
    st->last = t;
    m_dev.dev().submit(st->queue, std::move(t));
    return ok();
}

// ---- Memory ---------------------------------------------------------------------------------

Status Context::malloc(DevPtr* p, uint64_t bytes) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!p) return fail(Status::InvalidValue, "malloc: null result pointer");
    if (bytes == 0) return fail(Status::InvalidValue, "malloc of 0 bytes");
    const uint64_t segments = m_alloc.stats().device_allocs;
    auto a = m_alloc.allocate(bytes);
    if (!a) return fail(Status::OutOfMemory, "malloc of " + std::to_string(bytes) + " bytes: device memory exhausted");
    if (m_alloc.stats().device_allocs != segments) charge(m_dev.host().device_malloc_ns);
    *p = *a;
    api_slice("malloc", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::Malloc;
    c.ptr = *a;
    c.bytes = bytes;
    log(c, begin);
    return ok();
}

Status Context::free(DevPtr p) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (m_alloc.block_size(p) == 0) {
        const auto owner = m_dev.shares().owner_of(p);
        const auto closed = m_dev.shares().close(m_id, p);
        if (closed != ShareTable::Close::NotImported) {
            // The last importer of a block its owner already freed releases it.
            if (closed == ShareTable::Close::FreeNow) m_dev.contexts()[*owner]->release_shared(p);
            api_slice("free", begin);
            return ok();
        }
        if (m_alloc.live_block_containing(p)) return fail(Status::BadPointer, "free of an interior pointer");
        return fail(Status::BadPointer, "free of a pointer that is not a live allocation (bad pointer or double free)");
    }
    switch (m_dev.shares().owner_free(m_id, p)) {
        case ShareTable::Close::FreeNow: m_alloc.free(p); break;
        case ShareTable::Close::Kept: break;  // importers still map it: freed at the last close
        case ShareTable::Close::NotImported: return fail(Status::DoubleFree, "free of an already freed shared block");
    }
    api_slice("free", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::Free;
    c.ptr = p;
    log(c, begin);
    return ok();
}

void Context::release_shared(DevPtr p) { m_alloc.free(p); }

Status Context::host_malloc(void** p, uint64_t bytes, bool pinned) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!p || bytes == 0) return fail(Status::InvalidValue, "host_malloc of 0 bytes or into a null pointer");
    uintptr_t addr = 0;
    if (m_dev.dev().info().functional) {
        // Zeroed (deterministic contents) by calloc, which maps large blocks lazily: memory is
        // used only where data is written. A size the host cannot give is the runtime's error.
        auto* mem = static_cast<uint8_t*>(std::calloc(bytes, 1));
        if (!mem) return fail(Status::OutOfMemory, "host_malloc of " + std::to_string(bytes) + " bytes: host memory exhausted");
        m_host_storage.emplace_back(mem);
        addr = reinterpret_cast<uintptr_t>(mem);
    } else {  // timing mode: a token address, never dereferenced
        addr = m_next_token;
        m_next_token += (bytes + 4095) / 4096 * 4096;
    }
    m_host_bufs[addr] = {bytes, pinned};
    *p = reinterpret_cast<void*>(addr);
    api_slice(pinned ? "host_malloc pinned" : "host_malloc", begin);
    return ok();
}

Status Context::host_free(void* p) {
    charge(m_dev.host().api_overhead_ns);
    auto it = m_host_bufs.find(reinterpret_cast<uintptr_t>(p));
    if (it == m_host_bufs.end()) return fail(Status::BadPointer, "host_free of a pointer host_malloc did not return");
    for (auto s = m_host_storage.begin(); s != m_host_storage.end(); ++s) {
        if (reinterpret_cast<uintptr_t>(s->get()) == it->first) {
            m_host_storage.erase(s);
            break;
        }
    }
    m_host_bufs.erase(it);
    return ok();
}

bool Context::is_pinned(const void* p, uint64_t bytes) const {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = m_host_bufs.upper_bound(a);
    if (it == m_host_bufs.begin()) return false;
    --it;
    return it->second.second && a - it->first <= it->second.first &&
           bytes <= it->first + it->second.first - a;
}

bool Context::device_range_ok(DevPtr p, uint64_t bytes) const {
    // Sizes compared, not end addresses: p + bytes may wrap around 2^64.
    if (auto b = m_alloc.live_block_containing(p)) return bytes <= b->first + b->second - p;
    return m_dev.shares().imported_by(m_id, p, bytes);  // from an imported block's start only
}

bool Context::owns_range(DevPtr p, uint64_t bytes) const { return device_range_ok(p, bytes); }

uint64_t Context::imported_bytes() const { return m_dev.shares().imported_bytes(m_id); }

Status Context::copy(CopyDir dir, uint64_t dst, uint64_t src, uint64_t bytes, StreamId s, bool async, bool pinned,
                     const char* api) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, std::string(api) + ": stream " + std::to_string(s) + " is not live");
    if (bytes == 0) return fail(Status::InvalidValue, std::string(api) + ": 0 bytes");
    if (dir != CopyDir::H2D && !device_range_ok(src, bytes))
        return fail(Status::BadPointer, std::string(api) + ": source is not inside a live device allocation");
    if (dir != CopyDir::D2H && !device_range_ok(dst, bytes))
        return fail(Status::BadPointer, std::string(api) + ": destination is not inside a live device allocation");
    if (m_untimed) {  // setup before time zero: the bytes move, no time passes
        IBackingStore* gm = m_dev.dev().gm();
        if (gm && dir == CopyDir::H2D && src) gm->write(dst, reinterpret_cast<const void*>(src), bytes);
        if (gm && dir == CopyDir::D2H && dst) gm->read(src, reinterpret_cast<void*>(dst), bytes);
        if (gm && dir == CopyDir::D2D) {
            std::vector<uint8_t> tmp(bytes);
            gm->read(src, tmp.data(), bytes);
            gm->write(dst, tmp.data(), bytes);
        }
        return ok();
    }
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Memcpy;
    t->copy.dir = dir;
    t->copy.bytes = bytes;
    t->copy.pinned = pinned;
    const bool data = m_dev.dev().info().functional;
    if (dir == CopyDir::H2D) {
        t->copy.dev_dst = dst;
        t->copy.host_src = data ? reinterpret_cast<const void*>(src) : nullptr;
    } else if (dir == CopyDir::D2H) {
        t->copy.dev_src = src;
        t->copy.host_dst = data ? reinterpret_cast<void*>(dst) : nullptr;
    } else {
        t->copy.dev_dst = dst;
        t->copy.dev_src = src;
    }
    submit(s, t, std::string("memcpy ") + copy_dir_name(dir), begin);
    const size_t task = m_records.size() - 1;
    api_slice(api, begin);
    if (!async) {
        wait_done(t);
        charge(m_dev.host().sync_ns);
    }
    ApiCall c;
    c.kind = ApiCall::Kind::Memcpy;
    c.stream = s;
    c.dir = dir;
    c.ptr = dir == CopyDir::D2H ? 0 : dst;
    c.src = dir == CopyDir::H2D ? 0 : src;
    c.bytes = bytes;
    c.pinned = pinned;
    c.async = async;
    c.task = task;
    log(c, begin);
    return ok();
}

Status Context::copy_explicit(CopyDir dir, uint64_t dst, uint64_t src, uint64_t bytes, StreamId s, bool async,
                              bool pinned) {
    return copy(dir, dst, src, bytes, s, async, pinned, dir == CopyDir::H2D ? "memcpy h2d" : dir == CopyDir::D2H ? "memcpy d2h" : "memcpy d2d");
}

Status Context::memcpy_h2d(DevPtr dst, const void* src, uint64_t bytes, StreamId s, bool async) {
    return copy(CopyDir::H2D, dst, reinterpret_cast<uintptr_t>(src), bytes, s, async, is_pinned(src, bytes),
                async ? "memcpy_async h2d" : "memcpy h2d");
}

Status Context::memcpy_d2h(void* dst, DevPtr src, uint64_t bytes, StreamId s, bool async) {
    return copy(CopyDir::D2H, reinterpret_cast<uintptr_t>(dst), src, bytes, s, async, is_pinned(dst, bytes),
                async ? "memcpy_async d2h" : "memcpy d2h");
}

Status Context::memcpy_d2d(DevPtr dst, DevPtr src, uint64_t bytes, StreamId s, bool async) {
    return copy(CopyDir::D2D, dst, src, bytes, s, async, true, async ? "memcpy_async d2d" : "memcpy d2d");
}

Status Context::export_handle(DevPtr p, uint64_t* handle) {
    charge(m_dev.host().api_overhead_ns);
    const uint64_t size = m_alloc.block_size(p);
    if (!handle || size == 0) return fail(Status::BadPointer, "export_handle: not the start of a live allocation");
    *handle = m_dev.shares().export_block(m_id, p, size);
    return ok();
}

Status Context::import_handle(uint64_t handle, DevPtr* p) {
    charge(m_dev.host().api_overhead_ns);
    auto a = m_dev.shares().import(m_id, handle);
    if (!a || !p) return fail(Status::InvalidHandle, "import_handle: handle " + std::to_string(handle) + " is not live");
    *p = *a;
    return ok();
}

}  // namespace sfumato::rt
