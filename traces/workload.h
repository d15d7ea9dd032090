// Workload files: a JSON description of a host task stream (streams with priorities, then tasks
// issued by the host in file order: memcpy, kernel launches naming an operator of the operator
// library, event record/wait, host delays, synchronisation), written by hand or recorded from a
// run. This file parses and validates such a file into a typed task list; every error names the
// task index and the field, so `sfumato replay` can exit 2 with a clear message. It knows nothing
// of operators: the caller passes a validator for op names and arguments.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/device_if.h"

namespace sfumato::workload {

enum class Kind : uint8_t { Memcpy, Kernel, Record, Wait, HostDelay, Sync };
const char* kind_name(Kind k);

// Limits a file is checked against: a kernel's blocks (as `--block-dim`) and a host delay.
constexpr uint64_t kMaxBlockDim = 65535;
constexpr double kMaxHostDelayUs = 1e9;  // 1000 s of host time

struct Stream {
    uint32_t id = 0;
    int priority = 0;  // smaller is more urgent
};

struct Task {
    size_t index = 0;  // position in the file's task list
    Kind kind = Kind::Sync;
    std::string name;     // optional label (traces, summary)
    int64_t stream = -1;  // -1: no stream (host_delay, device-wide sync)
    // memcpy
    CopyDir dir = CopyDir::H2D;
    uint64_t bytes = 0;
    bool pinned = true;
    // kernel: operator name and its arguments as strings (numbers in decimal)
    std::string op;
    std::map<std::string, std::string> args;
    uint32_t block_dim = 0;  // 0: let the operator's tiling choose
    // record / wait
    std::string event;
    // host_delay
    double us = 0;
};

struct Workload {
    std::vector<Stream> streams;
    std::vector<Task> tasks;
    const Stream* stream(int64_t id) const;
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
