#include "cli/session.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/installation.h"
#include "cli/interrupt.h"
#include "models/power/energy_report.h"
#include "sim/config_files.h"
#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/run_horizon.h"
#include "sim/sc_time_util.h"
#include "traces/atomic_file.h"
#include "traces/hdf5_stats.h"
#include "traces/workload_record.h"

namespace sfumato::cli {

// libsfumato_ascendc links this file without cli/interrupt.cpp (a library inside a user's program
// must not take over its signals): there the weak reference is null and no stop is requested.
__attribute__((weak)) void throw_if_interrupted(const std::string& when);

namespace {
void poll_stop(const std::string& when) {
    if (&throw_if_interrupted != nullptr) throw_if_interrupted(when);
}
}  // namespace

std::string version_string() { return "sfumato " SFUMATO_VERSION; }

std::string preset_dir() {
    namespace fs = std::filesystem;
    std::vector<fs::path> homes;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&preset_dir), &info) && info.dli_fname && fs::path(info.dli_fname).is_absolute())
        homes.emplace_back(info.dli_fname);
    std::error_code ec;
    if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) homes.push_back(exe);
    for (const auto& h : homes) {
        const fs::path p = h.parent_path().parent_path() / "share" / "sfumato" / "configs";
        if (fs::is_directory(p, ec)) return p.string();
    }
    return SFUMATO_SOURCE_DIR "/configs";
}

std::string resolve_config_file(const std::string& name) { return sfumato::resolve_config_file(name, preset_dir()); }

std::string git_revision() {
    // An installed sfumato does not ask the source tree it was built from: that tree may have
    // moved on since.
    static const std::string rev = []() -> std::string {
        if (preset_dir() != SFUMATO_SOURCE_DIR "/configs") return "";
        const std::string git = std::string("git -C '") + SFUMATO_SOURCE_DIR + "' ";
        auto run = [](const std::string& cmd) {
            std::string out;
            if (FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r")) {
                char buf[256];
                while (fgets(buf, sizeof buf, p)) out += buf;
                if (pclose(p) != 0) return std::string();
            }
            while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
            return out;
        };
        std::string r = run(git + "rev-parse HEAD");
        if (!r.empty() && !run(git + "status --porcelain --untracked-files=no").empty()) r += "-dirty";
        return r;
    }();
    return rev;
}

namespace {
std::string fnv1a_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "unreadable";
    uint64_t h = 1469598103934665603ull;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 1099511628211ull;
        }
    }
    char hex[40];
    std::snprintf(hex, sizeof hex, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
    return hex;
}
}  // namespace

void Session::add_input(const std::string& kind, const std::string& path) { m_inputs[kind] = path + " " + fnv1a_file(path); }

namespace {
bool g_validation_only = false;
}

void set_validation_only(bool on) { g_validation_only = on; }
bool validation_only() { return g_validation_only; }

void stop_if_validating(const Config& c) {
    if (!g_validation_only) return;
    c.check_unused();
    throw ValidationDone{};
}

void add_config_options(po::options_description& d, CommonOptions& o) {
    d.add_options()("config", po::value<std::vector<std::string>>(&o.configs)->composing(), "INI config file (repeatable; later files override)")(
        "set", po::value<std::vector<std::string>>(&o.sets)->composing(), "override a parameter: key=value (repeatable)");
}

void add_run_options(po::options_description& d, CommonOptions& o) {
    add_config_options(d, o);
    d.add_options()("out", po::value<std::string>(&o.out), "output directory (trace.json, stats.h5, summary.json)")(
        "mode", po::value<std::string>(&o.mode)->default_value(o.mode), "functional (real data) | timing (no data; same cycles)")(
        "trace", po::value<std::string>(&o.trace)->default_value("auto"),
        "trace detail: auto (instr for the first --trace-budget events, then op and task) | off | op | task | instr | mem")(
        "trace-budget", po::value<uint64_t>(&o.trace_budget)->default_value(o.trace_budget),
        "events of instruction detail --trace auto keeps before it keeps only ops and tasks")(
        "summary-ops", po::value<uint64_t>(&o.summary_ops)->default_value(o.summary_ops),
        "summary.json lists every launch (ops, tasks) up to this many tasks; a longer run gets per-type totals "
        "(ops_by_type) instead")(
        "record", po::value<std::string>(&o.record), "write the run's runtime calls as a workload file (for sfumato replay)")(
        "record-level", po::value<std::string>(&o.record_level)->default_value("ops"),
        "ops | instructions (also every block's instruction stream, in FILE.instr.h5 beside it)")(
        "max-cycles", po::value<uint64_t>(&o.max_cycles)->default_value(0),
        "stop a run that has not finished after this many cycles (exit 4 with the state report; 0: no limit)");
}

