// Replays a workload file's task stream through the runtime (runtime/rt) as a host program would.
// Before time zero, at no simulated cost: streams and events are created, host staging buffers
// and the anonymous device buffers of copies that name none are allocated, and alloc init files
// are read. Then tasks are issued in file order, each after its recorded host gap: alloc/free
// (timed runtime calls), copies (only where the file says memcpy), kernel launches (built by a
// factory the caller supplies, on the buffers the task names), event record/wait, host delays
// and synchronisations; at the end the host waits (uncharged) for the device to drain. Each
// workload task gets its issue/start/end times for summary.json. The factory is the CLI's (it
// knows the operator library and the replay level), so this file stays free of chip code.
// A multi-device workload runs one Replayer per device, each in that device's host thread, each
// issuing the tasks on its device (and its part of every collective it is a rank of, through a
// hook the caller supplies) in file order, as each rank of a job runs its own host program.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/rt/context.h"
#include "traces/instr_record.h"
#include "traces/workload.h"

namespace sfumato::workload {

// Where the replay's buffers are: named buffers by name, and recorded addresses (of buffers
// whose alloc task gives one) relocated to the replay's.
class Placer {
public:
    // Device address of a live named buffer at offset; throws InputError naming the buffer.
    uint64_t addr(const std::string& buffer, uint64_t offset) const;
    // A snapshot of the live buffers' relocation (recorded range -> replay address).
    Relocate relocation() const;
    void add(const Task& alloc, uint64_t replay_addr);
    void remove(const std::string& buffer);

private:
    struct Live {
        uint64_t addr, bytes, recorded;
    };
    std::map<std::string, Live> m_live;
};

// Builds the kernels of a `kernel` task (in launch order) when it is issued, in the host thread.
// Operands the task does not place are the factory's to place at no simulated cost (the
// context's untimed mode). Throws InputError naming what is wrong.
using KernelFactory = std::function<std::vector<KernelDesc>(rt::Context& ctx, const Task& t, const Placer& p)>;

// A collective task: init() is called once per collective task on each of its ranks before time
// zero (untimed; the hook sets up its communicator, a rendezvous of the ranks), issue() enqueues
// the rank's part on the stream when the task is reached. Throw InputError naming the task.
struct CollectiveHook {
    std::function<void(rt::Context& ctx, const Task& t, uint32_t rank)> init;
    std::function<void(rt::Context& ctx, const Task& t, uint32_t rank, const Placer& p, rt::StreamId s)> issue;
};

struct TaskTimes {
    size_t index;
    std::string kind, name;
    int64_t stream;
    uint64_t issue_cycle = 0, start_cycle = 0, end_cycle = 0;
    bool done = false;
    bool mine = true;  // the task is on this replayer's device
    uint32_t device = 0;
};
// Per-device task times (one list per device, each of every task) merged into one list: each
// task from the device it ran on; a collective from its first issue to its last end over its
// ranks.
std::vector<TaskTimes> merge_times(const std::vector<std::vector<TaskTimes>>& per_device);

class Replayer {
public:
    // dir: the workload file's directory (alloc init files are relative to it).
    Replayer(rt::Context& ctx, const Workload& w, KernelFactory kernels, std::string dir = ".", uint32_t device = 0,
             CollectiveHook coll = {});
    // The host program: call from the host SC_THREAD. Throws InputError on a runtime error,
    // naming the task.
    void run();
    bool finished() const { return m_finished; }
    // Per workload task, in file order (device tasks from the device's timestamps; host tasks
    // from when the host began and ended them).
    std::vector<TaskTimes> times(ClockDomain clock) const;
    // One line per task issued and not complete (for deadlock reports).
    std::vector<std::string> pending() const;
    // The device tasks each workload task submitted (kernels: one per launch).
    const std::vector<std::shared_ptr<sfumato::Task>>& device_tasks(size_t index) const { return m_issued[index].tasks; }
    // d2h copies that `save`: file name and the bytes read (call after run()). Functional mode
    // only: in timing mode (no data moved) InputError naming the first such task, unless there is none.
    std::vector<std::pair<std::string, std::vector<uint8_t>>> saved() const;

private:
    void setup();
    void issue(const Task& t);
    void check(rt::Status s, const Task& t);
    rt::DevPtr dev_buffer(uint64_t bytes, int which, const Task& t);
    void* host_buffer(uint64_t bytes, bool pinned, const Task& t);

    rt::Context& m_ctx;
    const Workload& m_w;
    KernelFactory m_kernels;
    std::string m_dir;
    uint32_t m_device = 0;
    CollectiveHook m_coll;
    std::map<size_t, void*> m_save_bufs;  // d2h task -> its own host buffer
    Placer m_placer;
    std::map<int64_t, rt::StreamId> m_streams;
    std::map<std::string, rt::EventId> m_events;
    std::map<std::pair<uint64_t, int>, rt::DevPtr> m_dev_bufs;
    std::map<std::pair<uint64_t, bool>, void*> m_host_bufs;
    std::map<size_t, std::vector<uint8_t>> m_init;  // alloc task -> bytes to place
    struct Issued {
        std::vector<std::shared_ptr<sfumato::Task>> tasks;  // device tasks (none for host-side tasks)
        uint64_t begin = 0, end = 0;                        // host-side span (ticks)
        bool issued = false, returned = false;
    };
    std::vector<Issued> m_issued;
    bool m_finished = false;
};

// with_device: each entry names its device (null for a collective); multi-device replays.
nlohmann::json tasks_json(const std::vector<TaskTimes>& times, bool with_device = false);

}  // namespace sfumato::workload
