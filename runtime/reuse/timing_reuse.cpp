// Kernel timing re-use (timing_reuse.h): the per-launch decision, the stand-in
// body and the counters.
#include "runtime/reuse/timing_reuse.h"

#include <algorithm>
#include <cmath>

#include "runtime/reuse/footprint.h"
#include "sim/error.h"

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
  std::vector<std::shared_ptr<Launch>>
      full; // its launches simulated in full, in launch order
  uint64_t reused = 0, reused_cycles = 0;
  double dev = -1; // largest relative deviation between full runs a decision
                   // relied on (-1: none)
};

struct TimingReuse::Launch {
  size_t record = 0; // this launch's task record
  bool decided = false, standin = false;
  uint64_t cycles = 0,
           startup = 0; // the template's span and longest block start-up
  std::vector<OperandRange> ops; // its operands
  std::unique_ptr<Footprint> fp; // recorded while it runs in full
};

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

// Which completed full run a stand-in takes its time from (null: run this
// launch in full). On: the identity's first full run. Auto: the latest of two
// completed full runs that agree within the tolerance (their deviation goes to
// *dev).
const TimingReuse::Launch *template_of(const rt::Context &ctx,
                                       const TimingReuse::Identity &id,
                                       ReuseMode mode, double tol,
                                       double *dev) {
  if (id.full.empty())
    return nullptr;
  if (mode == ReuseMode::On)
    return done_task(ctx, id.full.front()->record) ? id.full.front().get()
                                                   : nullptr;
  const TimingReuse::Launch *last = nullptr;
  const TimingReuse::Launch *prev = nullptr;
  for (auto it = id.full.rbegin(); it != id.full.rend() && !prev; ++it) {
    if (!done_task(ctx, (*it)->record))
      continue;
    (last ? prev : last) = it->get();
  }
  if (!prev)
    return nullptr;
  const double d = deviation(done_task(ctx, prev->record)->cycles,
                             done_task(ctx, last->record)->cycles);
  if (d > tol)
    return nullptr;
  *dev = d;
  return last;
}

} // namespace

TimingReuse::TimingReuse(rt::Context &ctx, const DeviceInfo &dev,
                         const ReuseOptions &opt)
    : m_ctx(ctx), m_opt(opt), m_cube(dev.cube_cores),
      m_vector(dev.vector_cores), m_aiv_per_aic(dev.aiv_per_aic),
      m_l2(dev.l2_bytes), m_pending(std::make_shared<Pending>()) {
  m_pending->target = m_opt.traffic;
  if (m_opt.mode == ReuseMode::Off)
    return;
  if (!(m_opt.tolerance >= 0))
    throw InputError("timing re-use: the tolerance must be >= 0");
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
  std::shared_ptr<Identity> &id = m_ids[key];
  if (!id)
    id = std::make_shared<Identity>();
  auto launch = std::make_shared<Launch>();
  launch->ops = std::move(ops);
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
  // block charges that block time less the template's longest block start-up
  // (its own start-up comes before its body): its blocks end staggered as the
  // template's did (their completion reports do not pile up) and its waves take
  // as long.
  const uint64_t delta =
      m_opt.block_dispatch_cycles +
      uint64_t{m_opt.core_start_cycles} *
          (k.kind == KernelKind::Mix && m_aiv_per_aic ? 1 + m_aiv_per_aic : 1);
  const uint32_t block_dim = k.block_dim;
  const rt::Context *ctx = &m_ctx;
  const ReuseMode mode = m_opt.mode;
  const double tol = m_opt.tolerance;
  std::shared_ptr<Identity> ident = id;
  std::shared_ptr<Pending> pending = m_pending;
  std::function<void(isa::IInstrSink &)> real = std::move(k.body);
  k.body = [ctx, ident, launch, pending, mode, tol, waves, cores, block_dim,
            delta, real](isa::IInstrSink &sink) {
    if (!launch->decided) {
      // The first block to start decides for the whole launch.
      launch->decided = true;
      double dev = -1;
      const Launch *tl = template_of(*ctx, *ident, mode, tol, &dev);
      if (tl) {
        const Task *t = done_task(*ctx, tl->record);
        launch->standin = true;
        launch->cycles = t->cycles;
        launch->startup = t->startup_cycles;
        ++ident->reused;
        ident->reused_cycles += t->cycles;
        ident->dev = std::max(ident->dev, dev);
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
        ident->full.push_back(launch);
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
    const uint64_t used = launch->startup + (in_wave - 1) * delta;
    const uint64_t per_wave = launch->cycles / waves;
    const uint64_t body = per_wave > used ? per_wave - used : 1;
    sink.scalar(static_cast<uint32_t>(std::min<uint64_t>(body, 0xffffffffu)));
  };
  m_records.push_back(launch);
}

void TimingReuse::settle() { m_pending->hand_over(); }

ReuseCounters TimingReuse::counters() const {
  ReuseCounters c;
  c.replayed_bytes = m_pending->bytes;
  c.launches = m_launches;
  c.candidates = m_candidates;
  c.unique = m_ids.size();
  // A stand-in reproduces its template's span only up to its own start-up and
  // the rounding of the span over its waves: that part of its error is
  // measured, not estimated.
  double reproduction = 0;
  for (const std::shared_ptr<Launch> &l : m_records) {
    const Task *t = done_task(m_ctx, l->record);
    if (!t)
      continue;
    c.kernel_cycles += t->cycles;
    if (l->standin)
      reproduction +=
          static_cast<double>(t->cycles > l->cycles ? t->cycles - l->cycles
                                                    : l->cycles - t->cycles);
  }
  c.error_bound_cycles = reproduction;
  // Each identity's deviation: Auto's agreeing pairs; On's full runs against
  // the first.
  std::vector<double> devs(m_ids.size(), -1);
  double worst = -1;
  size_t i = 0;
  for (const auto &kv : m_ids) {
    const Identity &id = *kv.second;
    double d = id.dev;
    if (m_opt.mode == ReuseMode::On && !id.full.empty())
      if (const Task *first = done_task(m_ctx, id.full.front()->record))
        for (size_t j = 1; j < id.full.size(); ++j)
          if (const Task *t = done_task(m_ctx, id.full[j]->record))
            d = std::max(d, deviation(first->cycles, t->cycles));
    devs[i++] = d;
    worst = std::max(worst, d);
    c.checks += id.full.empty() ? 0 : id.full.size() - 1;
  }
  i = 0;
  for (const auto &kv : m_ids) {
    const Identity &id = *kv.second;
    double d = devs[i++];
    c.reused += id.reused;
    c.reused_cycles += id.reused_cycles;
    if (!id.reused)
      continue;
    if (d < 0) {
      c.unverified += id.reused;
      if (worst < 0) {
        c.error_bound_known = false;
        continue;
      }
      d = worst;
    }
    c.error_bound_cycles += d * static_cast<double>(id.reused_cycles);
  }
  return c;
}

} // namespace sfumato::reuse
