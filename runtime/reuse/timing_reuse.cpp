// Kernel timing re-use (timing_reuse.h): the per-launch decision, the stand-in
// body and the counters.
#include "runtime/reuse/timing_reuse.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runtime/reuse/footprint.h"
#include "runtime/reuse/timing_reuse_internal.h"
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

std::shared_ptr<ReuseTable> make_reuse_table() {
  return std::make_shared<ReuseTable>();
}

double deviation(uint64_t a, uint64_t b) {
  const uint64_t lo = std::min(a, b), hi = std::max(a, b);
  return lo ? static_cast<double>(hi - lo) / static_cast<double>(lo)
            : (hi ? 1.0 : 0.0);
}

namespace {

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

// A twin for a launch of chips in lockstep (timing_reuse.h): another chip's
// full run of the identity and the same occurrence that started strictly
// before `now`, running or done; the latest such (null: none).
const TimingReuse::Launch *twin_of(const TimingReuse::Identity &id,
                                   uint32_t chip, uint64_t occurrence,
                                   uint64_t now, bool needs_fp) {
  for (auto it = id.full.rbegin(); it != id.full.rend(); ++it) {
    const TimingReuse::Launch &l = **it;
    if (l.start >= now || l.chip == chip || l.occurrence != occurrence ||
        !l.task || (needs_fp && !l.fp))
      continue;
    return &l;
  }
  return nullptr;
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

} // namespace

bool couples_chips(const Task &t) {
  return t.kind == TaskKind::NotifyRecord || t.kind == TaskKind::NotifyWait ||
         (t.kind == TaskKind::Memcpy && t.copy.dir == CopyDir::P2P);
}

uint64_t first_coupling(const ReuseTable &table, uint64_t before) {
  uint64_t first = UINT64_MAX;
  for (const rt::Context *c : table.ctxs)
    for (const rt::TaskRecord &r : c->tasks()) {
      // start_tick is set when the chip's scheduler takes the task (a
      // notify wait: once its notify arrived); 0 until then (no task that
      // couples chips can start at tick 0: every host call takes time).
      const uint64_t s = r.task ? r.task->start_tick.v : 0;
      if (s != 0 && s < before && couples_chips(*r.task))
        first = std::min(first, s);
    }
  return first;
}

namespace {

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
         a.l1_l0a_bytes_per_cycle == b.l1_l0a_bytes_per_cycle &&
         a.l1_l0b_bytes_per_cycle == b.l1_l0b_bytes_per_cycle &&
         a.l2_bytes == b.l2_bytes && a.core_start_cycles == b.core_start_cycles;
}

} // namespace

// What a launch's first block runs to decide for the whole launch: a stand-in
// of a usable template, else (chips in lockstep) of a twin, else a full run.
struct TimingReuse::Decider {
  const rt::Context *ctx = nullptr;
  std::shared_ptr<Local> loc;
  std::shared_ptr<Launch> launch;
  std::shared_ptr<Pending> pending;
  ReuseMode mode = ReuseMode::Off;
  double tol = 0;
  std::shared_ptr<ReuseTable> table;
  bool twins = false;
  uint32_t sample = 0;

  // The stand-in is charged its (completed) template's dynamic energy.
  void charge_energy(const Launch &l) const {
    std::vector<double> a;
    if (l.tmpl->dev && l.dev && l.tmpl->dev->kernel_activity(*l.tmpl->task, a) &&
        l.dev->charge_standin(*l.task, a))
      ++loc->energy_charged;
  }

  void decide() const {
    Launch &l = *launch;
    // Decided at a block's start, long after every chip of the run attached.
    const bool lockstep = twins && table->chips.size() > 1;
    const bool defer = lockstep && l.chip != *table->chips.begin();
    l.deciding = true;
    l.task = ctx->tasks().at(l.record).task.get();
    const bool needs_fp = pending->target != nullptr;
    double dev = -1;
    const Launch *tl = template_of(*loc->id, l.chip, now_tick().v, needs_fp,
                                   mode, tol, &dev);
    if (!tl && defer) {
      // A lower chip's run of this tick is there to be found one tick later,
      // whichever process ran first (timing_reuse.h).
      l.decided_event = std::make_unique<sc_core::sc_event>();
      sc_core::wait(to_sc_time(Tick(1)));
      tl = template_of(*loc->id, l.chip, now_tick().v, needs_fp, mode, tol,
                       &dev);
    }
    l.start = now_tick().v;
    if (!tl && lockstep) {
      tl = twin_of(*loc->id, l.chip, l.occurrence, l.start, needs_fp);
      // A sample of the highest chip's twins runs in full: measured, the
      // chips' differences bound the others' (timing_reuse_bounds.cpp).
      // Not while no chip has started a task coupling chips: the chips are
      // then one machine in one state, and a full run here would measure
      // only the replayed footprints this chip's caches hold instead of the
      // twin's kernels' own traffic (what the chip's exact run would find).
      if (tl && sample && l.chip == *table->chips.rbegin() &&
          (loc->hash + l.occurrence) % sample == 0) {
        if (!table->apart)
          table->apart = first_coupling(*table, l.start) != UINT64_MAX;
        if (table->apart)
          tl = nullptr;
        else
          ++loc->samples_in_step;
      }
      l.twin = tl != nullptr;
    }
    if (tl) {
      ++pending->standins;
      l.standin = true;
      l.tmpl = tl;
      ++loc->reused;
      if (tl->chip != l.chip)
        ++loc->across;
      if (l.twin) {
        ++loc->twins;
      } else {
        l.cycles = tl->task->cycles;
        l.cycles_known = true;
        loc->reused_cycles += l.cycles;
        loc->dev = std::max(loc->dev, dev);
        charge_energy(l);
      }
      // Its traffic, as its template moved it, reaches the caches before the
      // next kernel simulated in full looks at them (once the template's
      // footprint is final).
      if (pending->target && tl->fp && !l.ops.empty())
        pending->queue.push_back({tl, &l});
    } else {
      pending->hand_over(l.start);
      if (pending->target)
        l.fp = std::make_unique<Footprint>(l.ops);
      l.chip_first = loc->full == 0;
      l.standins_before = pending->standins;
      auto [tp, fresh] = pending->type_pos.try_emplace(l.type, l.l2_pos);
      if (!fresh) {
        l.code_gap = l.l2_pos - std::min(l.l2_pos, tp->second);
        tp->second = l.l2_pos;
      }
      ++loc->full;
      if (loc->id->full.empty())
        loc->first = true;
      else
        ++loc->checks;
      add_full(*loc->id, launch);
    }
    l.decided = true;
    if (l.decided_event)
      l.decided_event->notify(sc_core::SC_ZERO_TIME);
  }
};

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
  m_pending->chip = m_chip;
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
  if (!m_opt.check_log.empty()) {
    std::FILE *f = std::fopen(m_opt.check_log.c_str(), "a");
    if (!f)
      throw InputError("timing re-use: cannot write the check log '" +
                       m_opt.check_log + "'");
    std::fclose(f);
  }
  m_table->chips.insert(dev.device_id);
  m_table->ctxs.push_back(&ctx);
  if (m_ctx.has_launch_hook())
    throw InputError("timing re-use cannot share a context with another launch "
                     "hook (a workload recording at the "
                     "instructions level needs every kernel's instructions)");
  m_ctx.set_launch_hook([this](KernelDesc &k) { on_launch(k); });
}

