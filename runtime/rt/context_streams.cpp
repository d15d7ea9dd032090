// Context: streams, events, kernel launch, host callbacks, synchronisation and task traces.
#include <systemc>

#include "runtime/rt/context.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::rt {

Status Context::stream_create(StreamId* s, int priority) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!s) return fail(Status::InvalidValue, "stream_create: null result pointer");
    m_streams.push_back(Stream{m_dev.dev().open_queue(priority), priority, true, nullptr, 0});
    *s = static_cast<StreamId>(m_streams.size() - 1);
    api_slice("stream_create", begin);
    return ok();
}

Status Context::stream_destroy(StreamId s) {
    charge(m_dev.host().api_overhead_ns);
    if (s == kDefaultStream) return fail(Status::InvalidStream, "the default stream cannot be destroyed");
    Stream* st = stream(s);
    if (!st) return fail(Status::InvalidStream, "stream_destroy: stream " + std::to_string(s) + " is not live");
    st->live = false;  // queued work still completes, as in the vendor runtime
    return ok();
}

Status Context::stream_synchronize(StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    Stream* st = stream(s);
    if (!st) return fail(Status::InvalidStream, "stream_synchronize: stream " + std::to_string(s) + " is not live");
    if (st->last) wait_done(st->last);  // a queue runs in order: its last task ends last
    charge(m_dev.host().sync_ns);
    api_slice("stream_synchronize", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::StreamSync;
    c.stream = s;
    log(c, begin);
    return ok();
}

Status Context::device_synchronize() {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    for (Stream& st : m_streams) {
        if (st.last) wait_done(st.last);
    }
    charge(m_dev.host().sync_ns);
    api_slice("device_synchronize", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::DeviceSync;
    log(c, begin);
    return ok();
}

Status Context::flush_caches() {
    const uint64_t begin = now_tick().v;
    for (Stream& st : m_streams) {
        if (st.last) wait_done(st.last);
    }
    m_dev.dev().flush_caches();
    ApiCall c;
    c.kind = ApiCall::Kind::FlushCaches;
    log(c, begin);
    return ok();
}

Status Context::event_create(EventId* e) {
    charge(m_dev.host().api_overhead_ns);
    if (!e) return fail(Status::InvalidValue, "event_create: null result pointer");
    m_events.push_back(Event{m_dev.dev().create_event(), 0, true, nullptr});
    *e = static_cast<EventId>(m_events.size() - 1);
    return ok();
}

Status Context::event_destroy(EventId e) {
    charge(m_dev.host().api_overhead_ns);
    Event* ev = event(e);
    if (!ev) return fail(Status::InvalidEvent, "event_destroy: event " + std::to_string(e) + " is not live");
    ev->live = false;
    return ok();
}

Status Context::event_record(EventId e, StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    Event* ev = event(e);
    if (!ev) return fail(Status::InvalidEvent, "event_record: event " + std::to_string(e) + " is not live");
    if (!stream(s)) return fail(Status::InvalidStream, "event_record: stream " + std::to_string(s) + " is not live");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::EventRecord;
    t->event = ev->slot;
    t->event_seq = ++ev->seq;
    ev->last_record = t;
    submit(s, t, "record e" + std::to_string(e), begin);
    api_slice("event_record", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::EventRecord;
    c.stream = s;
    c.event = e;
    c.task = m_records.size() - 1;
    log(c, begin);
    return ok();
}

Status Context::stream_wait_event(StreamId s, EventId e) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    Event* ev = event(e);
    if (!ev) return fail(Status::InvalidEvent, "stream_wait_event: event " + std::to_string(e) + " is not live");
    if (!stream(s)) return fail(Status::InvalidStream, "stream_wait_event: stream " + std::to_string(s) + " is not live");
    // A wait on an event never recorded completes at once (the vendor runtime's rule too).
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::EventWait;
    t->event = ev->slot;
    t->event_seq = ev->seq;
    submit(s, t, "wait e" + std::to_string(e), begin);
    api_slice("stream_wait_event", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::StreamWait;
    c.stream = s;
    c.event = e;
    c.task = m_records.size() - 1;
    log(c, begin);
    return ok();
}

Status Context::event_synchronize(EventId e) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    Event* ev = event(e);
    if (!ev) return fail(Status::InvalidEvent, "event_synchronize: event " + std::to_string(e) + " is not live");
    if (ev->last_record) wait_done(ev->last_record);
    charge(m_dev.host().sync_ns);
    api_slice("event_synchronize", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::EventSync;
    c.event = e;
    log(c, begin);
    return ok();
}

Status Context::event_query(EventId e) {
    charge(m_dev.host().api_overhead_ns);
    Event* ev = event(e);
    if (!ev) return fail(Status::InvalidEvent, "event_query: event " + std::to_string(e) + " is not live");
    return !ev->last_record || ev->last_record->done ? ok() : Status::NotReady;
}

Status Context::event_elapsed(uint64_t* ps, EventId start, EventId end) {
    charge(m_dev.host().api_overhead_ns);
    Event* a = event(start);
    Event* b = event(end);
    if (!ps || !a || !b) return fail(Status::InvalidEvent, "event_elapsed: event is not live");
    if (!a->last_record || !b->last_record)
        return fail(Status::InvalidEvent, "event_elapsed: an event was never recorded");
    if (!a->last_record->done || !b->last_record->done) return Status::NotReady;
    const uint64_t t0 = a->last_record->end_tick.v, t1 = b->last_record->end_tick.v;
    *ps = t1 >= t0 ? t1 - t0 : 0;
    return ok();
}

Status Context::launch(KernelDesc k, StreamId s) {
    const uint64_t begin = now_tick().v;
    const bool captured = m_capturing && s == m_capture_stream;
    if (!captured) charge(m_dev.host().launch_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "launch of '" + k.name + "': stream " + std::to_string(s) + " is not live");
    if (k.block_dim == 0) return fail(Status::InvalidValue, "launch of '" + k.name + "' with block_dim 0");
    if (!k.body) return fail(Status::InvalidValue, "launch of '" + k.name + "' without a kernel body");
    // A captured kernel meets the hook when its model is launched (when it is submitted).
    if (m_launch_hook && !captured) m_launch_hook(k);
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Kernel;
    const std::string name = k.name.empty() ? k.type : k.name;
    t->kernel = std::move(k);
    m_last_launch = t;
    if (captured) {
        m_capture.push_back({std::move(t), name});
        return ok();
    }
    submit(s, t, name, begin);
    api_slice("launch", begin);
    ApiCall c;
    c.kind = ApiCall::Kind::Launch;
    c.stream = s;
    c.task = m_records.size() - 1;
    log(c, begin);
    return ok();
}

Status Context::capture_begin(StreamId s) {
    if (!stream(s)) return fail(Status::InvalidStream, "capture_begin: stream " + std::to_string(s) + " is not live");
    if (m_capturing) return fail(Status::InvalidValue, "capture_begin: stream " + std::to_string(m_capture_stream) + " is already capturing");
    m_capturing = true;
    m_capture_stream = s;
    m_capture.clear();
    return ok();
}

Status Context::capture_end(StreamId s, ModelId* m) {
    if (!m) return fail(Status::InvalidValue, "capture_end: null model pointer");
    if (!m_capturing || s != m_capture_stream)
        return fail(Status::InvalidStream, "capture_end: stream " + std::to_string(s) + " is not capturing");
    m_capturing = false;
    *m = static_cast<ModelId>(m_models.size());
    m_models.push_back(std::move(m_capture));
    m_capture.clear();
    return ok();
}

Status Context::model_launch(ModelId m, StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().launch_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "model_launch: stream " + std::to_string(s) + " is not live");
    if (m >= m_models.size()) return fail(Status::InvalidValue, "model_launch: model " + std::to_string(m) + " was not captured");
    std::vector<Captured> tasks = std::move(m_models[m]);
    m_models[m].clear();
    for (Captured& c : tasks) {
        if (m_launch_hook) m_launch_hook(c.task->kernel);
        submit(s, c.task, c.name, begin);
        ApiCall a;
        a.kind = ApiCall::Kind::Launch;
        a.stream = s;
        a.task = m_records.size() - 1;
        log(a, begin);
    }
    api_slice("model_launch", begin);
    return ok();
}

Status Context::launch_host_func(StreamId s, std::function<void()> fn) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "launch_host_func: stream " + std::to_string(s) + " is not live");
    if (!fn) return fail(Status::InvalidValue, "launch_host_func without a function");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Callback;
    t->callback = std::move(fn);
    submit(s, t, "host callback", begin);
    api_slice("launch_host_func", begin);
    return ok();
}

