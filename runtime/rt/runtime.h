// The exception-style face of the device runtime, for code that treats any runtime error as
// fatal (the operator library, `sfumato kernel`, the graph executor): one device and one host
// context (rt::Device + rt::Context), every failing call throwing InputError with the runtime's
// message. Everything else (streams with priorities, events, async copies, host callbacks,
// shared memory, allocator stats) is reached through context().
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/rt/context.h"
#include "sim/config.h"
#include "sim/device_if.h"
#include "sim/stats.h"
#include "sim/trace.h"

namespace sfumato::rt {

struct Stream {
    uint32_t id = 0;  // runtime stream id (StreamId)
};

class Runtime {
public:
    Runtime(IDevice& dev, const RuntimeParams& p, TraceHub& trace, StatGroup* stats_parent = nullptr);
    // A face on a device and host context someone else owns (a chip of a system, whose host
    // programs get a context each): the same calls, on that context.
    Runtime(Device& dev, Context& ctx);

    const DeviceInfo& device_info() const { return m_device->dev().info(); }
    bool functional() const { return m_device->dev().gm() != nullptr; }

    DevPtr malloc(uint64_t bytes);
    void free(DevPtr p);
    uint64_t bytes_in_use() const { return m_ctx.memory_stats().in_use; }

    Stream create_stream(int priority = 0);
    Stream default_stream() const { return Stream{kDefaultStream}; }

    // Synchronous copies on the default stream. In timing mode the host pointers may be null: no
    // data moves, the time is the same. `pinned` says how the host buffer was allocated.
    void memcpy_h2d(DevPtr dst, const void* src, uint64_t bytes, bool pinned = true);
    void memcpy_d2h(void* dst, DevPtr src, uint64_t bytes, bool pinned = true);

    std::shared_ptr<Task> launch(KernelDesc k, Stream s);
    void synchronize(Stream s);
    void synchronize_device();
    // Waits for the device to be idle, then writes back and invalidates its caches (IDevice::
    // flush_caches): what a benchmark does before a cold-cache measurement.
    void flush_caches();

    // Every task submitted so far, in submission order (for reports).
    std::vector<std::shared_ptr<Task>> tasks() const;

    Device& device() { return *m_device; }
    Context& context() { return m_ctx; }

private:
    void check(Status s);
    std::unique_ptr<Device> m_owned;
    Device* m_device;
    Context& m_ctx;
};

}  // namespace sfumato::rt
