// Kernel timing re-use, a runtime service and a stated modelling shortcut for
// timing-mode speed: a kernel launch whose identity matches an earlier one's on
// the same context runs as a stand-in whose blocks occupy the same cores for
// the time an earlier full simulation of that identity took, instead of its own
// instructions and memory requests. The identity (launch_identity()) is the
// operator (node op type, opset, attributes but the fused nodes' names,
// constant inputs: the values of integer ones and of float ones up to 16
// elements, which operators plan from; a larger float constant is a weight or
// bias, whose values a timing-mode kernel never reads, known by shape and
// type); or the operator-library call and its
// arguments), its operands' shapes, dtypes, formats, strides and address
// alignment, the launch part, block count, core kind, argument and code sizes,
// plus the state that can change its time: how much of each operand it reads an
// LRU L2 of the chip's size would still hold (L2Recency).
//
// Contract (for run, replay, train-step and the llm/serve host programs):
// - Construct a TimingReuse on a Context before the launches it should cover,
// with the chip's
//   DeviceInfo and ReuseOptions (mode, tolerance, the task scheduler's dispatch
//   costs); it installs the context's launch hook (throws InputError if another
//   hook is installed, e.g. a workload recorder: recording needs every kernel's
//   instructions) and removes it when destroyed. Keep it alive until the device
//   is synchronised, then read counters() (sum ranks with +=).
// - Mode Off does nothing. Mode On gives every repeat of an identity (from its
// second launch) the
//   first full simulation's time. Mode Auto simulates an identity in full until
//   two full runs of it agree within `tolerance` (relative cycles), then
//   re-uses the latest full run's time; an identity whose runs disagree keeps
//   being simulated. Both are timing mode only (a stand-in computes no values):
//   resolve_mode() turns Auto into Off in functional mode and rejects On there.
// - A stand-in is decided once per launch, when its first block starts: if the
// template launch
//   has not completed yet (one in-order stream makes that rare), the launch
//   runs in full (a check).
// - counters(): launches seen, candidates (launches with an identity), reused,
// unique identities,
//   full runs that were checks, and the estimated error bound on the summed
//   kernel cycles: for each identity, its deviation (Auto: the larger of the
//   agreeing pair's and the spread of its full runs after each chip's first; On:
//   its full runs against the first) times the cycles given to its stand-ins,
//   plus each stand-in's measured difference from its template's span, plus
//   each full run after the first stand-in that disagrees with its identity's
//   previous full run by more than the tolerance (its difference); identities
//   never checked take the largest deviation seen on the context and are
//   counted as unverified (with no deviation measured at all the bound is
//   unknown, error_bound_known = false). It cannot see a new identity's full
//   run that the replayed (approximate) cache state changed, nor the
//   contention a stand-in's untimed traffic would have caused.
// - A stand-in leaves the memory system as its kernel would have: each full run
//   records its GM footprint (footprint.h), and a stand-in's footprint (the
//   template's, moved to its own operands) is handed to the device
//   (ReuseOptions::traffic, by default the device's own memory system) before
//   the next launch simulated in full starts, or by settle() after the last
//   one (call it before reading the memory system's stats). Launches without
//   operands (operator-library calls) replay nothing; without a target (a
//   device without caches) nothing is recorded.
// - Chips of one configuration may share one table of identities
//   (ReuseOptions::table, make_reuse_table()): a multi-chip host program's
//   ranks then re-use each other's full runs (a TP group's all-reduce kernels,
//   a later pipeline stage's layers, EP's replicated attention). The key is
//   each chip's own (its L2 state included), so a chip takes another's time
//   only where its own identity matches. A table belongs to one simulation:
//   SystemC runs its processes one at a time, so there is no lock; what must
//   not depend on their order within a tick is ruled out instead: another
//   chip's full run serves as a template only once it completed strictly
//   before the deciding tick (its recording, span and footprint are final),
//   and full runs are ordered by (start tick, chip, launch), not by which
//   process reached the table first. Two chips' first full runs of an
//   identity do not confirm each other (chips in lockstep make them at about
//   the same tick, all cold alike): Auto's agreeing pair holds a later run on
//   its chip, and the spread counts the runs after each chip's first. Attaching a chip whose DeviceInfo
//   differs (device_id aside) from the table's first throws SimError.
// - Chips in lockstep (ReuseOptions::lockstep: data parallel, every chip the
//   same launches in the same order) start the same launch at the same tick,
//   so no chip's run has completed when another's decides and the rule above
//   gives them nothing of each other. With lockstep a launch that finds no
//   template may take a twin's time: another chip's full run of the same
//   identity and the same occurrence (the n-th launch of the identity on its
//   chip; the same state for chips in step, first runs included) that started
//   strictly before the deciding tick, running or done. The stand-in's blocks
//   wait for the twin's completion (it started, so it ends without them: no
//   cycle of waits) and end as its template's would, its footprint reaches
//   the device once the twin's is final. Which chip decides first within a
//   tick must not matter: every chip but the lowest of the table that finds
//   no template decides one tick (1 ps) later, so the lowest's runs of that
//   tick are there to be found; such a chip's full runs start their bodies
//   that 1 ps late (an approximation of its own, inside the first clock
//   edge). What chips in step differ by is measured: the highest chip of
//   the table runs one in ReuseOptions::twin_sample of its twins in full
//   (chosen by identity and occurrence). A twin stand-in's deviation is its
//   identity's largest difference between two chips' full runs of one
//   occurrence, else the table's summed differences over the summed times of
//   such runs, widened by the identity's own deviation; with none measured,
//   the context's worst (counted unverified).
// - A stand-in issues no instructions and moves no data of its own, so it is
//   charged its template's dynamic energy: once the template completed (a
//   twin: once it completes) the stand-in's device is given the template's
//   priced events (IDevice::kernel_activity of the template's device), and
//   the stand-in's activity events become those when it completes
//   (models/power/energy_attributor.h, charge_like). counters().
//   energy_charged counts them; a device without energy bookkeeping, or a
//   template whose events were not kept, leaves a stand-in uncharged.
// What it leaves out, so what the error is made of: a stand-in's traffic
// reaches the caches at once and untimed (so the contention it would cause a
// concurrent kernel or collective is missing), in an approximate order; the L2
// estimate of the identity follows kernel operands only (copies and
// collectives do not age it); concurrent
// streams are not part of the identity. tests/regression/
// timing_reuse_test.cpp measures the error per command family;
// docs/timing_reuse.md states it.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/rt/context.h"
#include "sim/traffic_replay.h"

