// Contract: the device interface between the runtime (runtime/rt) and a chip model
// (models/chip). Neither side includes the other; the CLI and tests wire them together.
// The host submits tasks to hardware queues (one per runtime stream); submit() never blocks.
// The device executes each queue in order, serves queues by priority, and on completion sets
// Task::done, fills the timestamps and notifies Task::done_event. Functional global memory is
// reachable through gm() (null in timing mode, where no data exists).
// Several devices (a system, models/link): a P2P memcpy copies from this device's memory to a
// peer device's memory over the links; a notify record sets a notify slot on a peer device (after
// the path's latency), a notify wait blocks its queue until its slot has been set, then consumes
// one setting (a counting flag, as the vendor runtime's notify). A lone chip has no peers.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "isa/instr_sink.h"
#include "sim/mem_if.h"
#include "sim/time.h"
#include "sim/traffic_replay.h"

namespace sfumato {

enum class TaskKind : uint8_t { Kernel, Memcpy, EventRecord, EventWait, Callback, NotifyRecord, NotifyWait, kCount };
const char* task_kind_name(TaskKind k);
enum class CopyDir : uint8_t { H2D, D2H, D2D, P2P };
const char* copy_dir_name(CopyDir d);

// What cores one block needs. On split chips: Vector = one AIV, Cube = one AIC,
// Mix = one AIC + its AIVs (the body runs on each, told apart by core_kind/sub_block_idx).
// On coupled chips every kind runs on one coupled core.
enum class KernelKind : uint8_t { Vector, Cube, Mix };

// What produced a kernel, for recording workloads: the operator library's graph-node face
// derives its node description and placed operands from it (runtime/ops/node_launch.h); the
// recorder downcasts. Opaque here so sim/ names no operator type.
struct KernelOrigin {
    virtual ~KernelOrigin() = default;
};

struct KernelDesc {
    std::string name;  // instance name (for traces)
    std::string type;  // operator type
    uint32_t block_dim = 1;
    KernelKind kind = KernelKind::Vector;
    std::function<void(isa::IInstrSink&)> body;
    double flops = 0;    // useful work, for rooflines
    uint64_t bytes = 0;  // compulsory GM traffic (each input read once, each output written once)
    // Compute lower bound: the op's work at the chip's peak rate of its engine, on every core
    // of that engine (not only the block_dim it uses). The op knows its engine and data type.
    double min_compute_cycles = 0;
    // Start-up: the argument block (GM pointers and tiling data) each core reads with scalar
    // loads before the body (0: none), and the code size (0: estimated from the instructions the
    // kernel issues; otherwise the whole image is fetched at block start).
    uint32_t args_bytes = 0;
    uint32_t code_bytes = 0;
    // The operator-library call that produced it (for recording workloads); empty otherwise.
    std::string op;
    std::map<std::string, std::string> op_args;
    // The node launch it belongs to (shared by every kernel of one node) and its position in
    // that node's launches; null otherwise.
    std::shared_ptr<const KernelOrigin> origin;
    uint32_t origin_part = 0;
    // For timing re-use, a kernel that is neither a graph node nor an operator-library call (the
    // collectives' copy and reduce kernels): what its time depends on besides the fields above
    // (element counts, address alignments; empty: not a re-use candidate), and the GM ranges it
    // reads and writes (the L2 state of its identity and its footprint).
    struct GmOperand {
        uint64_t addr = 0, bytes = 0;
        bool written = false;
    };
    std::string reuse_key;
    std::vector<GmOperand> operands;
};

struct MemcpyDesc {
    CopyDir dir = CopyDir::H2D;
    uint64_t dev_dst = 0, dev_src = 0;  // device addresses (as the direction needs)
    void* host_dst = nullptr;           // D2H target (null in timing mode)
    const void* host_src = nullptr;     // H2D source (null in timing mode)
    uint64_t bytes = 0;
    bool pinned = true;
    uint32_t peer = 0;  // P2P: the destination device (system index); dev_dst is an address there
    // P2P with an inline reduction (the SDMA's reduce-on-write, as the vendor's collectives use):
    // each element is combined with the destination's (reduce_op: 1 sum, 2 max, 3 min; 0 a plain
    // copy) in reduce_dtype (isa::DType), one rounding per element.
    uint8_t reduce_op = 0;
    uint8_t reduce_dtype = 0;
    // P2P read: this device's engine pulls from the peer (dev_src is the peer's address, dev_dst
    // this device's); the data crosses the links from the peer to this device.
    bool pull = false;
};

struct Task {
    TaskKind kind = TaskKind::Kernel;
    uint32_t stream = 0;
    uint64_t id = 0;
    KernelDesc kernel;
    MemcpyDesc copy;
    uint32_t event = 0;      // EventRecord / EventWait: device event slot
    uint64_t event_seq = 0;  // EventRecord: this record's sequence; EventWait: the one to wait for
    uint32_t peer = 0;       // NotifyRecord: the device whose notify slot `event` it sets
    std::function<void()> callback;  // Callback: runs on the host side when reached

