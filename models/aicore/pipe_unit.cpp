#include "models/aicore/pipe_unit.h"

#include <algorithm>

#include "isa/semantics.h"
#include "isa/text.h"
#include "models/aicore/ai_core.h"
#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

using isa::Opcode;

namespace {
// Ring indices wrap with a mask or a compare, not a modulo: a 64-bit divide per index was a
// measurable part of each instruction's host time.
constexpr size_t kInFlightCapacity = 256;
constexpr size_t kInFlightMask = kInFlightCapacity - 1;
static_assert((kInFlightCapacity & kInFlightMask) == 0, "a power of two");

using text::lower;

bool is_sync(Opcode op) {
    return op == Opcode::SET_FLAG || op == Opcode::WAIT_FLAG || op == Opcode::PIPE_BARRIER || op == Opcode::SET_CROSS_FLAG ||
           op == Opcode::WAIT_CROSS_FLAG;
}

}  // namespace

PipeUnit::PipeUnit(sc_core::sc_module_name name, AiCore& core, isa::Pipe id, uint32_t depth,
                   uint32_t max_outstanding, StatGroup& parent)
    : sc_core::sc_module(name),
      m_core(core),
      m_id(id),
      m_queue(depth),
      m_depth(depth),
      m_queued(depth),
      m_pop_cycle(depth, 0),
      m_inflight(kInFlightCapacity),
      m_inflight_mem(kInFlightCapacity),
      m_reqs(max_outstanding),
      m_stats(&parent, lower(isa::pipe_name(id))),
      m_instrs(m_stats, "instrs", "instr", "instructions completed"),
      m_busy(m_stats, "busy_cycles", "cycle", "cycles with at least one instruction executing"),
      m_flag_wait_cycles(m_stats, "flag_wait_cycles", "cycle", "cycles the pipe head waited on a flag"),
      m_requests(m_stats, "mem_requests", "req", "memory requests sent") {
    if (id == isa::Pipe::M) {
        const char* names[kNumClasses] = {nullptr, "busy_cycles_fp32", "busy_cycles_int8", "busy_cycles_int4"};
        for (int c = kFp32; c < kNumClasses; ++c)
            m_class_busy[c] = std::make_unique<Counter>(m_stats, names[c], "cycle",
                                                        std::string("busy cycles of MADs with ") + (names[c] + 12) + " inputs");
    } else if (id == isa::Pipe::V) {
        const char* names[kNumClasses] = {nullptr, "busy_cycles_transcendental", "busy_cycles_reduce", "busy_cycles_move"};
        const char* what[kNumClasses] = {nullptr, "transcendental ops (exp, ln, sqrt, rsqrt, reciprocal, div)",
                                         "reductions and sorts", "data movement and casts (copies, conv, dup, "
                                                                 "broadcast, transpose, gathers)"};
        for (int c = kTranscendental; c < kNumClasses; ++c)
            m_class_busy[c] = std::make_unique<Counter>(m_stats, names[c], "cycle", std::string("busy cycles of ") + what[c]);
    }
    if (id == isa::Pipe::MTE2 || id == isa::Pipe::MTE3) {
        m_ub_bytes =
            std::make_unique<Counter>(m_stats, "ub_bytes", "B", "GM bytes requested into or out of the UB");
        m_l1_bytes = std::make_unique<Counter>(m_stats, "l1_bytes", "B",
                                               "GM bytes requested into or out of the L1 (and into L0A/L0B)");
    }
    for (uint32_t i = 0; i < max_outstanding; ++i) {
        m_free_reqs.push_back(max_outstanding - 1 - i);
        m_reqs[i].client = this;
    }
    SC_METHOD(run);
    sensitive << m_wake;
    dont_initialize();
}

