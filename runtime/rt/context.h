// The device runtime a host program calls (the role of the vendor's ACL/RT runtime or CUDA's
// runtime API): a Device wraps one chip behind IDevice and owns its physical memory (a buddy
// arena) and the shared-memory handle table; each host program opens a Context on it with its own
// caching allocator, streams (bound to hardware queues, with priorities), events, async memcpy,
// kernel launch and host callbacks. Calls run in a host SC_THREAD and charge host time (host.*
// parameters) with wait(); device work is timed by the chip. Errors are returned as Status with
// a message (last_error()), never crashes. Every submitted task is recorded for summaries and
// traces (host API track, one track per stream, flow arrows launch -> execution).
// Simplified: host time is a fixed cost per call kind; a pageable copy is handed to the DMA engine
// with pinned = false (the engine models the bounce buffer); timing mode host buffers are tokens.
// In a system of devices (one Device per chip), a context also copies to a peer device's memory
// over the links (memcpy_peer) and sets and waits on notifies (device-side counting flags that a
// peer sets): the building blocks of the collective library (runtime/comm).
#pragma once
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "isa/dtype.h"
#include "runtime/rt/buddy_arena.h"
#include "runtime/rt/caching_allocator.h"
#include "runtime/rt/share_table.h"
#include "sim/config.h"
#include "sim/device_if.h"
#include "sim/stats.h"
#include "sim/trace.h"

namespace sfumato::rt {

enum class Status : uint8_t {
    Ok,
    InvalidValue,   // a size, block_dim or argument is invalid
    BadPointer,     // not a live allocation of this context
    DoubleFree,     // the block was already freed
    OutOfMemory,
    InvalidStream,  // unknown or destroyed stream
    InvalidEvent,   // unknown or destroyed event, or never recorded (elapsed time)
    InvalidHandle,  // unknown or dead shared-memory handle
    NotReady,       // event_query: work still pending
};
const char* status_name(Status s);

using DevPtr = uint64_t;
using StreamId = uint32_t;
using EventId = uint32_t;
using ModelId = uint32_t;
constexpr StreamId kDefaultStream = 0;

struct RuntimeParams {
    explicit RuntimeParams(const ParamScope& s);
    Param<uint64_t> api_overhead_ns;           // any runtime call
    Param<uint64_t> launch_overhead_ns;         // a kernel launch (replaces api_overhead_ns)
    Param<uint64_t> device_malloc_ns;  // extra, when malloc takes a new segment from the device
    Param<uint64_t> sync_ns;           // extra, after a synchronize returns
    Param<uint32_t> mem_align;         // allocation rounding
    Param<uint64_t> alloc_min_block;   // buddy arena granule (device-level allocation unit)
};

// One task as the host issued it: for summary.json and traces.
struct TaskRecord {
    size_t index;
    std::string name;
    StreamId stream;
    std::shared_ptr<Task> task;
    uint64_t api_slice_begin;  // tick of the host call that issued it
};

// One host runtime call as the program made it (successful calls only), for recording a run
// as a workload file (traces/workload_record.h). Times are ticks (ps).
struct ApiCall {
    enum class Kind : uint8_t {
        Malloc, Free, Memcpy, Launch, EventRecord, StreamWait, StreamSync, DeviceSync, EventSync, FlushCaches,
        Other,  // any other call (stream/event creation, host memory, queries): host time only
    };
    Kind kind = Kind::Other;
    uint64_t begin = 0, end = 0;
    StreamId stream = 0;
    EventId event = 0;
    uint64_t ptr = 0;    // malloc/free: the block; memcpy: the device destination (h2d, d2d)
    uint64_t src = 0;    // memcpy: the device source (d2h, d2d)
    uint64_t bytes = 0;  // malloc, memcpy
    CopyDir dir = CopyDir::H2D;
    bool pinned = true, async = false;
    int priority = 0;
    size_t task = SIZE_MAX;  // index in tasks() of the task it submitted
};

class Context;

class Device {
public:
    // stats_parent: where the memory stats group ("runtime") goes (null: unparented).
    Device(IDevice& dev, const RuntimeParams& params, TraceHub* trace = nullptr, StatGroup* stats_parent = nullptr);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    // A new host program (process) on this device.
    Context& open_context();
    IDevice& dev() const { return m_dev; }
    const RuntimeParams& host() const { return m_host; }
    BuddyArena& arena() { return m_arena; }
    ShareTable& shares() { return m_shares; }
    TraceHub* trace() const { return m_trace; }
    // Physical device memory held by all contexts, and what they would hold without sharing.
    uint64_t physical_bytes() const { return m_arena.allocated_bytes(); }
    const std::vector<std::unique_ptr<Context>>& contexts() const { return m_contexts; }
    // Summed over contexts.
    AllocatorStats memory_stats() const;
    // Whether [p, p + bytes) lies inside one live allocation of any context (or an imported block).
    // Always true for a device another process simulates (set_remote): its allocations are there.
    bool range_allocated(DevPtr p, uint64_t bytes) const;
    void set_remote(bool remote) { m_remote = remote; }
    bool remote() const { return m_remote; }
    // Names this device's tracks in traces ("device" unless set; e.g. "chip3" in a system).
    void set_trace_name(std::string name) { m_trace_name = std::move(name); }
    const std::string& trace_name() const { return m_trace_name; }
    const StatGroup& stats() const { return m_stats; }

private:
    void add_stat(const char* name, const char* unit, const char* desc, std::function<double()> f);
    IDevice& m_dev;
    const RuntimeParams& m_host;
    TraceHub* m_trace;
    std::string m_trace_name = "device";
    bool m_remote = false;
    BuddyArena m_arena;
    ShareTable m_shares;
    std::vector<std::unique_ptr<Context>> m_contexts;
    StatGroup m_stats;
    std::vector<std::unique_ptr<Formula>> m_formulas;
};

class Context {
public:
    Context(Device& d, uint32_t id);
    ~Context();
    uint32_t id() const { return m_id; }
    // The device this context runs on.
    Device& device() const { return m_dev; }
    const std::string& last_error() const { return m_error; }

