// Several serving instances behind a router (runtime/serve/cluster.h).
#include "runtime/serve/cluster.h"
#include "runtime/serve/cluster_parts.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <systemc>

#include "runtime/llm/host_util.h"
#include "runtime/llm/step_graph.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::serve {

RouterPolicy parse_router(const std::string& s) {
    if (s == "round_robin") return RouterPolicy::RoundRobin;
    if (s == "least_tokens") return RouterPolicy::LeastTokens;
    throw InputError("unknown router '" + s + "' (known: round_robin, least_tokens)");
}

const char* router_name(RouterPolicy p) { return p == RouterPolicy::RoundRobin ? "round_robin" : "least_tokens"; }

class Router::Port : public IArrivals {
public:
    Port(Router& r, size_t i) : m_r(r), m_i(i) {}
    void take(double now_s, std::vector<size_t>& out) override {
        m_r.route_until(now_s);
        for (size_t id : m_r.m_inbox[m_i]) {
            const Request& q = m_r.m_t.requests[id];
            m_r.m_inbox_tokens[m_i] -= q.prompt_tokens + q.output_tokens - 1;
            out.push_back(id);
        }
        m_r.m_inbox[m_i].clear();
    }
    double next(double now_s) override {
        (void)now_s;
        if (!m_r.m_inbox[m_i].empty()) return now_s;
        return m_r.m_next < m_r.m_t.requests.size() ? m_r.m_t.requests[m_r.m_next].arrival_s
                                                    : std::numeric_limits<double>::infinity();
    }

private:
    Router& m_r;
    size_t m_i;
};

Router::Router(const RequestTrace& t, RouterPolicy p, size_t instances)
    : m_t(t), m_p(p), m_sched(instances, nullptr), m_inbox(instances), m_inbox_tokens(instances, 0),
      m_assign(t.requests.size(), -1) {
    if (instances < 1) throw InputError("router: no instance");
    for (size_t i = 0; i < instances; ++i) m_ports.push_back(std::make_unique<Port>(*this, i));
}

Router::~Router() = default;

IArrivals& Router::port(size_t instance) { return *m_ports.at(instance); }

size_t Router::pick() {
    const size_t n = m_inbox.size();
    if (m_p == RouterPolicy::RoundRobin) return m_rr++ % n;
    size_t best = 0;
    int64_t least = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < n; ++i) {
        const int64_t load = m_inbox_tokens[i] + (m_sched[i] ? m_sched[i]->outstanding_tokens() : 0);
        if (load < least) least = load, best = i;
    }
    return best;
}

void Router::route_until(double now_s) {
    while (m_next < m_t.requests.size() && m_t.requests[m_next].arrival_s <= now_s) {
        const size_t i = pick();
        const Request& q = m_t.requests[m_next];
        m_inbox[i].push_back(m_next);
        m_inbox_tokens[i] += q.prompt_tokens + q.output_tokens - 1;
        m_assign[m_next] = static_cast<int64_t>(i);
        ++m_next;
    }
}

