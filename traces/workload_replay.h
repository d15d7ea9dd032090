// Replays a workload file's task stream through the runtime (runtime/rt) as a host program would:
// streams are created with their priorities, buffers for copies and the operators' tensors are
// allocated in a setup phase, then tasks are issued in file order (async copies, launches, event
// record/wait, host delays, synchronisation) and the device is synchronised at the end. Each
// workload task gets its issue/start/end times for summary.json. Operators are built by a factory
// the caller supplies (the CLI backs it with the operator library), so this file stays free of
// operator and chip code.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/rt/context.h"
#include "traces/workload.h"

namespace sfumato::workload {

// Builds the kernel for a `kernel` task (allocating its tensors through ctx); throws InputError
// naming what is wrong. Called during setup, in the host thread.
using KernelFactory = std::function<KernelDesc(rt::Context& ctx, const Task& t)>;

struct TaskTimes {
    size_t index;
    std::string kind, name;
    int64_t stream;
    uint64_t issue_cycle = 0, start_cycle = 0, end_cycle = 0;
    bool done = false;
};

class Replayer {
public:
    Replayer(rt::Context& ctx, const Workload& w, KernelFactory kernels);
    // The host program: call from the host SC_THREAD. Throws InputError on a runtime error,
    // naming the task.
    void run();
    bool finished() const { return m_finished; }
    // Per workload task, in file order (device tasks from the device's timestamps; host tasks
    // from when the host began and ended them).
    std::vector<TaskTimes> times(ClockDomain clock) const;
    // One line per task issued and not complete (for deadlock reports).
    std::vector<std::string> pending() const;

private:
    void setup();
    void check(rt::Status s, const Task& t);
    rt::DevPtr dev_buffer(uint64_t bytes, int which, const Task& t);
    void* host_buffer(uint64_t bytes, bool pinned, const Task& t);

    rt::Context& m_ctx;
    const Workload& m_w;
    KernelFactory m_kernels;
    std::map<int64_t, rt::StreamId> m_streams;
    std::map<std::string, rt::EventId> m_events;
    std::map<std::pair<uint64_t, int>, rt::DevPtr> m_dev_bufs;
    std::map<std::pair<uint64_t, bool>, void*> m_host_bufs;
    std::map<size_t, KernelDesc> m_kernel_of;  // by task index
    struct Issued {
        std::shared_ptr<sfumato::Task> task;  // device task, or null for host-side tasks
        uint64_t begin = 0, end = 0;          // host-side span (ticks)
        bool issued = false, returned = false;
    };
    std::vector<Issued> m_issued;
    bool m_finished = false;
};

nlohmann::json tasks_json(const std::vector<TaskTimes>& times);

}  // namespace sfumato::workload
