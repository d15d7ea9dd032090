#include "models/power/energy_attributor.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "sim/sc_time_util.h"

namespace sfumato::power {

namespace {
bool ends_with(const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
void walk(const StatGroup& g, const std::function<void(const std::string&, const StatBase&)>& f) {
    for (const StatBase* s : g.stats()) f(g.path() + "/" + s->name(), *s);
    for (const StatGroup* c : g.children()) walk(*c, f);
}
// The event a stat counts (and whether it is an occupancy ratio); false: none.
bool classify(const std::string& path, Event& ev, bool& occupancy) {
    occupancy = false;
    struct Rule {
        const char* suffix;
        Event ev;
    };
    static const Rule rules[] = {{"/m/busy_cycles", Event::CubeBusy},
                                 {"/m/busy_cycles_fp32", Event::CubeBusyFp32},
                                 {"/m/busy_cycles_int8", Event::CubeBusyInt8},
                                 {"/m/busy_cycles_int4", Event::CubeBusyInt4},
                                 {"/v/busy_cycles", Event::VectorBusy},
                                 {"/v/busy_cycles_transcendental", Event::VectorBusyTranscendental},
                                 {"/v/busy_cycles_reduce", Event::VectorBusyReduce},
                                 {"/v/busy_cycles_move", Event::VectorBusyMove},
                                 {"/scalar_busy_cycles", Event::ScalarBusy},
                                 {"/mte1/busy_cycles", Event::Mte1Busy},
                                 {"/mem/hbm/activates", Event::HbmActivates},
                                 {"/mem/hbm/bytes_read", Event::HbmReadBytes},
                                 {"/mem/hbm/bytes_written", Event::HbmWriteBytes},
                                 {"/mem/hbm/refreshes", Event::HbmRefreshes},
                                 {"/sdma/host_link_bytes", Event::HostLinkBytes}};
    for (const Rule& r : rules)
        if (ends_with(path, r.suffix)) return ev = r.ev, true;
    if (has(path, "/mem/l2/") && ends_with(path, "/bytes")) {
        // MTE2's and MTE3's bytes are counted by buffer in their pipes (below); FixPipe reads L0C.
        if (ends_with(path, "/mte2/bytes") || ends_with(path, "/mte3/bytes")) return false;
        ev = ends_with(path, "/fix/bytes") ? Event::L0cGmBytes : Event::L2Bytes;
        return true;
    }
    // Each core's MTE2 and MTE3 count the GM bytes they requested by the local buffer they wrote
    // or read (models/aicore/pipe_unit.h): the same bytes the L2 counts for those requesters.
    if (ends_with(path, "/mte2/ub_bytes") || ends_with(path, "/mte3/ub_bytes"))
        return ev = Event::UbGmBytes, true;
    if (ends_with(path, "/mte2/l1_bytes") || ends_with(path, "/mte3/l1_bytes"))
        return ev = Event::L1GmBytes, true;
    if (has(path, "/ts/") && ends_with(path, "_occupancy")) {
        ev = has(path, "/ts/aiv") ? Event::AivActive : Event::AicActive;
        occupancy = true;
        return true;
    }
    return false;
}
}  // namespace

EventReader::EventReader(const StatGroup& chip) {
    walk(chip, [&](const std::string& path, const StatBase& s) {
        Event ev;
        bool occ;
        if (!classify(path, ev, occ)) return;
        auto* c = dynamic_cast<const Counter*>(&s);
        auto* f = dynamic_cast<const Formula*>(&s);
        if (c || f) m_sources.push_back({ev, c, f, occ});
    });
}

Events EventReader::read(double now_cycles) const {
    Events e;
    for (const Source& s : m_sources) {
        const double v = s.counter ? static_cast<double>(s.counter->value()) : s.formula->value();
        e[s.ev] += v * (s.occupancy ? now_cycles : 1.0);
    }
    // GM <-> buffer requests are L2 traffic too; fills from HBM are written into the L2 and
    // write-backs read out of it.
    e[Event::L2Bytes] += e[Event::L1GmBytes] + e[Event::UbGmBytes] + e[Event::L0cGmBytes] +
                         e[Event::HbmReadBytes] + e[Event::HbmWriteBytes];
    return e;
}

Events chip_events(const StatGroup& chip, double total_cycles) {
    return EventReader(chip).read(total_cycles);
}

Events span_part(const Events& e) {
    Events m;
    for (Event ev :
         {Event::CubeBusyFp32, Event::CubeBusyInt8, Event::CubeBusyInt4, Event::VectorBusyTranscendental,
          Event::VectorBusyReduce, Event::VectorBusyMove, Event::AicActive, Event::AivActive,
          Event::L1GmBytes, Event::UbGmBytes, Event::L0cGmBytes, Event::L2Bytes, Event::HbmActivates,
          Event::HbmReadBytes, Event::HbmWriteBytes, Event::HbmRefreshes, Event::HostLinkBytes})
        m[ev] = e[ev];
    return m;
}

void PowerTimeline::grow_to(size_t n) {
    while (n > kMaxBins) {  // coarsen: merge bins in pairs
        std::vector<double> half((m_e.size() + 1) / 2, 0.0);
        for (size_t i = 0; i < m_e.size(); ++i) half[i / 2] += m_e[i];
        m_e.swap(half);
        m_bin *= 2;
        n = (n + 1) / 2;
    }
    if (m_e.size() < n) m_e.resize(n, 0.0);
}

void PowerTimeline::add(double t0, double t1, double joules) {
    if (joules == 0) return;
    grow_to(static_cast<size_t>(std::max(t0, t1) / m_bin) + 1);
    const size_t b0 = static_cast<size_t>(t0 / m_bin), b1 = static_cast<size_t>(t1 / m_bin);
    if (t1 <= t0 || b0 == b1) {
        m_e[std::min(b0, m_e.size() - 1)] += joules;
        return;
    }
    const double rate = joules / (t1 - t0);
    for (size_t b = b0; b <= b1 && b < m_e.size(); ++b) {
        const double lo = std::max(t0, static_cast<double>(b) * m_bin),
                     hi = std::min(t1, static_cast<double>(b + 1) * m_bin);
        if (hi > lo) m_e[b] += rate * (hi - lo);
    }
}

EnergyAttributor::EnergyAttributor(StatGroup& chip, const PowerParams& p, ChipShape shape)
    : m_chip(chip), m_stats(&chip, "power"), m_model(p, shape), m_timeline(p.window_us * 1e-6 / 8) {
    add_stats();
}

namespace {
// A fingerprint of the stats tree: its stats' addresses and count, in walk order (no strings).
uint64_t tree_fingerprint(const StatGroup& g, uint64_t h = 1469598103934665603ull) {
    for (const StatBase* s : g.stats()) h = (h ^ reinterpret_cast<uintptr_t>(s)) * 1099511628211ull;
    for (const StatGroup* c : g.children()) h = tree_fingerprint(*c, (h ^ 0x9e37u) * 1099511628211ull);
    return h;
}
}  // namespace

const EventReader& EnergyAttributor::current_reader() const {
    const uint64_t tree = tree_fingerprint(m_chip);
    if (!m_now_reader || tree != m_now_tree) {
        m_now_reader = std::make_unique<EventReader>(m_chip);
        m_now_tree = tree;
    }
    return *m_now_reader;
}

Breakdown EnergyAttributor::breakdown_now() const {
    const double now_s = static_cast<double>(now_tick().v) * 1e-12;
    return m_model.energy(run_events(now_s * m_model.shape().clock_hz), now_s);
}

Events EnergyAttributor::run_events(double now_cycles) const {
    Events e = current_reader().read(now_cycles);
    for (size_t i = 0; i < kNumEvents; ++i) e.n[i] += m_charged.n[i];
    return e;
}

void EnergyAttributor::add_stats() {
    auto add = [&](const std::string& n, const char* unit, const std::string& d, std::function<double()> f) {
        m_formulas.push_back(std::make_unique<Formula>(m_stats, n, unit, d, std::move(f)));
    };
    const std::vector<std::pair<std::string, double>> names = Breakdown{}.items();
    for (size_t i = 0; i < names.size(); ++i)
        add(names[i].first + "_j", "J", "energy of the run in " + names[i].first + " (docs/energy.md)",
            [this, i] { return breakdown_now().items()[i].second; });
    add("total_j", "J", "energy of the run, dynamic and static", [this] { return breakdown_now().total(); });
    add("dynamic_j", "J", "dynamic energy of the run", [this] { return breakdown_now().dynamic(); });
    add("average_power_w", "W", "energy of the run / its time", [this] {
        const double t = static_cast<double>(now_tick().v) * 1e-12;
        return t > 0 ? breakdown_now().total() / t : 0.0;
    });
    add("static_power_w", "W", "leakage, HBM background and uncore power",
        [this] { return m_model.static_power().static_j(); });
}

void EnergyAttributor::close_interval(uint64_t tick_ps) {
    const double now_s = static_cast<double>(tick_ps) * 1e-12;
    if (!m_reader) m_reader = std::make_unique<EventReader>(m_chip);
    const Events now = m_reader->read(now_s * m_model.shape().clock_hz);
    Events d;
    for (size_t i = 0; i < kNumEvents; ++i) d.n[i] = now.n[i] - m_last.n[i];
    m_timeline.add(m_last_s, now_s, m_model.dynamic(d).dynamic());
    const Events mem = span_part(d);
    if (m_running.empty()) {
        for (size_t i = 0; i < kNumEvents; ++i) m_outside.n[i] += mem.n[i];
    } else {
        const double share = 1.0 / static_cast<double>(m_running.size());
        for (uint64_t id : m_running) {
            auto it = m_kernels.find(id);
            if (it == m_kernels.end()) continue;
            for (size_t i = 0; i < kNumEvents; ++i) it->second.n[i] += mem.n[i] * share;
        }
    }
    m_last = now;
    m_last_s = now_s;
}

void EnergyAttributor::kernel_started(uint64_t task_id, uint64_t tick_ps) {
    close_interval(tick_ps);
    m_running.push_back(task_id);
    m_running_since.push_back(static_cast<double>(tick_ps) * 1e-12);
    if (m_kernels.size() < kMaxKernels) m_kernels.emplace(task_id, Events{});
}

void EnergyAttributor::kernel_finished(uint64_t task_id, uint64_t tick_ps) {
    close_interval(tick_ps);
    for (size_t i = 0; i < m_running.size(); ++i) {
        if (m_running[i] != task_id) continue;
        m_running.erase(m_running.begin() + static_cast<std::ptrdiff_t>(i));
        m_running_since.erase(m_running_since.begin() + static_cast<std::ptrdiff_t>(i));
        break;
    }
}

void EnergyAttributor::charge_like(uint64_t task_id, const Events& like) { m_charges[task_id] = like; }

bool EnergyAttributor::kernel_activity(const Task& t, Events& out) const {
    auto it = m_kernels.find(t.id);
    if (it == m_kernels.end()) return false;
    out = kernel_events(t);
    for (size_t i = 0; i < kNumEvents; ++i) out.n[i] += it->second.n[i];
    return true;
}

void EnergyAttributor::kernel_finished(const Task& t, uint64_t tick_ps) {
    double since = static_cast<double>(tick_ps) * 1e-12;
    for (size_t i = 0; i < m_running.size(); ++i)
        if (m_running[i] == t.id) since = m_running_since[i];
    kernel_finished(t.id, tick_ps);
    auto c = m_charges.find(t.id);
    if (c == m_charges.end()) return;
    // Its own events: its task's pipe busy cycles and its span's share (none if not kept).
    Events own = kernel_events(t);
    auto k = m_kernels.find(t.id);
    if (k != m_kernels.end())
        for (size_t i = 0; i < kNumEvents; ++i) own.n[i] += k->second.n[i];
    Events d;
    for (size_t i = 0; i < kNumEvents; ++i) {
        const Event ev = static_cast<Event>(i);
        if (ev == Event::HbmRefreshes) continue;
        d.n[i] = c->second.n[i] - own.n[i];
    }
    m_charges.erase(c);
    for (size_t i = 0; i < kNumEvents; ++i) m_charged.n[i] += d.n[i];
    if (k != m_kernels.end())
        for (size_t i = 0; i < kNumEvents; ++i) k->second.n[i] += d.n[i];
    // kernel_energy() adds the task's pipe busy cycles to the span's events: the kept entry now
    // holds like's less the task's, so the two make like's.
    m_timeline.add(since, static_cast<double>(tick_ps) * 1e-12, m_model.dynamic(d).dynamic());
}

void EnergyAttributor::finish(uint64_t tick_ps) { close_interval(tick_ps); }

Events EnergyAttributor::kernel_span_events(uint64_t task_id) const {
    auto it = m_kernels.find(task_id);
    return it == m_kernels.end() ? Events{} : it->second;
}

}  // namespace sfumato::power
