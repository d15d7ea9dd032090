// One simulation run of the CLI: common options (--config, --set, --out, --mode, --trace),
// parameter loading with unknown-key checks, elaboration of a chip and a runtime, the run with
// deadlock detection, and the output files (trace.json, stats.h5, summary.json), each written
// atomically. SystemC elaborates once per process, so a Session is used once.
#pragma once
#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/chip/chip.h"
#include "runtime/rt/runtime.h"
#include "sim/config.h"
#include "sim/host_thread.h"
#include "sim/stats.h"
#include "sim/trace.h"
#include "traces/chrome_trace.h"
#include "traces/hdf5_stats.h"
#include "traces/workload_record.h"

namespace sfumato::cli {

namespace po = boost::program_options;

struct CommonOptions {
    std::vector<std::string> configs;
    std::vector<std::string> sets;
    std::string out;
    std::string mode = "functional";
    std::string trace = "auto";
    uint64_t trace_budget = uint64_t{1} << 20;  // --trace auto: events with instruction detail
    // summary.json lists every launch (ops, tasks) up to this many tasks; a longer run (an LLM
    // serving trace: millions of launches) gets per-type totals instead (ops_by_type), so the
    // summary and the memory building it stay bounded.
    uint64_t summary_ops = uint64_t{1} << 16;
    std::string record;  // write the run's task stream as a workload file
    uint64_t max_cycles = 0;  // 0: no limit; else a run still going at this cycle stops (exit 4)
    std::string record_level = "ops";  // ops | instructions (also each block's instruction stream)
};

// --config/--set (and, for commands that simulate, --out/--mode/--trace).
void add_config_options(po::options_description& d, CommonOptions& o);
void add_run_options(po::options_description& d, CommonOptions& o);
// Parses; prints help and returns false on --help. Bad options throw InputError.
bool parse_command(const std::vector<std::string>& args, const char* usage, po::options_description& d,
                   po::variables_map& vm, const po::positional_options_description* pos = nullptr);
// Loads config files and overrides into c.
void load_config(Config& c, const CommonOptions& o);

std::string version_string();

// Trace detail. `auto` (the default) keeps instruction detail for the first --trace-budget
// events (2^20, about 100 MB of JSON), then ops and tasks only, so a large run's trace stays
// bounded; a named level keeps everything of that level. Without --out nothing is recorded (no
// trace would be written).
// Parses --trace; `bounded` is true for auto.
TraceLevel parse_trace_option(const std::string& s, bool& bounded);
void attach_trace(const CommonOptions& o, TraceLevel level, bool bounded, TraceHub& hub, ChromeTraceWriter& writer);
// The line a bounded trace prints when it reached its budget (stderr).
void report_trace_budget(const ChromeTraceWriter& writer);

// Checking a command line without running it (sfumato sweep does this for every point before
// running any): while validation is on, a command stops once it has read its arguments and
// every parameter it reads, by throwing ValidationDone: Session::elaborate() does so after the
// unknown-key check, before anything is simulated; commands without a Session call
// stop_if_validating() at that point. Bad arguments or keys throw their usual errors first.
struct ValidationDone {};
void set_validation_only(bool on);
bool validation_only();
// Throws ConfigError for an unused key, then ValidationDone, when validation is on.
void stop_if_validating(const Config& c);

// Every parameter of a configuration (chip and host runtime), loaded without a model.
struct LoadedParams {
    Config config;
    std::unique_ptr<ChipParams> chip;
    std::unique_ptr<rt::RuntimeParams> host;
};
// For commands that only read parameters: parses --config/--set, loads everything into out
// (unknown keys throw). Returns false when --help was printed.
bool load_params_command(const std::vector<std::string>& args, const std::string& name, LoadedParams& out);

// The one roofline definition of every kernel report (`kernel`, `asm`, summary.json ops[]):
// a kernel's time is at least its work at the chip's compute peak (KernelDesc::
// min_compute_cycles, the op's work on all cores of its engine) and at least its compulsory GM
// bytes (KernelDesc::bytes) at the HBM peak; `bound` says which is larger, and
// roofline_fraction = that bound / the kernel's cycles (its execution span). A fraction above 1
// means data was served from L2 (inputs left there, or written data not yet written back).
// The on-chip ceiling replaces HBM by what the L2 and the cores' ports move at most
// (roofline_fraction_l2): no run beats it.
struct Roofline {
    double compute_cycles = 0, hbm_cycles = 0, l2_cycles = 0;
    double cycles = 0;     // max(compute, hbm)
    double cycles_l2 = 0;  // max(compute, l2)
    bool compute_bound = false;
};
Roofline roofline(const KernelDesc& k, const DeviceInfo& d);

class Session {
public:
    Session(const CommonOptions& o, std::string command_line);
    Config& config() { return m_config; }
    const ChipParams& chip_params() const { return *m_chip_params; }
    bool functional() const { return m_functional; }
    // Builds the chip and runtime; every parameter must have been declared before (unknown
    // keys are reported here).
    void elaborate();
    rt::Runtime& runtime() { return *m_runtime; }
    Chip& chip() { return *m_chip; }
    // Runs the host program to completion; throws on failure or deadlock. `on_slice` (optional)
    // is called between simulation slices (progress reports).
    void run(std::function<void(rt::Runtime&)> program, std::function<void()> on_slice = {});
    // The same in steps, for programs that drive the simulation from outside it (the Ascend C
    // host API): start() creates the host thread running `program` (before the first step);
    // run_until() simulates until done() holds (the host thread may sc_pause() to return
    // early), with run()'s failure and deadlock checks; finish() records the total cycles and
    // the task trace once the host program has returned.
    void start(std::function<void(rt::Runtime&)> program);
    void run_until(const std::function<bool()>& done, const std::function<void()>& on_slice = {});
    bool host_finished() const;
    void finish();
    uint64_t total_cycles() const { return m_total_cycles; }
    // One summary entry per kernel task.
    nlohmann::json ops_json() const;
    // The summary entry of one kernel task (cycles, flops, bytes, pipe_util, bound, roofline).
    nlohmann::json op_json(const Task& t) const;
    // An input file of the run (kind: "model", "workload", ...), hashed into the run manifest
    // (summary.json "manifest", stats.h5 /meta/inputs).
    void add_input(const std::string& kind, const std::string& path);
    // A table to write into stats.h5 beside the stats (e.g. a graph's memory plan).
    void add_h5_table(H5Table t) { m_tables.push_back(std::move(t)); }
    // One entry per runtime task (issue = host enqueue, start/end on the device), in cycles.
    nlohmann::json tasks_json() const;
    // Kernel launches summed per operator type: count, cycles, time, FLOPs, bytes.
    nlohmann::json ops_by_type_json() const;
    // The chip's peaks (clock, cube fp16 FLOPs and vector bytes per cycle, GM and fastest-path
    // bytes per cycle, L2 size): summary.json's "device".
    nlohmann::json device_json() const;
    nlohmann::json base_summary() const;
    // summary.json "energy" (models/power): the run's energy by component and its average power.
    nlohmann::json energy_json() const;
    // An op's energy_j, dynamic_energy_j, power_w and energy_events.
    void add_op_energy(nlohmann::json& j, const Task& t) const;
    // Writes trace.json, stats.h5, summary.json and instr.csv into --out (if given).
    void write_outputs(const nlohmann::json& summary);
    // Writes the --record workload file, if asked for.
    void write_recording() const;
    // What a recording made on this chip says about it (workload field recorded_on).
    nlohmann::json chip_description() const;
    // Per-instruction table (instruction, pipe, count, cycles, avg_cycles) as CSV.
    std::string instr_csv() const;

private:
    // The chip's power over time as a trace counter track (trace level task and above).
    void trace_power();
    CommonOptions m_opts;
    std::string m_cmdline;
    Config m_config;
    bool m_functional = true;
    TraceLevel m_level = TraceLevel::Instr;
    bool m_trace_bounded = false;
    std::unique_ptr<ChipParams> m_chip_params;
    std::unique_ptr<rt::RuntimeParams> m_rt_params;
    StatGroup m_root{nullptr, ""};
    TraceHub m_trace;
    ChromeTraceWriter m_writer;
    std::unique_ptr<Chip> m_chip;
    std::unique_ptr<rt::Runtime> m_runtime;
    std::unique_ptr<HostThread> m_host;
    uint64_t m_total_cycles = 0;
    std::vector<H5Table> m_tables;
    std::unique_ptr<workload::Recorder> m_recorder;
    std::map<std::string, std::string> m_inputs;  // kind -> "path fnv1a64:HEX"
};

// The source tree's git revision (with "-dirty" when it has changes), or "" when unknown.
std::string git_revision();

}  // namespace sfumato::cli