namespace sfumato::reuse {

enum class ReuseMode : uint8_t { Off, On, Auto };
// "off" | "on" | "auto"; anything else throws InputError naming `option`.
ReuseMode parse_reuse_mode(const std::string &s,
                           const std::string &option = "--reuse-timing");
const char *reuse_mode_name(ReuseMode m);
// The check log's first line (--reuse-log; a file that already holds lines gets
// none): the 24 column names, docs/timing_reuse.md.
extern const char *const kCheckLogHeader;

// The mode a run uses: Auto is Off in functional mode; On in functional mode
// throws InputError.
ReuseMode resolve_mode(ReuseMode m, bool functional,
                       const std::string &option = "--reuse-timing");

// Auto's agreement tolerance: two full runs of an identity within 1 % of each
// other (relative cycles). Chosen from the measurements in docs/timing_reuse.md
// (a repeat of a warm kernel varies by well under it; a kernel whose time
// depends on state the identity misses varies by more).
constexpr double kDefaultTolerance = 0.01;

class ReuseTable; // timing_reuse.cpp

struct ReuseOptions {
  ReuseMode mode = ReuseMode::Off;
  double tolerance = kDefaultTolerance;
  // The chip's task scheduler (chip.ts.block_dispatch_cycles,
  // chip.ts.core_start_cycles): the stand-in blocks of a wave end staggered by
  // this as the template's did.
  uint32_t block_dispatch_cycles = 0, core_start_cycles = 0;
  // Replaces launch_identity() (empty string: not a candidate), for host
  // programs that know their kernels better; the L2 state is appended to it
  // either way.
  std::function<std::string(const KernelDesc &)> identity;
  // Where stand-ins leave their traffic (null: the context's device's memory
  // system, IDevice::traffic_replay()).
  ITrafficReplay *traffic = nullptr;
  // Identities shared with the services of other chips of this configuration
  // in the same simulation (null: this service's own).
  std::shared_ptr<ReuseTable> table;
  // The chips sharing the table run one program in step (data parallel: the
  // same launches in the same order, at about the same ticks): a launch may
  // also take the time of another chip's full run of the same identity and
  // the same occurrence (its n-th launch of that identity on its chip) that
  // started strictly before it, while that run still runs (a twin; see the
  // contract above). Set by every service of the table alike.
  bool lockstep = false;
  // With lockstep, the highest chip of the table runs one in `twin_sample` of
  // its twins in full instead (chosen by identity and occurrence, whatever the
  // order of the chips' processes): what chips in step differ by, measured
  // for the error bound (0: none).
  uint32_t twin_sample = 8;
  // A file the service appends one line to per full run (after a synchronize,
  // when it is destroyed): the run, the previous full run of its identity and
  // the facts about both that could predict their disagreement (empty: none).
  // Opened at construction: a path that cannot be written is an InputError.
  std::string check_log;
};

// A table of identities and their full runs, shared by the TimingReuse
// services of chips of one configuration (see the contract above).
std::shared_ptr<ReuseTable> make_reuse_table();

struct ReuseCounters {
  uint64_t launches = 0;   // kernel launches seen
  uint64_t candidates = 0; // of them with an identity
  uint64_t reused = 0;     // given a stand-in
  uint64_t unique = 0;     // distinct identities
  uint64_t checks = 0;     // repeats simulated in full
  uint64_t reused_cycles =
      0; // cycles the stand-ins were given (their templates' spans)
  uint64_t kernel_cycles =
      0; // all candidate launches' spans (stand-ins included)
  uint64_t unverified =
      0; // reused launches of identities never simulated twice
  uint64_t replayed_bytes = 0; // stand-ins' footprints handed to the device
  uint64_t across_chips =
      0; // of the reused, those given another chip's full run's time
  uint64_t twins = 0; // of those, given a run still running (lockstep)
  // Of the twins, those whose run and own span ended before any chip started
  // a task coupling chips (in step: each is its twin's launch on an identical
  // chip, its error its twin's), and those the sample left as twins for that
  // reason (decided before any such task started).
  uint64_t twins_in_step = 0, samples_in_step = 0;
  // Of the reused, those charged their template's dynamic energy (the device
  // keeps energy events: IDevice::charge_standin); the run's energy is
  // complete when all were.
  uint64_t energy_charged = 0;
  bool energy_complete() const { return energy_charged == reused; }
  bool error_bound_known = true;
  double error_bound_cycles =
      0; // estimated bound on the summed kernel cycles' error
  // error_bound_cycles / kernel_cycles (0 when nothing ran).
  double error_bound_fraction() const;
  ReuseCounters &operator+=(const ReuseCounters &o);
};

// Each candidate launch's part of the error bound (TimingReuse::
// launch_bounds()): its task record in the context, its span, and the cycles
// it adds to ReuseCounters::error_bound_cycles (the parts sum to it). A host
// program that knows which launches lie on which chip's part of a critical
// path propagates the bound along it (runtime/llm/path_bound.h).
struct LaunchBound {
  size_t record = 0;
  uint64_t span = 0;
  double cycles = 0;
  bool unverified = false; // a stand-in whose deviation no full runs measured
  bool in_step = false;    // a twin of chips still in step (counters().twins_in_step)
};
struct LaunchBounds {
  bool known = true; // false: a stand-in of an identity whose deviation no
                     // full runs measured (see error_bound_known)
  std::vector<LaunchBound> launches; // completed candidate launches, in order
};

// The identity of a launch without its L2 state (empty: not a candidate: a
// kernel with neither a graph node, an operator-library call nor a host
// program's key (KernelDesc::reuse_key), whose body is opaque).
std::string launch_identity(const KernelDesc &k);

// Operand ranges of a launch: a graph node's inputs, then outputs and
// workspace; a host program's keyed kernel's (KernelDesc::operands); none for
// an operator-library call.
struct OperandRange {
  uint64_t addr = 0, bytes = 0;
  bool written = false;
};
std::vector<OperandRange> launch_operands(const KernelDesc &k);

// An estimate of what an LRU L2 of `capacity` bytes holds, from the order
// kernels touched their operands: an operand last touched when `d` bytes ago
// (the operand bytes of launches since) is held whole if d + its bytes <=
// capacity, in part if d < capacity, else not. Exact for one stream of kernels
// that each stream their operands once through an LRU cache; an approximation
// otherwise (set conflicts, slices, partial reads, copies and write-backs are
// not seen).
class L2Recency {
public:
  explicit L2Recency(uint64_t capacity) : m_capacity(capacity) {}
  enum class Held : uint8_t { None = 0, Part = 1, Whole = 2, Unknown = 3 };
  Held held(uint64_t addr, uint64_t bytes) const;
  void touch(const std::vector<OperandRange> &ops);

