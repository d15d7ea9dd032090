// One simulation of a system of chips for the CLI (`sfumato collective`, `replay --system`,
// `train-step`, `llm`, `serve`): loads the system config (--system F: `system.*` keys, whose
// `system.chip` names the chip preset every chip is built from; --config and --set override
// either), elaborates the chips and links (models/link/system.h), hands them to the library that
// opens one runtime device per chip and runs the host programs (runtime/system/system_run.h), and
// writes trace.json, stats.h5 and summary.json.
// A system config that cannot work (a chip without links, chips that cannot reach each other,
// zero bandwidth) exits 2 naming the key.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/session.h"
#include "models/link/system.h"
#include "models/link/system_params.h"
#include "runtime/comm/communicator.h"
#include "runtime/system/system_run.h"
#include "sim/window_sync.h"

namespace sfumato::cli {

// --system F (with --config/--set/--out/--mode/--trace from add_run_options).
void add_system_option(po::options_description& d, std::string& system_file);
// Loads chip preset, system file, --config files and --set overrides, in that order.
void load_system_config(Config& c, const std::string& system_file, const CommonOptions& o);

// `sfumato params` / `info`: every parameter of a chip, its host runtime, a system of such chips
// (system.*, also without --system: the defaults) and the collective library (comm.*), loaded
// without a model. Returns false when --help was printed.
struct LoadedSystemParams {
    LoadedParams base;
    std::unique_ptr<SystemParams> system;
    std::unique_ptr<comm::CommParams> comm;
    bool given = false;  // --system was given
};
bool load_system_params_command(const std::vector<std::string>& args, const std::string& name, LoadedSystemParams& out);

// The CLI's side of a run on a system of chips: options and parameters in, the system built,
// the outputs written; the run itself is the library's (runtime/system/system_run.h), which this
// forwards to.
class SystemSession {
public:
    SystemSession(const CommonOptions& o, const std::string& system_file, std::string command_line);
    ~SystemSession();
    Config& config() { return m_config; }
    const SystemParams& system_params() const { return *m_sys_params; }
    const ChipParams& chip_params() const { return *m_chip_params; }
    const rt::RuntimeParams& runtime_params() const { return *m_rt_params; }
    const comm::CommParams& comm_params() const { return *m_comm_params; }
    bool functional() const { return m_functional; }
    const std::string& mode() const { return m_opts.mode; }
    // Builds the system and one runtime device per chip (unknown keys are reported here).
    void elaborate();
    System& system() { return *m_system; }
    // The library's run (after elaborate()).
    sys::SystemRun& host() { return *m_run; }
    // sys::SystemRun::distribute.
    void distribute(IRankTransport& t) { m_run->distribute(t); }
    WindowSync* sync() { return m_run->sync(); }
    bool local(uint32_t chip) const { return m_run->local(chip); }
    bool leader() const { return m_run->leader(); }
    rt::Device& device(uint32_t chip) { return m_run->device(chip); }
    // sys::SystemRun::run, stopped by SIGINT/SIGTERM (cli/interrupt.h).
    void run(const std::vector<uint32_t>& chips, const std::function<void(uint32_t i, rt::Context& ctx)>& program) {
        m_run->run(chips, program);
    }
    uint64_t total_cycles() const { return m_run->total_cycles(); }
    uint64_t end_tick() const { return m_run->end_tick(); }
    // Per link channel: bytes, busy time, utilisation over [t0, t1] (ps).
    nlohmann::json links_json(uint64_t t0_ps, uint64_t t1_ps) const { return m_run->links_json(t0_ps, t1_ps); }
    nlohmann::json base_summary() const;
    // Split over ranks (collective: every rank calls it): summary.json "split" (ranks,
    // lookahead_ps, windows, messages summed over the ranks); null when not split.
    nlohmann::json split_json() { return m_run->split_json(); }
    // The line rank 0 prints about the split ("" when not split).
    std::string split_line(const nlohmann::json& split) const;
    // summary.json "energy": every chip's energy (models/power) and their sums.
    nlohmann::json energy_json() const { return m_run->energy_json(); }
    void write_outputs(const nlohmann::json& summary);

private:
    CommonOptions m_opts;
    std::string m_system_file, m_cmdline;
    Config m_config;
    bool m_functional = true;
    TraceLevel m_level = TraceLevel::Task;
    bool m_trace_bounded = false;
    std::unique_ptr<SystemParams> m_sys_params;
    std::unique_ptr<ChipParams> m_chip_params;
    std::unique_ptr<rt::RuntimeParams> m_rt_params;
    std::unique_ptr<comm::CommParams> m_comm_params;
    StatGroup m_root{nullptr, ""};
    TraceHub m_trace;
    ChromeTraceWriter m_writer;
    std::unique_ptr<System> m_system;
    std::unique_ptr<sys::SystemRun> m_run;
};

}  // namespace sfumato::cli