namespace {
// A peer copy's task: `bytes` from src to dst between this device and `peer` (its direction in
// the copy's flags, set by the caller).
std::shared_ptr<Task> p2p_task(DevPtr src, DevPtr dst, uint64_t bytes, uint32_t peer) {
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::Memcpy;
    t->copy.dir = CopyDir::P2P;
    t->copy.dev_src = src;
    t->copy.dev_dst = dst;
    t->copy.bytes = bytes;
    t->copy.peer = peer;
    return t;
}
}  // namespace

Status Context::memcpy_peer(Device& peer, DevPtr dst, DevPtr src, uint64_t bytes, StreamId s, bool async) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "memcpy_peer: stream " + std::to_string(s) + " is not live");
    if (bytes == 0) return fail(Status::InvalidValue, "memcpy_peer: 0 bytes");
    if (&peer == &m_dev) return fail(Status::InvalidValue, "memcpy_peer: the peer is this device (use memcpy_d2d)");
    if (!device_range_ok(src, bytes))
        return fail(Status::BadPointer, "memcpy_peer: source is not inside a live device allocation");
    if (!peer.range_allocated(dst, bytes))
        return fail(Status::BadPointer, "memcpy_peer: destination is not inside a live allocation of the peer device");
    auto t = p2p_task(src, dst, bytes, peer.dev().info().device_id);
    submit(s, t, "memcpy p2p to " + peer.trace_name(), begin);
    api_slice("memcpy_peer", begin);
    if (!async) {
        wait_done(t);
        charge(m_dev.host().sync_ns);
    }
    return ok();
}