  // Operand bytes touched so far (the check log's measure of distance).
  uint64_t position() const { return m_pos; }

private:
  uint64_t m_capacity, m_pos = 0;
  std::map<uint64_t, uint64_t>
      m_last; // operand address -> position after its last touch
};

class TimingReuse {
public:
  TimingReuse(rt::Context &ctx, const DeviceInfo &dev, const ReuseOptions &opt);
  ~TimingReuse();
  TimingReuse(const TimingReuse &) = delete;
  TimingReuse &operator=(const TimingReuse &) = delete;
  ReuseMode mode() const { return m_opt.mode; }
  // Valid once the launches have completed (after a synchronize).
  ReuseCounters counters() const;
  // Each completed candidate launch's part of the error bound (valid as
  // counters()).
  LaunchBounds launch_bounds() const;
  // Hands the footprints of the stand-ins since the last launch simulated in
  // full to the device (call from the host thread after the last
  // synchronize, before reading the memory system's state or stats).
  void settle();

  struct Identity; // per identity: its full runs, on every chip sharing the
                   // table (timing_reuse.cpp)
  struct Local;    // per identity: this service's stand-ins and full runs
  struct Launch;   // per launch: the decision its first block makes
  struct Pending;  // stand-ins' footprints not yet handed to the device
  struct Decider;  // how the first block of a launch decides for it

private:
  void on_launch(KernelDesc &k);
  void write_check_log() const;
  std::map<const Local *, double> deviations(double *worst) const;
  rt::Context &m_ctx;
  ReuseOptions m_opt;
  uint32_t m_cube, m_vector, m_aiv_per_aic, m_chip;
  L2Recency m_l2;
  std::shared_ptr<ReuseTable> m_table;
  std::map<std::string, std::shared_ptr<Local>> m_ids;
  std::vector<std::shared_ptr<Launch>> m_records; // every candidate launch
  std::shared_ptr<Pending> m_pending;
  uint64_t m_launches = 0, m_candidates = 0;
};

} // namespace sfumato::reuse
