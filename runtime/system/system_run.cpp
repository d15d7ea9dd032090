#include "runtime/system/system_run.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato::sys {

SystemRun::SystemRun(ISystem& sys, const rt::RuntimeParams& host, TraceHub* trace, StatGroup& stats_root) : m_sys(sys) {
    for (uint32_t i = 0; i < m_sys.size(); ++i) {
        m_host_stats.push_back(std::make_unique<StatGroup>(&stats_root, "host" + std::to_string(i)));
        m_devices.push_back(std::make_unique<rt::Device>(m_sys.device(i), host, trace, m_host_stats.back().get()));
        m_devices.back()->set_trace_name("chip" + std::to_string(i));
    }
}

SystemRun::~SystemRun() = default;

void SystemRun::check_stop() const {
    if (m_stop_check) m_stop_check("at cycle " + std::to_string(m_sys.clock().floor_cycle(now_tick()).v));
}

std::string SystemRun::waiting_hosts() const {
    std::string waiting;
    for (const auto& h : m_hosts)
        if (!h->finished()) waiting += std::string(" ") + h->basename();
    return waiting;
}

void SystemRun::run(const std::vector<uint32_t>& chips, const std::function<void(uint32_t i, rt::Context& ctx)>& program) {
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
    m_total_cycles = m_sys.clock().ceil_cycle(Tick(m_end_tick)).v;
    m_sys.finish_energy(m_end_tick);
    for (const auto& d : m_devices)
        for (const auto& c : d->contexts()) c->emit_task_trace();
}

void SystemRun::run_slices(const std::function<bool()>& all_done) {
    // Each slice runs in steps so that a stop request (SIGINT/SIGTERM) is seen soon: a simulated
    // millisecond of eight chips can take minutes of CPU. Splitting sc_start changes no event
    // order, so no cycle count.
    const sc_core::sc_time slice(1, sc_core::SC_MS);
    constexpr int kSteps = 16;
    const sc_core::sc_time step = slice / kSteps;
    const ClockDomain clk = m_sys.clock();
    while (!all_done()) {
        const uint64_t before = progress_counter();
        // (The hosts' end calls sc_stop: no step after it.)
        for (int i = 0; i < kSteps && !all_done() && sc_core::sc_get_status() != sc_core::SC_STOPPED; ++i) {
            sc_core::sc_start(step);
            rethrow_failure();
            check_stop();
        }
        if (all_done()) break;
        if (!sc_core::sc_pending_activity() || (progress_counter() == before && work_in_flight() == 0)) {
            throw SimError(kExitDeadlock, "deadlock: nothing can make progress at cycle " +
                                              std::to_string(clk.floor_cycle(now_tick()).v) + " (host programs waiting:" +
                                              waiting_hosts() + ")\n" + m_sys.describe_state());
        }
    }
    m_end_tick = now_tick().v;
}

void SystemRun::distribute(IRankTransport& t) {
    const uint32_t chips = m_sys.size();
    if (t.size() > chips)
        throw InputError(std::to_string(t.size()) + " ranks for a system of " + std::to_string(chips) + " chips (" +
                         m_sys.info().name + "): at most one rank per chip");
    // At most a millisecond (a system without links would have none to bound it).
    const uint64_t lookahead = std::min<uint64_t>(m_sys.lookahead_ps(), 1000000000);
    if (lookahead < 2)
        throw ConfigError("system.link.latency_ns", "a system split over ranks needs a latency on every link (the "
                                                    "windows' lookahead); the smallest is " + std::to_string(lookahead) + " ps");
    m_sync = std::make_unique<WindowSync>(t, block_partition(chips, t.size()), lookahead);
    m_sys.distribute(*m_sync);
    for (uint32_t i = 0; i < chips; ++i) m_devices[i]->set_remote(!m_sync->local(i));
}

// Window by window over all ranks (sim/window_sync.h) until every rank's host programs are done.
// A deadlock: nothing pending on any rank, or a simulated millisecond without progress on any
// rank while nothing is in flight (a periodic timer, such as HBM refresh, keeps the kernels busy).
void SystemRun::run_windows(const std::function<bool()>& all_done) {
    const ClockDomain clk = m_sys.clock();
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
            const std::string waiting = waiting_hosts();
            throw SimError(kExitDeadlock, "deadlock: nothing can make progress on any rank at cycle " +
                                              std::to_string(clk.floor_cycle(now_tick()).v) + " (host programs waiting here:" +
                                              (waiting.empty() ? std::string(" none") : waiting) + ")\n" +
                                              m_sys.describe_state());
        }
        check_stop();
    }
    // The run ends when the last host program over all ranks returned.
    std::vector<uint64_t> end = {~m_end_tick};
    t.all_min(end);
    m_end_tick = ~end[0];
}

uint64_t SystemRun::time_ps() const { return m_sync ? m_end_tick : now_tick().v; }

nlohmann::json SystemRun::links_json(uint64_t t0, uint64_t t1) const {
    nlohmann::json a = nlohmann::json::array();
    const double span = t1 > t0 ? static_cast<double>(t1 - t0) : 1.0;
    const size_t n = m_sys.link_channels();
    // Split over ranks, a channel counts on its sending chip's rank only: the sums are the totals.
    std::vector<ISystem::LinkCounters> c(n);
    std::vector<uint64_t> v;
    for (size_t i = 0; i < n; ++i) {
        c[i] = m_sys.link_counters(i);
        v.insert(v.end(), {c[i].payload_bytes, c[i].wire_bytes, c[i].busy_ps});
    }
    if (m_sync) m_sync->transport().all_sum(v);
    for (size_t i = 0; i < n; ++i) {
        const uint64_t busy_ps = v[3 * i + 2];
        a.push_back({{"link", c[i].name},
                     {"gbps", c[i].gbps},
                     {"bytes", v[3 * i]},
                     {"wire_bytes", v[3 * i + 1]},
                     {"busy_us", static_cast<double>(busy_ps) / 1e6},
                     {"utilisation", static_cast<double>(busy_ps) / span}});
    }
    return a;
}

nlohmann::json SystemRun::split_json() {
    if (!m_sync) return nullptr;
    std::vector<uint64_t> msgs = {m_sync->messages()};
    m_sync->transport().all_sum(msgs);
    return {{"ranks", m_sync->ranks()},
            {"lookahead_ps", m_sync->lookahead_ps()},
            {"windows", m_sync->windows()},
            {"messages", msgs[0]}};
}

// The chips this process simulated (all of them unless split over ranks), and the links they drive.
nlohmann::json SystemRun::energy_json() const {
    const double seconds = static_cast<double>(time_ps()) * 1e-12;
    return m_sys.energy_json([this](uint32_t chip) { return local(chip); }, static_cast<double>(m_total_cycles), seconds);
}

}  // namespace sfumato::sys