namespace {

// The layer of a step graph's attention step ("l<L>.attention", runtime/llm/step_graph.cpp: the
// paged attention writes the step's K and V into the cache); -1 for any other step.
int64_t attention_layer(const std::string& name) {
    const std::string tail = ".attention";
    if (name.size() <= tail.size() + 1 || name[0] != 'l' ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
        return -1;
    const std::string digits = name.substr(1, name.size() - tail.size() - 1);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoll(digits);
}

// Each instance's chips (rank order): instance i on chip i mod chips, or serve.placement's; with
// serve.tp T x serve.pp P (K = T P chips; a prefill instance's T serve.prefill_tp when set), K
// chips from the end of the previous instance's (stage-major), or from its placement's, no chip
// in two instances.
std::vector<std::vector<uint32_t>> place(const ServeSetup& s, size_t chips) {
    const int64_t n = static_cast<int64_t>(chips);
    const int64_t pp = std::max<int64_t>(1, s.pp);
    auto tp_of = [&](int64_t i) {
        return std::max<int64_t>(1, i < s.prefill_instances && s.prefill_tp > 0 ? s.prefill_tp : s.tp);
    };
    int64_t need = 0;
    bool multi = false;
    for (int64_t i = 0; i < s.instances; ++i) {
        need += tp_of(i) * pp;
        multi = multi || tp_of(i) * pp > 1;
    }
    auto shape = [&](int64_t i) {
        const std::string tp = (i < s.prefill_instances && s.prefill_tp > 0 ? "serve.prefill_tp " : "serve.tp ") +
                               std::to_string(tp_of(i));
        return pp > 1 ? tp + " x serve.pp " + std::to_string(pp) : tp;
    };
    if (multi && need > n) {
        const bool mixed = s.prefill_tp > 0 && s.prefill_instances > 0;
        throw InputError("serve.instances " + std::to_string(s.instances) +
                         (mixed ? " (prefill: " + shape(0) + ", decode: " + shape(s.instances - 1) + ")"
                                : " x " + shape(0)) +
                         " needs " + std::to_string(need) + " chips, the system has " + std::to_string(n));
    }
    std::vector<std::vector<uint32_t>> group;
    std::map<uint32_t, int64_t> owner;
    for (int64_t i = 0, next = 0; i < s.instances; ++i) {
        const int64_t k = tp_of(i) * pp;
        const int64_t first = !s.placement.empty() ? s.placement[static_cast<size_t>(i)] : multi ? next : i % n;
        next = first + k;
        if (first + k > n)
            throw InputError("serve.placement: instance " + std::to_string(i) + " on chip " + std::to_string(first) +
                             (k > 1 ? " (and the next " + std::to_string(k - 1) + " for " + shape(i) + ")"
                                    : std::string()) +
                             ", the system has " + std::to_string(n) + " chips (0.." + std::to_string(n - 1) + ")");
        std::vector<uint32_t> g;
        for (int64_t r = 0; r < k; ++r) {
            const uint32_t c = static_cast<uint32_t>(first + r);
            if (multi && owner.count(c))
                throw InputError("serve.placement: instances " + std::to_string(owner[c]) + " and " +
                                 std::to_string(i) + " both use chip " + std::to_string(c) + " (" + shape(i) +
                                 ": an instance of several chips holds them alone)");
            owner[c] = i;
            g.push_back(c);
        }
        group.push_back(std::move(g));
    }
    return group;
}

}  // namespace

ServeCluster::ServeCluster(const llm::ModelConfig& c, const RequestTrace& trace, const ServeSetup& setup,
                           const std::vector<DeviceInfo>& chips)
    : m_trace(trace), m_s(setup), m_sh(std::make_unique<Shared>()) {
    if (chips.empty()) throw InputError("serve: the system has no chip");
    const RouterPolicy rp = parse_router(m_s.router);
    m_group = place(m_s, chips.size());
    for (const auto& g : m_group) m_chip.push_back(g.front());
    if (m_s.pp > 1 && m_s.prefill_instances > 0)
        throw InputError("serve.pp " + std::to_string(m_s.pp) +
                         " with serve.prefill_instances: disaggregated prefill/decode of pipeline-parallel "
                         "instances is not modelled (each stage's layers' KV would move to its peer stage)");
    if (m_s.prefill_tp > 0 && m_s.prefill_instances == 0)
        throw InputError("serve.prefill_tp " + std::to_string(m_s.prefill_tp) +
                         " without serve.prefill_instances: it sizes the prefill instances of a disaggregated run");
    std::map<uint32_t, int64_t> per_chip;
    for (uint32_t ch : m_chip) ++per_chip[ch];
    // Instances sharing a chip: the first holds the weights, every one its activation arena
    // and an equal share of the KV cache; the memory each must leave to the others comes from a
    // probe instance's plan (the same model and knobs on that chip).
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> held;  // chip -> weights, one arena (as held)
    for (const auto& [ch, k] : per_chip) {
        if (k < 2) continue;
        try {
            const ServeRun probe(c, trace, m_s, chips[ch]);
            held[ch] = {llm::util::held(probe.engine().memory().weights),
                        llm::util::held(probe.engine().memory().activations)};
        } catch (const InputError& e) {
            throw InputError("serve: chip " + std::to_string(ch) + " (" + std::to_string(k) +
                             " instances): one instance alone does not fit: " + e.what());
        }
    }
    std::map<uint32_t, int64_t> seen;
    for (size_t i = 0; i < m_chip.size(); ++i) {
        const uint32_t ch = m_chip[i];
        const int64_t k = per_chip[ch], rank = seen[ch]++;
        ServeSetup s = m_s;
        s.tp = static_cast<int64_t>(m_group[i].size()) / std::max<int64_t>(1, m_s.pp);  // serve.prefill_tp
        InstanceShare share;
        share.label = " " + std::to_string(i) + " (chip " + std::to_string(ch) + ")";
        if (k > 1) {
            s.kv_mem_fraction /= static_cast<double>(k);
            share.reserved_bytes = static_cast<uint64_t>(k - 1) * held[ch].second + (rank > 0 ? held[ch].first : 0);
            if (rank > 0)
                share.import_weights = [this, ch] {
                    while (!m_sh->handle.count(ch)) sc_core::wait(m_sh->exported);
                    return m_sh->handle.at(ch);
                };
        }
        std::vector<DeviceInfo> devs;
        for (uint32_t g : m_group[i]) devs.push_back(chips[g]);
        try {
            m_inst.push_back(std::make_unique<ServeRun>(c, trace, s, devs, std::move(share)));
        } catch (const InputError& e) {
            throw InputError("serve: instance " + std::to_string(i) + " on chip " + std::to_string(ch) + " (with " +
                             std::to_string(k - 1) + " other instance(s) there): " + e.what());
        }
    }
    m_sh->total = hosts_count();
    const size_t n = m_inst.size(), p = static_cast<size_t>(m_s.prefill_instances);
    if (disaggregated()) check_disaggregation();
    m_router = std::make_unique<Router>(trace, rp, disaggregated() ? p : n);
    for (size_t i = disaggregated() ? p : n; i < n; ++i) m_dports.push_back(std::make_unique<DecodePort>(*this, i - p));
    m_dec_pending.assign(m_dports.size(), 0);
    m_dec_sched.assign(m_dports.size(), nullptr);
    m_xfer.resize(trace.requests.size());
    m_dev.resize(n);
    m_ctx.resize(n);
    m_kv_stream.resize(n);
    m_layer_event.resize(n);
    m_done_slot.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const size_t k = m_group[i].size();
        m_dev[i].assign(k, nullptr);
        m_ctx[i].assign(k, nullptr);
        m_kv_stream[i].assign(k, 0);
        m_layer_event[i].assign(k, 0);
        m_done_slot[i].assign(k, 0);
    }
    m_pieces.resize(n);
    m_reuse.resize(n);
    m_in_use.assign(n, 0);
}

