// AscendCL over sfumato's device runtime: each call runs in the simulated host thread through
// rt::Context and takes its host time there (runtime.* parameters); copies and launches are
// tasks on the simulated chip's queues. Device pointers are device addresses offset into a
// reserved, inaccessible range of the host's address space, so pointer arithmetic works, they
// map back to device memory exactly, and a host dereference faults. aclrtMallocHost memory is
// pinned (the DMA takes it directly); other host memory is pageable. Simplified: one device
// (id 0) and one runtime context per program; aclrtMemset is a host-to-device copy of the
// pattern; timing mode keeps copies of host-to-device transfers up to 64 KiB so that kernels
// can still read tiling data by scalar loads.
#include "acl/acl.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "runtime/ascendc/host_backend.h"
#include "runtime/ascendc/host_state.h"

namespace sfumato::ascendc {

namespace {

constexpr uint64_t kShadowMaxBytes = 64 * 1024;

struct AclStream {
    uint32_t id;
};
struct AclEvent {
    uint32_t id;
};
struct AclContext {
    int32_t device;
};

struct AclState {
    std::string error;
    uint8_t* base = nullptr;
    uint64_t size = 0;
    std::map<uintptr_t, uint64_t> pinned;  // aclrtMallocHost buffers -> bytes
    std::set<AclStream*> streams;
    std::set<AclEvent*> events;
    std::set<AclContext*> contexts;
    AclContext* current = nullptr;
};

AclState& acl() {
    static AclState s;
    return s;
}

aclError acl_fail(aclError code, const std::string& msg) {
    acl().error = msg;
    return code;
}

aclError status(rt::Status s, rt::Context& ctx) {
    switch (s) {
        case rt::Status::Ok: return ACL_SUCCESS;
        case rt::Status::OutOfMemory: return acl_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, ctx.last_error());
        case rt::Status::InvalidStream: return acl_fail(ACL_ERROR_RT_STREAM_CONTEXT, ctx.last_error());
        case rt::Status::InvalidEvent: return acl_fail(ACL_ERROR_RT_EVENT_NOT_RECORDED, ctx.last_error());
        default: return acl_fail(ACL_ERROR_RT_PARAM_INVALID, ctx.last_error());
    }
}

// Runs one runtime call in the host thread and maps its status.
aclError call(const std::function<rt::Status(rt::Context&)>& fn) {
    aclError r = ACL_SUCCESS;
    guarded([&] {
        backend().run([&](rt::Runtime& rt) { r = status(fn(rt.context()), rt.context()); });
    });
    return r;
}

// The reserved host range that device addresses map into.
uint8_t* base() {
    AclState& a = acl();
    if (!a.base) {
        a.size = backend().info().gm_bytes;
        void* p = mmap(nullptr, a.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            std::fprintf(stderr, "error: cannot reserve %llu bytes of address space for device pointers\n",
                         static_cast<unsigned long long>(a.size));
            std::exit(kExitFailure);
        }
        a.base = static_cast<uint8_t*>(p);
        raw_gm_install(a.base, a.size);
    }
    return a.base;
}

bool is_device(const void* p) {
    const uint8_t* b = base();
    const auto* q = static_cast<const uint8_t*>(p);
    return q >= b && q < b + acl().size;
}

uint64_t device_address(const void* p) { return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - base()); }

bool is_pinned(const void* p, uint64_t bytes) {
    const auto& m = acl().pinned;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = m.upper_bound(a);
    if (it == m.begin()) return false;
    --it;
    return a + bytes <= it->first + it->second;
}

uint32_t stream_of(aclrtStream s, bool& ok) {
    ok = true;
    if (!s) return rt::kDefaultStream;
    auto* st = static_cast<AclStream*>(s);
    if (!acl().streams.count(st)) {
        ok = false;
        return 0;
    }
    return st->id;
}