uint8_t PipeUnit::energy_class(isa::Pipe pipe, const isa::Instr& in) {
    if (pipe == isa::Pipe::M) {
        if (in.op != Opcode::MAD) return k16Bit;
        if (in.dtype == isa::DType::FP32) return kFp32;
        if (in.dtype == isa::DType::INT8 || in.dtype == isa::DType::UINT8) return kInt8;
        return in.dtype == isa::DType::INT4 ? kInt4 : k16Bit;
    }
    if (pipe != isa::Pipe::V) return 0;
    switch (in.op) {
        case Opcode::VEXP: case Opcode::VLN: case Opcode::VSQRT: case Opcode::VRSQRT: case Opcode::VREC:
        case Opcode::VDIV:
            return kTranscendental;
        case Opcode::VRED_SUM: case Opcode::VRED_MAX: case Opcode::VRED_MIN: case Opcode::VREDALL_SUM:
        case Opcode::VREDALL_MAX: case Opcode::VREDALL_MIN: case Opcode::VCPADD: case Opcode::VBITSORT:
        case Opcode::VMRGSORT4:
            return kReduce;
        case Opcode::COPY_UB_TO_UB: case Opcode::COPY_L0C_TO_UB: case Opcode::VCONV: case Opcode::VDUP:
        case Opcode::VBRCB: case Opcode::VTRANSPOSE: case Opcode::VGATHER: case Opcode::VGATHERB:
        case Opcode::VREDUCEV2: case Opcode::VCI: case Opcode::VNCHWCONV:
            return kMove;
        default: return kSimple;
    }
}

Cycle PipeUnit::now_cycle() const { return m_core.clock().ceil_cycle(now_tick()); }

bool PipeUnit::starts_arithmetically(const isa::Instr& in) { return !is_sync(in.op) && isa::gm_bytes(in) == 0; }

void PipeUnit::push(const isa::Instr& in, double scalar, isa::Pipe pipe, uint32_t seq, uint64_t issue_cycle,
                    const Queued& q) {
    const size_t slot = wrap(m_head + m_count, m_depth);
    isa::Instr& e = m_queue[slot];
    e = in;
    e.scalar = scalar;
    e.pipe = pipe;
    e.seq = seq;
    e.issue_cycle = issue_cycle;
    m_queued[slot] = q;
    ++m_count;
    ++m_pushed;
    // One notification per run of pushes: once one was made, the pipe either has not run since
    // (it is still pending, or it fired while the pipe slept on time alone, which no later
    // notification would change) or is runnable in this very delta, where it sees the push.
    if (!m_push_notified) {
        m_push_notified = true;
        m_wake.notify(sc_core::SC_ZERO_TIME);
    }
}

void PipeUnit::sleep_until(Cycle now, Cycle at) {
    (void)now;
    next_trigger(to_sc_time(m_core.clock().to_tick(at) - now_tick()));
}

void PipeUnit::sleep_on_wake_or(Cycle now, Cycle at) {
    (void)now;
    next_trigger(to_sc_time(m_core.clock().to_tick(at) - now_tick()), m_wake);
}

void PipeUnit::run() {
    m_push_notified = false;
    m_pop_notified = false;
    m_slot_wait = false;
    try {
        const Cycle now = now_cycle();
        retire(now, now_tick());
        while (step(now)) {
        }
    } catch (...) {
        record_failure(std::current_exception());
    }
}

uint32_t PipeUnit::push_inflight(const isa::Instr& in, uint8_t energy_class, Cycle start, Cycle end, bool done) {
    const uint32_t slot = static_cast<uint32_t>((m_if_head + m_inflight_count) & kInFlightMask);
    InFlight& f = m_inflight[slot];
    f.op = in.op;
    f.energy_class = energy_class;
    f.seq = in.seq;
    if (!done) m_inflight_mem[slot] = in;  // executed at its completion (functional mode)
    f.start = start;
    f.end = end;
    f.pending = 0;
    f.issuing = !done;
    f.done = done;
    f.index = m_started++;
    if (!done) ++m_undone;
    ++m_inflight_count;
    if (done) m_last_end = max(m_last_end, end);
    return slot;
}

void PipeUnit::complete(InFlight& f, Cycle end) {
    f.done = true;
    --m_undone;
    f.end = end;
    m_last_end = max(m_last_end, end);
    // Loads deliver their data when the last byte has arrived.
    const isa::Instr& in = m_inflight_mem[static_cast<size_t>(&f - m_inflight.data())];
    if (m_core.functional() && in.dst.pos != isa::Pos::GM) m_core.execute(in);
    if (isa::unit_flag(in) == 3) m_core.unit_bits_done(in, end);
    if (m_def_head < m_deferred.size()) fire_deferred(end);
}