void ServeCluster::check_disaggregation() const {
    const int64_t p = m_s.prefill_instances, n = static_cast<int64_t>(m_inst.size());
    if (p >= n)
        throw InputError("serve.prefill_instances " + std::to_string(p) + " leaves no decode instance of serve.instances " +
                         std::to_string(n) + " (disaggregation needs at least one of each)");
    if (m_s.sched.policy != Policy::Continuous)
        throw InputError(std::string("serve.prefill_instances: disaggregated prefill/decode runs the continuous policy, "
                                     "not serve.policy ") +
                         policy_name(m_s.sched.policy));
    for (int64_t i = 0; i < p; ++i)
        for (int64_t j = p; j < n; ++j)
            if (m_chip[static_cast<size_t>(i)] == m_chip[static_cast<size_t>(j)])
                throw InputError("serve.prefill_instances: prefill instance " + std::to_string(i) + " and decode instance " +
                                 std::to_string(j) + " are both on chip " + std::to_string(m_chip[static_cast<size_t>(i)]) +
                                 " (disaggregation moves the KV cache between chips: place them on different ones, "
                                 "serve.placement)");
}

ServeCluster::~ServeCluster() = default;

size_t ServeCluster::tp_of(size_t i) const {
    return m_group.at(i).size() / static_cast<size_t>(std::max<int64_t>(1, m_s.pp));
}

