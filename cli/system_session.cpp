#include "cli/system_session.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/interrupt.h"

#include "cli/installation.h"
#include "models/power/energy_report.h"
#include "runtime/serve/serve_run.h"
#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"
#include "traces/atomic_file.h"
#include "traces/hdf5_stats.h"

namespace sfumato::cli {

void add_system_option(po::options_description& d, std::string& system_file) {
    d.add_options()("system", po::value<std::string>(&system_file),
                    "system config (INI: system.* keys; system.chip names the chip preset)");
}

void load_system_config(Config& c, const std::string& given_system_file, const CommonOptions& o) {
    // The chip preset: system.chip of the system file (relative to it), unless --set overrides it
    // (relative to the working directory). Loaded first, so the system file and overrides win.
    // Either may also name a preset (cli/session.h resolve_config_file).
    std::string chip;
    std::filesystem::path base;
    std::string system_file = given_system_file;
    if (!system_file.empty()) {
        try {
            system_file = resolve_config_file(system_file);
        } catch (const InputError&) {
            throw InputError("system config '" + system_file + "' does not exist (nor a preset in " + preset_dir() + ")");
        }
        Config peek;
        peek.load_ini(system_file);
        if (auto v = peek.consume("system.chip"); v && !v->empty()) chip = *v;
        base = std::filesystem::path(system_file).parent_path();
    }
    const std::string key = "system.chip=";
    for (const auto& s : o.sets) {
        if (s.rfind(key, 0) == 0) {
            chip = s.substr(key.size());
            base.clear();
        }
    }
    if (!chip.empty()) {
        std::filesystem::path p(chip);
        if (p.is_relative() && !base.empty()) p = base / p;
        try {
            p = resolve_config_file(p.string());
        } catch (const InputError&) {
            throw ConfigError("system.chip", "chip preset '" + p.string() + "' does not exist (nor a preset in " + preset_dir() + ")");
        }
        c.load_ini(p.string());
    }
    if (!system_file.empty()) c.load_ini(system_file);
    load_config(c, o);
}

bool load_system_params_command(const std::vector<std::string>& args, const std::string& name, LoadedSystemParams& out) {
    CommonOptions o;
    std::string system_file;
    po::options_description d("sfumato " + name);
    add_config_options(d, o);
    add_system_option(d, system_file);
    po::variables_map vm;
    const std::string usage = "sfumato " + name + " [--config F] [--system F] [--set key=value]";
    if (!parse_command(args, usage.c_str(), d, vm)) return false;
    load_system_config(out.base.config, system_file, o);
    out.given = !system_file.empty();
    out.base.chip = std::make_unique<ChipParams>(out.base.config);
    out.base.host = std::make_unique<rt::RuntimeParams>(ParamScope(out.base.config, "host"));
    out.system = std::make_unique<SystemParams>(out.base.config);
    out.comm = std::make_unique<comm::CommParams>(ParamScope(out.base.config, "comm"));
    // `sfumato serve`'s scheduler knobs (declared, so listed and settable).
    const serve::ServeParams serve_params(ParamScope(out.base.config, "serve"));
    out.base.config.check_unused();
    return true;
}

SystemSession::SystemSession(const CommonOptions& o, const std::string& system_file, std::string command_line)
    : m_opts(o), m_system_file(system_file), m_cmdline(std::move(command_line)) {
    if (o.mode != "functional" && o.mode != "timing") throw InputError("--mode must be functional or timing, not '" + o.mode + "'");
    m_functional = o.mode == "functional";
    m_level = parse_trace_option(o.trace, m_trace_bounded);
    load_system_config(m_config, system_file, o);
    m_sys_params = std::make_unique<SystemParams>(m_config);
    m_chip_params = std::make_unique<ChipParams>(m_config);
    m_rt_params = std::make_unique<rt::RuntimeParams>(ParamScope(m_config, "host"));
    m_comm_params = std::make_unique<comm::CommParams>(ParamScope(m_config, "comm"));
}

SystemSession::~SystemSession() = default;

void SystemSession::elaborate() {
    m_config.check_unused();
    init_time_resolution();
    attach_trace(m_opts, m_level, m_trace_bounded, m_trace, m_writer);
    m_system = std::make_unique<System>("system", *m_sys_params, *m_chip_params, m_functional, m_trace, m_root);
    for (uint32_t i = 0; i < m_system->size(); ++i) {
        m_host_stats.push_back(std::make_unique<StatGroup>(&m_root, "host" + std::to_string(i)));
        m_devices.push_back(std::make_unique<rt::Device>(m_system->chip(i), *m_rt_params, &m_trace, m_host_stats.back().get()));
        m_devices.back()->set_trace_name("chip" + std::to_string(i));
    }
}

void SystemSession::run(const std::vector<uint32_t>& chips,
                        const std::function<void(uint32_t i, rt::Context& ctx)>& program) {
    // The last host program to return ends the simulation (the time of the run is then the
    // time the work took, not the end of a slice). Split over ranks, it notes the time instead
    // (the other ranks may still need this one's chips) and the run ends at the latest over all.
    auto left = std::make_shared<size_t>(chips.size());
    const bool split = m_sync != nullptr;
    for (uint32_t i = 0; i < chips.size(); ++i) {
        rt::Device& dev = device(chips[i]);
        // Several host programs on one chip (serving instances) each get a name of their own.
        const bool repeated = std::count(chips.begin(), chips.begin() + i, chips[i]) > 0;
        const std::string name = "host" + std::to_string(chips[i]) + (repeated ? "_" + std::to_string(i) : "");
        m_hosts.push_back(std::make_unique<HostThread>(
            name.c_str(),
            [this, &dev, &program, i, left, split] {
                program(i, dev.open_context());
                if (--*left > 0) return;
                if (split) m_end_tick = now_tick().v;
                else sc_core::sc_stop();
            },
            false));
    }
    auto all_done = [&] {
        for (const auto& h : m_hosts)
            if (!h->finished()) return false;
        return true;
    };
    if (split) run_windows(all_done);
    else run_slices(all_done);
    m_total_cycles = m_chip_params->clock().ceil_cycle(Tick(m_end_tick)).v;
    for (uint32_t i = 0; i < m_system->size(); ++i) m_system->chip(i).energy().finish(m_end_tick);
    for (const auto& d : m_devices)
        for (const auto& c : d->contexts()) c->emit_task_trace();
}

void SystemSession::run_slices(const std::function<bool()>& all_done) {
    // Each slice runs in steps so that a stop request (SIGINT/SIGTERM) is seen soon: a simulated
    // millisecond of eight chips can take minutes of CPU. Splitting sc_start changes no event
    // order, so no cycle count.
    const sc_core::sc_time slice(1, sc_core::SC_MS);
    constexpr int kSteps = 16;
    const sc_core::sc_time step = slice / kSteps;
    const ClockDomain clk = m_chip_params->clock();
    while (!all_done()) {
        const uint64_t before = progress_counter();
        // (The hosts' end calls sc_stop: no step after it.)
        for (int i = 0; i < kSteps && !all_done() && sc_core::sc_get_status() != sc_core::SC_STOPPED; ++i) {
            sc_core::sc_start(step);
            rethrow_failure();
            throw_if_interrupted("at cycle " + std::to_string(clk.floor_cycle(now_tick()).v));
        }
        if (all_done()) break;
        if (!sc_core::sc_pending_activity() || (progress_counter() == before && work_in_flight() == 0)) {
            std::string waiting;
            for (const auto& h : m_hosts)
                if (!h->finished()) waiting += std::string(" ") + h->basename();
            throw SimError(kExitDeadlock, "deadlock: nothing can make progress at cycle " +
                                              std::to_string(clk.floor_cycle(now_tick()).v) + " (host programs waiting:" +
                                              waiting + ")\n" + m_system->describe_state());
        }
    }
    m_end_tick = now_tick().v;
}

void SystemSession::distribute(IRankTransport& t) {
    const uint32_t chips = m_system->size();
    if (t.size() > chips)
        throw InputError(std::to_string(t.size()) + " ranks for a system of " + std::to_string(chips) + " chips (" +
                         m_sys_params->name.get() + "): at most one rank per chip");
    // At most a millisecond (a system without links would have none to bound it).
    const uint64_t lookahead = std::min<uint64_t>(Fabric::lookahead_ps(m_system->fabric().topology()), 1000000000);
    if (lookahead < 2)
        throw ConfigError("system.link.latency_ns", "a system split over ranks needs a latency on every link (the "
                                                    "windows' lookahead); the smallest is " + std::to_string(lookahead) + " ps");
    m_sync = std::make_unique<WindowSync>(t, block_partition(chips, t.size()), lookahead);
    m_system->fabric().distribute(*m_sync);
    for (uint32_t i = 0; i < chips; ++i) m_devices[i]->set_remote(!m_sync->local(i));
}

// Window by window over all ranks (sim/window_sync.h) until every rank's host programs are done.
// A deadlock: nothing pending on any rank, or a simulated millisecond without progress on any
// rank while nothing is in flight (a periodic timer, such as HBM refresh, keeps the kernels busy).
void SystemSession::run_windows(const std::function<bool()>& all_done) {
    const ClockDomain clk = m_chip_params->clock();
    IRankTransport& t = m_sync->transport();
    constexpr uint64_t kSlicePs = 1000000000;  // 1 ms
    m_sync->start();
    uint64_t slice_end = now_tick().v + kSlicePs, before = progress_counter();
    for (;;) {
        const WindowSync::Step st = m_sync->step(all_done(), has_failure());
        if (st == WindowSync::Step::AllDone) break;
        if (st == WindowSync::Step::Failed) {
            rethrow_failure();
            throw SimError(kExitFailure, "another rank of the split run failed (its message says why)");
        }
        bool stuck = st == WindowSync::Step::Stalled;
        if (!stuck && now_tick().v >= slice_end) {  // every rank passes the same slice ends
            std::vector<uint64_t> v = {progress_counter() - before, static_cast<uint64_t>(std::max<int64_t>(0, work_in_flight()))};
            t.all_sum(v);
            stuck = v[0] == 0 && v[1] == 0;
            slice_end = now_tick().v + kSlicePs;
            before = progress_counter();
        }
        if (stuck) {
            std::string waiting;
            for (const auto& h : m_hosts)
                if (!h->finished()) waiting += std::string(" ") + h->basename();
            throw SimError(kExitDeadlock, "deadlock: nothing can make progress on any rank at cycle " +
                                              std::to_string(clk.floor_cycle(now_tick()).v) + " (host programs waiting here:" +
                                              (waiting.empty() ? std::string(" none") : waiting) + ")\n" +
                                              m_system->describe_state());
        }
        throw_if_interrupted("at cycle " + std::to_string(clk.floor_cycle(now_tick()).v));
    }
    // The run ends when the last host program over all ranks returned.
    std::vector<uint64_t> end = {~m_end_tick};
    t.all_min(end);
    m_end_tick = ~end[0];
}

nlohmann::json SystemSession::links_json(uint64_t t0, uint64_t t1) const {
    nlohmann::json a = nlohmann::json::array();
    const Fabric& f = m_system->fabric();
    const double span = t1 > t0 ? static_cast<double>(t1 - t0) : 1.0;
    const size_t n = f.topology().channels.size();
    // Split over ranks, a channel counts on its sending chip's rank only: the sums are the totals.
    std::vector<uint64_t> v;
    for (size_t i = 0; i < n; ++i) {
        const Fabric::ChannelCounters k = f.counters(i);
        v.insert(v.end(), {k.payload_bytes, k.wire_bytes, k.busy_ps});
    }
    if (m_sync) m_sync->transport().all_sum(v);
    for (size_t i = 0; i < n; ++i) {
        const ChannelSpec& c = f.topology().channels[i];
        Fabric::ChannelCounters k;
        k.payload_bytes = v[3 * i];
        k.wire_bytes = v[3 * i + 1];
        k.busy_ps = v[3 * i + 2];
        a.push_back({{"link", c.name},
                     {"gbps", c.gbps},
                     {"bytes", k.payload_bytes},
                     {"wire_bytes", k.wire_bytes},
                     {"busy_us", static_cast<double>(k.busy_ps) / 1e6},
                     {"utilisation", static_cast<double>(k.busy_ps) / span}});
    }
    return a;
}

nlohmann::json SystemSession::base_summary() const {
    std::string cfg;
    for (const auto& f : m_config.sources()) cfg += (cfg.empty() ? "" : ",") + f;
    return {{"mode", m_opts.mode},
            {"config", cfg.empty() ? "defaults" : cfg},
            {"system", m_sys_params->name.get()},
            {"chip", m_chip_params->name.get()},
            {"chips", m_system->size()},
            {"config_hash", m_config.hash()},
            {"total_cycles", m_total_cycles},
            {"total_time_us", static_cast<double>(m_sync ? m_end_tick : now_tick().v) / 1e6},
            {"energy", energy_json()}};
}

nlohmann::json SystemSession::split_json() {
    if (!m_sync) return nullptr;
    std::vector<uint64_t> msgs = {m_sync->messages()};
    m_sync->transport().all_sum(msgs);
    return {{"ranks", m_sync->ranks()},
            {"lookahead_ps", m_sync->lookahead_ps()},
            {"windows", m_sync->windows()},
            {"messages", msgs[0]}};
}

std::string SystemSession::split_line(const nlohmann::json& split) const {
    if (split.is_null()) return "";
    const uint32_t ranks = split["ranks"].get<uint32_t>();
    char line[200];
    std::snprintf(line, sizeof line, "  split over %u rank%s: %llu windows of %.3f ns, %llu messages between chips\n",
                  ranks, ranks == 1 ? "" : "s", static_cast<unsigned long long>(split["windows"].get<uint64_t>()),
                  static_cast<double>(split["lookahead_ps"].get<uint64_t>()) / 1e3,
                  static_cast<unsigned long long>(split["messages"].get<uint64_t>()));
    return line;
}

// The chips this process simulated (all of them unless split over ranks), and the links they drive.
nlohmann::json SystemSession::energy_json() const {
    std::vector<const power::EnergyAttributor*> chips;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < m_system->size(); ++i)
        if (local(i)) chips.push_back(&m_system->chip(i).energy()), ids.push_back(i);
    const double seconds = static_cast<double>(m_sync ? m_end_tick : now_tick().v) * 1e-12;
    const Fabric& f = m_system->fabric();
    std::vector<uint64_t> wire(f.topology().channels.size());
    for (size_t c = 0; c < wire.size(); ++c) wire[c] = f.counters(c).wire_bytes;
    const power::LinkEnergy links = power::link_energy(m_sys_params->power, f.topology(), wire,
                                                       [this](uint32_t chip) { return local(chip); }, seconds);
    return power::system_energy_json(chips, ids, &links, static_cast<double>(m_total_cycles), seconds);
}

void SystemSession::write_outputs(const nlohmann::json& summary) {
    if (m_opts.out.empty()) return;
    // Split over ranks, each writes its chips' trace and stats; rank 0 into DIR with the summary,
    // rank k into DIR/rankK.
    const std::string dir = leader() ? m_opts.out : m_opts.out + "/rank" + std::to_string(m_sync->rank());
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw SimError(kExitFailure, "cannot create output directory '" + dir + "': " + ec.message());
    m_writer.write(dir + "/trace.json");
    report_trace_budget(m_writer);
    write_stats_h5(dir + "/stats.h5", m_root, m_config.effective(),
                   {version_string(), m_cmdline, m_config.hash(), m_opts.mode, git_revision(), {}});
    if (!leader()) return;
    write_text_atomically(dir + "/summary.json", summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace sfumato::cli