namespace {
// Boost's error message substitutes option names and values into a template of %token%
// placeholders, replacing until none is left: an argument holding such a token ("--x%canonical_option%")
// made what() loop forever. Arguments with a '%' are re-parsed with '?' in its place for the message.
std::string option_error(const std::vector<std::string>& args, const po::options_description& d,
                         const po::positional_options_description* pos, const po::error& e) {
    if (std::none_of(args.begin(), args.end(), [](const std::string& a) { return a.find('%') != std::string::npos; }))
        return e.what();
    std::vector<std::string> shown = args;
    for (std::string& a : shown) std::replace(a.begin(), a.end(), '%', '?');
    try {
        po::command_line_parser p(shown);
        p.options(d);
        if (pos) p.positional(*pos);
        po::variables_map vm;
        po::store(p.run(), vm);
        po::notify(vm);
    } catch (const po::error& e2) {
        return std::string(e2.what()) + " ('%' shown as '?')";
    }
    return "bad arguments";
}
}  // namespace

bool parse_command(const std::vector<std::string>& args, const char* usage, po::options_description& d,
                   po::variables_map& vm, const po::positional_options_description* pos) {
    d.add_options()("help,h", "show this help");
    try {
        po::command_line_parser p(args);
        p.options(d);
        if (pos) p.positional(*pos);
        po::store(p.run(), vm);
        if (vm.count("help")) {
            std::cout << "usage: " << usage << "\n\n" << d << "\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        throw InputError(option_error(args, d, pos, e) + " (see --help)");
    }
    return true;
}

bool load_params_command(const std::vector<std::string>& args, const std::string& name, LoadedParams& out) {
    CommonOptions o;
    po::options_description d("sfumato " + name);
    add_config_options(d, o);
    po::variables_map vm;
    const std::string usage = "sfumato " + name + " [--config F] [--set key=value]";
    if (!parse_command(args, usage.c_str(), d, vm)) return false;
    load_config(out.config, o);
    out.chip = std::make_unique<ChipParams>(out.config);
    out.host = std::make_unique<rt::RuntimeParams>(ParamScope(out.config, "host"));
    out.config.check_unused();
    return true;
}

TraceLevel parse_trace_option(const std::string& s, bool& bounded) {
    bounded = s == "auto";
    TraceLevel l = TraceLevel::Instr;
    if (!bounded && !parse_trace_level(s, l)) throw InputError("--trace must be auto|off|op|task|instr|mem, not '" + s + "'");
    return l;
}

void attach_trace(const CommonOptions& o, TraceLevel level, bool bounded, TraceHub& hub, ChromeTraceWriter& writer) {
    if (level == TraceLevel::Off || o.out.empty()) return hub.attach(nullptr, TraceLevel::Off);
    hub.attach(&writer, level);
    if (bounded) writer.set_budget(std::max<uint64_t>(1, o.trace_budget), [&hub] { hub.coarsen(TraceLevel::Task); });
}

void report_trace_budget(const ChromeTraceWriter& writer) {
    if (!writer.budget_reached()) return;
    std::fprintf(stderr,
                 "trace: instruction detail for the first %zu events (up to %.3f us simulated), then ops and tasks only "
                 "(--trace instr keeps every instruction, --trace-budget N moves the limit)\n",
                 writer.budget(), static_cast<double>(writer.budget_tick().v) / 1e6);
}

void load_config(Config& c, const CommonOptions& o) {
    for (const auto& f : o.configs) c.load_ini(resolve_config_file(f));
    for (const auto& s : o.sets) c.apply_override(s);
}

Session::Session(const CommonOptions& o, std::string command_line) : m_opts(o), m_cmdline(std::move(command_line)) {
    if (o.mode != "functional" && o.mode != "timing") throw InputError("--mode must be functional or timing, not '" + o.mode + "'");
    m_functional = o.mode == "functional";
    m_level = parse_trace_option(o.trace, m_trace_bounded);
    if (o.record_level != "ops" && o.record_level != "instructions")
        throw InputError("--record-level must be ops or instructions, not '" + o.record_level + "'");
    load_config(m_config, o);
    m_chip_params = std::make_unique<ChipParams>(m_config);
    m_rt_params = std::make_unique<rt::RuntimeParams>(ParamScope(m_config, "host"));
}

void Session::elaborate() {
    m_config.check_unused();
    stop_if_validating(m_config);
    init_time_resolution();
    attach_trace(m_opts, m_level, m_trace_bounded, m_trace, m_writer);
    m_chip = std::make_unique<Chip>("chip", *m_chip_params, m_functional, m_trace, m_root);
}

void Session::run(std::function<void(rt::Runtime&)> program, std::function<void()> on_slice) {
    start(std::move(program));
    run_until([this] { return host_finished(); }, on_slice);
    finish();
}

void Session::start(std::function<void(rt::Runtime&)> program) {
    m_host = std::make_unique<HostThread>("host", [this, program] {
        m_runtime = std::make_unique<rt::Runtime>(*m_chip, *m_rt_params, m_trace, &m_root);
        if (!m_opts.record.empty())
            m_recorder = std::make_unique<workload::Recorder>(m_runtime->context(), m_opts.record_level == "instructions");
        program(*m_runtime);
    });
}

bool Session::host_finished() const { return m_host && m_host->finished(); }

void Session::run_until(const std::function<bool()>& done, const std::function<void()>& on_slice) {
    // Run in slices; a slice with no progress and nothing in flight while the host still
    // waits is a deadlock. Each slice runs in steps so that a stop request (SIGINT/SIGTERM) is
    // seen soon; splitting sc_start changes no event order, so no cycle count. A step stops early
    // when no event is left (starvation): that time is when the last process blocked. When a
    // timer keeps events coming without progress, the deadlock set in at the last progress.
    const sc_core::sc_time slice(1, sc_core::SC_MS);
    constexpr int kSteps = 16;
    const sc_core::sc_time step = slice / kSteps;
    const ClockDomain clk = m_chip_params->clock();
    // (A limit beyond 2^64 ps is no limit.)
    const uint64_t limit_tick =
        m_opts.max_cycles && clk.to_us(m_opts.max_cycles) * 1e6 < 1.8e19 ? clk.ticks(m_opts.max_cycles) : 0;
    while (!done()) {
        const uint64_t before = progress_counter();
        bool starved = false;
        const sc_core::sc_time end = sc_core::sc_time_stamp() + slice;
        while (!done() && !host_finished() && sc_core::sc_time_stamp() < end) {
            sc_core::sc_time t = std::min(step, end - sc_core::sc_time_stamp());
            if (limit_tick) {
                const uint64_t now = now_tick().v;
                if (now >= limit_tick) break;
                t = std::min(t, sc_core::sc_time(static_cast<double>(limit_tick - now), sc_core::SC_PS));
            }
            const sc_core::sc_time target = sc_core::sc_time_stamp() + t;
            // --max-cycles reports the state there: nothing runs ahead past it.
            if (limit_tick) run_horizon() = limit_tick;
            sc_core::sc_start(t, sc_core::SC_EXIT_ON_STARVATION);
            rethrow_failure();
            if (!sc_core::sc_pending_activity()) {
                starved = true;
                break;
            }
            if (sc_core::sc_time_stamp() < target) {
                // The next event lies beyond the step: time moves to the step's end without it.
                sc_core::sc_start(target - sc_core::sc_time_stamp());
                rethrow_failure();
            }
            poll_stop("at cycle " + std::to_string(clk.floor_cycle(now_tick()).v));
        }
        if (done() || host_finished()) break;
        if (limit_tick && now_tick().v >= limit_tick) {
            throw SimError(kExitDeadlock, "timeout: the run did not finish within --max-cycles " + std::to_string(m_opts.max_cycles) +
                                              " cycles\n" + m_chip->describe_state());
        }
        if (on_slice) on_slice();
        if (starved || (progress_counter() == before && work_in_flight() == 0)) {
            const Tick at = starved ? now_tick() : Tick(last_progress_tick());
            throw SimError(kExitDeadlock, "deadlock: nothing can make progress from cycle " +
                                              std::to_string(clk.ceil_cycle(at).v) + " (" +
                                              std::to_string(clk.to_us(clk.ceil_cycle(at).v)) + " us) on\n" +
                                              m_chip->describe_state());
        }
    }
}

void Session::finish() {
    m_total_cycles = m_chip_params->clock().ceil_cycle(now_tick()).v;
    if (m_chip) m_chip->energy().finish(now_tick().v);
    if (m_runtime) m_runtime->context().emit_task_trace();
    trace_power();
}

Roofline roofline(const KernelDesc& k, const DeviceInfo& d) {
    Roofline r;
    const double bytes = static_cast<double>(k.bytes);
    r.compute_cycles = k.min_compute_cycles;
    r.hbm_cycles = d.gm_bytes_per_cycle > 0 ? bytes / d.gm_bytes_per_cycle : 0.0;
    // The on-chip ceiling: L2 bandwidth, or every core port reading and writing at once.
    const double ports = d.aiv_per_aic ? d.cube_cores + d.vector_cores : d.cube_cores;
    const double onchip = std::min(d.mem_max_bytes_per_cycle,
                                   ports * (d.core_read_max_bytes_per_cycle + d.core_write_max_bytes_per_cycle));
    r.l2_cycles = onchip > 0 ? bytes / onchip : 0.0;
    r.compute_bound = r.compute_cycles >= r.hbm_cycles;
    r.cycles = std::max(r.compute_cycles, r.hbm_cycles);
    r.cycles_l2 = std::max(r.compute_cycles, r.l2_cycles);
    return r;
}

nlohmann::json Session::ops_json() const {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& t : m_runtime->tasks()) {
        if (t->kind != TaskKind::Kernel || !t->done) continue;
        ops.push_back(op_json(*t));
    }
    return ops;
}

