// The records behind kernel timing re-use (timing_reuse.h), shared by its
// decision (timing_reuse.cpp) and its counters and bounds
// (timing_reuse_bounds.cpp). Not part of the service's interface.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <systemc>

#include "runtime/reuse/footprint.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::reuse {

struct TimingReuse::Identity {
  // Its launches simulated in full, on every chip sharing the table, ordered
  // by (start tick, chip, launch): an order no process interleaving changes.
  std::vector<std::shared_ptr<Launch>> full;
};

struct TimingReuse::Local {
  std::shared_ptr<Identity> id;
  uint64_t launched = 0; // this service's launches of it (the next occurrence)
  uint64_t hash = 14695981039346656037ull; // of its key (FNV-1a)
  uint64_t reused = 0, reused_cycles = 0;
  uint64_t across = 0; // of the reused, given another chip's run's time
  uint64_t twins = 0;  // of those, a run still running when decided
  uint64_t samples_in_step = 0; // twins the sample skipped: chips in step
  uint64_t energy_charged = 0; // of the reused, charged their template's energy
  uint64_t full = 0;   // this service's full runs of it
  uint64_t checks = 0; // of them those after an earlier full run (any chip)
  bool first = false;  // this service made its first full run
  double dev = -1; // largest relative deviation between full runs a decision
                   // relied on (-1: none)
};

struct TimingReuse::Launch {
  size_t record = 0; // this launch's task record
  uint32_t chip = 0; // the device_id of its chip
  IDevice *dev = nullptr; // its chip (for its energy events)
  const Identity *id = nullptr; // its identity (held by the service's table)
  const Local *local = nullptr;  // this service's record of it (held by m_ids)
  uint64_t occurrence = 0; // its chip's n-th launch of its identity (from 0)
  uint64_t start = 0; // tick its decision was made (its first block's start,
                      // 1 ps later where it waited for a twin; see
                      // timing_reuse.h)
  // Its chip's first full run of its identity: the state no earlier launch of
  // the identity on this chip left (its code fetched from HBM, its operands
  // cold). Chips in lockstep make such runs at about the same tick, and they
  // agree without saying anything of the chips' later launches.
  bool chip_first = false;
  // Set when its first block starts. Not owning: the context's task records hold the task for the
  // whole run, and an owning pointer here closed a cycle (the task's kernel body holds this launch).
  const Task *task = nullptr;
  bool deciding = false, decided = false, standin = false;
  // A stand-in: the full run whose time it takes (held by the table), and
  // whether that run was still running when it decided (a twin: its blocks
  // wait for it, `cycles` is known once it completed).
  const Launch *tmpl = nullptr;
  bool twin = false, cycles_known = false;
  uint64_t cycles = 0; // the template's span
  std::vector<OperandRange> ops; // its operands
  // Facts for the check log: its kernel type (its
  // code image), the L2 estimate's position at its launch, the operand bytes
  // since its chip's last full run of that type (UINT64_MAX: none), and the
  // stand-ins its chip decided before it.
  std::string type, held; // held: its identity's L2 state, per operand read
  uint64_t l2_pos = 0, code_gap = UINT64_MAX, standins_before = 0;
  std::unique_ptr<Footprint> fp; // recorded while it runs in full
  // Notified when the decision is made, for blocks that start while the first
  // one waits to decide (made only then).
  std::unique_ptr<sc_core::sc_event> decided_event;
};

class ReuseTable {
public:
  std::map<std::string, std::shared_ptr<TimingReuse::Identity>> ids;
  // The configuration of the chips attached (device_id aside).
  bool attached = false;
  DeviceInfo dev;
  std::set<uint32_t> chips; // the device_ids of the chips attached
  // The contexts of the services attached (lockstep: whether any chip has
  // started a task that couples chips; held by their devices for the run).
  std::vector<const rt::Context *> ctxs;
  // Lockstep: a task coupling chips started strictly before a decision's tick
  // (set once seen; later decisions come at later or equal ticks).
  bool apart = false;
};

// A task that couples its chip to another (a peer copy, a notify record or
// wait): until one runs, chips of one configuration running one program in
// step are the same machine in the same state.
bool couples_chips(const Task &t);
// The earliest tick at which a task coupling chips started on any context of
// the table, among those started strictly before `before` (UINT64_MAX: none).
uint64_t first_coupling(const ReuseTable &table, uint64_t before);

// Stand-ins' footprints waiting for the next launch simulated in full on the
// chip (or settle()). A stand-in's footprint is its template's, final once
// the template completed (strictly before the hand-over's tick on another
// chip); the queue is handed over in order up to the first that is not.
struct TimingReuse::Pending {
  ITrafficReplay *target = nullptr;
  uint32_t chip = 0;
  struct Entry {
    const Launch *tmpl = nullptr, *standin = nullptr;
  };
  std::deque<Entry> queue;
  // Per kernel type, the L2 estimate's position at its last full run on this
  // chip; the stand-ins decided so far (the check log's facts).
  std::map<std::string, uint64_t> type_pos;
  uint64_t standins = 0;
  std::vector<GmRange> ranges;
  uint64_t bytes = 0; // all handed over so far
  void hand_over(uint64_t now) {
    size_t n = 0;
    for (; n < queue.size(); ++n) {
      const Launch &t = *queue[n].tmpl;
      if (!t.task || !t.task->done ||
          (t.chip != chip && t.task->end_tick.v >= now))
        break;
      const size_t from = ranges.size();
      t.fp->ranges_for(queue[n].standin->ops, ranges);
      for (size_t i = from; i < ranges.size(); ++i)
        bytes += ranges[i].bytes;
    }
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
    if (ranges.empty() || !target)
      return;
    target->replay_traffic(ranges);
    ranges.clear();
  }
};

double deviation(uint64_t a, uint64_t b);

} // namespace sfumato::reuse
