// Kernel timing re-use (timing_reuse.h): the check log, one line per full run
// with the previous full run of its identity and the facts about both that
// could predict whether a confirming run disagrees with the first
// (docs/timing_reuse.md, "What predicts a disagreeing check").
#include <algorithm>
#include <cstdio>

#include "runtime/reuse/timing_reuse_internal.h"

namespace sfumato::reuse {

namespace {

// How much of [b, e) other kernels' and copies' execution overlapped on its
// chip (fractions of its span).
struct Overlap {
  double kernels = 0, copies = 0;
};

Overlap overlap_of(const rt::Context &ctx, const Task &t) {
  Overlap o;
  const uint64_t b = t.exec_start_tick.v, e = t.exec_end_tick.v;
  if (e <= b)
    return o;
  for (const rt::TaskRecord &r : ctx.tasks()) {
    const Task *u = r.task.get();
    if (!u || u == &t || !u->done)
      continue;
    const bool kernel = u->kind == TaskKind::Kernel;
    const uint64_t ub = kernel ? u->exec_start_tick.v : u->start_tick.v;
    const uint64_t ue = kernel ? u->exec_end_tick.v : u->end_tick.v;
    const uint64_t lo = std::max(b, ub), hi = std::min(e, ue);
    if (hi <= lo)
      continue;
    const double f = static_cast<double>(hi - lo) / static_cast<double>(e - b);
    (kernel ? o.kernels : o.copies) += f;
  }
  return o;
}

} // namespace

const char *const kCheckLogHeader =
    "chip,record,identity,type,full_index,occurrence,chip_first,blocks,"
    "cycles,startup_cycles,start_tick,standins_before,overlap_kernels,"
    "overlap_copies,code_gap_bytes,bytes,l2_held,prev_chip,prev_record,"
    "prev_cycles,prev_startup_cycles,prev_chip_first,prev_code_gap_bytes,"
    "prev_standins_before\n";

void TimingReuse::write_check_log() const {
  if (m_opt.check_log.empty())
    return;
  std::FILE *f = std::fopen(m_opt.check_log.c_str(), "a");
  if (!f) { // checked writable at construction; a destructor cannot throw
    std::fprintf(stderr,
                 "warning: timing re-use: cannot write the check log '%s' "
                 "any more; chip %u's lines are lost\n",
                 m_opt.check_log.c_str(), m_chip);
    return;
  }
  // A new file starts with the column names (each chip of a run appends its
  // lines; the first to write finds the file empty).
  std::fseek(f, 0, SEEK_END);
  if (std::ftell(f) == 0)
    std::fputs(kCheckLogHeader, f);
  for (const std::shared_ptr<Launch> &l : m_records) {
    if (l->standin || !l->task || !l->task->done)
      continue;
    const auto &full = l->id->full;
    auto it = std::find_if(full.begin(), full.end(),
                           [&](const auto &o) { return o.get() == l.get(); });
    const size_t index = static_cast<size_t>(it - full.begin());
    const Launch *p = index > 0 ? full[index - 1].get() : nullptr;
    const Overlap o = overlap_of(m_ctx, *l->task);
    std::fprintf(
        f,
        "%u,%zu,%016llx,%s,%zu,%llu,%d,%u,%llu,%llu,%llu,%llu,%.4f,%.4f,%lld,"
        "%llu,%s",
        l->chip, l->record, static_cast<unsigned long long>(l->local->hash),
        l->type.c_str(), index, static_cast<unsigned long long>(l->occurrence),
        l->chip_first ? 1 : 0, l->task->kernel.block_dim,
        static_cast<unsigned long long>(l->task->cycles),
        static_cast<unsigned long long>(l->task->startup_cycles),
        static_cast<unsigned long long>(l->task->exec_start_tick.v),
        static_cast<unsigned long long>(l->standins_before), o.kernels,
        o.copies,
        l->code_gap == UINT64_MAX ? -1LL : static_cast<long long>(l->code_gap),
        static_cast<unsigned long long>(l->task->kernel.bytes),
        l->held.empty() ? "-" : l->held.c_str());
    if (p && p->task && p->task->done)
      std::fprintf(f, ",%u,%zu,%llu,%llu,%d,%lld,%llu\n", p->chip, p->record,
                   static_cast<unsigned long long>(p->task->cycles),
                   static_cast<unsigned long long>(p->task->startup_cycles),
                   p->chip_first ? 1 : 0,
                   p->code_gap == UINT64_MAX
                       ? -1LL
                       : static_cast<long long>(p->code_gap),
                   static_cast<unsigned long long>(p->standins_before));
    else
      std::fprintf(f, ",,,,,,,\n");
  }
  std::fclose(f);
}

} // namespace sfumato::reuse
