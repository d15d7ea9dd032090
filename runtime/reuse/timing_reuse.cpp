// Kernel timing re-use (timing_reuse.h): the per-launch decision, the stand-in
// body and the counters.
#include "runtime/reuse/timing_reuse.h"

#include <algorithm>
#include <cmath>

#include "runtime/reuse/footprint.h"
#include "sim/block_startup.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::reuse {

ReuseMode parse_reuse_mode(const std::string &s, const std::string &option) {
  if (s == "off")
    return ReuseMode::Off;
  if (s == "on")
    return ReuseMode::On;
  if (s == "auto")
    return ReuseMode::Auto;
  throw InputError(option + " must be off, on or auto, not '" + s + "'");
}

const char *reuse_mode_name(ReuseMode m) {
  switch (m) {
  case ReuseMode::On:
    return "on";
  case ReuseMode::Auto:
    return "auto";
  default:
    return "off";
  }
}

ReuseMode resolve_mode(ReuseMode m, bool functional,
                       const std::string &option) {
  if (!functional)
    return m;
  if (m == ReuseMode::On)
    throw InputError(option + " on needs timing mode (functional mode computes "
                              "every kernel's values)");
  return ReuseMode::Off;
}

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
  error_bound_known = error_bound_known && o.error_bound_known;
  error_bound_cycles += o.error_bound_cycles;
  return *this;
}

struct TimingReuse::Identity {
  // Its launches simulated in full, on every chip sharing the table, ordered
  // by (start tick, chip, launch): an order no process interleaving changes.
  std::vector<std::shared_ptr<Launch>> full;
};

struct TimingReuse::Local {
  std::shared_ptr<Identity> id;
  uint64_t reused = 0, reused_cycles = 0;
  uint64_t full = 0;   // this service's full runs of it
  uint64_t checks = 0; // of them those after an earlier full run (any chip)
  bool first = false;  // this service made its first full run
  double dev = -1; // largest relative deviation between full runs a decision
                   // relied on (-1: none)
};

struct TimingReuse::Launch {
  size_t record = 0; // this launch's task record
  uint32_t chip = 0; // the device_id of its chip
  const Identity *id = nullptr; // its identity (held by the service's table)
  const Local *local = nullptr;  // this service's record of it (held by m_ids)
  uint64_t start = 0; // tick its first block started
  // Its chip's first full run of its identity: the state no earlier launch of
  // the identity on this chip left (its code fetched from HBM, its operands
  // cold). Chips in lockstep make such runs at about the same tick, and they
  // agree without saying anything of the chips' later launches.
  bool chip_first = false;
  // Set when its first block starts. Not owning: the context's task records hold the task for the
  // whole run, and an owning pointer here closed a cycle (the task's kernel body holds this launch).
  const Task *task = nullptr;
  bool decided = false, standin = false;
  uint64_t cycles = 0; // the template's span
  std::vector<OperandRange> ops; // its operands
  std::unique_ptr<Footprint> fp; // recorded while it runs in full
};

class ReuseTable {
public:
  std::map<std::string, std::shared_ptr<TimingReuse::Identity>> ids;
  // The configuration of the chips attached (device_id aside).
  bool attached = false;
  DeviceInfo dev;
};

std::shared_ptr<ReuseTable> make_reuse_table() {
  return std::make_shared<ReuseTable>();
}

struct TimingReuse::Pending {
  ITrafficReplay *target = nullptr;
  std::vector<GmRange> ranges;
  uint64_t bytes = 0; // all handed over so far
  void hand_over() {
    if (ranges.empty() || !target)
      return;
    target->replay_traffic(ranges);
    ranges.clear();
  }
};