    // Filled by the device. issue: submitted; start: taken by the scheduler; end: completion
    // reported (the task's duration as a profiler sees it spans start..end).
    Tick issue_tick, start_tick, end_tick;
    // Kernels: the execution span, from the tick the first block starts on a core to the tick
    // the last block finishes (scheduler dispatch and completion latencies lie outside it).
    Tick exec_start_tick, exec_end_tick;
    bool done = false;
    sc_core::sc_event done_event;
    // Per-pipe busy cycles summed over the kernel's blocks, indexed by isa::Pipe.
    uint64_t pipe_busy[isa::kNumPipes] = {};
    // The one duration of a task in device cycles: for a kernel its execution span,
    // ceil_cycle(exec_end_tick) - ceil_cycle(exec_start_tick) (the core-clock edge at which the
    // first block starts to the edge at which the last block is done); for other tasks
    // ceil_cycle(end_tick) - ceil_cycle(start_tick). Reports derive every kernel cycle figure
    // from these edges. A kernel's task duration as the
    // vendor's profiler reports it (dispatch to completion report) is end_tick - start_tick; it
    // adds the scheduler's serial block dispatch and completion reports to the span.
    uint64_t cycles = 0;
    uint32_t cube_cores_used = 0, vector_cores_used = 0;  // distinct cores that ran its blocks
    // Kernels: the longest start-up of any of its blocks on any core, in device cycles (from the
    // block's start on the core to its body: code fetch, initialisation, argument loads).
    uint64_t startup_cycles = 0;
};

struct DeviceInfo {
    std::string arch;            // "coupled" | "split"
    uint32_t cube_cores = 0;     // AIC (or coupled cores)
    uint32_t vector_cores = 0;   // AIV (or coupled cores)
    uint32_t aiv_per_aic = 0;    // 0 on coupled
    ClockDomain clock;
    uint64_t ub_bytes = 0, l1_bytes = 0, l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0;
    uint64_t bt_bytes = 0, fb_bytes = 0;  // the cube core's bias table and FixPipe buffer
    uint32_t event_ids = 0;
    uint64_t gm_bytes = 0;
    uint64_t reserved_bytes = 0;  // device memory at address 0 the chip keeps (never allocated)
    bool functional = true;
    // Peaks for rooflines, in bytes (or MACs) per core cycle.
    double vector_bytes_per_cycle = 0;  // per vector core
    double cube_macs_fp16 = 0;          // per cube core
    // The cube's reduction depth per cycle by input type (elements of k per m0 x n0 step-cycle;
    // fp16/bf16 16, fp32 4, int8 32 on A2/A3 parts): cycles of a mad of depth k = ceil(k / depth).
    uint32_t cube_depth_16bit = 16, cube_depth_fp32 = 4, cube_depth_int8 = 32;
    // Depth per cycle for an input element size (1: int8, 2: fp16/bf16, 4: fp32).
    uint32_t cube_depth_of(uint32_t in_es) const {
        return in_es == 1 ? cube_depth_int8 : in_es == 4 ? cube_depth_fp32 : cube_depth_16bit;
    }
    double gm_bytes_per_cycle = 0;      // whole device
    double core_gm_read_bytes_per_cycle = 0;
    double core_gm_write_bytes_per_cycle = 0;
    // Limits of any data path (L2 hits included): what roofline lower bounds must use.
    double mem_max_bytes_per_cycle = 0;
    double core_read_max_bytes_per_cycle = 0, core_write_max_bytes_per_cycle = 0;
    // The MTE1's L1 -> L0A and L1 -> L0B rates (load2d/load3d), per cube core.
    double l1_l0a_bytes_per_cycle = 512, l1_l0b_bytes_per_cycle = 256;
    uint64_t l2_bytes = 0;  // traffic beyond this must cross the HBM at gm_bytes_per_cycle
    // The task scheduler's serial time per core a block starts on (device cycles): a MIX block
    // (an AIC and its AIVs) delays the next block's start by 1 + aiv_per_aic of it. 0 = unknown.
    double core_start_cycles = 0;
    uint32_t device_id = 0;  // index in its system (0 for a lone chip)
};

class IDevice {
public:
    virtual ~IDevice() = default;
    virtual const DeviceInfo& info() const = 0;
    // A hardware queue; priority: smaller is more urgent.
    virtual uint32_t open_queue(int priority) = 0;
    virtual void submit(uint32_t queue, std::shared_ptr<Task> task) = 0;
    virtual uint32_t create_event() = 0;
    virtual IBackingStore* gm() = 0;
    // Writes back and invalidates the device's caches (L2), as a benchmark harness flushes
    // caches between runs. Call from the host thread (an SC_THREAD) while no task runs: it
    // returns once the written-back data reached memory. A device without caches does nothing.
    virtual void flush_caches() {}
    // Where a host-side shortcut that skips kernels' instructions (timing re-use's stand-ins)
    // hands their traffic so the caches evolve as the kernels would have left them (null: a
    // device without caches to keep).
    virtual ITrafficReplay* traffic_replay() { return nullptr; }
    // Timing re-use's energy (runtime/reuse/timing_reuse.h): the events the device's energy model
    // priced for the completed kernel `t` (opaque to the caller; false: the device keeps none for
    // it), and a stand-in kernel (running on this device, not yet completed) charged such
    // events of its template, taken from a device of the same configuration (false: not charged).
    virtual bool kernel_activity(const Task& /*t*/, std::vector<double>& /*out*/) const { return false; }
    virtual bool charge_standin(const Task& /*standin*/, const std::vector<double>& /*activity*/) { return false; }

    // A notify slot on this device (target of peers' NotifyRecord tasks). Devices without peers
    // need not support it.
    virtual uint32_t create_notify();
};

}  // namespace sfumato