nlohmann::json Session::op_json(const Task& task) const {
    const Task* t = &task;
    const DeviceInfo& d = m_chip->info();
    const double cyc = static_cast<double>(std::max<uint64_t>(1, t->cycles));
    const double c = t->cube_cores_used, v = t->vector_cores_used;
    auto util = [&](isa::Pipe p, double cores) { return cores > 0 ? static_cast<double>(t->pipe_busy[static_cast<int>(p)]) / (cyc * cores) : 0.0; };
    const double vec_cores = v > 0 ? v : c;
    nlohmann::json pu = {{"scalar", util(isa::Pipe::S, c + v)},   {"mte1", util(isa::Pipe::MTE1, c)},
                         {"mte2", util(isa::Pipe::MTE2, c + v)},  {"mte3", util(isa::Pipe::MTE3, vec_cores)},
                         {"cube", util(isa::Pipe::M, c)},         {"vector", util(isa::Pipe::V, vec_cores)},
                         {"fixpipe", util(isa::Pipe::FIX, c)}};
    const Roofline rl = roofline(t->kernel, d);
    // Dispatch to completion report, as the vendor profiler's Task Duration (the execution span
    // plus the scheduler's block dispatch and completion reports), between the same clock edges.
    const ClockDomain clk = m_chip_params->clock();
    const uint64_t task_cycles = clk.ceil_cycle(t->end_tick).v - clk.ceil_cycle(t->start_tick).v;
    nlohmann::json j = {{"name", t->kernel.name},
            {"type", t->kernel.type},
            {"stream", t->stream},
            {"block_dim", t->kernel.block_dim},
            {"cycles", t->cycles},
            {"time_us", clk.to_us(t->cycles)},
            {"task_duration", task_cycles},
            {"task_duration_us", clk.to_us(task_cycles)},
            {"startup_cycles", t->startup_cycles},
            {"flops", t->kernel.flops},
            {"bytes", t->kernel.bytes},
            {"pipe_util", pu},
            {"bound", rl.compute_bound ? "compute" : "memory"},
            {"roofline_cycles", rl.cycles},
            {"roofline_fraction", rl.cycles / cyc},
            {"roofline_cycles_l2", rl.cycles_l2},
            {"roofline_fraction_l2", rl.cycles_l2 / cyc}};
    add_op_energy(j, *t);
    // A memory-bound kernel faster than its HBM roof did not move all its compulsory bytes
    // through the HBM within its time: the write-back L2 kept output lines dirty past its end
    // (written back later), or inputs were still in L2. Say so beside the figure, which would
    // otherwise read as the HBM beaten.
    if (!rl.compute_bound && rl.cycles > cyc) {
        char note[320];
        std::snprintf(note, sizeof note,
                      "above 1: not every compulsory byte crossed the HBM within the kernel (the write-back L2, %.0f MiB, keeps "
                      "output lines dirty past its end, or inputs were still in L2); the bound no run beats is the L2 one, "
                      "roofline_fraction_l2 %.3f",
                      static_cast<double>(d.l2_bytes) / (1 << 20), rl.cycles_l2 / cyc);
        j["roofline_note"] = note;
    }
    return j;
}