namespace {

const Task *done_task(const rt::Context &ctx, size_t record) {
  const Task *t =
      record < ctx.tasks().size() ? ctx.tasks()[record].task.get() : nullptr;
  return t && t->done ? t : nullptr;
}

double deviation(uint64_t a, uint64_t b) {
  const uint64_t lo = std::min(a, b), hi = std::max(a, b);
  return lo ? static_cast<double>(hi - lo) / static_cast<double>(lo)
            : (hi ? 1.0 : 0.0);
}

// Whether chip `chip` deciding at tick `now` may take full run l's time: its
// own chip's once completed (one device orders them); another chip's once
// completed strictly before now, so that which of the chips' processes runs
// first within a tick never matters. A chip that replays footprints needs its
// template's.
bool usable(const TimingReuse::Launch &l, uint32_t chip, uint64_t now,
            bool needs_fp) {
  if (!l.task || !l.task->done || (needs_fp && !l.fp))
    return false;
  return l.chip == chip || l.task->end_tick.v < now;
}

// Which completed full run a stand-in takes its time from (null: run this
// launch in full). On: the identity's first full run. Auto: the latest of two
// usable full runs that agree within the tolerance (their deviation goes to
// *dev).
const TimingReuse::Launch *template_of(const TimingReuse::Identity &id,
                                       uint32_t chip, uint64_t now,
                                       bool needs_fp, ReuseMode mode,
                                       double tol, double *dev) {
  if (id.full.empty())
    return nullptr;
  if (mode == ReuseMode::On)
    return usable(*id.full.front(), chip, now, needs_fp) ? id.full.front().get()
                                                         : nullptr;
  // Two chips' first runs do not confirm each other (both found the state no
  // earlier launch left, which a later launch does not find): one of the pair
  // must be a later run on its chip. On one chip only its first run is a
  // first, so this changes nothing there.
  const TimingReuse::Launch *last = nullptr;
  const TimingReuse::Launch *prev = nullptr;
  for (auto it = id.full.rbegin(); it != id.full.rend() && !prev; ++it) {
    if (!usable(**it, chip, now, needs_fp))
      continue;
    if (!last)
      last = it->get();
    else if (!(last->chip_first && (*it)->chip_first))
      prev = it->get();
  }
  if (!prev)
    return nullptr;
  const double d = deviation(prev->task->cycles, last->task->cycles);
  if (d > tol)
    return nullptr;
  *dev = d;
  return last;
}

// Inserts full run l in (start tick, chip, launch) order. Runs arrive in tick
// order, so only those of the same tick can come after it.
void add_full(TimingReuse::Identity &id,
              const std::shared_ptr<TimingReuse::Launch> &l) {
  auto later = [&](const std::shared_ptr<TimingReuse::Launch> &o) {
    if (o->start != l->start)
      return o->start > l->start;
    return o->chip != l->chip ? o->chip > l->chip : o->record > l->record;
  };
  auto pos = id.full.end();
  while (pos != id.full.begin() && later(*(pos - 1)))
    --pos;
  id.full.insert(pos, l);
}

bool same_config(const DeviceInfo &a, const DeviceInfo &b) {
  return a.arch == b.arch && a.cube_cores == b.cube_cores &&
         a.vector_cores == b.vector_cores && a.aiv_per_aic == b.aiv_per_aic &&
         a.clock.ticks(1000000) == b.clock.ticks(1000000) &&
         a.ub_bytes == b.ub_bytes && a.l1_bytes == b.l1_bytes &&
         a.l0a_bytes == b.l0a_bytes && a.l0b_bytes == b.l0b_bytes &&
         a.l0c_bytes == b.l0c_bytes && a.event_ids == b.event_ids &&
         a.gm_bytes == b.gm_bytes && a.reserved_bytes == b.reserved_bytes &&
         a.functional == b.functional &&
         a.vector_bytes_per_cycle == b.vector_bytes_per_cycle &&
         a.cube_macs_fp16 == b.cube_macs_fp16 &&
         a.cube_depth_16bit == b.cube_depth_16bit &&
         a.cube_depth_fp32 == b.cube_depth_fp32 &&
         a.cube_depth_int8 == b.cube_depth_int8 &&
         a.gm_bytes_per_cycle == b.gm_bytes_per_cycle &&
         a.core_gm_read_bytes_per_cycle == b.core_gm_read_bytes_per_cycle &&
         a.core_gm_write_bytes_per_cycle == b.core_gm_write_bytes_per_cycle &&
         a.mem_max_bytes_per_cycle == b.mem_max_bytes_per_cycle &&
         a.core_read_max_bytes_per_cycle == b.core_read_max_bytes_per_cycle &&
         a.core_write_max_bytes_per_cycle ==
             b.core_write_max_bytes_per_cycle &&
         a.l2_bytes == b.l2_bytes && a.core_start_cycles == b.core_start_cycles;
}

} // namespace