Status Context::memcpy_from_peer(Device& peer, DevPtr dst, DevPtr src, uint64_t bytes, StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "memcpy_from_peer: stream " + std::to_string(s) + " is not live");
    if (bytes == 0) return fail(Status::InvalidValue, "memcpy_from_peer: 0 bytes");
    if (&peer == &m_dev) return fail(Status::InvalidValue, "memcpy_from_peer: the peer is this device (use memcpy_d2d)");
    if (!peer.range_allocated(src, bytes))
        return fail(Status::BadPointer, "memcpy_from_peer: source is not inside a live allocation of the peer device");
    if (!device_range_ok(dst, bytes))
        return fail(Status::BadPointer, "memcpy_from_peer: destination is not inside a live device allocation");
    auto t = p2p_task(src, dst, bytes, peer.dev().info().device_id);
    t->copy.pull = true;
    submit(s, t, "memcpy p2p from " + peer.trace_name(), begin);
    api_slice("memcpy_from_peer", begin);
    return ok();
}

Status Context::memcpy_peer_reduce(Device& peer, DevPtr dst, DevPtr src, uint64_t bytes, isa::DType dtype, uint8_t op,
                                   StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "memcpy_peer_reduce: stream " + std::to_string(s) + " is not live");
    if (bytes == 0) return fail(Status::InvalidValue, "memcpy_peer_reduce: 0 bytes");
    if (&peer == &m_dev) return fail(Status::InvalidValue, "memcpy_peer_reduce: the peer is this device");
    if (dtype != isa::DType::FP16 && dtype != isa::DType::BF16 && dtype != isa::DType::FP32)
        return fail(Status::InvalidValue, std::string("memcpy_peer_reduce: dtype ") + isa::dtype_name(dtype) +
                                              " (valid: fp16, bf16, fp32)");
    if (op < 1 || op > 3) return fail(Status::InvalidValue, "memcpy_peer_reduce: reduction " + std::to_string(op) + " (1 sum, 2 max, 3 min)");
    if (bytes % isa::dtype_size(dtype) != 0 || src % isa::dtype_size(dtype) != 0 || dst % isa::dtype_size(dtype) != 0)
        return fail(Status::InvalidValue, "memcpy_peer_reduce: bytes and addresses must be whole elements");
    if (!device_range_ok(src, bytes))
        return fail(Status::BadPointer, "memcpy_peer_reduce: source is not inside a live device allocation");
    if (!peer.range_allocated(dst, bytes))
        return fail(Status::BadPointer, "memcpy_peer_reduce: destination is not inside a live allocation of the peer device");
    auto t = p2p_task(src, dst, bytes, peer.dev().info().device_id);
    t->copy.reduce_op = op;
    t->copy.reduce_dtype = static_cast<uint8_t>(dtype);
    submit(s, t, "memcpy p2p reduce to " + peer.trace_name(), begin);
    api_slice("memcpy_peer_reduce", begin);
    return ok();
}

