// Step-time re-use for serving (runtime/serve/step_reuse.h).
#include "runtime/serve/step_reuse.h"

#include <cmath>
#include <iterator>
#include <utility>
#include <vector>

namespace sfumato::serve {

StepKey step_key(const llm::StepBatch& b) {
    StepKey k;
    int64_t decodes = 0;
    std::vector<std::pair<int64_t, int64_t>> pieces;  // (new tokens, cached context)
    for (size_t s = 0; s < b.sequences(); ++s) {
        const int64_t q = b.query_lens[s], ctx = s < b.context_lens.size() ? b.context_lens[s] : 0;
        if (q > 1) {
            pieces.emplace_back(q, ctx);
        } else {
            ++decodes;
            k.x += ctx;
        }
    }
    // The batch order is not part of the shape: the engine's plan is the same whatever it (the
    // tokens, sequences and prompt pieces), and what the order changes (which core takes which
    // attention item) is left to the checks.
    std::sort(pieces.begin(), pieces.end());
    k.shape = "d" + std::to_string(decodes);
    for (const auto& [q, ctx] : pieces) k.shape += ',' + std::to_string(q) + '@' + std::to_string(ctx);
    return k;
}

double StepReuseCounters::error_bound_fraction() const {
    const double all = simulated_s + reused_s;
    if (reused == 0 || all <= 0) return 0;
    if (checks == 0) return -1;
    return reused_s * max_dev / all;
}

StepTimes::Given StepTimes::predict(const StepKey& k) const {
    const auto f = m_points.find(k.shape);
    if (f == m_points.end()) return {};
    const std::map<int64_t, double>& p = f->second;
    const double x = static_cast<double>(k.x);
    const auto hi = p.lower_bound(k.x);
    if (hi != p.end() && hi->first == k.x) return {Kind::Exact, hi->second};
    const auto line = [x](const auto& a, const auto& b) {
        const double xa = static_cast<double>(a.first), xb = static_cast<double>(b.first);
        return a.second + (b.second - a.second) * (x - xa) / (xb - xa);
    };
    if (hi != p.end() && hi != p.begin()) {
        const auto lo = std::prev(hi);
        if (hi->first - lo->first <= m_o.span) return {Kind::Interpolated, line(*lo, *hi)};
    }
    // One side: the nearer point within span / 2 and the next one beyond it, at least span / 4
    // from it (a shorter baseline would turn the simulated steps' own variation into a slope).
    const auto extend = [&](auto near, auto far) -> Given {
        const int64_t reach = std::abs(k.x - near->first), base = std::abs(near->first - far->first);
        if (2 * reach > m_o.span || 4 * base < m_o.span || base > m_o.span) return {};
        const double s = line(*far, *near);
        if (!(s > 0)) return {};
        return {Kind::Extrapolated, s};
    };
    Given below, above;
    if (hi != p.begin()) {
        const auto near = std::prev(hi);
        if (near != p.begin()) below = extend(near, std::prev(near));
    }
    if (hi != p.end() && std::next(hi) != p.end()) above = extend(hi, std::next(hi));
    if (below.kind == Kind::None && above.kind == Kind::None) return pooled(p, k.x);
    if (below.kind == Kind::None) return above;
    if (above.kind == Kind::None) return below;
    // Both sides reach (a gap wider than span): the nearer side's line.
    const int64_t db = k.x - std::prev(hi)->first, da = hi->first - k.x;
    return db <= da ? below : above;
}

StepReuseCounters StepTimes::counters() const {
    StepReuseCounters n = m_n;
    n.pooled_slope = pooled_slope();
    n.pooled_baselines = m_slopes;
    return n;
}

double StepTimes::pooled_slope() const {
    if (!m_slope_dirty) return m_slope;
    m_slope_dirty = false;
    // Adjacent points of a shape at least span / 4 and at most span apart (the baselines a
    // shape's own line may use), over all shapes: their median slope.
    std::vector<double> slopes;
    for (const auto& [shape, p] : m_points)
        for (auto a = p.begin(), b = p.begin(); a != p.end() && ++b != p.end(); ++a) {
            const int64_t base = b->first - a->first;
            if (4 * base >= m_o.span && base <= m_o.span)
                slopes.push_back((b->second - a->second) / static_cast<double>(base));
        }
    m_slopes = slopes.size();
    if (slopes.empty()) return m_slope = 0;
    const auto mid = slopes.begin() + static_cast<std::ptrdiff_t>(slopes.size() / 2);
    std::nth_element(slopes.begin(), mid, slopes.end());
    return m_slope = *mid;
}

StepTimes::Given StepTimes::pooled(const std::map<int64_t, double>& p, int64_t x) const {
    // The nearest point within span / 2, and the median slope of every shape's baselines (what
    // a context token adds to a step: its K and V read in every layer, whatever the batch).
    const double slope = pooled_slope();
    if (p.empty() || m_slopes == 0) return {};
    auto near = p.lower_bound(x);
    if (near == p.end() || (near != p.begin() && x - std::prev(near)->first < near->first - x))
        near = std::prev(near);
    if (2 * std::abs(x - near->first) > m_o.span) return {};
    const double s = near->second + slope * static_cast<double>(x - near->first);
    if (!(s > 0)) return {};
    return {Kind::Pooled, s};
}

StepTimes::Given StepTimes::decide(const StepKey& k, Given* check) {
    *check = {};
    if (!m_o.on) return {};
    const Given g = predict(k);
    if (g.kind == Kind::None) return g;
    ++m_reusable;
    if (m_o.check_every > 0 && m_reusable == m_next_check) {
        // Every interval-th re-usable step, the interval doubling after every kChecksPerInterval.
        if (++m_at_interval == kChecksPerInterval) {
            m_at_interval = 0;
            m_interval *= 2;
        }
        m_next_check += m_interval;
        *check = g;
        return {};
    }
    ++m_n.reused;
    m_n.reused_s += g.seconds;
    if (g.kind == Kind::Exact) ++m_n.exact;
    if (g.kind == Kind::Interpolated) ++m_n.interpolated;
    if (g.kind == Kind::Extrapolated) ++m_n.extrapolated;
    if (g.kind == Kind::Pooled) ++m_n.pooled;
    return g;
}

void StepTimes::simulated(const StepKey& k, double seconds, const Given& check) {
    ++m_n.simulated;
    m_n.simulated_s += seconds;
    if (check.kind != Kind::None && seconds > 0) {
        const double dev = (check.seconds - seconds) / seconds;
        ++m_n.checks;
        m_n.max_dev = std::max(m_n.max_dev, std::abs(dev));
        m_n.sum_abs_dev += std::abs(dev);
        m_n.sum_dev += dev;
        const auto kind = static_cast<size_t>(check.kind);
        ++m_n.kind_checks[kind];
        m_n.kind_max_dev[kind] = std::max(m_n.kind_max_dev[kind], std::abs(dev));
    }
    if (!m_o.on) return;
    std::map<int64_t, double>& p = m_points[k.shape];
    if (p.empty()) ++m_n.shapes;
    if (p.emplace(k.x, seconds).second) m_slope_dirty = true;  // a repeat of an x keeps the first point
}

nlohmann::json step_reuse_json(const StepReuseOptions& o, const StepReuseCounters& n) {
    const double bound = n.error_bound_fraction();
    nlohmann::json by_kind = nlohmann::json::object();
    for (size_t i = 1; i < kStepReuseKinds; ++i)
        by_kind[step_reuse_kind_name(static_cast<StepReuseKind>(i))] = {{"checks", n.kind_checks[i]},
                                                                         {"max_deviation", n.kind_max_dev[i]}};
    return {{"on", o.on},
            {"span_tokens", o.span},
            {"check_every", o.check_every},
            {"simulated", n.simulated},
            {"reused", n.reused},
            {"exact", n.exact},
            {"interpolated", n.interpolated},
            {"extrapolated", n.extrapolated},
            {"pooled", n.pooled},
            {"pooled_slope_us_per_token", n.pooled_slope * 1e6},
            {"pooled_baselines", n.pooled_baselines},
            {"checks", n.checks},
            {"shapes", n.shapes},
            {"simulated_s", n.simulated_s},
            {"reused_s", n.reused_s},
            {"check_max_deviation", n.max_dev},
            {"check_mean_abs_deviation", n.checks ? n.sum_abs_dev / static_cast<double>(n.checks) : 0.0},
            {"check_mean_deviation", n.checks ? n.sum_dev / static_cast<double>(n.checks) : 0.0},
            {"checks_by_kind", by_kind},
            {"error_bound_known", bound >= 0},
            {"error_bound_fraction", std::max(0.0, bound)}};
}

}  // namespace sfumato::serve
