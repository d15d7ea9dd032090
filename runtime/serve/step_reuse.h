// Step-time re-use for serving (serve.step_reuse), a stated approximation for speed on top of the
// kernels' timing re-use (runtime/reuse): a scheduler step whose shape was simulated before takes
// its time from those simulated steps instead of running its kernels.
// A step's shape (step_key) is everything of its padded batch but its decodes' cached contexts and
// the batch order: how many sequences have one new token (decodes, padding included) and each
// prompt piece's new tokens and cached context (sorted). The order is left out because the
// engine's plan is the same whatever it; what it changes (which core takes which attention item)
// is part of what the checks measure. What varies from step to step in a decode-heavy batch, the
// decodes' contexts (each grows by one token per step), enters as one number, x: their sum, which a
// decode's paged attention reads in proportion to. The chip's timer adds to the shape whether the
// step's plan is the one the last simulated step ran (switching plans changes a step's time: the
// kernels' code and the L2 as the previous step left them; measured on the tiny model, the
// checks' largest deviation fell from 13 % to 6 % with it). Per shape the simulated steps are
// points (x, seconds); a step of that shape and x:
//   - takes the time of a simulated step of the same x (exact: the same shape and context sum);
//   - or the linear interpolation between the nearest simulated x below and above, when they are
//     at most `span` tokens apart;
//   - or the line through the two nearest points on one side, when x is at most span / 2 beyond
//     the nearer one and the two are at least span / 4 apart (a batch whose contexts grow);
//   - or (pooled) the nearest point's time, when x is at most span / 2 from it, plus the median
//     slope over every shape's adjacent points span / 4 to span apart (what a context token adds
//     to a step: its K and V read in every layer, whatever the batch), when some shape has one;
//   - else it is simulated (and becomes a point).
// Every `check_every`-th step that could be re-used is simulated anyway and compared with what it
// would have been given (the interval doubling after every 4 checks, so a long run's checks grow
// with the logarithm of its length, not in proportion): the relative deviations of these checks are the measured error, and the
// bound stated on the summed step time is the re-used steps' time times the largest deviation
// seen (unknown without a check). A re-used step's kernels do not run: the chip's trace and
// statistics hold the simulated steps only, the host idles for the step's time, and the memory
// system keeps the state the last simulated step left (a decode step streams every weight, so the
// next step finds about the same L2 either way).
// Deterministic: the same steps in the same order give the same decisions and times.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/llm/step_graph.h"

namespace sfumato::serve {

struct StepReuseOptions {
    bool on = false;
    int64_t span = 2048;       // decode context tokens (summed) an interpolation may bridge
    // Simulate the N-th re-usable step anyway as a check, then every N-th, N doubling after every
    // 4 checks (about 4 checks per doubling of a run's length; 0: no checks).
    int64_t check_every = 16;
};

// How a step's time is given (None: it is simulated).
enum class StepReuseKind : uint8_t { None, Exact, Interpolated, Extrapolated, Pooled };

// The kind's name in summary.json ("none", "exact", ...). A switch without a default: a kind
// added to the enum and not named here fails the build (-Wswitch under -Werror); an out-of-range
// value gives null.
constexpr const char* step_reuse_kind_name(StepReuseKind k) {
    switch (k) {
        case StepReuseKind::None: return "none";
        case StepReuseKind::Exact: return "exact";
        case StepReuseKind::Interpolated: return "interpolated";
        case StepReuseKind::Extrapolated: return "extrapolated";
        case StepReuseKind::Pooled: return "pooled";
    }
    return nullptr;
}

// How many kinds there are (None included): the values the name function names, counted from 0,
// so the per-kind counters below grow with the enum and its names.
inline constexpr size_t kStepReuseKinds = [] {
    size_t n = 0;
    while (step_reuse_kind_name(static_cast<StepReuseKind>(n)) != nullptr) ++n;
    return n;
}();
static_assert(kStepReuseKinds == static_cast<size_t>(StepReuseKind::Pooled) + 1,
              "the step re-use kinds are numbered 0.. without gaps");

struct StepKey {
    std::string shape;  // new tokens per sequence, and prompt pieces' contexts
    int64_t x = 0;      // the decodes' (one new token) cached contexts, summed
};
StepKey step_key(const llm::StepBatch& b);

struct StepReuseCounters {
    size_t simulated = 0;  // steps run as kernels (checks included)
    size_t reused = 0, exact = 0, interpolated = 0, extrapolated = 0, pooled = 0;
    size_t checks = 0;  // re-usable steps simulated anyway
    size_t shapes = 0;  // distinct shapes simulated
    double simulated_s = 0, reused_s = 0;  // the steps' simulated seconds
    // Checks: relative deviation (given - simulated) / simulated: largest absolute, summed
    // absolute and summed signed.
    double max_dev = 0, sum_abs_dev = 0, sum_dev = 0;
    // The same per way a check's time would have been given (indexed by StepReuseKind; None
    // unused): how many checks and their largest deviation.
    size_t kind_checks[kStepReuseKinds] = {};
    double kind_max_dev[kStepReuseKinds] = {};
    // The slope pooled over the shapes (seconds per context token, StepTimes::pooled_slope) and
    // how many baselines it is the median of.
    double pooled_slope = 0;
    size_t pooled_baselines = 0;
    // The estimated bound on the error of the summed step time, as a fraction of it: re-used
    // seconds x max_dev / all seconds (0 with nothing re-used; negative: unknown, no check ran).
    double error_bound_fraction() const;
};

class StepTimes {
public:
    explicit StepTimes(StepReuseOptions o)
        : m_o(o), m_interval(static_cast<size_t>(std::max<int64_t>(1, o.check_every))), m_next_check(m_interval) {}
    static constexpr size_t kChecksPerInterval = 4;
    using Kind = StepReuseKind;
    struct Given {
        Kind kind = Kind::None;
        double seconds = 0;
    };
    // What the simulated steps give a step of key k (Kind::None: nothing within reach).
    Given predict(const StepKey& k) const;
    // The decision for the next step: its given time (re-use it), or Kind::None (simulate it:
    // nothing within reach, or a check is due; `check` then holds what it would have been given).
    Given decide(const StepKey& k, Given* check);
    // A simulated step of key k took `seconds`; `check`: what decide() would have given it.
    void simulated(const StepKey& k, double seconds, const Given& check);
    StepReuseCounters counters() const;  // with the pooled slope as it stands
    const StepReuseOptions& options() const { return m_o; }
    // The median slope (seconds per context token) over every shape's adjacent points at least
    // span / 4 and at most span apart; 0 with none.
    double pooled_slope() const;

private:
    Given pooled(const std::map<int64_t, double>& p, int64_t x) const;
    StepReuseOptions m_o;
    std::map<std::string, std::map<int64_t, double>> m_points;  // shape -> x -> seconds
    size_t m_reusable = 0, m_interval, m_next_check, m_at_interval = 0;
    StepReuseCounters m_n;
    mutable bool m_slope_dirty = false;
    mutable double m_slope = 0;
    mutable size_t m_slopes = 0;
};

// summary.json's `timer.step_reuse`: the options and the counters.
nlohmann::json step_reuse_json(const StepReuseOptions& o, const StepReuseCounters& n);

}  // namespace sfumato::serve