TimingReuse::TimingReuse(rt::Context &ctx, const DeviceInfo &dev,
                         const ReuseOptions &opt)
    : m_ctx(ctx), m_opt(opt), m_cube(dev.cube_cores),
      m_vector(dev.vector_cores), m_aiv_per_aic(dev.aiv_per_aic),
      m_chip(dev.device_id), m_l2(dev.l2_bytes),
      m_table(opt.table ? opt.table : make_reuse_table()),
      m_pending(std::make_shared<Pending>()) {
  // Stand-ins leave their traffic where the caller says, else in the device's memory system:
  // a full run after stand-ins then finds the caches as the exact run would (a kernel whose
  // operands the stand-ins before it brought into the L2 runs warm, as it would have).
  m_pending->target = m_opt.traffic ? m_opt.traffic : ctx.device().dev().traffic_replay();
  if (m_opt.mode == ReuseMode::Off)
    return;
  if (!(m_opt.tolerance >= 0))
    throw InputError("timing re-use: the tolerance must be >= 0");
  if (!m_table->attached) {
    m_table->attached = true;
    m_table->dev = dev;
  } else if (!same_config(m_table->dev, dev)) {
    throw SimError(kExitFailure,
                   "timing re-use: chip " + std::to_string(dev.device_id) +
                       " differs from chip " +
                       std::to_string(m_table->dev.device_id) +
                       " in configuration, so they cannot share a table");
  }
  if (m_ctx.has_launch_hook())
    throw InputError("timing re-use cannot share a context with another launch "
                     "hook (a workload recording at the "
                     "instructions level needs every kernel's instructions)");
  m_ctx.set_launch_hook([this](KernelDesc &k) { on_launch(k); });
}

TimingReuse::~TimingReuse() {
  if (m_opt.mode != ReuseMode::Off)
    m_ctx.set_launch_hook(nullptr);
}

