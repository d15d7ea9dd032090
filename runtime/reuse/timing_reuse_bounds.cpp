// Kernel timing re-use (timing_reuse.h): the counters and the error bound.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "runtime/reuse/timing_reuse_internal.h"
#include "sim/sc_time_util.h"

namespace sfumato::reuse {

double ReuseCounters::error_bound_fraction() const {
  return kernel_cycles ? error_bound_cycles / static_cast<double>(kernel_cycles)
                       : 0.0;
}

ReuseCounters &ReuseCounters::operator+=(const ReuseCounters &o) {
  launches += o.launches;
  candidates += o.candidates;
  reused += o.reused;
  unique += o.unique;
  checks += o.checks;
  reused_cycles += o.reused_cycles;
  kernel_cycles += o.kernel_cycles;
  unverified += o.unverified;
  replayed_bytes += o.replayed_bytes;
  across_chips += o.across_chips;
  twins += o.twins;
  twins_in_step += o.twins_in_step;
  samples_in_step += o.samples_in_step;
  energy_charged += o.energy_charged;
  error_bound_known = error_bound_known && o.error_bound_known;
  error_bound_cycles += o.error_bound_cycles;
  return *this;
}


namespace {

const Task *done_task(const rt::Context &ctx, size_t record) {
  const Task *t =
      record < ctx.tasks().size() ? ctx.tasks()[record].task.get() : nullptr;
  return t && t->done ? t : nullptr;
}

}  // namespace

void TimingReuse::settle() { m_pending->hand_over(UINT64_MAX); }

namespace {

const Task *done(const TimingReuse::Launch &l) {
  return l.task && l.task->done ? l.task : nullptr;
}

// How much an identity's time varied over its full runs after each chip's
// first (a first is often the one whose code came from HBM, which no later
// launch on that chip repeats): (max - min) / min; -1 with fewer than two
// such runs.
double later_spread(const TimingReuse::Identity &id) {
  uint64_t lo = UINT64_MAX, hi = 0, n = 0;
  for (size_t j = 0; j < id.full.size(); ++j)
    if (const Task *t = id.full[j]->chip_first ? nullptr : done(*id.full[j])) {
      lo = std::min(lo, t->cycles);
      hi = std::max(hi, t->cycles);
      ++n;
    }
  return n >= 2 ? deviation(lo, hi) : -1;
}

// How much one occurrence of an identity varied across chips: over the
// occurrences that two or more chips ran in full, the largest (max - min) /
// min of their runs (-1 where none did); *diff and *base add up their max -
// min and their min.
double chip_spread(const TimingReuse::Identity &id, double *diff = nullptr,
                   double *base = nullptr) {
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> range; // occurrence -> lo, hi
  std::map<uint64_t, std::set<uint32_t>> chips;
  for (const auto &l : id.full)
    if (const Task *t = done(*l)) {
      auto [it, fresh] = range.try_emplace(l->occurrence, t->cycles, t->cycles);
      it->second.first = std::min(it->second.first, t->cycles);
      it->second.second = std::max(it->second.second, t->cycles);
      chips[l->occurrence].insert(l->chip);
    }
  double d = -1;
  for (const auto &[occ, r] : range)
    if (chips[occ].size() >= 2) {
      d = std::max(d, deviation(r.first, r.second));
      if (diff)
        *diff += static_cast<double>(r.second - r.first);
      if (base)
        *base += static_cast<double>(r.first);
    }
  return d;
}

// A full run's difference from its identity's previous full run when the two
// disagree by more than `tol` (0 otherwise, or when it is the first).
double disagreement(const TimingReuse::Launch &l, double tol) {
  const Task *t = done(l);
  if (!t || !l.id)
    return 0;
  const auto &full = l.id->full;
  auto it = std::find_if(full.begin(), full.end(),
                         [&](const auto &o) { return o.get() == &l; });
  while (it != full.begin()) {
    --it;
    const Task *p = done(**it);
    if (!p)
      continue;
    if (deviation(p->cycles, t->cycles) <= tol)
      return 0;
    return static_cast<double>(t->cycles > p->cycles ? t->cycles - p->cycles
                                                     : p->cycles - t->cycles);
  }
  return 0;
}

} // namespace

// Each identity's deviation: Auto's agreeing pair, widened to the spread of
// all its full runs after each chip's first (a pair can agree on a state the
// identity misses, e.g. two runs both cold where the exact run is warm, while
// the runs before it differed); On's full runs against the first (on any chip
// sharing the table). An identity re-used without a deviation takes the
// largest seen on the context (*worst; -1: none measured, the bound unknown).
std::map<const TimingReuse::Local *, double>
TimingReuse::deviations(double *worst) const {
  std::map<const Local *, double> devs;
  *worst = -1;
  for (const auto &kv : m_ids) {
    const Local &id = *kv.second;
    double d = id.dev;
    const auto &full = id.id->full;
    if (m_opt.mode == ReuseMode::On && !full.empty() && done(*full.front()))
      for (size_t j = 1; j < full.size(); ++j)
        if (done(*full[j]))
          d = std::max(d, deviation(full.front()->task->cycles,
                                    full[j]->task->cycles));
    if (m_opt.mode == ReuseMode::Auto && d >= 0)
      d = std::max(d, later_spread(*id.id));
    devs[&id] = d;
    *worst = std::max(*worst, d);
  }
  return devs;
}

LaunchBounds TimingReuse::launch_bounds() const {
  LaunchBounds b;
  double worst = -1;
  const std::map<const Local *, double> devs = deviations(&worst);
  // A stand-in's part: its identity's deviation times the span it was given,
  // plus its measured difference from that span (its own start-up, the
  // rounding of the span over its waves). A full run after the context's
  // first stand-in found the caches as the stand-ins' replayed footprints left
  // them (untimed, approximate), not as their kernels would have: where it
  // disagrees with its identity's previous full run by more than the
  // tolerance, the difference may be the re-use's doing, and counts whole.
  // (Before the first stand-in the run is the exact run: nothing to count.)
  // How much chips in step differ where two ran one launch in full (the
  // highest chip's sample of its twins, chips out of step): their summed
  // differences over their summed times, for twins of identities none
  // measured (their own largest otherwise).
  double diff = 0, base = 0;
  for (const auto &kv : m_table->ids)
    chip_spread(*kv.second, &diff, &base);
  const double table_spread = base > 0 ? diff / base : -1;
  // Chips in step are one machine in one state until a task coupling them
  // starts (timing_reuse.h): a twin whose run and whose own span both ended
  // before the first such task is the same launch on an identical chip.
  const uint64_t apart = first_coupling(*m_table, now_tick().v);
  bool standin_seen = false;
  for (const std::shared_ptr<Launch> &l : m_records) {
    const Task *t = done_task(m_ctx, l->record);
    if (!t)
      continue;
    double cycles = 0;
    bool unverified = false;
    if (l->standin) {
      standin_seen = true;
      cycles = static_cast<double>(t->cycles > l->cycles ? t->cycles - l->cycles
                                                         : l->cycles - t->cycles);
      double d = devs.at(l->local);
      const bool in_step = l->twin && l->tmpl->task &&
                           l->tmpl->task->end_tick.v < apart &&
                           t->end_tick.v < apart;
      if (in_step) {
        // Its error is its twin's: that run's own part (its disagreement
        // with its identity's previous full run), no deviation between
        // occurrences or chips.
        cycles += disagreement(*l->tmpl, m_opt.tolerance);
        b.launches.push_back({l->record, t->cycles, cycles, false, true});
        continue;
      }
      if (l->twin) {
        // Its chip's difference from the twin's: the largest measured where
        // two chips ran an occurrence of the identity in full (else the
        // table's summed), widened by the identity's own deviation.
        d = std::max(d, chip_spread(*l->id));
        if (d < 0)
          d = table_spread;
      }
      unverified = d < 0;
      if (d < 0 && worst < 0)
        b.known = false;
      else
        cycles += (d < 0 ? worst : d) * static_cast<double>(l->cycles);
    } else if (standin_seen) {
      cycles = disagreement(*l, m_opt.tolerance);
    }
    b.launches.push_back({l->record, t->cycles, cycles, unverified});
  }
  return b;
}

ReuseCounters TimingReuse::counters() const {
  ReuseCounters c;
  c.replayed_bytes = m_pending->bytes;
  c.launches = m_launches;
  c.candidates = m_candidates;
  const LaunchBounds b = launch_bounds();
  c.error_bound_known = b.known;
  for (const LaunchBound &l : b.launches) {
    c.kernel_cycles += l.span;
    c.error_bound_cycles += l.cycles;
    c.unverified += l.unverified ? 1 : 0;
    c.twins_in_step += l.in_step ? 1 : 0;
  }
  for (const auto &kv : m_ids) {
    const Local &id = *kv.second;
    // Summed over the chips sharing a table, each identity counts once and
    // its full runs after the first are checks.
    c.unique += id.first ? 1 : 0;
    c.checks += id.checks;
    c.reused += id.reused;
    c.reused_cycles += id.reused_cycles;
    c.across_chips += id.across;
    c.twins += id.twins;
    c.samples_in_step += id.samples_in_step;
    c.energy_charged += id.energy_charged;
  }
  if (!c.error_bound_known)
    c.error_bound_cycles = 0;
  return c;
}

} // namespace sfumato::reuse
