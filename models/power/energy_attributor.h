// Contract: the chip's energy bookkeeping over time. The task scheduler reports each kernel's
// execution start (its first block) and its completion; at each such boundary the attributor
// reads the chip's cumulative event counters (EventReader) and hands the events since the last
// boundary to the kernels running in that interval, in equal shares (none running: to the run,
// outside kernels), and to the power timeline. A kernel's memory-system events (L2, HBM, links,
// GM <-> buffer bytes) and its cores' active cycles are so attributed (exact while kernels run one
// at a time); its pipe busy cycles come exactly from its task's counters.
// The timeline's resolution is the kernel boundaries (a long kernel is one flat interval),
// binned into at most kMaxBins bins (coarsened as the run grows).
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/power/energy_model.h"

namespace sfumato::power {

// Cumulative chip-wide events, read from a chip's stats group; the stats are found once.
class EventReader {
public:
    explicit EventReader(const StatGroup& chip);
    // `now_cycles` turns the task scheduler's occupancy ratios into active core-cycles.
    Events read(double now_cycles) const;

private:
    struct Source {
        Event ev;
        const Counter* counter;  // one of the two
        const Formula* formula;
        bool occupancy;  // a ratio of the elapsed time
    };
    std::vector<Source> m_sources;
};

// Energy over time in bins of equal width (seconds), coarsened (bins merged in pairs) when the
// run outgrows kMaxBins bins.
class PowerTimeline {
public:
    static constexpr size_t kMaxBins = size_t{1} << 16;
    explicit PowerTimeline(double bin_s) : m_bin(bin_s) {}
    // Spreads `joules` uniformly over [t0, t1) (seconds); t1 == t0 puts it in t0's bin.
    void add(double t0, double t1, double joules);
    double bin_seconds() const { return m_bin; }
    const std::vector<double>& bins() const { return m_e; }  // joules per bin

private:
    void grow_to(size_t n);
    double m_bin;
    std::vector<double> m_e;
};

class EnergyAttributor {
public:
    // Per-kernel memory events are kept for the first kMaxKernels kernels (a run with more has
    // no per-launch lists in its summary either); the timeline and the totals cover every one.
    static constexpr size_t kMaxKernels = size_t{1} << 16;
    // Registers chip/power/* (energy by component, total, average and static power of the run so
    // far) under `chip`, so stats.h5 holds the breakdown.
    EnergyAttributor(StatGroup& chip, const PowerParams& p, ChipShape shape);
    // At a kernel's execution start and at its completion (the tick, in ps).
    void kernel_started(uint64_t task_id, uint64_t tick_ps);
    void kernel_finished(uint64_t task_id, uint64_t tick_ps);
    // The same, with the task: also applies a charge_like() of it.
    void kernel_finished(const Task& t, uint64_t tick_ps);
    // Timing re-use (runtime/reuse/timing_reuse.h): kernel `task_id` runs as a stand-in, which
    // issues none of its kernel's instructions and moves none of its data, in place of a kernel
    // whose events were `like` (kernel_activity() of its template, on this chip or another of
    // the same configuration). When it completes, its activity events are made like's: the
    // difference to its own (its pipes' busy cycles, its start-up's traffic, its share of what
    // ran beside it) is added to the run, to its own events and, spread over its span, to the
    // power timeline. Its active core cycles become like's too: its blocks each hold a core for
    // the wave's whole span, where its kernel's blocks end as their work does (an imbalanced
    // kernel's cores idle before the last block ends; counting the stand-in's own occupancy put
    // a 4-tiny-chip training step's kernel energy 1.28 % over the exact run's, its ranks' core
    // clock 2.6-4 %: docs/timing_reuse.md). HBM refreshes stay
    // its own: the HBM refreshed for its time. Call before it completes.
    void charge_like(uint64_t task_id, const Events& like);
    // A completed kernel's events as its energy is priced (kernel_energy(): its pipes' busy
    // cycles and its span's events); false when its span's events were not kept (kMaxKernels).
    bool kernel_activity(const Task& t, Events& out) const;
    // What charge_like() added to the run so far (summed over stand-ins, by event).
    const Events& charged() const { return m_charged; }
    // Brings the bookkeeping to `tick_ps` (the end of the run): the last interval.
    void finish(uint64_t tick_ps);
    // A kernel's span-attributed events (span_part; zero for a kernel not kept).
    Events kernel_span_events(uint64_t task_id) const;
    // Span-attributed events of intervals with no kernel running.
    const Events& outside_events() const { return m_outside; }
    // Dynamic energy over time (static power not included).
    const PowerTimeline& timeline() const { return m_timeline; }
    const EnergyModel& model() const { return m_model; }
    // Every event the chip counted up to `now_cycles` (its stats, read now).
    // (With what stand-ins were charged: charge_like().)
    Events run_events(double now_cycles) const;

private:
    void close_interval(uint64_t tick_ps);
    // The run so far: every event counted up to now, priced, with static power over the time.
    Breakdown breakdown_now() const;
    // The reader of the chip's stats as they are now: kept while the stats tree holds the same
    // stats (each of the power formulas reads every event, and finding them walks the whole tree
    // with a path string per stat).
    const EventReader& current_reader() const;
    void add_stats();
    const StatGroup& m_chip;
    StatGroup m_stats;
    std::vector<std::unique_ptr<Formula>> m_formulas;
    EnergyModel m_model;
    std::unique_ptr<EventReader> m_reader;  // made at the first boundary (after elaboration)
    mutable std::unique_ptr<EventReader> m_now_reader;  // current_reader()'s, and the tree it was made from
    mutable uint64_t m_now_tree = 0;
    Events m_last;
    double m_last_s = 0;
    std::vector<uint64_t> m_running;
    std::vector<double> m_running_since;  // per running kernel: its start (s)
    std::unordered_map<uint64_t, Events> m_charges;  // stand-ins' charge_like(), applied at completion
    Events m_charged;
    std::unordered_map<uint64_t, Events> m_kernels;
    Events m_outside;
    PowerTimeline m_timeline;
};

// The events attributed to kernels by their spans: the memory system's (L2, HBM, links, GM <->
// buffer bytes by buffer), the cores' active cycles, and the split of the cube's and the vector unit's busy
// cycles by class; the pipes' busy cycles themselves come from the tasks.
Events span_part(const Events& e);

}  // namespace sfumato::power
