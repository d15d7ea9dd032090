// Stream planning: independent branches on separate streams, events between
// them. A step continues the stream of a producer whose stream it can extend
// (the producer is that stream's last step); otherwise it opens a new stream
// while fewer than N are in use, or joins the stream that has been idle
// longest. Each cross-stream dependency becomes an event recorded after the
// producer and waited for before the consumer, unless the consumer's stream
// already waited for that producer or a later step of its stream. With N = 0
// the planner picks N as the widest level of the dependency graph (steps with
// equal longest-path depth), capped at kMaxStreams.
#include <algorithm>
#include <map>
#include <set>

#include "runtime/graph/planning.h"

namespace sfumato::graph {

namespace {

int root(const Plan& p, int t) {
    while (t >= 0 && p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View)
        t = p.tensors[static_cast<size_t>(t)].base;
    return t;
}

}  // namespace

void plan_streams(Plan& p, int streams) {
    const size_t n = p.steps.size();
    std::vector<std::vector<int>> deps(n);
    for (size_t s = 0; s < n; ++s) {
        std::set<int> d;
        for (int t : p.steps[s].in) {
            const int r = root(p, t);
            if (r < 0) continue;
            const int def = p.tensors[static_cast<size_t>(r)].def_step;
            if (def >= 0 && !p.steps[static_cast<size_t>(def)].view) d.insert(def);
        }
        deps[s].assign(d.begin(), d.end());
    }
    int N = streams;
    if (N <= 0) {
        std::vector<int> level(n, 0);
        std::map<int, int> width;
        for (size_t s = 0; s < n; ++s) {
            if (p.steps[s].view) continue;
            for (int d : deps[s]) level[s] = std::max(level[s], level[static_cast<size_t>(d)] + 1);
            ++width[level[s]];
        }
        N = 1;
        for (const auto& [l, w] : width) N = std::max(N, w);
        N = std::min(N, kMaxStreams);
    }
    std::vector<int> tail;  // per stream: last step
    for (size_t s = 0; s < n; ++s) {
        PlanStep& st = p.steps[s];
        if (st.view) {
            st.stream = -1;
            continue;
        }
        int chosen = -1;
        for (int d : deps[s]) {
            const int sd = p.steps[static_cast<size_t>(d)].stream;
            if (sd >= 0 && tail[static_cast<size_t>(sd)] == d) {
                chosen = sd;
                break;
            }
        }
        if (chosen < 0) {
            if (static_cast<int>(tail.size()) < N) {
                chosen = static_cast<int>(tail.size());
                tail.push_back(-1);
            } else {
                chosen = 0;
                for (size_t k = 1; k < tail.size(); ++k)
                    if (tail[k] < tail[static_cast<size_t>(chosen)]) chosen = static_cast<int>(k);
            }
        }
        st.stream = chosen;
        tail[static_cast<size_t>(chosen)] = static_cast<int>(s);
    }
    p.num_streams = std::max<int>(1, static_cast<int>(tail.size()));
    // Events.
    std::vector<std::vector<int>> known(static_cast<size_t>(p.num_streams),
                                        std::vector<int>(static_cast<size_t>(p.num_streams), -1));
    p.num_events = 0;
    for (size_t s = 0; s < n; ++s) {
        PlanStep& st = p.steps[s];
        if (st.view) continue;
        const size_t ss = static_cast<size_t>(st.stream);
        for (int d : deps[s]) {
            PlanStep& pd = p.steps[static_cast<size_t>(d)];
            const size_t sd = static_cast<size_t>(pd.stream);
            if (sd == ss || known[ss][sd] >= d) continue;
            if (pd.record < 0) pd.record = p.num_events++;
            st.waits.push_back(pd.record);
            known[ss][sd] = d;
        }
    }
}

}  // namespace sfumato::graph