std::vector<ServeCluster::Host> ServeCluster::hosts() const {
    std::vector<Host> h;
    for (size_t i = 0, g = 0; i < m_group.size(); ++i) {
        const size_t tp = tp_of(i);
        for (size_t r = 0; r < m_group[i].size(); ++r) {
            const int64_t comm = tp > 1 ? static_cast<int64_t>(g + r / tp) : -1;
            h.push_back({i, static_cast<uint32_t>(r), m_group[i][r], comm});
        }
        if (tp > 1) g += m_group[i].size() / tp;
    }
    return h;
}

std::vector<std::vector<uint32_t>> ServeCluster::comm_groups() const {
    std::vector<std::vector<uint32_t>> out;
    for (size_t i = 0; i < m_group.size(); ++i) {
        const size_t tp = tp_of(i);
        const auto& g = m_group[i];
        for (size_t s = 0; tp > 1 && s + tp <= g.size(); s += tp)
            out.emplace_back(g.begin() + static_cast<std::ptrdiff_t>(s),
                             g.begin() + static_cast<std::ptrdiff_t>(s + tp));
    }
    return out;
}

size_t ServeCluster::hosts_count() const {
    size_t n = 0;
    for (const auto& g : m_group) n += g.size();
    return n;
}

void ServeCluster::run_host(const Host& h, rt::Device& dev, rt::Context& ctx,
                            const reuse::ReuseOptions& reuse, comm::Communicator* comm) {
    if (h.rank == 0) return run_instance(h.instance, dev, ctx, reuse, comm);
    // A follower chip of a TP or PP instance: its shard of every step rank 0 posts.
    rt::Runtime rt(dev, ctx);
    reuse::TimingReuse service(ctx, rt.device_info(), reuse);
    const size_t i = h.instance;
    ServeRun& run = *m_inst.at(i);
    m_dev[i].at(h.rank) = &dev;
    m_ctx[i].at(h.rank) = &ctx;
    run.join(h.rank, rt, comm);
    const bool prefill = disaggregated() && i < static_cast<size_t>(m_s.prefill_instances);
    if (prefill) prefill_chip(i, h.rank, run, rt);
    // Every host program meets before the first step (a decode rank's cache is placed before any
    // copy reaches it).
    run.run_follower(h.rank, rt, [this] { m_sh->barrier(); });
    if (prefill && ctx.stream_synchronize(m_kv_stream[i][h.rank]) != rt::Status::Ok)
        throw InputError("serve: instance " + std::to_string(i) + " chip " + std::to_string(h.chip) + ": " +
                         ctx.last_error());
    service.settle();
    m_follower_reuse.push_back(service.counters());
}

void ServeCluster::prefill_chip(size_t i, uint32_t rank, ServeRun& run, rt::Runtime& rt) {
    rt::Context& ctx = rt.context();
    if (ctx.stream_create(&m_kv_stream[i][rank], 0) != rt::Status::Ok ||
        ctx.event_create(&m_layer_event[i][rank]) != rt::Status::Ok)
        throw InputError("serve: instance " + std::to_string(i) + ": " + ctx.last_error());
    // Rank 0's KV stream waits for each follower's copies of a step before the hand-off.
    if (rank == 0)
        for (size_t f = 1; f < m_group[i].size(); ++f)
            if (ctx.notify_create(&m_done_slot[i][f]) != rt::Status::Ok)
                throw InputError("serve: instance " + std::to_string(i) + ": " + ctx.last_error());
    // Each layer's KV of the step's prompt pieces leaves once that layer's attention (which
    // writes it into the cache) is issued.
    const uint32_t compute = rt.default_stream().id;
    run.after_op(rank, [this, i, rank, compute](const graph::PlanStep& st, const graph::Executor&) {
        const int64_t l = attention_layer(st.name);
        if (l >= 0) ship_layer(i, rank, l, compute);
    });
}