aclError copy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind, aclrtStream stream,
              bool async) {
    if (!dst || !src) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: null pointer");
    if (count > destMax) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: count > destMax");
    if (count == 0) return ACL_SUCCESS;
    bool ok = true;
    const uint32_t sid = stream_of(stream, ok);
    if (!ok) return acl_fail(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtMemcpyAsync: unknown stream");
    const bool dd = is_device(dst), sd = is_device(src);
    if (kind == ACL_MEMCPY_DEFAULT)
        kind = dd && sd ? ACL_MEMCPY_DEVICE_TO_DEVICE : dd ? ACL_MEMCPY_HOST_TO_DEVICE : sd ? ACL_MEMCPY_DEVICE_TO_HOST
                                                                                           : ACL_MEMCPY_HOST_TO_HOST;
    switch (kind) {
        case ACL_MEMCPY_HOST_TO_HOST:
            if (dd || sd) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: HOST_TO_HOST with a device pointer");
            std::memmove(dst, src, count);
            return ACL_SUCCESS;
        case ACL_MEMCPY_HOST_TO_DEVICE: {
            if (!dd || sd) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: HOST_TO_DEVICE needs a device destination and a host source");
            const uint64_t d = device_address(dst);
            if (!backend().info().functional && count <= kShadowMaxBytes) {
                const auto* p = static_cast<const uint8_t*>(src);
                host_state().shadows[d] = std::vector<uint8_t>(p, p + count);
            }
            const bool pinned = is_pinned(src, count);
            return call([&](rt::Context& c) {
                return c.copy_explicit(CopyDir::H2D, d, reinterpret_cast<uintptr_t>(src), count, sid, async, pinned);
            });
        }
        case ACL_MEMCPY_DEVICE_TO_HOST: {
            if (dd || !sd) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: DEVICE_TO_HOST needs a host destination and a device source");
            const uint64_t s = device_address(src);
            const bool pinned = is_pinned(dst, count);
            return call([&](rt::Context& c) {
                return c.copy_explicit(CopyDir::D2H, reinterpret_cast<uintptr_t>(dst), s, count, sid, async, pinned);
            });
        }
        case ACL_MEMCPY_DEVICE_TO_DEVICE: {
            if (!dd || !sd) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: DEVICE_TO_DEVICE needs device pointers");
            const uint64_t d = device_address(dst), s = device_address(src);
            return call([&](rt::Context& c) { return c.copy_explicit(CopyDir::D2D, d, s, count, sid, async, true); });
        }
        default: return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: unknown aclrtMemcpyKind");
    }
}

// A call the runtime has no counterpart for: the host time of any runtime call.
aclError host_call() {
    guarded([] {
        backend().run([](rt::Runtime& rt) { rt.context().host_delay_ns(rt.device().host().api_overhead_ns); });
    });
    return ACL_SUCCESS;
}

}  // namespace

uint32_t stream_id(void* stream) {
    bool ok = true;
    const uint32_t id = stream_of(stream, ok);
    if (!ok) throw InputError("kernel launch on an aclrtStream that aclrtCreateStream did not create (or destroyed)");
    return id;
}

}  // namespace sfumato::ascendc

using namespace sfumato;
using namespace sfumato::ascendc;

