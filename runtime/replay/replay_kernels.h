// Replay's planning, a library (the host program of `sfumato replay`, cli/cmd_replay.cpp and
// cli/replay_system.cpp, which only parse, call and print): the kernels of a replayed workload's
// `kernel` tasks, on one chip and on a system of chips (one instance per device, each with its
// own scratch operands): at the ops
// level every kernel is planned again for the target chip (graph-node tasks through the node
// op on the buffers they name, operator-library tasks with their operands placed at no simulated
// cost); at the instructions level the recorded instruction streams run unchanged.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ops/i_op.h"
#include "runtime/rt/runtime.h"
#include "traces/instr_record.h"
#include "traces/workload.h"
#include "traces/workload_replay.h"

namespace sfumato::replay {

// The OpValidator of workload::load (the operator library's names and arguments).
std::string validate_op(const std::string& op, const std::map<std::string, std::string>& args);

// Refuses, before the run, a recording whose instruction streams this chip cannot hold.
std::map<std::string, std::shared_ptr<const workload::KernelStreams>> load_streams(const workload::Workload& w,
                                                                                   const std::string& file,
                                                                                   const DeviceInfo& info,
                                                                                   const std::string& chip);

class ReplayKernels {
public:
    ReplayKernels(std::string file, bool instr_level, std::map<std::string, std::shared_ptr<const workload::KernelStreams>> streams,
                  DeviceInfo info)
        : m_file(std::move(file)), m_instr(instr_level), m_streams(std::move(streams)), m_info(std::move(info)) {}
    // The workload::KernelFactory for a runtime on the device.
    workload::KernelFactory factory(rt::Runtime& rt);
    // Imported operators the chip could not plan (task index -> reason).
    const std::map<size_t, std::string>& import_skips() const { return m_import_skips; }

    struct Scratch {
        std::map<std::pair<uint64_t, int>, uint64_t> bufs;
        uint64_t get(rt::Context& ctx, uint64_t bytes, int slot, const std::string& where);
    };

private:
    std::vector<KernelDesc> kernels(rt::Runtime& rt, rt::Context& ctx, const workload::Task& t, const workload::Placer& p);
    std::string m_file;
    bool m_instr;
    std::map<std::string, std::shared_ptr<const workload::KernelStreams>> m_streams;
    DeviceInfo m_info;
    std::vector<std::unique_ptr<ops::IOp>> m_live_ops;
    Scratch m_scratch;
    std::map<size_t, std::string> m_import_skips;
};

}  // namespace sfumato::replay