TimingReuse::~TimingReuse() {
  if (m_opt.mode == ReuseMode::Off)
    return;
  m_ctx.set_launch_hook(nullptr);
  write_check_log();
}

void TimingReuse::on_launch(KernelDesc &k) {
  ++m_launches;
  std::string key = m_opt.identity ? m_opt.identity(k) : launch_identity(k);
  if (key.empty())
    return;
  ++m_candidates;
  std::vector<OperandRange> ops = launch_operands(k);
  // What is read decides hits; written lines are allocated whether or not they
  // were held. Operands unknown: the L2 state is not part of the identity.
  std::string held = ops.empty() ? "?" : "";
  for (const OperandRange &o : ops)
    if (!o.written)
      held +=
          static_cast<char>('0' + static_cast<int>(m_l2.held(o.addr, o.bytes)));
  key += "|l2:" + held;
  m_l2.touch(ops);
  const uint64_t l2_pos = m_l2.position();
  std::shared_ptr<Local> &local = m_ids[key];
  if (!local) {
    local = std::make_shared<Local>();
    // FNV-1a of the key: the same on every chip and in every build.
    for (unsigned char c : key)
      local->hash = (local->hash ^ c) * 1099511628211ull;
    std::shared_ptr<Identity> &shared = m_table->ids[key];
    if (!shared)
      shared = std::make_shared<Identity>();
    local->id = shared;
  }
  auto launch = std::make_shared<Launch>();
  launch->ops = std::move(ops);
  launch->type = k.type.empty() ? k.name : k.type;
  launch->held = std::move(held);
  launch->l2_pos = l2_pos;
  launch->chip = m_chip;
  launch->dev = &m_ctx.device().dev();
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
  launch->occurrence = local->launched++;
  Decider d;
  d.ctx = &m_ctx;
  d.loc = local;
  d.launch = launch;
  d.pending = m_pending;
  d.mode = m_opt.mode;
  d.tol = m_opt.tolerance;
  d.table = m_table;
  // Twins (timing_reuse.h): chips in lockstep, a launch of one wave (the
  // blocks of a later wave would have to wait for the twin's whole span).
  d.twins = m_opt.lockstep && waves == 1;
  d.sample = m_opt.twin_sample;
  std::function<void(isa::IInstrSink &)> real = std::move(k.body);
  k.body = [d, waves, cores, block_dim, delta, real](isa::IInstrSink &sink) {
    // This block's own start-up, read before anything else (sim/block_startup.h).
    const uint64_t own_startup = entering_block_startup_cycles();
    Launch &l = *d.launch;
    if (!l.decided) {
      if (!l.deciding) {
        // The first block to start decides for the whole launch.
        d.decide();
      } else {
        // Another block waits for the first one's decision.
        while (!l.decided)
          sc_core::wait(*l.decided_event);
      }
    }
    if (!l.standin) {
      if (!l.fp) {
        real(sink);
        return;
      }
      FootprintSink recording(sink, *l.fp);
      real(recording);
      return;
    }
    if (!l.cycles_known) {
      // A twin's time is known when it completed (it started before this
      // launch, so it ends before this one would).
      while (!l.tmpl->task->done)
        sc_core::wait(l.tmpl->task->done_event);
      if (!l.cycles_known) {
        l.cycles = l.tmpl->task->cycles;
        l.cycles_known = true;
        d.loc->reused_cycles += l.cycles;
        d.charge_energy(l);
      }
    }
    const uint64_t wave =
        std::min<uint64_t>(sink.block_idx() / cores, waves - 1);
    const uint64_t in_wave =
        std::min<uint64_t>(cores, block_dim - wave * cores);
    const uint64_t used = own_startup + (in_wave - 1) * delta;
    const uint64_t per_wave = l.cycles / waves;
    const uint64_t body = per_wave > used ? per_wave - used : 1;
    sink.scalar(static_cast<uint32_t>(std::min<uint64_t>(body, 0xffffffffu)));
  };
  m_records.push_back(launch);
}


} // namespace sfumato::reuse