void ServeCluster::run_instance(size_t i, rt::Device& dev, rt::Context& ctx, const reuse::ReuseOptions& reuse,
                                comm::Communicator* comm) {
    rt::Runtime rt(dev, ctx);
    reuse::TimingReuse service(ctx, rt.device_info(), reuse);
    ServeRun& run = *m_inst.at(i);
    m_dev[i].at(0) = &dev;
    m_ctx[i].at(0) = &ctx;
    run.join(0, rt, comm);
    const size_t p = static_cast<size_t>(m_s.prefill_instances);
    const bool prefill = disaggregated() && i < p, decode = disaggregated() && i >= p;
    if (prefill) prefill_chip(i, 0, run, rt);
    const uint32_t ch = m_chip[i];
    const bool owner = std::find(m_chip.begin(), m_chip.end(), ch) - m_chip.begin() == static_cast<std::ptrdiff_t>(i);
    const bool shared = std::count(m_chip.begin(), m_chip.end(), ch) > 1;
    auto after_start = [&] {
        if (owner && shared) {
            m_sh->handle[ch] = run.export_weights(rt);
            m_sh->exported.notify(sc_core::SC_ZERO_TIME);
        }
        m_in_use.at(i) = ctx.memory_stats().in_use;
        // Every instance starts serving at one instant (the requests' clock origin).
        m_sh->barrier();
        m_origin_ps = now_tick().v;
        m_sh->physical[ch] = dev.physical_bytes();
        m_sh->saved[ch] = dev.shares().saved_bytes();
    };
    Handoff handoff(*this, i);
    IArrivals& arrivals = decode ? static_cast<IArrivals&>(*m_dports[i - p]) : m_router->port(i);
    auto ready = [&](const Scheduler& s) {
        if (decode) m_dec_sched.at(i - p) = &s;
        else m_router->attach(i, &s);
    };
    run.run(rt, &arrivals, ready, after_start, prefill ? &handoff : nullptr);
    if (decode) m_dec_sched.at(i - p) = nullptr;
    else m_router->attach(i, nullptr);
    if (prefill) {
        // Its transfers land before it ends (their callbacks hand the requests over).
        if (ctx.stream_synchronize(m_kv_stream[i][0]) != rt::Status::Ok)
            throw InputError("serve: instance " + std::to_string(i) + ": " + ctx.last_error());
        ++m_prefill_done;
        m_sh->delivered.notify(sc_core::SC_ZERO_TIME);
    }
    service.settle();
    m_reuse[i] = service.counters();
    if (++m_done == m_inst.size()) merge();
}

size_t ServeCluster::pick_decode() {
    const size_t n = m_dports.size();
    if (parse_router(m_s.router) == RouterPolicy::RoundRobin) return m_rr_decode++ % n;
    size_t best = 0;
    int64_t least = std::numeric_limits<int64_t>::max();
    for (size_t d = 0; d < n; ++d) {
        const int64_t load = m_dec_pending[d] + (m_dec_sched[d] ? m_dec_sched[d]->outstanding_tokens() : 0);
        if (load < least) least = load, best = d;
    }
    return best;
}

