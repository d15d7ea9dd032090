// The simulated chip behind the Ascend C host API (libsfumato_ascendc): a program with its own
// main() calls GmAlloc, ICPU_RUN_KF or aclrt* and this builds a Session on first use, from the
// environment since the program knows nothing of sfumato:
//   SFUMATO_CONFIG  chip config file(s) or preset names, comma-separated (default: the preset of
//                   the architecture the program was built for, ascend910b-like for dav-2201)
//   SFUMATO_SET     parameter overrides "key=value", separated by ';' or blanks
//   SFUMATO_MODE    functional (default) | timing
//   SFUMATO_OUT     output directory (default ./sfumato_out): trace.json, stats.h5, summary.json,
//                   instr.csv, written when the program exits
//   SFUMATO_TRACE   off | op | task | instr (default) | mem
//   SFUMATO_CHECK_RACES=1  race detection (exit 3 on a race)
//   SFUMATO_QUIET=1 no per-kernel lines on stderr at exit
// The host thread serves one request at a time: run() posts it, simulates until the thread
// pauses after it, and returns; simulated time stands still in between. At exit the host
// program ends, the outputs are written and one line per kernel goes to stderr. An error ends
// the program with the sfumato command's message and exit code, and no outputs.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <systemc>

#include "cli/installation.h"
#include "cli/session.h"
#include "runtime/ascendc/host_backend.h"
#include "sim/error.h"
#include "sim/run_horizon.h"

namespace sfumato::cli {

namespace {

std::string env(const char* name, const char* def = "") {
    const char* v = std::getenv(name);
    return v && *v ? v : def;
}

std::vector<std::string> split(const std::string& s, const char* seps) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (std::strchr(seps, c)) {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

// A file, or a preset name found beside the installed library (cli/session.h).
std::string resolve_config(const std::string& name) {
    try {
        return resolve_config_file(name);
    } catch (const InputError& e) {
        throw InputError(std::string("SFUMATO_CONFIG: ") + e.what());
    }
}

std::string command_line() {
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::string s, arg;
    while (std::getline(f, arg, '\0')) s += (s.empty() ? "" : " ") + arg;
    return s.empty() ? "ascendc program" : s;
}

class EmbeddedSim final : public ascendc::IHostBackend {
public:
    explicit EmbeddedSim(int npu_arch) {
        CommonOptions o;
        const std::string cfg = env("SFUMATO_CONFIG");
        if (cfg.empty()) o.configs.push_back(resolve_config(npu_arch == 1001 ? "ascend910-like" : "ascend910b-like"));
        for (const auto& c : split(cfg, ",")) o.configs.push_back(resolve_config(c));
        o.sets = split(env("SFUMATO_SET"), "; \t\n");
        if (env("SFUMATO_CHECK_RACES") == "1") o.sets.push_back("chip.aicore.check_races=true");
        o.mode = env("SFUMATO_MODE", "functional");
        o.trace = env("SFUMATO_TRACE", "auto");
        o.out = env("SFUMATO_OUT", "sfumato_out");
        m_out = o.out;
        m_session = std::make_unique<Session>(o, command_line());
        m_session->elaborate();
        m_session->start([this](rt::Runtime& rt) { serve(rt); });
    }

    void run(const std::function<void(rt::Runtime&)>& fn) override {
        if (m_request) throw InputError("a runtime call was made while another one is in progress");
        m_request = &fn;
        m_request_done = false;
        m_wake.notify(sc_core::SC_ZERO_TIME);
        m_session->run_until([this] { return m_request_done; });
        if (!m_request_done) throw SimError(kExitFailure, "the simulated host program ended early");
    }
    const DeviceInfo& info() const override { return m_session->chip().info(); }
    IBackingStore* gm() override { return m_session->chip().gm(); }

    // Ends the program at once: other blocks may be suspended mid-kernel on their coroutine stacks,
    // which no exit can unwind, so no destructor or exit handler runs (the outputs are not
    // written, as for any failed run); the streams are flushed first.
    [[noreturn]] void fatal(const SimError& e) override {
        m_failed = true;
        std::fflush(stdout);
        std::fprintf(stderr, "sfumato: error: %s\n", e.what());
        std::fflush(stderr);
        std::_Exit(e.code());
    }

    // At exit: end the host program, write the outputs, report each kernel.
    void finish() {
        if (m_failed) return;
        try {
            const std::function<void(rt::Runtime&)> quit = [this](rt::Runtime&) { m_quit = true; };
            run(quit);
            m_session->run_until([this] { return m_session->host_finished(); });
            m_session->finish();
            nlohmann::json summary = m_session->base_summary();
            m_session->write_outputs(summary);
            if (env("SFUMATO_QUIET") != "1") report(summary);
        } catch (const SimError& e) {
            std::fflush(stdout);
            std::fprintf(stderr, "sfumato: error: %s\n", e.what());
            std::fflush(stderr);
            std::_Exit(e.code());
        }
    }

private:
    void serve(rt::Runtime& rt) {
        while (true) {
            while (!m_request) sc_core::wait(m_wake);
            run_horizon() = ~uint64_t(0);
            const std::function<void(rt::Runtime&)>* f = m_request;
            (*f)(rt);
            m_request = nullptr;
            m_request_done = true;
            if (m_quit) return;
            // The program outside acts at this time before the next step: nothing runs ahead of
            // it (sim/run_horizon.h).
            run_horizon() = sc_core::sc_time_stamp().value();
            sc_core::sc_pause();
        }
    }

    void report(const nlohmann::json& summary) const {
        std::fflush(stdout);
        for (const auto& op : summary["ops"])
            std::fprintf(stderr, "sfumato: kernel %s: %llu cycles, %.3f us (block_dim %u)\n",
                         op["name"].get<std::string>().c_str(),
                         static_cast<unsigned long long>(op["cycles"].get<uint64_t>()), op["time_us"].get<double>(),
                         op["block_dim"].get<uint32_t>());
        std::fprintf(stderr, "sfumato: %s, %s mode: total %llu cycles, %.3f us; outputs in %s/\n",
                     summary["chip"].get<std::string>().c_str(), summary["mode"].get<std::string>().c_str(),
                     static_cast<unsigned long long>(summary["total_cycles"].get<uint64_t>()),
                     summary["total_time_us"].get<double>(), m_out.c_str());
    }

    std::unique_ptr<Session> m_session;
    sc_core::sc_event m_wake{"ascendc_host_wake"};
    const std::function<void(rt::Runtime&)>* m_request = nullptr;
    bool m_request_done = false;
    bool m_quit = false;
    bool m_failed = false;
    std::string m_out;
};

EmbeddedSim* g_sim = nullptr;

void at_exit() {
    if (g_sim) g_sim->finish();
}

ascendc::IHostBackend& make_embedded(int npu_arch) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    try {
        g_sim = new EmbeddedSim(npu_arch);
    } catch (const SimError& e) {
        std::fprintf(stderr, "sfumato: error: %s\n", e.what());
        std::exit(e.code());
    }
    std::atexit(at_exit);
    return *g_sim;
}

[[maybe_unused]] const bool g_registered = (ascendc::set_backend_factory(&make_embedded), true);

}  // namespace

}  // namespace sfumato::cli