void PipeUnit::set_flag_now(const isa::Instr& in, Cycle at, const RaceChecker::Clock* clock) {
    if (in.op == Opcode::SET_FLAG) {
        if (RaceChecker* rc = m_core.race_checker()) {
            if (clock) rc->publish_flag(in, *clock);
            else rc->on_set_flag(in);
        }
        m_core.flag_set(in, at);
    } else {
        m_core.cross_flags()->set(m_core, in, at, m_track);
    }
}

void PipeUnit::fire_deferred(Cycle now) {
    while (m_def_head < m_deferred.size()) {
        const DeferredSet& d = m_deferred[m_def_head];
        // Every instruction started before the set_flag must be done; the flag is set when the
        // last of them ended (never before the set_flag left the queue).
        Cycle at = max(d.at, now);
        for (size_t i = 0; i < m_inflight_count; ++i) {
            const InFlight& f = m_inflight[(m_if_head + i) & kInFlightMask];
            if (f.index >= d.upto) break;
            if (!f.done) return;
            at = max(at, f.end);
        }
        set_flag_now(d.instr, at, &d.clock);
        ++m_def_head;
    }
    m_deferred.clear();
    m_def_head = 0;
}

void PipeUnit::retire(Cycle now, Tick at) {
    // The pipe's counters are summed here and added once per call (nothing reads them meanwhile):
    // a read-modify-write of each per instruction made chains through memory.
    uint64_t retired = 0, busy = 0;
    Cycle busy_until = m_busy_until;
    size_t head = m_if_head;
    InstrStats& stats = m_core.instr_stats();
    const bool tracing = m_core.trace().on(TraceLevel::Instr);
    while (retired < m_inflight_count) {
        const InFlight& f = m_inflight[head];
        if (!f.done || f.end > now) break;
        const Cycle s = max(f.start, busy_until);
        if (f.end > s) {
            busy += (f.end - s).v;
            if (f.energy_class != 0 && m_class_busy[f.energy_class]) *m_class_busy[f.energy_class] += (f.end - s).v;
        }
        busy_until = max(busy_until, f.end);
        ++retired;
        stats.record(f.op, m_id, (f.end - f.start).v);
        if (tracing) {
            TraceArg a[1] = {{"seq", static_cast<int64_t>(f.seq)}};
            m_core.trace().sink()->slice(m_track, isa::opcode_name(f.op), m_core.clock().to_tick(f.start),
                                         m_core.clock().to_tick(f.end), a, 1);
        }
        head = (head + 1) & kInFlightMask;
    }
    m_if_head = head;
    m_inflight_count -= retired;
    m_busy_until = busy_until;
    m_busy += busy;
    m_instrs += retired;
    // Progress is a count and the time of its latest step: one note for the whole call (all at
    // this instant) instead of one per instruction.
    if (retired) note_progress(retired, at.v);
    if (drained()) m_core.notify_progress();
}

bool PipeUnit::unit_bits_wait(Cycle now, Cycle& ready) {
    if (!m_core.unit_bits_ready(m_queue[m_head], ready)) {
        if (!m_waiting_flag) {
            m_waiting_flag = true;
            m_wait_since = now;
        }
        next_trigger(m_wake);  // the other pipe wakes this one when it flips the bits
        return false;
    }
    if (m_waiting_flag) {
        m_flag_wait_cycles += (now - m_wait_since).v;
        m_waiting_flag = false;
    }
    return true;
}

