#include "runtime/comm/select.h"

#include <algorithm>
#include <map>

#include "sim/error.h"

namespace sfumato::comm {

double plan_cost_ns(const Plan& p, const CostModel& m) {
    double total = 0;
    std::vector<double> load(m.sys->channels.size(), 0.0);
    std::vector<double> local(p.ranks, 0.0);
    for (const Step& st : p.steps) {
        std::fill(load.begin(), load.end(), 0.0);
        std::fill(local.begin(), local.end(), 0.0);
        double lat = 0;
        for (const Xfer& x : st.xfers) {
            const SystemInfo::Route& r = m.sys->route(m.chip_of_rank[x.src], m.chip_of_rank[x.dst]);
            const double bytes = static_cast<double>(x.count) * m.elem_bytes;
            for (uint32_t c : r.channels) load[c] += bytes;
            lat = std::max(lat, r.latency_ns);
        }
        double wire = 0;
        for (size_t c = 0; c < load.size(); ++c)
            if (load[c] > 0) wire = std::max(wire, load[c] / m.sys->channels[c].gbps);
        for (const LocalOp& o : st.ops) local[o.rank] += static_cast<double>(o.count) * m.elem_bytes * (o.srcs.size() + 1);
        const double work = *std::max_element(local.begin(), local.end()) / m.local_gbps;
        total += m.step_overhead_ns + lat + wire + work;
    }
    return total;
}

std::vector<Algo> candidates(const PlanRequest& r) {
    std::vector<Algo> a = {Algo::Mesh, Algo::Ring, Algo::DoubleRing, Algo::HalvingDoubling};
    std::map<uint32_t, uint32_t> count;
    for (uint32_t g : r.group) ++count[g];
    bool equal = count.size() > 1;
    for (const auto& [g, n] : count) equal = equal && n == count.begin()->second;
    if (equal) a.push_back(Algo::Hierarchical);
    return a;
}

Algo choose(PlanRequest r, const CostModel& m) {
    Algo best = Algo::Ring;
    double best_cost = 0;
    bool first = true;
    for (Algo a : candidates(r)) {
        r.algo = a;
        const Plan p = build_plan(r);
        double c = plan_cost_ns(p, m);
        // A staged plan also copies the user's data into In and out of Out (read and write each).
        if (!p.direct)
            c += static_cast<double>(in_elems(r.op, r.ranks, r.count) + out_elems(r.op, r.ranks, r.count)) * m.elem_bytes *
                 2 / m.local_gbps;
        if (first || c < best_cost) {
            best = a;
            best_cost = c;
            first = false;
        }
    }
    return best;
}

}  // namespace sfumato::comm