    // Memory.
    Status malloc(DevPtr* p, uint64_t bytes);
    Status free(DevPtr p);
    Status host_malloc(void** p, uint64_t bytes, bool pinned);
    Status host_free(void* p);
    Status memcpy_h2d(DevPtr dst, const void* src, uint64_t bytes, StreamId s = kDefaultStream, bool async = false);
    Status memcpy_d2h(void* dst, DevPtr src, uint64_t bytes, StreamId s = kDefaultStream, bool async = false);
    Status memcpy_d2d(DevPtr dst, DevPtr src, uint64_t bytes, StreamId s = kDefaultStream, bool async = false);
    // A copy with the host buffer's kind given explicitly (host pointers as integers; null in
    // timing mode), for callers whose host buffers did not come from host_malloc.
    Status copy_explicit(CopyDir dir, uint64_t dst, uint64_t src, uint64_t bytes, StreamId s, bool async, bool pinned);
    // Peer devices: a copy from this device's memory to `peer`'s (dst is a peer address), and
    // notifies. A notify slot lives on the device that waits on it; notify_record sets `slot` of
    // `peer` (after the route latency); notify_wait blocks stream s until its slot has been set
    // and consumes one setting.
    Status memcpy_peer(Device& peer, DevPtr dst, DevPtr src, uint64_t bytes, StreamId s, bool async = true);
    // A read from `peer`'s memory (src is a peer address) into this device's (dst); asynchronous.
    Status memcpy_from_peer(Device& peer, DevPtr dst, DevPtr src, uint64_t bytes, StreamId s);
    // A peer copy that reduces into the destination (MemcpyDesc::reduce_op: 1 sum, 2 max, 3 min)
    // in `dtype` (fp16, bf16 or fp32); asynchronous.
    Status memcpy_peer_reduce(Device& peer, DevPtr dst, DevPtr src, uint64_t bytes, isa::DType dtype, uint8_t op,
                              StreamId s);
    // Several peer copies posted in one host call (one call cost, as a transfer engine posts a
    // list of descriptors, e.g. one layer's KV blocks): each segment is its own copy task on
    // stream s, in order; asynchronous. All segments are checked before any is submitted.
    struct PeerSegment {
        DevPtr dst = 0, src = 0;
        uint64_t bytes = 0;
    };
    Status memcpy_peer_batch(Device& peer, const std::vector<PeerSegment>& segments, StreamId s);
    Status notify_create(uint32_t* slot);
    Status notify_record(Device& peer, uint32_t slot, StreamId s);
    Status notify_wait(uint32_t slot, StreamId s);
    // Shared memory between contexts.
    Status export_handle(DevPtr p, uint64_t* handle);
    Status import_handle(uint64_t handle, DevPtr* p);
    AllocatorStats memory_stats() const { return m_alloc.stats(); }
    // Frees a block this context exported, once its last importer closed it (ShareTable).
    void release_shared(DevPtr p);
    uint64_t imported_bytes() const;
    bool owns_range(DevPtr p, uint64_t bytes) const;

    // Streams and events.
    Status stream_create(StreamId* s, int priority);
    Status stream_destroy(StreamId s);
    Status stream_synchronize(StreamId s);
    Status device_synchronize();
    // Waits (at no host charge) for every stream's last task, then writes back and invalidates
    // the device's caches (IDevice::flush_caches), as a benchmark does before a cold measurement.
    Status flush_caches();
    Status event_create(EventId* e);
    Status event_destroy(EventId e);
    Status event_record(EventId e, StreamId s);
    Status stream_wait_event(StreamId s, EventId e);
    Status event_synchronize(EventId e);
    Status event_query(EventId e);
    // Device time between two recorded events, in ps.
    Status event_elapsed(uint64_t* ps, EventId start, EventId end);