extern "C" {

aclError aclInit(const char*) { return ACL_SUCCESS; }
aclError aclFinalize(void) { return ACL_SUCCESS; }
const char* aclGetRecentErrMsg(void) { return acl().error.c_str(); }

aclError aclrtSetDevice(int32_t deviceId) {
    if (deviceId != 0) return acl_fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice: the simulated system has device 0 only");
    return host_call();
}
aclError aclrtResetDevice(int32_t deviceId) {
    if (deviceId != 0) return acl_fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice: the simulated system has device 0 only");
    return call([](rt::Context& c) { return c.device_synchronize(); });
}
aclError aclrtGetDevice(int32_t* deviceId) {
    if (!deviceId) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: null pointer");
    *deviceId = 0;
    return ACL_SUCCESS;
}
aclError aclrtGetDeviceCount(uint32_t* count) {
    if (!count) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: null pointer");
    *count = 1;
    return ACL_SUCCESS;
}
aclError aclrtGetRunMode(aclrtRunMode* runMode) {
    if (!runMode) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: null pointer");
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}
aclError aclrtGetHardwareSyncAddr(void** addr) {
    if (!addr) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetHardwareSyncAddr: null pointer");
    *addr = reinterpret_cast<void*>(uintptr_t{0xFF75'0000'0000});
    return ACL_SUCCESS;
}
aclError aclrtSynchronizeDevice(void) {
    return call([](rt::Context& c) { return c.device_synchronize(); });
}

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
    if (!context) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: null pointer");
    if (deviceId != 0) return acl_fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtCreateContext: device 0 only");
    auto* c = new AclContext{deviceId};
    acl().contexts.insert(c);
    acl().current = c;
    *context = c;
    return host_call();
}
aclError aclrtDestroyContext(aclrtContext context) {
    auto* c = static_cast<AclContext*>(context);
    if (!acl().contexts.erase(c)) return acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtDestroyContext: unknown context");
    if (acl().current == c) acl().current = nullptr;
    delete c;
    return host_call();
}
aclError aclrtSetCurrentContext(aclrtContext context) {
    auto* c = static_cast<AclContext*>(context);
    if (!acl().contexts.count(c)) return acl_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetCurrentContext: unknown context");
    acl().current = c;
    return ACL_SUCCESS;
}
aclError aclrtGetCurrentContext(aclrtContext* context) {
    if (!context) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: null pointer");
    *context = acl().current;
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    if (!stream) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: null pointer");
    uint32_t id = 0;
    const aclError r = call([&](rt::Context& c) { return c.stream_create(&id, 0); });
    if (r != ACL_SUCCESS) return r;
    auto* s = new AclStream{id};
    acl().streams.insert(s);
    *stream = s;
    return ACL_SUCCESS;
}
aclError aclrtDestroyStream(aclrtStream stream) {
    auto* s = static_cast<AclStream*>(stream);
    if (!acl().streams.erase(s)) return acl_fail(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtDestroyStream: unknown stream");
    const uint32_t id = s->id;
    delete s;
    return call([&](rt::Context& c) {
        const rt::Status st = c.stream_synchronize(id);
        return st != rt::Status::Ok ? st : c.stream_destroy(id);
    });
}
aclError aclrtSynchronizeStream(aclrtStream stream) {
    bool ok = true;
    const uint32_t id = stream_of(stream, ok);
    if (!ok) return acl_fail(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtSynchronizeStream: unknown stream");
    return call([&](rt::Context& c) { return c.stream_synchronize(id); });
}
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t) { return aclrtSynchronizeStream(stream); }

aclError aclrtCreateEvent(aclrtEvent* event) {
    if (!event) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent: null pointer");
    uint32_t id = 0;
    const aclError r = call([&](rt::Context& c) { return c.event_create(&id); });
    if (r != ACL_SUCCESS) return r;
    auto* e = new AclEvent{id};
    acl().events.insert(e);
    *event = e;
    return ACL_SUCCESS;
}
aclError aclrtDestroyEvent(aclrtEvent event) {
    auto* e = static_cast<AclEvent*>(event);
    if (!acl().events.erase(e)) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: unknown event");
    const uint32_t id = e->id;
    delete e;
    return call([&](rt::Context& c) { return c.event_destroy(id); });
}
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    auto* e = static_cast<AclEvent*>(event);
    bool ok = true;
    const uint32_t sid = stream_of(stream, ok);
    if (!acl().events.count(e) || !ok) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: unknown event or stream");
    return call([&](rt::Context& c) { return c.event_record(e->id, sid); });
}
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    auto* e = static_cast<AclEvent*>(event);
    bool ok = true;
    const uint32_t sid = stream_of(stream, ok);
    if (!acl().events.count(e) || !ok) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent: unknown event or stream");
    return call([&](rt::Context& c) { return c.stream_wait_event(sid, e->id); });
}
aclError aclrtSynchronizeEvent(aclrtEvent event) {
    auto* e = static_cast<AclEvent*>(event);
    if (!acl().events.count(e)) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEvent: unknown event");
    return call([&](rt::Context& c) { return c.event_synchronize(e->id); });
}
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
    auto* a = static_cast<AclEvent*>(startEvent);
    auto* b = static_cast<AclEvent*>(endEvent);
    if (!ms || !acl().events.count(a) || !acl().events.count(b))
        return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: unknown event or null pointer");
    uint64_t ps = 0;
    const aclError r = call([&](rt::Context& c) { return c.event_elapsed(&ps, a->id, b->id); });
    *ms = static_cast<float>(static_cast<double>(ps) / 1e9);
    return r;
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy) {
    if (!devPtr || size == 0) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: null pointer or 0 bytes");
    uint64_t d = 0;
    const aclError r = call([&](rt::Context& c) { return c.malloc(&d, size); });
    if (r != ACL_SUCCESS) return r;
    uint8_t* p = base() + d;
    host_state().add(reinterpret_cast<uintptr_t>(p), d, size, nullptr);
    *devPtr = p;
    return ACL_SUCCESS;
}
aclError aclrtFree(void* devPtr) {
    if (!devPtr || !is_device(devPtr) || !host_state().bufs.count(reinterpret_cast<uintptr_t>(devPtr)))
        return acl_fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtFree of a pointer aclrtMalloc did not return");
    const uint64_t d = device_address(devPtr);
    const uint64_t span = host_state().bufs.at(reinterpret_cast<uintptr_t>(devPtr)).span();
    host_state().remove(reinterpret_cast<uintptr_t>(devPtr));
    auto& shadows = host_state().shadows;
    shadows.erase(shadows.lower_bound(d), shadows.lower_bound(d + span));
    return call([&](rt::Context& c) { return c.free(d); });
}
aclError aclrtMallocHost(void** hostPtr, size_t size) {
    if (!hostPtr || size == 0) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: null pointer or 0 bytes");
    void* p = std::aligned_alloc(64, (size + 63) / 64 * 64);
    if (!p) return acl_fail(ACL_ERROR_BAD_ALLOC, "aclrtMallocHost: out of host memory");
    std::memset(p, 0, size);
    acl().pinned[reinterpret_cast<uintptr_t>(p)] = size;
    *hostPtr = p;
    return host_call();
}
aclError aclrtFreeHost(void* hostPtr) {
    if (!acl().pinned.erase(reinterpret_cast<uintptr_t>(hostPtr)))
        return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost of a pointer aclrtMallocHost did not return");
    std::free(hostPtr);
    return ACL_SUCCESS;
}
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    if (count > maxCount) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count > maxCount");
    std::vector<uint8_t> pattern(count, static_cast<uint8_t>(value));
    return copy(devPtr, count, pattern.data(), count, ACL_MEMCPY_HOST_TO_DEVICE, nullptr, false);
}
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    return copy(dst, destMax, src, count, kind, nullptr, false);
}
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    return copy(dst, destMax, src, count, kind, stream, true);
}
aclError aclrtGetMemInfo(aclrtMemAttr, size_t* free, size_t* total) {
    if (!free || !total) return acl_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: null pointer");
    size_t used = 0;
    const aclError r = call([&](rt::Context& c) {
        used = c.memory_stats().reserved;
        return rt::Status::Ok;
    });
    *total = backend().info().gm_bytes;
    *free = *total - used;
    return r;
}

float aclFloat16ToFloat(aclFloat16 value) { return isa::f16_to_f32(value); }
aclFloat16 aclFloatToFloat16(float value) { return isa::f32_to_f16(value); }

}  // extern "C"
