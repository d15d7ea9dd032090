// The device runtime a host program calls (the vendor runtime's role): device memory,
// host<->device copies, streams, kernel launches and synchronisation, on top of the device
// interface (sim/device_if.h). Runs on the host thread of a simulation: every call charges
// simulated host time (parameters under `host.*`) and blocking calls wait in simulated time.
// Errors (bad pointer, double free, launch with block_dim 0) throw InputError.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/device_if.h"
#include "sim/trace.h"

namespace sfumato::rt {

struct RuntimeParams {
    explicit RuntimeParams(const ParamScope& s);
    Param<uint32_t> api_overhead_ns;
    Param<uint32_t> launch_overhead_ns;
    Param<uint32_t> mem_align;
};

using DevPtr = uint64_t;

struct Stream {
    uint32_t id = 0;     // runtime stream id
    uint32_t queue = 0;  // hardware queue
};

class Runtime {
public:
    Runtime(IDevice& dev, const RuntimeParams& p, TraceHub& trace);

    const DeviceInfo& device_info() const { return m_dev.info(); }
    bool functional() const { return m_dev.gm() != nullptr; }

    DevPtr malloc(uint64_t bytes);
    void free(DevPtr p);
    uint64_t bytes_in_use() const { return m_in_use; }

    Stream create_stream(int priority = 0);
    Stream default_stream() const { return m_default; }

    // Synchronous copies (on the default stream, waiting for completion). In timing mode the
    // host pointers may be null: no data moves, the time is the same.
    void memcpy_h2d(DevPtr dst, const void* src, uint64_t bytes, bool pinned = true);
    void memcpy_d2h(void* dst, DevPtr src, uint64_t bytes, bool pinned = true);

    std::shared_ptr<Task> launch(KernelDesc k, Stream s);
    void synchronize(Stream s);
    void synchronize_device();

    // Every task submitted so far, in submission order (for reports).
    const std::vector<std::shared_ptr<Task>>& tasks() const { return m_tasks; }

private:
    void charge(uint32_t ns, const char* what);
    std::shared_ptr<Task> submit(Stream s, std::shared_ptr<Task> t);
    void wait_task(const std::shared_ptr<Task>& t);
    void check_range(DevPtr p, uint64_t bytes, const char* what) const;

    IDevice& m_dev;
    const RuntimeParams& m_p;
    TraceHub& m_trace;
    TrackId m_track = 0;
    Stream m_default;
    std::vector<Stream> m_streams;
    std::map<DevPtr, uint64_t> m_live;   // address -> size
    std::map<DevPtr, uint64_t> m_holes;  // free ranges: address -> size
    uint64_t m_in_use = 0;
    std::vector<std::shared_ptr<Task>> m_tasks;
    std::vector<std::shared_ptr<Task>> m_last_on_stream;
};

}  // namespace sfumato::rt
