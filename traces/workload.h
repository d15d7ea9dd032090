// Workload files: a JSON description of a host task stream (streams with priorities, then tasks
// issued by the host in file order: device buffer alloc/free, memcpy between named buffers,
// kernel launches naming an operator of the operator library (`op` + `args`) or a graph node
// (`node`: ONNX op type, attributes, operand tensors in named buffers), event record/wait, host
// delays, synchronisation), written by hand or recorded from a run (then each task also carries
// the host time before it, `gap_ns`, and each kernel its recorded launches, with the names of
// their instruction streams in the HDF5 file `instr_file`, and what its start-up depends on: the
// argument block and the declared code size; a recorded run's cache flush is a `flush` task).
// Multi-device workloads: every task may name its `device` (default 0; buffers, streams and
// events are each device's own), and a `collective` task (op, count, dtype, redop, root, algo,
// ranks = the devices in rank order, stream, optional send/recv buffers) is issued by every
// rank's host program at its place in the file; a d2h memcpy may `save` the bytes it read
// (functional mode) to a file. A file without these fields is a single-device workload as
// before. This file parses and validates such a file into a typed task list; every error names the
// task index and the field, so `sfumato replay` can exit 2 with a clear message. It knows nothing
// of operators: the caller passes a validator for op names and arguments.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/device_if.h"

namespace sfumato::workload {

enum class Kind : uint8_t { Memcpy, Kernel, Record, Wait, HostDelay, Sync, Alloc, Free, Flush, Collective };
const char* kind_name(Kind k);

// Limits a file is checked against: a kernel's blocks (as `--block-dim`) and a host delay.
constexpr uint64_t kMaxBlockDim = 65535;
constexpr double kMaxHostDelayUs = 1e9;  // 1000 s of host time
constexpr uint32_t kMaxDevices = 4096;

struct Stream {
    uint32_t id = 0;
    int priority = 0;  // smaller is more urgent
};

// One kernel launch as recorded (a node may launch several).
struct Launch {
    std::string name, type;
    KernelKind kind = KernelKind::Vector;
    uint32_t block_dim = 1;
    double flops = 0, min_compute_cycles = 0;
    uint64_t bytes = 0;
    std::string instr;  // its instruction streams in the workload's instr_file ("" = none)
    // Start-up (KernelDesc): the argument block each core reads, the declared code size (0: the
    // estimate from the instructions it issues). Absent in files older than version 3: 0 both.
    uint32_t args_bytes = 0, code_bytes = 0;
};
const char* kernel_kind_name(KernelKind k);

struct Task {
    size_t index = 0;  // position in the file's task list
    Kind kind = Kind::Sync;
    std::string name;     // optional label (traces, summary)
    int64_t stream = -1;  // -1: no stream (host_delay, device-wide sync, alloc, free)
    uint32_t device = 0;  // the device it runs on (a collective: its ranks instead)
    uint64_t gap_ns = 0;  // host time before the task (the program's own work between calls)
    double at_us = -1;    // when the recorded program issued it (informational; -1 = unknown)
    // alloc / free: the buffer; alloc: its size, recorded address, optional init file
    std::string buffer;
    uint64_t addr = 0;
    std::string init;
    // memcpy
    CopyDir dir = CopyDir::H2D;
    uint64_t bytes = 0;
    bool pinned = true;
    bool async = true;                    // false: the host waits for the copy
    std::string dst, src;                 // named buffers (empty: an anonymous buffer); a
                                          // collective's recv (dst) and send (src)
    uint64_t dst_offset = 0, src_offset = 0;
    std::string save;                     // d2h: file the bytes read are written to (functional)
    // kernel: operator name and its arguments as strings (numbers in decimal)
    std::string op;
    std::map<std::string, std::string> args;
    uint32_t block_dim = 0;  // 0: let the operator's tiling choose
    // kernel, graph-node form: {"op_type", "name", "opset", "attrs", "inputs", "outputs",
    // "workspace"}; tensors {"shape", "dtype", "elem", "format", "strides", "buffer", "offset"}
    nlohmann::json node;
    std::vector<Launch> launches;  // as recorded (empty in hand-written files)
    // kernel, imported from a profiler trace: the operator it came from (unique per operator
    // instance; tasks of one operator share it) and the time the profiler measured for it
    std::string source;
    double measured_us = -1;
    // record / wait / sync on an event
    std::string event;
    // host_delay
    double us = 0;
    // flush: the host waits for the device to be idle, then its caches are written back and
    // invalidated (what a benchmark does before a cold-cache measurement; `kernel --l2 cold`).
    // collective: names as `sfumato collective` takes them; count in elements (the vector for
    // all_reduce/broadcast/reduce, per rank for all_gather input / reduce_scatter output, per
    // pair for all_to_all); ranks[i] is rank i's device
    std::string coll_op, dtype = "fp16", redop = "sum", algo = "auto";
    uint64_t count = 0;
    uint32_t root = 0;
    std::vector<uint32_t> ranks;
    // Whether device d takes part (its own task, or a rank of a collective); its rank, or -1.
    bool on_device(uint32_t d) const;
    int rank_of(uint32_t d) const;
};

struct Workload {
    std::string description;
    nlohmann::json recorded_on;  // the chip a recording was made on (object; null otherwise)
    std::string instr_file;      // HDF5 instruction streams, relative to the workload file
    std::vector<Stream> streams;
    std::vector<Task> tasks;
    const Stream* stream(int64_t id) const;
    // Devices the tasks name: 1 + the largest device id (1 for a single-device workload).
    uint32_t devices() const;
    bool multi_device() const;  // any task off device 0, or a collective
};

// Checks an operator name and its arguments; returns an empty string when valid, else the
// reason (e.g. "unknown op 'foo'", "unknown argument 'x'").
using OpValidator =
    std::function<std::string(const std::string& op, const std::map<std::string, std::string>& args)>;

// Parses and validates; throws InputError ("<origin>: task 3 (wait): field 'event': ...").
Workload parse(const std::string& text, const OpValidator& ops, const std::string& origin = "workload");
Workload load(const std::string& path, const OpValidator& ops);
// Serialises a workload (the recorder's output); parse(to_json(w)) == w.
std::string to_json(const Workload& w);

}  // namespace sfumato::workload
