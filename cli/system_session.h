// One simulation of a system of chips for the CLI (`sfumato collective`, `replay --system`,
// `train-step`): loads the system config (--system F: `system.*` keys, whose `system.chip` names
// the chip preset every chip is built from; --config and --set override either), elaborates the
// chips and links (models/link/system.h), opens one runtime device per chip, runs one host
// program per device side by side (each in its own host thread, as each rank of a job runs its
// own process), with the deadlock check, and writes trace.json, stats.h5 and summary.json.
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

class SystemSession {
public:
    SystemSession(const CommonOptions& o, const std::string& system_file, std::string command_line);
    ~SystemSession();
    Config& config() { return m_config; }
    const SystemParams& system_params() const { return *m_sys_params; }
    const ChipParams& chip_params() const { return *m_chip_params; }
    const comm::CommParams& comm_params() const { return *m_comm_params; }
    bool functional() const { return m_functional; }
    const std::string& mode() const { return m_opts.mode; }
    // Builds the system and one runtime device per chip (unknown keys are reported here).
    void elaborate();
    System& system() { return *m_system; }
    // Splits the run by chip over the transport's ranks (sim/window_sync.h, after elaborate()):
    // this process simulates its block of chips, the others' devices are remote, the fabric's
    // hand-offs between chips are messages, and run() advances window by window. Exit 2 when
    // there are more ranks than chips or a link has no latency (no lookahead).
    void distribute(IRankTransport& t);
    WindowSync* sync() { return m_sync.get(); }
    bool local(uint32_t chip) const { return !m_sync || m_sync->local(chip); }
    bool leader() const { return !m_sync || m_sync->rank() == 0; }
    rt::Device& device(uint32_t chip) { return *m_devices.at(chip); }
    // Runs program(i, ctx) for each chip in `chips` (ctx: a context on that chip), side by side,
    // until all return; throws on failure or deadlock.
    void run(const std::vector<uint32_t>& chips, const std::function<void(uint32_t i, rt::Context& ctx)>& program);
    uint64_t total_cycles() const { return m_total_cycles; }
    uint64_t end_tick() const { return m_end_tick; }
    // Per link channel: bytes, busy time, utilisation over [t0, t1] (ps).
    nlohmann::json links_json(uint64_t t0_ps, uint64_t t1_ps) const;
    nlohmann::json base_summary() const;
    // Split over ranks (collective: every rank calls it): summary.json "split" (ranks,
    // lookahead_ps, windows, messages summed over the ranks); null when not split.
    nlohmann::json split_json();
    // The line rank 0 prints about the split ("" when not split).
    std::string split_line(const nlohmann::json& split) const;
    // summary.json "energy": every chip's energy (models/power) and their sums.
    nlohmann::json energy_json() const;
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
    std::vector<std::unique_ptr<StatGroup>> m_host_stats;
    std::vector<std::unique_ptr<rt::Device>> m_devices;
    std::vector<std::unique_ptr<HostThread>> m_hosts;
    uint64_t m_total_cycles = 0, m_end_tick = 0;
    std::unique_ptr<WindowSync> m_sync;
    void run_windows(const std::function<bool()>& all_done);
    void run_slices(const std::function<bool()>& all_done);
};

}  // namespace sfumato::cli