void ServeCluster::merge() {
    m_res = ServeResult{};
    m_res.requests.resize(m_trace.requests.size());
    m_req_inst.assign(m_trace.requests.size(), 0);
    const std::vector<int64_t>& a = m_router->assignment();
    for (size_t r = 0; r < a.size(); ++r) {
        if (a[r] < 0) throw SimError(kExitFailure, "serve: request " + m_trace.requests[r].id + " was never routed");
        m_req_inst[r] = static_cast<size_t>(a[r]);
        const int64_t d = m_xfer[r].decode;
        m_res.requests[r] = m_inst[d >= 0 ? static_cast<size_t>(d) : m_req_inst[r]]->result().requests[r];
    }
    for (const auto& in : m_inst) {
        const ServeResult& x = in->result();
        m_res.steps.insert(m_res.steps.end(), x.steps.begin(), x.steps.end());
        m_res.itl_s.insert(m_res.itl_s.end(), x.itl_s.begin(), x.itl_s.end());
        m_res.end_s = std::max(m_res.end_s, x.end_s);
        m_res.preemptions += x.preemptions;
        m_res.priority_preemptions += x.priority_preemptions;
        m_res.swapped_out += x.swapped_out;
        m_res.swapped_in += x.swapped_in;
        m_res.swap_s += x.swap_s;
    }
    std::stable_sort(m_res.steps.begin(), m_res.steps.end(),
                     [](const StepLog& p, const StepLog& q) { return p.begin_s < q.begin_s; });
}

void ServeCluster::export_profile(const std::string& dir, int64_t devices_per_node) const {
    if (!m_inst.at(0)->profile()) throw InputError("serve: the run kept no profile (ServeSetup::export_profile)");
    VidurProfile p = *m_inst[0]->profile();
    for (size_t i = 1; i < m_inst.size(); ++i) p.merge(*m_inst[i]->profile());
    for (const auto& t : m_copy_tasks) p.add_copy(t->copy.bytes, t->end_tick.v - t->start_tick.v);
    p.set_topology(devices_per_node);
    p.write(dir);
}

reuse::ReuseCounters ServeCluster::reuse_counters() const {
    reuse::ReuseCounters t;
    for (const reuse::ReuseCounters& c : m_reuse) t += c;
    for (const reuse::ReuseCounters& c : m_follower_reuse) t += c;
    return t;
}

nlohmann::json ServeCluster::summary(double slo_ttft_s, double slo_tpot_s) const {
    nlohmann::json j = m_inst.at(0)->summary(slo_ttft_s, slo_tpot_s);
    j.erase("memory");
    j.erase("kv");
    j.erase("timer");
    j.erase("communication");
    j.erase("pipeline");
    j["setup"]["instances"] = m_inst.size();
    j["setup"]["router"] = m_s.router;
    j["setup"]["placement"] = m_chip;
    j["metrics"] = metrics_json(m_res, slo_ttft_s, slo_tpot_s);
    j["instances"] = nlohmann::json::array();
    std::vector<size_t> routed(m_inst.size(), 0);
    for (size_t r : m_req_inst) ++routed[r];
    for (const KvTransfer& x : m_xfer)
        if (x.decode >= 0) ++routed[static_cast<size_t>(x.decode)];
    double wall = 0;
    for (size_t i = 0; i < m_inst.size(); ++i) {
        const nlohmann::json s = m_inst[i]->summary(slo_ttft_s, slo_tpot_s);
        const char* role = !disaggregated() ? "both" : i < static_cast<size_t>(m_s.prefill_instances) ? "prefill" : "decode";
        j["instances"].push_back({{"instance", i},
                                  {"chip", m_chip[i]},
                                  {"role", role},
                                  {"requests", routed[i]},
                                  {"steps", m_inst[i]->result().steps.size()},
                                  {"preemptions", m_inst[i]->result().preemptions},
                                  {"memory", s["memory"]},
                                  {"context_bytes_in_use", m_in_use[i]},
                                  {"kv", s["kv"]},
                                  {"timer", s["timer"]},
                                  {"chips", m_group[i]},
                                  {"tp", tp_of(i)}});
        if (s.contains("communication")) j["instances"].back()["communication"] = s["communication"];
        if (s.contains("pipeline")) j["instances"].back()["pipeline"] = s["pipeline"];
        wall = std::max(wall, m_inst[i]->wall_seconds());
    }
    // Per chip: the copies of the weights held (instances that placed rather than mapped them),
    // the bytes they take, what the chip's instances map through handles, and the device's
    // physical bytes once every instance placed its model (weights, KV caches).
    j["chips"] = nlohmann::json::array();
    for (const auto& [ch, phys] : m_sh->physical) {
        size_t copies = 0, n = 0;
        uint64_t wbytes = 0, imported = 0;
        for (size_t i = 0; i < m_inst.size(); ++i) {
            if (m_chip[i] != ch) continue;
            ++n;
            const llm::MemoryPlan& mp = m_inst[i]->engine().memory();
            if (mp.weights_imported) imported += mp.weights;
            else ++copies, wbytes += mp.weights;
        }
        j["chips"].push_back({{"chip", ch},
                              {"instances", n},
                              {"weight_copies", copies},
                              {"weights_bytes", wbytes},
                              {"weights_mapped_bytes", imported},
                              {"shared_saved_bytes", m_sh->saved.at(ch)},
                              {"physical_bytes_placed", phys}});
    }
    j["wall_seconds"] = wall;
    j["setup"]["prefill_instances"] = m_s.prefill_instances;
    if (disaggregated()) j["disaggregation"] = transfer_json();
    return j;
}