nlohmann::json Session::tasks_json() const {
    nlohmann::json a = nlohmann::json::array();
    if (!m_runtime) return a;
    const ClockDomain clk = m_chip_params->clock();
    for (const rt::TaskRecord& r : m_runtime->context().tasks()) {
        const Task& t = *r.task;
        nlohmann::json j = {{"index", r.index},
                            {"kind", task_kind_name(t.kind)},
                            {"stream", r.stream},
                            {"name", r.name},
                            {"issue_cycle", clk.ceil_cycle(t.issue_tick).v},
                            {"start_cycle", t.done ? clk.ceil_cycle(t.start_tick).v : 0},
                            {"end_cycle", t.done ? clk.ceil_cycle(t.end_tick).v : 0}};
        if (t.kind == TaskKind::Kernel && t.done) {
            // The execution span: exec_end_cycle - exec_start_cycle is the op's `cycles`.
            j["exec_start_cycle"] = clk.ceil_cycle(t.exec_start_tick).v;
            j["exec_end_cycle"] = clk.ceil_cycle(t.exec_end_tick).v;
        }
        a.push_back(std::move(j));
    }
    return a;
}

nlohmann::json Session::device_json() const {
    // The chip's peaks, for rooflines drawn from summary.json alone (sfumato report).
    const DeviceInfo& d = m_chip->info();
    return {{"clock_ghz", d.clock.freq_ghz()},
            {"cube_cores", d.cube_cores},
            {"vector_cores", d.vector_cores},
            {"cube_fp16_flops_per_cycle", 2.0 * d.cube_macs_fp16 * d.cube_cores},
            {"vector_bytes_per_cycle", d.vector_bytes_per_cycle * d.vector_cores},
            {"gm_bytes_per_cycle", d.gm_bytes_per_cycle},
            {"mem_max_bytes_per_cycle", d.mem_max_bytes_per_cycle},
            {"l2_bytes", d.l2_bytes}};
}

