// A run of host programs on a system of chips, as a library (the host side of `sfumato
// collective`, `replay --system`, `train-step`, `llm --tp/--pp/--ep` and `serve` on a system; a
// user's C++ program calls it the same way): over a system the caller built (sim/system_if.h;
// models/link's System), it opens one runtime device per chip, runs one host program per chip
// side by side (each in its own host thread, as each rank of a job runs its own process) with the
// deadlock check, optionally split by chip over window-synchronised ranks (sim/window_sync.h),
// and reports the run's time, links, split and energy. Loading parameters, building the system
// and writing output files are the caller's (cli/system_session.h).
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/rt/runtime.h"
#include "sim/host_thread.h"
#include "sim/stats.h"
#include "sim/system_if.h"
#include "sim/trace.h"
#include "sim/window_sync.h"

namespace sfumato::sys {

class SystemRun {
public:
    // One runtime device per chip of `sys` (with the host parameters `host`), named chipN in
    // traces (`trace`, null: none), its stats under stats_root/hostN. Everything must outlive it.
    SystemRun(ISystem& sys, const rt::RuntimeParams& host, TraceHub* trace, StatGroup& stats_root);
    ~SystemRun();
    SystemRun(const SystemRun&) = delete;
    SystemRun& operator=(const SystemRun&) = delete;

    ISystem& system() { return m_sys; }
    const ISystem& system() const { return m_sys; }
    uint32_t size() const { return m_sys.size(); }
    rt::Device& device(uint32_t chip) { return *m_devices.at(chip); }

    // Splits the run by chip over the transport's ranks (before run()): this process simulates its
    // block of chips, the others' devices are remote, the fabric's hand-offs between chips are
    // messages, and run() advances window by window. InputError when there are more ranks than
    // chips, ConfigError (system.link.latency_ns) when a link has no latency (no lookahead).
    void distribute(IRankTransport& t);
    WindowSync* sync() { return m_sync.get(); }
    const WindowSync* sync() const { return m_sync.get(); }
    bool local(uint32_t chip) const { return !m_sync || m_sync->local(chip); }
    bool leader() const { return !m_sync || m_sync->rank() == 0; }

    // Called between simulation steps with a description of the time ("at cycle N"); it may throw
    // to stop the run (the CLI's SIGINT/SIGTERM check). None by default.
    void set_stop_check(std::function<void(const std::string& when)> f) { m_stop_check = std::move(f); }

    // Runs program(i, ctx) for each chip in `chips` (ctx: a context on that chip; a chip may be
    // named more than once), side by side, until all return. Throws the host programs' and
    // models' failures, and SimError(kExitDeadlock) naming the waiting host programs and the
    // system's state when nothing can make progress.
    void run(const std::vector<uint32_t>& chips, const std::function<void(uint32_t i, rt::Context& ctx)>& program);
    // The host programs of this process that have not returned (" host0 host3": each with a
    // leading space; empty when none).
    std::string waiting_hosts() const;

    // The run's end: the core cycle at or after it, and its tick (ps).
    uint64_t total_cycles() const { return m_total_cycles; }
    uint64_t end_tick() const { return m_end_tick; }
    // The run's time in ps: the end over every rank when split, else the simulation's time now.
    uint64_t time_ps() const;
    // Per link channel over [t0, t1] (ps): bytes, wire bytes, busy time, utilisation (summed over
    // the ranks when split: collective then).
    nlohmann::json links_json(uint64_t t0_ps, uint64_t t1_ps) const;
    // Split over ranks (collective: every rank calls it): ranks, lookahead_ps, windows, messages
    // summed over the ranks; null when not split.
    nlohmann::json split_json();
    // summary.json "energy": the energy of the chips this process simulated, and their sums.
    nlohmann::json energy_json() const;

private:
    ISystem& m_sys;
    std::vector<std::unique_ptr<StatGroup>> m_host_stats;
    std::vector<std::unique_ptr<rt::Device>> m_devices;
    std::vector<std::unique_ptr<HostThread>> m_hosts;
    uint64_t m_total_cycles = 0, m_end_tick = 0;
    std::unique_ptr<WindowSync> m_sync;
    std::function<void(const std::string&)> m_stop_check;
    void check_stop() const;
    void run_windows(const std::function<bool()>& all_done);
    void run_slices(const std::function<bool()>& all_done);
};

}  // namespace sfumato::sys