void TimingReuse::on_launch(KernelDesc &k) {
  ++m_launches;
  std::string key = m_opt.identity ? m_opt.identity(k) : launch_identity(k);
  if (key.empty())
    return;
  ++m_candidates;
  std::vector<OperandRange> ops = launch_operands(k);
  key += "|l2:";
  if (ops.empty())
    key += '?'; // operands unknown: the L2 state is not part of the identity
  // What is read decides hits; written lines are allocated whether or not they
  // were held.
  for (const OperandRange &o : ops)
    if (!o.written)
      key +=
          static_cast<char>('0' + static_cast<int>(m_l2.held(o.addr, o.bytes)));
  m_l2.touch(ops);
  std::shared_ptr<Local> &local = m_ids[key];
  if (!local) {
    local = std::make_shared<Local>();
    std::shared_ptr<Identity> &shared = m_table->ids[key];
    if (!shared)
      shared = std::make_shared<Identity>();
    local->id = shared;
  }
  auto launch = std::make_shared<Launch>();
  launch->ops = std::move(ops);
  launch->chip = m_chip;
  launch->id = local->id.get();
  launch->local = local.get();
  // The launch's task record is the next one (Context::launch records it after
  // this hook).
  launch->record = m_ctx.tasks().size();
  const uint32_t cores =
      std::max<uint32_t>(1, k.kind == KernelKind::Vector ? m_vector : m_cube);
  const uint64_t waves = (k.block_dim + cores - 1) / cores;
  // Blocks are dispatched one after another (delta cycles apart), `cores` at a
  // time. In the template a wave's blocks started delta apart and, running
  // about equally long, ended delta apart, the last one a wave's span (its span
  // split evenly over its waves) after the first one started. Each stand-in
  // block takes that block time: it charges it less its own start-up (code
  // fetch, initialisation, arguments: they came before its body and differ
  // from the template's, whose code may have come from HBM and whose later
  // blocks' fetches queued behind its earlier blocks' traffic), so its blocks
  // end staggered as the template's did (their completion reports do not pile
  // up) and its waves take as long.
  const uint64_t delta =
      m_opt.block_dispatch_cycles +
      uint64_t{m_opt.core_start_cycles} *
          (k.kind == KernelKind::Mix && m_aiv_per_aic ? 1 + m_aiv_per_aic : 1);
  const uint32_t block_dim = k.block_dim;
  const rt::Context *ctx = &m_ctx;
  const ReuseMode mode = m_opt.mode;
  const double tol = m_opt.tolerance;
  std::shared_ptr<Local> loc = local;
  std::shared_ptr<Pending> pending = m_pending;
  std::function<void(isa::IInstrSink &)> real = std::move(k.body);
  k.body = [ctx, loc, launch, pending, mode, tol, waves, cores, block_dim,
            delta, real](isa::IInstrSink &sink) {
    // This block's own start-up, read before anything else (sim/block_startup.h).
    const uint64_t own_startup = entering_block_startup_cycles();
    if (!launch->decided) {
      // The first block to start decides for the whole launch.
      launch->decided = true;
      launch->task = ctx->tasks().at(launch->record).task.get();
      launch->start = now_tick().v;
      double dev = -1;
      const Launch *tl = template_of(*loc->id, launch->chip, launch->start,
                                     pending->target != nullptr, mode, tol,
                                     &dev);
      if (tl) {
        launch->standin = true;
        launch->cycles = tl->task->cycles;
        ++loc->reused;
        loc->reused_cycles += launch->cycles;
        loc->dev = std::max(loc->dev, dev);
        // Its traffic, as its template moved it, reaches the caches before
        // the next kernel simulated in full looks at them.
        if (pending->target && tl->fp && !launch->ops.empty()) {
          const size_t n = pending->ranges.size();
          tl->fp->ranges_for(launch->ops, pending->ranges);
          for (size_t i = n; i < pending->ranges.size(); ++i)
            pending->bytes += pending->ranges[i].bytes;
        }
      } else {
        pending->hand_over();
        if (pending->target)
          launch->fp = std::make_unique<Footprint>(launch->ops);
        launch->chip_first = loc->full == 0;
        ++loc->full;
        if (loc->id->full.empty())
          loc->first = true;
        else
          ++loc->checks;
        add_full(*loc->id, launch);
      }
    }
    if (!launch->standin) {
      if (!launch->fp) {
        real(sink);
        return;
      }
      FootprintSink recording(sink, *launch->fp);
      real(recording);
      return;
    }
    const uint64_t wave =
        std::min<uint64_t>(sink.block_idx() / cores, waves - 1);
    const uint64_t in_wave =
        std::min<uint64_t>(cores, block_dim - wave * cores);
    const uint64_t used = own_startup + (in_wave - 1) * delta;
    const uint64_t per_wave = launch->cycles / waves;
    const uint64_t body = per_wave > used ? per_wave - used : 1;
    sink.scalar(static_cast<uint32_t>(std::min<uint64_t>(body, 0xffffffffu)));
  };
  m_records.push_back(launch);
}

void TimingReuse::settle() { m_pending->hand_over(); }

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
  bool standin_seen = false;
  for (const std::shared_ptr<Launch> &l : m_records) {
    const Task *t = done_task(m_ctx, l->record);
    if (!t)
      continue;
    double cycles = 0;
    if (l->standin) {
      standin_seen = true;
      cycles = static_cast<double>(t->cycles > l->cycles ? t->cycles - l->cycles
                                                         : l->cycles - t->cycles);
      double d = devs.at(l->local);
      if (d < 0 && worst < 0)
        b.known = false;
      else
        cycles += (d < 0 ? worst : d) * static_cast<double>(l->cycles);
    } else if (standin_seen) {
      cycles = disagreement(*l, m_opt.tolerance);
    }
    b.launches.push_back({l->record, t->cycles, cycles});
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
  }
  double worst = -1;
  const std::map<const Local *, double> devs = deviations(&worst);
  for (const auto &kv : m_ids) {
    const Local &id = *kv.second;
    // Summed over the chips sharing a table, each identity counts once and
    // its full runs after the first are checks.
    c.unique += id.first ? 1 : 0;
    c.checks += id.checks;
    c.reused += id.reused;
    c.reused_cycles += id.reused_cycles;
    if (id.reused && devs.at(&id) < 0)
      c.unverified += id.reused;
  }
  if (!c.error_bound_known)
    c.error_bound_cycles = 0;
  return c;
}

} // namespace sfumato::reuse