nlohmann::json Session::base_summary() const {
    std::string cfg;
    for (const auto& f : m_config.sources()) cfg += (cfg.empty() ? "" : ",") + f;
    nlohmann::json inputs = nlohmann::json::object();
    for (const auto& [k, v] : m_inputs) {
        const size_t sp = v.rfind(' ');
        inputs[k] = {{"path", v.substr(0, sp)}, {"hash", v.substr(sp + 1)}};
    }
    const std::string rev = git_revision();
    nlohmann::json manifest = {{"version", version_string()},
                               {"git_revision", rev.empty() ? nlohmann::json(nullptr) : nlohmann::json(rev)},
                               {"command_line", m_cmdline},
                               {"config_hash", m_config.hash()},
                               {"inputs", inputs}};
    nlohmann::json s = {{"manifest", manifest},
            {"mode", m_opts.mode},
            {"config", cfg.empty() ? "defaults" : cfg},
            {"chip", m_chip_params->name.get()},
            {"mem_service", mem_service_name(*m_chip_params)},
            {"config_hash", m_config.hash()},
            {"total_cycles", m_total_cycles},
            {"total_time_us", m_chip_params->clock().to_us(m_total_cycles)},
            {"device", device_json()}};
    if (m_chip) s["energy"] = energy_json();
    const size_t tasks = m_runtime ? m_runtime->context().tasks().size() : 0;
    if (tasks <= m_opts.summary_ops) {
        s["ops"] = ops_json();
        s["tasks"] = tasks_json();
    } else {
        s["ops_by_type"] = ops_by_type_json();
        uint64_t launches = 0;
        for (const auto& t : s["ops_by_type"]) launches += t["count"].get<uint64_t>();
        s["ops_omitted"] = {{"launches", launches},
                            {"tasks", tasks},
                            {"limit", m_opts.summary_ops},
                            {"why", "more tasks than --summary-ops: per-launch lists (ops, tasks) left out, "
                                    "ops_by_type sums the launches per operator type"}};
    }
    return s;
}

// Energy (models/power): the run's breakdown from the chip's counted events, and each kernel's.
nlohmann::json Session::energy_json() const {
    const double seconds = m_chip_params->clock().to_us(m_total_cycles) * 1e-6;
    return power::run_energy_json(m_chip->energy(), m_chip->energy().run_events(static_cast<double>(m_total_cycles)), seconds);
}

