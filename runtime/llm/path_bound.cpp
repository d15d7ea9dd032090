// Timing re-use's bound propagated along a multi-chip run's critical path (path_bound.h).
#include "runtime/llm/path_bound.h"

#include <algorithm>
#include <map>

#include "sim/error.h"

namespace sfumato::llm {

ChipLaunches chip_launches(const rt::Context& ctx, const std::vector<StepRecord>& steps,
                           const std::vector<size_t>& exchanges, const reuse::LaunchBounds& bounds,
                           double ps_per_cycle) {
    ChipLaunches c;
    c.known = bounds.known;
    for (const StepRecord& s : steps) c.steps.push_back({s.prefill, s.begin_ps, s.begin_ps + s.ps});
    for (size_t i : exchanges) c.exchange_starts.push_back(ctx.tasks().at(i).task->start_tick.v);
    for (const reuse::LaunchBound& l : bounds.launches) {
        if (l.cycles <= 0) continue;
        const size_t g = static_cast<size_t>(std::upper_bound(exchanges.begin(), exchanges.end(), l.record) -
                                             exchanges.begin());
        c.launches.push_back({ctx.tasks().at(l.record).task->start_tick.v, g, l.cycles * ps_per_cycle});
    }
    return c;
}

namespace {

// Chip c's launch bounds by (segment, step): the segment is the number of exchanges launched
// before it; the step the first whose end is not before the launch's start (a launch between two
// steps belongs to the next one).
using Parts = std::map<std::pair<size_t, size_t>, double>;

Parts chip_parts(const ChipLaunches& c) {
    Parts p;
    for (const ChipLaunches::Launch& l : c.launches) {
        size_t s = 0;
        while (s + 1 < c.steps.size() && c.steps[s].end < l.start) ++s;
        p[{l.exchange, s}] += l.bound;
    }
    return p;
}

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
        std::map<size_t, std::vector<double>> seg;
        std::vector<double> pre(chips.size(), 0);
        for (size_t c = 0; c < chips.size(); ++c)
            for (const auto& [key, ps] : parts[c]) {
                const auto [g, ls] = key;
                if (g < g0 || g > g1 || ls > s || (ls < s && (g != g0 || one))) continue;
                auto& v = seg[g];
                v.resize(chips.size(), 0);
                v[c] += ps;
                if (ls < s) pre[c] += ps;
            }
        double bound = *std::max_element(pre.begin(), pre.end());
        for (const auto& kv : seg) bound += *std::max_element(kv.second.begin(), kv.second.end());
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