bool PipeUnit::step(Cycle now) {
    if (m_cur.active && !issue_requests(now)) return false;
    if (m_count == 0) {
        // Idle: retire what is still completing in one wake-up (at the last end when nothing
        // waits for memory), otherwise sleep until pushed to.
        if (m_inflight_count > 0 && m_undone == 0) sleep_on_wake_or(now, m_last_end);
        else if (m_inflight_count > 0 && m_inflight[m_if_head].done) sleep_on_wake_or(now, m_inflight[m_if_head].end);
        else next_trigger(m_wake);
        if (drained()) m_core.notify_progress();
        return false;
    }
    if (m_inflight_count == kInFlightCapacity) {
        // Full: retire half the ring at once rather than one instruction per wake-up.
        const InFlight& mid = m_inflight[(m_if_head + kInFlightCapacity / 2) & kInFlightMask];
        if (m_undone == 0) sleep_on_wake_or(now, mid.end);
        else if (m_inflight[m_if_head].done) sleep_on_wake_or(now, m_inflight[m_if_head].end);
        else next_trigger(m_wake);
        return false;
    }
    isa::Instr& in = m_queue[m_head];
    const Cycle issue(in.issue_cycle);
    auto pop = [this](Cycle at) {
        m_pop_cycle[m_head] = at.v;  // m_head is m_popped modulo the depth
        ++m_popped;
        m_head = wrap(m_head + 1, m_depth);
        --m_count;
        // One notification per run: a second in the same evaluation would merge with the first.
        if (m_count <= low_water() && !m_pop_notified) {
            m_pop_notified = true;
            m_pop.notify(sc_core::SC_ZERO_TIME);
        }
    };
    if (const Queued& q = m_queued[m_head]; q.compute) {
        // A compute instruction's start is arithmetic (its issue cycle, the pipe's throughput),
        // so the pipe starts it now with a future start cycle instead of sleeping until then:
        // one wake-up serves many instructions. Nothing another pipe does can change that
        // start; in functional mode its effect applies early, which only a racy program sees.
        Cycle start = max(max(now, issue), m_next_free);
        const uint8_t uf = isa::unit_flag(in);
        if (uf) {  // the L0C blocks' unit bits: a start no earlier than the last of them changed
            Cycle ready;
            if (!unit_bits_wait(now, ready)) return false;
            start = max(start, ready);
        }
        if (RaceChecker* rc = m_core.race_checker()) rc->on_start(m_id, in);
        const ComputeTiming& t = q.t;
        if (m_core.functional()) m_core.execute(in);
        push_inflight(in, q.energy_class, start, start + Cycle(t.occupancy + t.latency), true);
        if (uf == 3) m_core.unit_bits_done(in, start + Cycle(t.occupancy + t.latency));
        m_next_free = start + Cycle(t.occupancy);
        pop(start);
        return true;
    }
    if (issue > now) {
        sleep_until(now, issue);
        return false;
    }
    if (m_next_free > now) {
        sleep_until(now, m_next_free);
        return false;
    }
    switch (in.op) {
        case Opcode::WAIT_FLAG: {
            AiCore::Flag& f = m_core.flag(in.flag.src, in.flag.dst, in.flag.event_id);
            if (!f.set() || f.oldest().ready > now) {
                if (!m_waiting_flag) {
                    m_waiting_flag = true;
                    m_wait_since = now;
                }
                if (f.set()) sleep_until(now, f.oldest().ready);
                else next_trigger(m_wake);
                return false;
            }
            if (m_waiting_flag) {
                m_flag_wait_cycles += (now - m_wait_since).v;
                m_waiting_flag = false;
            }
            const Tick set_tick = f.oldest().tick;
            f.take();
            if (RaceChecker* rc = m_core.race_checker()) rc->on_wait_flag(in);
            if (m_core.trace().on(TraceLevel::Instr)) {
                PipeUnit* src = m_core.pipe(in.flag.src);
                if (src) m_core.trace().sink()->flow(src->trace_track(), set_tick, m_track, now_tick(), "flag");
            }
            m_core.instr_stats().record(in.op, m_id, 0);
            pop(now);
            return true;
        }
        case Opcode::WAIT_CROSS_FLAG: {
            Cycle ready;
            CrossFlags::Origin from;
            if (!m_core.cross_flags()->try_wait(m_core, in, now, ready, &from)) {
                if (!m_waiting_flag) {
                    m_waiting_flag = true;
                    m_wait_since = now;
                }
                if (ready.v > 0) sleep_on_wake_or(now, ready);
                else next_trigger(m_wake);
                return false;
            }
            if (m_waiting_flag) {
                m_flag_wait_cycles += (now - m_wait_since).v;
                m_waiting_flag = false;
            }
            if (from.valid && m_core.trace().on(TraceLevel::Instr))
                m_core.trace().sink()->flow(from.track, from.tick, m_track, now_tick(), "cross_flag");
            m_core.instr_stats().record(in.op, m_id, 0);
            pop(now);
            return true;
        }
        case Opcode::SET_FLAG:
        case Opcode::SET_CROSS_FLAG:
            if (!m_core.params().set_flag_blocks) {
                // Scoreboard: the flag is set when every earlier instruction has completed; later
                // instructions of this pipe do not wait for it.
                if (m_undone == 0 && m_def_head == m_deferred.size()) {
                    // Only instructions with known ends are in flight: set it at the last end.
                    set_flag_now(in, max(now, m_last_end), nullptr);
                } else {
                    DeferredSet d;
                    d.instr = in;
                    d.upto = m_started;
                    d.at = now;
                    if (RaceChecker* rc = m_core.race_checker(); rc && in.op == Opcode::SET_FLAG) d.clock = rc->set_flag_clock(in);
                    m_deferred.push_back(d);
                }
                m_core.instr_stats().record(in.op, m_id, 0);
                pop(now);
                return true;
            }
            [[fallthrough]];
        case Opcode::PIPE_BARRIER: {
            for (size_t i = 0; i < m_inflight_count; ++i) {
                if (!m_inflight[(m_if_head + i) & kInFlightMask].done) {
                    next_trigger(m_wake);
                    return false;
                }
            }
            if (m_last_end > now) {
                sleep_until(now, m_last_end);
                return false;
            }
            if (m_def_head < m_deferred.size()) {  // earlier set_flags first (they wait on less)
                next_trigger(m_wake);
                return false;
            }
            if (in.op != Opcode::PIPE_BARRIER) set_flag_now(in, now, nullptr);
            m_core.instr_stats().record(in.op, m_id, 0);
            pop(now);
            return true;
        }
        default:
            break;
    }
    if (isa::unit_flag(in)) {  // a store through the FixPipe: starts once the unit bits are there
        Cycle ready;
        if (!unit_bits_wait(now, ready)) return false;
        if (ready > now) {
            sleep_until(now, ready);
            return false;
        }
        if (isa::unit_flag(in) == 3) m_core.unit_bits_reading(in);
    }
    if (RaceChecker* rc = m_core.race_checker()) rc->on_start(m_id, in);
    GmPattern pat;
    if (gm_pattern(in, pat)) {
        const CoreParams& cp = m_core.params();
        const uint32_t setup = m_id == isa::Pipe::MTE3 ? cp.mte3_startup : m_id == isa::Pipe::FIX ? cp.fix_startup : cp.mte2_startup;
        const uint32_t slot = push_inflight(in, m_queued[m_head].energy_class, now, now, false);
        // Stores read their local source when they start.
        if (m_core.functional() && pat.write) m_core.execute(in);
        m_cur.active = true;
        m_cur.slot = slot;
        m_cur.pat = pat;
        m_cur.outer = m_cur.inner = 0;
        m_cur.offset = 0;
        m_cur.ready = now + Cycle(setup);
        m_cur.setup = setup;
        pop(now);
        return true;
    }
    throw ModelError(m_core.path(), m_core.describe(in) + ": internal: instruction of no class");
}

