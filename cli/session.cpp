#include "cli/session.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"
#include "traces/atomic_file.h"
#include "traces/hdf5_stats.h"
#include "traces/workload_record.h"

namespace sfumato::cli {

std::string version_string() { return "sfumato 0.1.0"; }

std::string git_revision() {
#ifdef SFUMATO_SOURCE_DIR
    static const std::string rev = [] {
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
#else
    return "";
#endif
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
        "mode", po::value<std::string>(&o.mode)->default_value("functional"), "functional (real data) | timing (no data; same cycles)")(
        "trace", po::value<std::string>(&o.trace)->default_value("instr"), "trace detail: off | op | task | instr | mem")(
        "record", po::value<std::string>(&o.record), "write the run's runtime calls as a workload file (for sfumato replay)")(
        "record-level", po::value<std::string>(&o.record_level)->default_value("ops"),
        "ops | instructions (also every block's instruction stream, in FILE.instr.h5 beside it)");
}

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
        throw InputError(std::string(e.what()) + " (see --help)");
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

void load_config(Config& c, const CommonOptions& o) {
    for (const auto& f : o.configs) c.load_ini(f);
    for (const auto& s : o.sets) c.apply_override(s);
}

Session::Session(const CommonOptions& o, std::string command_line) : m_opts(o), m_cmdline(std::move(command_line)) {
    if (o.mode != "functional" && o.mode != "timing") throw InputError("--mode must be functional or timing, not '" + o.mode + "'");
    m_functional = o.mode == "functional";
    if (!parse_trace_level(o.trace, m_level)) throw InputError("--trace must be off|op|task|instr|mem, not '" + o.trace + "'");
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
    m_trace.attach(m_level == TraceLevel::Off ? nullptr : &m_writer, m_level);
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
    // waits is a deadlock.
    const sc_core::sc_time slice(1, sc_core::SC_MS);
    while (!done()) {
        const uint64_t before = progress_counter();
        sc_core::sc_start(slice);
        rethrow_failure();
        if (done() || host_finished()) break;
        if (on_slice) on_slice();
        if (!sc_core::sc_pending_activity() || (progress_counter() == before && work_in_flight() == 0)) {
            const ClockDomain clk = m_chip_params->clock();
            throw SimError(kExitDeadlock, "deadlock: nothing can make progress at cycle " +
                                              std::to_string(clk.floor_cycle(now_tick()).v) + "\n" + m_chip->describe_state());
        }
    }
}

void Session::finish() {
    m_total_cycles = m_chip_params->clock().ceil_cycle(now_tick()).v;
    if (m_runtime) m_runtime->context().emit_task_trace();
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
    const double ports = std::max(1.0, c + v);
    // A bound no run can beat: every byte over the fastest path (L2 hits included), reads
    // and writes through their own per-core ports.
    const double mem_bw = std::min(d.mem_max_bytes_per_cycle,
                                   ports * (d.core_read_max_bytes_per_cycle + d.core_write_max_bytes_per_cycle));
    const double beyond_l2 = t->kernel.bytes > d.l2_bytes ? static_cast<double>(t->kernel.bytes - d.l2_bytes) : 0.0;
    const double mem_lb = std::max(static_cast<double>(t->kernel.bytes) / mem_bw, beyond_l2 / d.gm_bytes_per_cycle);
    const double lb = std::max(mem_lb, t->kernel.min_compute_cycles);
    return {{"name", t->kernel.name},
            {"type", t->kernel.type},
            {"stream", t->stream},
            {"block_dim", t->kernel.block_dim},
            {"cycles", t->cycles},
            {"time_us", static_cast<double>(t->end_tick.v - t->start_tick.v) / 1e6},
            {"flops", t->kernel.flops},
            {"bytes", t->kernel.bytes},
            {"pipe_util", pu},
            {"bound", t->kernel.min_compute_cycles >= mem_lb ? "compute" : "memory"},
            {"roofline_cycles", lb},
            {"roofline_fraction", lb / cyc}};
}

nlohmann::json Session::tasks_json() const {
    nlohmann::json a = nlohmann::json::array();
    if (!m_runtime) return a;
    const ClockDomain clk = m_chip_params->clock();
    for (const rt::TaskRecord& r : m_runtime->context().tasks()) {
        const Task& t = *r.task;
        a.push_back({{"index", r.index},
                     {"kind", task_kind_name(t.kind)},
                     {"stream", r.stream},
                     {"name", r.name},
                     {"issue_cycle", clk.floor_cycle(t.issue_tick).v},
                     {"start_cycle", t.done ? clk.floor_cycle(t.start_tick).v : 0},
                     {"end_cycle", t.done ? clk.floor_cycle(t.end_tick).v : 0}});
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
    return {{"manifest", manifest},
            {"mode", m_opts.mode},
            {"config", cfg.empty() ? "defaults" : cfg},
            {"chip", m_chip_params->name.get()},
            {"config_hash", m_config.hash()},
            {"total_cycles", m_total_cycles},
            {"total_time_us", static_cast<double>(now_tick().v) / 1e6},
            {"ops", ops_json()},
            {"tasks", tasks_json()},
            {"device", device_json()}};
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
    write_recording();
    if (m_opts.out.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(m_opts.out, ec);
    if (ec) throw SimError(kExitFailure, "cannot create output directory '" + m_opts.out + "': " + ec.message());
    m_writer.write(m_opts.out + "/trace.json");
    write_stats_h5(m_opts.out + "/stats.h5", m_root, m_config.effective(),
                   {version_string(), m_cmdline, m_config.hash(), m_opts.mode, git_revision(), m_inputs}, m_tables);
    write_text_atomically(m_opts.out + "/summary.json", summary.dump(2) + "\n");
    write_text_atomically(m_opts.out + "/instr.csv", instr_csv());
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