void Session::add_op_energy(nlohmann::json& j, const Task& t) const {
    const double seconds = m_chip_params->clock().to_us(t.cycles) * 1e-6;
    const power::KernelEnergy e = power::kernel_energy(m_chip->energy(), t, seconds);
    j["energy_j"] = e.total();
    j["dynamic_energy_j"] = e.dynamic_j;
    j["power_w"] = seconds > 0 ? e.total() / seconds : 0.0;
    nlohmann::json events = nlohmann::json::object();
    for (size_t i = 0; i < power::kNumEvents; ++i)
        if (e.events.n[i] != 0) events[power::event_name(static_cast<power::Event>(i))] = e.events.n[i];
    j["energy_events"] = events;
}

void Session::trace_power() {
    if (!m_trace.on(TraceLevel::Task) || !m_chip) return;
    const power::PowerSeries ps = power::power_series(m_chip->energy(), m_chip_params->clock().to_us(m_total_cycles) * 1e-6);
    const TrackId track = m_trace.sink()->counter_track("power", "chip power W");
    double last = -1;
    for (size_t i = 0; i < ps.watts.size(); ++i) {
        if (ps.watts[i] == last) continue;  // a counter holds its value: only changes are written
        last = ps.watts[i];
        m_trace.sink()->counter(track, Tick(static_cast<uint64_t>(std::llround(static_cast<double>(i) * ps.bin_s * 1e12))), last);
    }
}

nlohmann::json Session::ops_by_type_json() const {
    struct Sum {
        uint64_t count = 0, cycles = 0;
        double flops = 0, bytes = 0;
    };
    std::map<std::string, Sum> by;
    if (m_runtime)
        for (const rt::TaskRecord& r : m_runtime->context().tasks()) {
            const Task& t = *r.task;
            if (t.kind != TaskKind::Kernel || !t.done) continue;
            Sum& x = by[t.kernel.type];
            ++x.count, x.cycles += t.cycles, x.flops += t.kernel.flops, x.bytes += static_cast<double>(t.kernel.bytes);
        }
    const ClockDomain clk = m_chip_params->clock();
    nlohmann::json a = nlohmann::json::array();
    for (const auto& [type, x] : by)
        a.push_back({{"type", type},
                     {"count", x.count},
                     {"cycles", x.cycles},
                     {"time_us", clk.to_us(x.cycles)},
                     {"flops", x.flops},
                     {"bytes", x.bytes}});
    return a;
}

std::string Session::instr_csv() const {
    // The vendor simulator's per-instruction table: instruction, pipe, call count, cycles.
    std::string s = "instruction,pipe,count,cycles,avg_cycles\n";
    const auto& e = m_chip->instr_stats().entries();
    for (size_t i = 0; i < e.size(); ++i) {
        const uint64_t n = e[i].count->value();
        if (n == 0) continue;
        const uint64_t c = e[i].cycles->value();
        char avg[32];
        std::snprintf(avg, sizeof avg, "%.2f", static_cast<double>(c) / static_cast<double>(n));
        s += std::string(isa::opcode_name(static_cast<isa::Opcode>(i))) + "," + isa::pipe_name(e[i].pipe) + "," +
             std::to_string(n) + "," + std::to_string(c) + "," + avg + "\n";
    }
    return s;
}

void Session::write_outputs(const nlohmann::json& summary) {
    poll_stop("before writing outputs");
    write_recording();
    if (m_opts.out.empty()) return;
    // All four files or none: staged, then moved in together.
    StagedOutputs out(m_opts.out);
    m_writer.write(out.path("trace.json"));
    report_trace_budget(m_writer);
    write_stats_h5(out.path("stats.h5"), m_root, m_config.effective(),
                   {version_string(), m_cmdline, m_config.hash(), m_opts.mode, git_revision(), m_inputs}, m_tables);
    // Names from inputs (ONNX, workloads) may hold invalid UTF-8: replaced, never a throw.
    write_text_atomically(out.path("summary.json"),
                          summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    write_text_atomically(out.path("instr.csv"), instr_csv());
    poll_stop("while writing outputs");
    out.commit();
}

void Session::write_recording() const {
    if (!m_recorder) return;
    m_recorder->write(m_opts.record, chip_description());
}

nlohmann::json Session::chip_description() const {
    const DeviceInfo& d = m_chip->info();
    return {{"chip", m_chip_params->name.get()}, {"config_hash", m_config.hash()}, {"arch", d.arch},
            {"cube_cores", d.cube_cores},        {"vector_cores", d.vector_cores}, {"aiv_per_aic", d.aiv_per_aic}};
}

}  // namespace sfumato::cli