Status Context::memcpy_peer_batch(Device& peer, const std::vector<PeerSegment>& segments, StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "memcpy_peer_batch: stream " + std::to_string(s) + " is not live");
    if (segments.empty()) return fail(Status::InvalidValue, "memcpy_peer_batch: no segment");
    if (&peer == &m_dev) return fail(Status::InvalidValue, "memcpy_peer_batch: the peer is this device (use memcpy_d2d)");
    for (size_t i = 0; i < segments.size(); ++i) {
        const PeerSegment& g = segments[i];
        const std::string at = "memcpy_peer_batch: segment " + std::to_string(i) + ": ";
        if (g.bytes == 0) return fail(Status::InvalidValue, at + "0 bytes");
        if (!device_range_ok(g.src, g.bytes))
            return fail(Status::BadPointer, at + "source is not inside a live device allocation");
        if (!peer.range_allocated(g.dst, g.bytes))
            return fail(Status::BadPointer, at + "destination is not inside a live allocation of the peer device");
    }
    for (const PeerSegment& g : segments) {
        submit(s, p2p_task(g.src, g.dst, g.bytes, peer.dev().info().device_id), "memcpy p2p to " + peer.trace_name(), begin);
    }
    api_slice("memcpy_peer_batch", begin);
    return ok();
}

Status Context::notify_create(uint32_t* slot) {
    charge(m_dev.host().api_overhead_ns);
    if (!slot) return fail(Status::InvalidValue, "notify_create: null result pointer");
    try {
        *slot = m_dev.dev().create_notify();
    } catch (const SimError& e) {
        return fail(Status::InvalidValue, std::string("notify_create: ") + e.what());
    }
    return ok();
}

Status Context::notify_record(Device& peer, uint32_t slot, StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "notify_record: stream " + std::to_string(s) + " is not live");
    if (&peer == &m_dev) return fail(Status::InvalidValue, "notify_record: the peer is this device (use an event)");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::NotifyRecord;
    t->peer = peer.dev().info().device_id;
    t->event = slot;
    submit(s, t, "notify " + peer.trace_name(), begin);
    api_slice("notify_record", begin);
    return ok();
}

Status Context::notify_wait(uint32_t slot, StreamId s) {
    const uint64_t begin = now_tick().v;
    charge(m_dev.host().api_overhead_ns);
    if (!stream(s)) return fail(Status::InvalidStream, "notify_wait: stream " + std::to_string(s) + " is not live");
    auto t = std::make_shared<Task>();
    t->kind = TaskKind::NotifyWait;
    t->event = slot;
    submit(s, t, "notify wait", begin);
    api_slice("notify_wait", begin);
    return ok();
}

void Context::emit_task_trace() {
    TraceHub* hub = m_dev.trace();
    if (!hub || !hub->on(TraceLevel::Task)) return;
    ITraceSink& sink = *hub->sink();
    for (size_t i = 0; i < m_streams.size(); ++i) {
        if (!m_streams[i].track) {
            m_streams[i].track = sink.track(m_dev.trace_name(), "context " + std::to_string(m_id) + " stream " + std::to_string(i),
                                            static_cast<int>(100 + m_id * 100 + i));
        }
    }
    for (const TaskRecord& r : m_records) {
        const Task& t = *r.task;
        if (!t.done) continue;
        const TrackId track = m_streams[r.stream].track;
        // The slice spans the task duration (taken by the scheduler to its completion report);
        // kernels also carry their cycles and that duration in device cycles.
        const ClockDomain clk = m_dev.dev().info().clock;
        const TraceArg args[] = {{"task_id", static_cast<int64_t>(t.id)},
                                 {"stream_id", static_cast<int64_t>(r.stream)},
                                 {"block_dim", static_cast<int64_t>(t.kind == TaskKind::Kernel ? t.kernel.block_dim : 0)},
                                 {"cycles", static_cast<int64_t>(t.cycles)},
                                 {"task_duration", static_cast<int64_t>(clk.ceil_cycle(t.end_tick).v - clk.ceil_cycle(t.start_tick).v)}};
        sink.slice_str(track, r.name, t.start_tick, t.end_tick, args, t.kind == TaskKind::Kernel ? 5 : 3);
        if (hub->on(TraceLevel::Op)) sink.flow(m_api_track, Tick(r.api_slice_begin), track, t.start_tick, task_kind_name(t.kind));
    }
}

}  // namespace sfumato::rt