// The KV transfers: count, bytes, time per request (percentiles, ms) and in total.
nlohmann::json ServeCluster::transfer_json() const {
    std::vector<double> t, c;
    uint64_t bytes = 0;
    size_t copies = 0, overlapped = 0;
    double total = 0;
    for (const KvTransfer& x : m_xfer) {
        if (x.decode < 0 || x.done_s <= 0) continue;
        t.push_back(x.seconds());
        c.push_back(x.copy_seconds());
        bytes += x.bytes;
        copies += x.copies;
        total += x.seconds();
        overlapped += x.copy_begin_s < x.issued_s;
    }
    const Percentiles p = percentiles(t), q = percentiles(c);
    return {{"prefill_instances", m_s.prefill_instances},
            {"decode_instances", m_inst.size() - static_cast<size_t>(m_s.prefill_instances)},
            {"transfers", t.size()},
            {"copies", copies},
            {"kv_bytes", bytes},
            {"kv_transfer_ms",
             {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p90", p.p90 * 1e3}, {"p99", p.p99 * 1e3}, {"max", p.max * 1e3}}},
            {"kv_transfer_total_ms", total * 1e3},
            {"copy_calls", m_copy_calls},
            {"kv_copy_ms",
             {{"mean", q.mean * 1e3}, {"p50", q.p50 * 1e3}, {"p90", q.p90 * 1e3}, {"p99", q.p99 * 1e3}, {"max", q.max * 1e3}}},
            {"overlapped_transfers", overlapped}};
}

std::string ServeCluster::steps_csv() const {
    std::vector<const ServeResult*> r;
    std::vector<int64_t> pools;
    for (const auto& in : m_inst) {
        r.push_back(&in->result());
        pools.push_back(in->setup().sched.kv_blocks);
    }
    return serve::steps_csv(r, pools);
}

std::string ServeCluster::requests_csv() const {
    const std::string base = serve::requests_csv(m_res, m_req_inst);
    if (!disaggregated()) return base;
    // Disaggregation: each row gains its decode instance, KV bytes moved and transfer time.
    std::string out;
    size_t at = 0, row = 0;
    char buf[128];
    while (at < base.size()) {
        const size_t end = base.find('\n', at);
        out += base.substr(at, end - at);
        if (row == 0) {
            out += ",decode_instance,kv_bytes,kv_transfer_ms,kv_copy_ms";
        } else {
            const KvTransfer& x = m_xfer[row - 1];
            const bool moved = x.decode >= 0 && x.done_s > 0;
            std::snprintf(buf, sizeof buf, ",%lld,%llu,%.6f,%.6f", static_cast<long long>(x.decode),
                          static_cast<unsigned long long>(x.bytes), moved ? x.seconds() * 1e3 : 0.0,
                          moved ? x.copy_seconds() * 1e3 : 0.0);
            out += buf;
        }
        out += "\n";
        at = end + 1;
        ++row;
    }
    return out;
}

}  // namespace sfumato::serve
