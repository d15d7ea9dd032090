#include "cli/system_session.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/interrupt.h"

#include "cli/installation.h"
#include "runtime/serve/serve_run.h"
#include "sim/config_files.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "traces/atomic_file.h"
#include "traces/hdf5_stats.h"

namespace sfumato::cli {

void add_system_option(po::options_description& d, std::string& system_file) {
    d.add_options()("system", po::value<std::string>(&system_file),
                    "system config (INI: system.* keys; system.chip names the chip preset)");
}

void load_system_config(Config& c, const std::string& system_file, const CommonOptions& o) {
    sfumato::load_system_config(c, system_file, o.configs, o.sets, preset_dir());
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
    m_run = std::make_unique<sys::SystemRun>(*m_system, *m_rt_params, &m_trace, m_root);
    m_run->set_stop_check([](const std::string& when) { throw_if_interrupted(when); });
}

nlohmann::json SystemSession::base_summary() const {
    std::string cfg;
    for (const auto& f : m_config.sources()) cfg += (cfg.empty() ? "" : ",") + f;
    return {{"mode", m_opts.mode},
            {"config", cfg.empty() ? "defaults" : cfg},
            {"system", m_sys_params->name.get()},
            {"chip", m_chip_params->name.get()},
            {"chips", m_system->size()},
            {"mem_service", mem_service_name(*m_chip_params)},
            {"config_hash", m_config.hash()},
            {"total_cycles", m_run->total_cycles()},
            {"total_time_us", static_cast<double>(m_run->time_ps()) / 1e6},
            {"energy", energy_json()}};
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

void SystemSession::write_outputs(const nlohmann::json& summary) {
    if (m_opts.out.empty()) return;
    // Split over ranks, each writes its chips' trace and stats; rank 0 into DIR with the summary,
    // rank k into DIR/rankK.
    const std::string dir = leader() ? m_opts.out : m_opts.out + "/rank" + std::to_string(m_run->sync()->rank());
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