std::string PipeUnit::describe() const {
    std::string s = std::string(isa::pipe_name(m_id)) + ": queue " + std::to_string(m_count) + ", in flight " +
                    std::to_string(m_inflight_count);
    if (m_count > 0) {
        const isa::Instr& in = m_queue[m_head];
        s += ", head: " + m_core.describe(in);
        if (in.op == Opcode::WAIT_FLAG) {
            const bool set = const_cast<AiCore&>(m_core).flag(in.flag.src, in.flag.dst, in.flag.event_id).set();
            s += set ? " (flag set)" : " (blocked: flag never set)";
        } else if (in.op == Opcode::WAIT_CROSS_FLAG) {
            const uint32_t n = const_cast<AiCore&>(m_core).cross_flags()->count(m_core, in);
            s += n ? " (cross-core count pending)" : " (blocked: cross-core counter is 0)";
        } else if (isa::unit_flag(in)) {
            Cycle ready;
            if (!m_core.unit_bits_ready(in, ready))
                s += in.op == Opcode::MAD
                         ? " (blocked: unit flag, L0C blocks not yet read by a FixPipe with unit flag 3)"
                         : " (blocked: unit flag, L0C blocks not yet written by a Mmad with unit flag 3)";
        }
    } else {
        s += ", idle";
    }
    if (m_def_head < m_deferred.size())
        s += ", " + std::to_string(m_deferred.size() - m_def_head) + " set_flag waiting for earlier instructions";
    return s;
}

}  // namespace sfumato
