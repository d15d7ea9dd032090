// Timing re-use's bound propagated along a multi-chip run's critical path (path_bound.h).
#include "runtime/llm/path_bound.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/error.h"

namespace sfumato::llm {

ChipLaunches chip_launches(const rt::Context& ctx, const std::vector<StepRecord>& steps,
                           const std::vector<std::pair<size_t, size_t>>& exchanges,
                           const reuse::LaunchBounds& bounds, double ps_per_cycle) {
    ChipLaunches c;
    c.known = bounds.known;
    for (const StepRecord& s : steps) c.steps.push_back({s.prefill, s.begin_ps, s.begin_ps + s.ps});
    for (const auto& x : exchanges) c.exchange_starts.push_back(ctx.tasks().at(x.first).task->start_tick.v);
    for (const reuse::LaunchBound& l : bounds.launches) {
        if (l.cycles <= 0) continue;
        const auto after =
            std::upper_bound(exchanges.begin(), exchanges.end(), l.record,
                             [](size_t r, const std::pair<size_t, size_t>& x) { return r < x.first; });
        const size_t g = static_cast<size_t>(after - exchanges.begin());
        const bool inside = g > 0 && l.record < exchanges[g - 1].second;
        c.launches.push_back(
            {ctx.tasks().at(l.record).task->start_tick.v, g, l.cycles * ps_per_cycle, inside});
    }
    return c;
}

namespace {

// Chip c's launch bounds by (segment, step, inside an exchange): the segment is the number of
// exchanges launched before it; the step the first whose end is not before the launch's start (a
// launch between two steps belongs to the next one).
using Parts = std::map<std::tuple<size_t, size_t, bool>, double>;

Parts chip_parts(const ChipLaunches& c) {
    Parts p;
    for (const ChipLaunches::Launch& l : c.launches) {
        size_t s = 0;
        while (s + 1 < c.steps.size() && c.steps[s].end < l.start) ++s;
        p[{l.exchange, s, l.in_exchange}] += l.bound;
    }
    return p;
}

// A segment's bound from its chips' parts: the exchange's own kernels summed over the chips, the
// rest the largest chip's.
struct Seg {
    double cross = 0;
    std::vector<double> local;
    double bound() const {
        return cross + (local.empty() ? 0 : *std::max_element(local.begin(), local.end()));
    }
};

// The segments a step spans on chip c: from the one its begin falls in (exchanges started before
// it) to the one its end falls in.
std::pair<size_t, size_t> step_segments(const ChipLaunches& c, const ChipLaunches::Step& st) {
    size_t first = 0, last = 0;
    for (uint64_t t : c.exchange_starts) {
        if (t < st.begin) ++first;
        if (t <= st.end) ++last;
    }
    return {first, last};
}

}  // namespace

PathBound path_bound(const std::vector<ChipLaunches>& chips) {
    PathBound out;
    if (chips.empty()) return out;
    const size_t nsteps = chips.front().steps.size();
    for (const ChipLaunches& c : chips) {
        if (c.steps.size() != nsteps || c.exchange_starts.size() != chips.front().exchange_starts.size())
            throw SimError(kExitFailure, "path bound: the chips ran different steps or exchanges");
        out.known = out.known && c.known;
    }
    std::vector<Parts> parts;
    for (const ChipLaunches& c : chips) parts.push_back(chip_parts(c));
    const bool one = chips.size() == 1;
    size_t decode = 0;
    for (size_t s = 0; s < nsteps; ++s) {
        size_t g0 = SIZE_MAX, g1 = 0;
        for (const ChipLaunches& c : chips) {
            const auto [a, b] = step_segments(c, c.steps[s]);
            g0 = std::min(g0, a), g1 = std::max(g1, b);
        }
        // Per segment and chip, its launches up to the step's end: the step's own and, in the
        // segment of the last exchange before it, the earlier steps' after that exchange (a path
        // from the exchange runs through them; one chip's step starts after they completed, so
        // they are not on its path).
        std::map<size_t, Seg> seg;
        Seg pre;
        pre.local.assign(chips.size(), 0);
        for (size_t c = 0; c < chips.size(); ++c)
            for (const auto& [key, ps] : parts[c]) {
                const auto [g, ls, inside] = key;
                if (g < g0 || g > g1 || ls > s || (ls < s && (g != g0 || one))) continue;
                for (Seg* x : {&seg[g], ls < s ? &pre : nullptr}) {
                    if (!x) continue;
                    x->local.resize(chips.size(), 0);
                    (inside ? x->cross : x->local[c]) += ps;
                }
            }
        double bound = pre.bound();
        for (const auto& kv : seg) bound += kv.second.bound();
        out.step_ps.push_back(bound);
        if (chips.front().steps[s].prefill)
            out.ttft_ps += bound;
        else
            out.tpot_ps += bound, ++decode;
    }
    if (decode) out.tpot_ps /= static_cast<double>(decode);
    return out;
}

}  // namespace sfumato::llm