    // Work.
    Status launch(KernelDesc k, StreamId s);
    // The task of the last successful launch (submitted, or recorded into a capture).
    const std::shared_ptr<Task>& last_launch() const { return m_last_launch; }
    // Graph capture (the vendor's model runtime, CUDA graphs): between capture_begin and
    // capture_end, kernel launches on stream s are recorded, not submitted, and charge no host
    // time; model_launch submits a captured sequence to a stream in one host call (one launch
    // cost), and the task scheduler walks it with no host cost per kernel. A model is launched
    // once: its tasks are the captured ones. Copies, events and other streams are not captured
    // (they run at once, as an eager call would).
    Status capture_begin(StreamId s);
    Status capture_end(StreamId s, ModelId* m);
    Status model_launch(ModelId m, StreamId s);
    Status launch_host_func(StreamId s, std::function<void()> fn);
    // Host time passes without a runtime call (the host program computing).
    void host_delay_ns(uint64_t ns);

    const std::vector<TaskRecord>& tasks() const { return m_records; }

    // Recording (workload files): logs every successful call made from now on.
    void set_api_log(bool on) { m_log_on = on; }
    const std::vector<ApiCall>& api_log() const { return m_log; }
    // Called on every kernel before it is submitted (e.g. to record its instruction stream).
    void set_launch_hook(std::function<void(KernelDesc&)> f) { m_launch_hook = std::move(f); }
    bool has_launch_hook() const { return static_cast<bool>(m_launch_hook); }
    // Setup before time zero (workload replay): while on, calls charge no host time, are not
    // logged, and copies move their bytes directly (functional mode) instead of submitting a
    // task. Used only where nothing runs on the device.
    void set_untimed(bool on) { m_untimed = on; }
    bool untimed() const { return m_untimed; }
    // Writes bytes into device memory at no simulated cost (functional mode; a no-op in timing
    // mode). Fails when the range is not inside a live allocation.
    Status write_untimed(DevPtr dst, const void* src, uint64_t bytes);
    // Priority a stream was created with (0 for unknown ids).
    int stream_priority(StreamId s) const { return s < m_streams.size() ? m_streams[s].priority : 0; }
    // Emits stream tracks, task slices and launch -> execution flows for completed tasks.
    void emit_task_trace();

private:
    struct Stream {
        uint32_t queue;
        int priority;
        bool live = true;
        std::shared_ptr<Task> last;  // most recently submitted task
        TrackId track = 0;
    };
    struct Event {
        uint32_t slot;
        uint64_t seq = 0;
        bool live = true;
        std::shared_ptr<Task> last_record;
    };
    Status fail(Status s, const std::string& msg);
    Status ok() { return Status::Ok; }
    void charge(uint64_t ns);
    void api_slice(const char* name, uint64_t begin);
    Stream* stream(StreamId s);
    Event* event(EventId e);
    bool device_range_ok(DevPtr p, uint64_t bytes) const;
    Status submit(StreamId s, std::shared_ptr<Task> t, const std::string& name, uint64_t begin);
    Status copy(CopyDir dir, uint64_t dst, uint64_t src, uint64_t bytes, StreamId s, bool async, bool pinned,
                const char* api);
    void wait_done(const std::shared_ptr<Task>& t);
    bool is_pinned(const void* p, uint64_t bytes) const;
    void log(ApiCall c, uint64_t begin);

    Device& m_dev;
    uint32_t m_id;
    CachingAllocator m_alloc;
    std::string m_error;
    std::vector<Stream> m_streams;
    std::vector<Event> m_events;
    std::map<uintptr_t, std::pair<uint64_t, bool>> m_host_bufs;  // addr -> (bytes, pinned)
    struct FreeDeleter {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::vector<std::unique_ptr<uint8_t, FreeDeleter>> m_host_storage;
    uintptr_t m_next_token = 0x7e00'0000'0000;
    std::vector<TaskRecord> m_records;
    uint64_t m_next_task_id = 1;
    TrackId m_api_track = 0;
    bool m_log_on = false, m_untimed = false;
    std::vector<ApiCall> m_log;
    std::function<void(KernelDesc&)> m_launch_hook;
    std::shared_ptr<Task> m_last_launch;
    StreamId m_capture_stream = 0;
    bool m_capturing = false;
    struct Captured {
        std::shared_ptr<Task> task;
        std::string name;
    };
    std::vector<Captured> m_capture;
    std::vector<std::vector<Captured>> m_models;  // captured sequences; emptied when launched
};

}  // namespace sfumato::rt
