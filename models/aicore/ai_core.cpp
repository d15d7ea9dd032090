#include "models/aicore/ai_core.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "isa/asm.h"
#include "isa/text.h"
#include "sim/block_startup.h"
#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

using isa::Opcode;
using isa::Pipe;
using isa::Pos;

namespace {

// Pending sets one event flag holds at most: more means a program setting it in a loop with no
// wait taking them (its memory would grow without end); the run stops naming the set_flag, as the
// Ascend C layer stops a GM poll after 2^16 identical reads (runtime/ascendc/host.cpp).
constexpr size_t kMaxFlagSets = 65536;

bool kind_has_pipe(isa::CoreKind k, Pipe p) {
    switch (k) {
        case isa::CoreKind::Coupled: return p != Pipe::FIX && p != Pipe::S;
        case isa::CoreKind::Cube: return p == Pipe::MTE1 || p == Pipe::MTE2 || p == Pipe::MTE3 || p == Pipe::M || p == Pipe::FIX;
        case isa::CoreKind::Vector: return p == Pipe::MTE2 || p == Pipe::MTE3 || p == Pipe::V;
    }
    return false;
}

bool kind_has_buffer(isa::CoreKind k, Pos p) {
    switch (k) {
        case isa::CoreKind::Coupled: return p != Pos::GM;
        case isa::CoreKind::Cube:
            return p == Pos::L1 || p == Pos::L0A || p == Pos::L0B || p == Pos::L0C || p == Pos::BT || p == Pos::FB ||
                   p == Pos::SPIDX;
        case isa::CoreKind::Vector: return p == Pos::UB;
    }
    return false;
}

using text::hex;

}  // namespace

AiCore::AiCore(sc_core::sc_module_name name, uint32_t index, isa::CoreKind kind, const CoreParams& p,
               ClockDomain clock, IMemTarget& mem, IBackingStore* gm, uint64_t gm_capacity, TraceHub& trace,
               InstrStats& instr_stats, StatGroup& parent, uint64_t page_table)
    : sc_core::sc_module(name),
      m_index(index),
      m_kind(kind),
      m_p(p),
      m_clock(clock),
      m_mem(mem),
      m_gm(gm),
      m_gm_capacity(gm_capacity),
      m_trace(trace),
      m_instr_stats(instr_stats),
      m_stats(&parent, std::string(basename())),
      m_blocks(m_stats, "blocks", "block", "blocks executed"),
      m_scalar_busy(m_stats, "scalar_busy_cycles", "cycle", "cycles the scalar unit spent issuing"),
      m_startup(m_stats, "startup_cycles", "cycle", "cycles from a block's start to its kernel body (code fetch, init, arguments)"),
      m_ub_conflict(m_stats, "ub_bank_conflict_cycles", "cycle",
                    "vector pipe cycles lost to UB bank and bank-group conflicts (part of the vector pipe's busy time)") {
    m_smem = std::make_unique<ScalarMem>(this->name(), p.smem, kind, clock, mem, static_cast<uint16_t>(index), page_table, trace,
                                         m_stats);
    for (int i = 0; i < isa::kNumPipes; ++i) {
        const Pipe pp = static_cast<Pipe>(i);
        if (!kind_has_pipe(kind, pp)) continue;
        const std::string pname = text::lower(isa::pipe_name(pp));
        m_pipes[i] = std::make_unique<PipeUnit>(pname.c_str(), *this, pp, p.queue_depth, p.mte_max_outstanding, m_stats);
    }
    auto setup = [&](Pos pos, const BufferParams& bp) {
        if (!kind_has_buffer(kind, pos)) return;
        auto& b = m_buffers[static_cast<size_t>(pos)];
        b.size = bp.size;
        b.align = bp.align;
        if (gm) b.bytes.assign(b.size, 0);
    };
    setup(Pos::UB, p.ub);
    setup(Pos::L1, p.l1);
    setup(Pos::L0A, p.l0a);
    setup(Pos::L0B, p.l0b);
    setup(Pos::L0C, p.l0c);
    setup(Pos::FB, p.fb);
    setup(Pos::BT, p.bt);
    // The sparse index buffer: a quarter of L0B (the vendor's LoadDataWithSparse reference), 128 index bytes
    // beside each 512-byte fractal of L0B; not a configuration key of its own.
    if (kind_has_buffer(kind, Pos::SPIDX)) {
        auto& b = m_buffers[static_cast<size_t>(Pos::SPIDX)];
        b.size = p.l0b.size / 4;
        b.align = isa::kSparseIndexFractalBytes;
        if (gm) b.bytes.assign(b.size, 0);
    }
    m_flags.resize(static_cast<size_t>(isa::kNumPipes) * isa::kNumPipes * p.event_ids);
    if (trace.on(TraceLevel::Instr)) {
        m_scalar_track = trace.sink()->track(this->name(), "SCALAR", 0);
        m_smem->set_trace_track(m_scalar_track);
        for (int i = 0; i < isa::kNumPipes; ++i)
            if (m_pipes[i]) m_pipes[i]->set_trace_track(trace.sink()->track(this->name(), isa::pipe_name(static_cast<Pipe>(i)), i + 1));
    }
    if (p.check_races) m_race = std::make_unique<RaceChecker>(this->name());
    SC_THREAD(scalar_thread);
}

void AiCore::cross_flag_changed() {
    for (auto& p : m_pipes)
        if (p) p->wake();
    notify_progress();
}

namespace {
constexpr uint64_t kUnitBlock = 512;
// The L0C bytes an instruction with a unit flag writes (mad) or reads (fixpipe).
isa::Extent l0c_extent(const isa::Instr& in) {
    isa::Extent ex[isa::kMaxExtents];
    const int n = isa::footprint(in, ex);
    for (int i = 0; i < n; ++i)
        if (ex[i].pos == isa::Pos::L0C) return ex[i];
    return {isa::Pos::L0C, 0, 0, false};
}
}  // namespace

bool AiCore::unit_bits_ready(const isa::Instr& in, Cycle& ready) const {
    const isa::Extent e = l0c_extent(in);
    const uint8_t want = in.op == isa::Opcode::MAD ? 0 : 1;
    ready = Cycle(0);
    for (uint64_t b = e.lo / kUnitBlock; b * kUnitBlock < e.hi && b < m_unit_bits.size(); ++b) {
        if (m_unit_bits[b].state != want) return false;
        ready = max(ready, m_unit_bits[b].at);
    }
    return true;
}

void AiCore::unit_bits_reading(const isa::Instr& in) {
    const isa::Extent e = l0c_extent(in);
    for (uint64_t b = e.lo / kUnitBlock; b * kUnitBlock < e.hi && b < m_unit_bits.size(); ++b)
        m_unit_bits[b].state = 2;
}

void AiCore::unit_bits_done(const isa::Instr& in, Cycle at) {
    const isa::Extent e = l0c_extent(in);
    const bool mad = in.op == isa::Opcode::MAD;
    for (uint64_t b = e.lo / kUnitBlock; b * kUnitBlock < e.hi && b < m_unit_bits.size(); ++b)
        m_unit_bits[b] = {static_cast<uint8_t>(mad ? 1 : 0), at};
    if (PipeUnit* other = pipe(mad ? isa::Pipe::FIX : isa::Pipe::M)) other->wake();
}

void AiCore::assign(BlockAssignment a, ICoreListener& listener) {
    if (m_has_block) throw ModelError(name(), "block assigned to a busy core");
    m_block = std::move(a);
    m_listener = &listener;
    m_has_block = true;
    m_block_start.notify(sc_core::SC_ZERO_TIME);
}

uint64_t AiCore::pipe_busy(Pipe p) const {
    if (p == Pipe::S) return m_scalar_busy.value();
    const auto& u = m_pipes[static_cast<size_t>(p)];
    return u ? u->busy_cycles() : 0;
}

uint64_t AiCore::buffer_size(Pos pos) const { return m_buffers[static_cast<size_t>(pos)].size; }

AiCore::Flag& AiCore::flag(Pipe src, Pipe dst, uint8_t id) {
    return m_flags[(static_cast<size_t>(src) * isa::kNumPipes + static_cast<size_t>(dst)) * m_p.event_ids + id];
}

void AiCore::flag_set(const isa::Instr& in, Cycle at) {
    Flag& f = flag(in.flag.src, in.flag.dst, in.flag.event_id);
    if (f.sets.size() >= kMaxFlagSets)
        throw ProgramError(name(), describe(in) + ": " + std::to_string(kMaxFlagSets) +
                                     " sets of this flag without a wait_flag taking one");
    f.sets.push_back({at + Cycle(m_p.flag_latency), m_clock.to_tick(at)});
    if (in.flag.dst == Pipe::S) notify_progress();
    else if (PipeUnit* d = pipe(in.flag.dst)) d->wake();
}

std::string AiCore::describe(const isa::Instr& in) const {
    if (in.op == Opcode::SET_FLAG || in.op == Opcode::WAIT_FLAG)
        return std::string(isa::opcode_name(in.op)) + " " + isa::pipe_name(in.flag.src) + "->" + isa::pipe_name(in.flag.dst) +
               " #" + std::to_string(in.flag.event_id) + " (instr #" + std::to_string(in.seq) + ")";
    return isa::disassemble(in) + " (instr #" + std::to_string(in.seq) + ")";
}

void AiCore::execute(const isa::Instr& in) {
    try {
        isa::execute(in, *this);
    } catch (const std::invalid_argument& e) {
        throw ProgramError(name(), describe(in) + ": " + e.what());
    }
}

void AiCore::check_operands(const isa::Instr& in) const {
    if (std::string err = isa::validate(in); !err.empty())
        throw ProgramError(name(), describe(in) + ": " + err);
    if (in.op == Opcode::SET_FLAG || in.op == Opcode::WAIT_FLAG) {
        if (in.flag.event_id >= m_p.event_ids)
            throw ProgramError(name(), describe(in) + ": event id " + std::to_string(in.flag.event_id) + " >= " +
                                         std::to_string(m_p.event_ids) + " event ids per pipe pair");
        for (Pipe p : {in.flag.src, in.flag.dst})
            if (p != Pipe::S && !m_pipes[static_cast<size_t>(p)])
                throw ProgramError(name(), describe(in) + ": this core has no " + isa::pipe_name(p) + " pipe");
        return;
    }
    if (in.op == Opcode::SET_CROSS_FLAG || in.op == Opcode::WAIT_CROSS_FLAG) {
        if (!m_xflags)
            throw ProgramError(name(), describe(in) + ": cross-core flags exist only on split parts");
        if (in.xflag.mode > 2 || in.xflag.flag_id > isa::kMaxCrossFlag)
            throw ProgramError(name(), describe(in) + ": cross-core flag mode must be 0..2 and id 0.." + std::to_string(isa::kMaxCrossFlag));
        if (in.xflag.mode == 1 && m_kind != isa::CoreKind::Vector)
            throw ProgramError(name(), describe(in) + ": mode 1 synchronises the AIVs of one core; this is not an AIV");
    }
    if (in.pipe != Pipe::S && in.pipe != Pipe::ALL && !m_pipes[static_cast<size_t>(in.pipe)])
        throw ProgramError(name(), describe(in) + ": this core has no " + isa::pipe_name(in.pipe) + " pipe");
    isa::Extent ext[isa::kMaxExtents];
    const int n = isa::footprint(in, ext);
    for (int i = 0; i < n; ++i) {
        const isa::Extent& e = ext[i];
        if (e.pos == Pos::GM) {
            if (e.hi > m_gm_capacity)
                throw ProgramError(name(), describe(in) + ": GM range [" + hex(e.lo) + ", " + hex(e.hi) +
                                             ") beyond device memory of " + std::to_string(m_gm_capacity) + " bytes");
            continue;
        }
        const auto& b = m_buffers[static_cast<size_t>(e.pos)];
        if (b.size == 0)
            throw ProgramError(name(), describe(in) + ": this core has no " + isa::pos_name(e.pos) + " buffer");
        if (e.hi > b.size)
            throw ProgramError(name(), describe(in) + ": " + isa::pos_name(e.pos) + " range [" + hex(e.lo) + ", " +
                                         hex(e.hi) + ") overruns the " + std::to_string(b.size) + "-byte buffer");
        // A reduction writes its results element by element (one per repeat, packed): its
        // destination needs only the element's alignment, as the chip's vcadd/vcmax.
        const bool reduce_dst = e.write && (isa::vec_kind(in.op) == isa::VecKind::Red ||
                                            isa::vec_kind(in.op) == isa::VecKind::RedAll) &&
                                isa::param_kind(in.op) == isa::ParamKind::Vec;
        // vsel's extents are src0, src1, the bitmask (src2), dst. Its bitmask is a stream of bits that the
        // chip's counter mode reads on from repeat to repeat (a count split into instructions starts one
        // at the next repeat's bits: 8 bytes a repeat of fp32); its tensor-scalar mode's src1 is one element
        // (the compare-mask register's value).
        const bool sel = in.op == isa::Opcode::VSEL && !e.write;
        const uint32_t align = reduce_dst || (sel && i == 1 && in.vec.with_index) ? isa::dtype_size(in.dtype)
                               : sel && i == 2                                     ? std::min<uint32_t>(8, b.align)
                                                                                   : b.align;
        if (e.lo % align != 0)
            throw ProgramError(name(), describe(in) + ": " + isa::pos_name(e.pos) + " address " + hex(e.lo) +
                                         " is not " + std::to_string(align) + "-byte aligned");
    }
}

void AiCore::wait_until_cycle(Cycle c) {
    const Tick t = m_clock.to_tick(c);
    const Tick now = now_tick();
    if (t <= now) return;
    // Scalar time whose end is scheduled is work in flight for the deadlock detector: a block
    // that only charges scalar cycles (a timing re-use stand-in of a long kernel) can outlast a
    // run slice without retiring an instruction.
    work_begin();
    wait(to_sc_time(t - now));
    work_end();
}

bool AiCore::all_drained() const {
    for (const auto& p : m_pipes)
        if (p && !p->drained()) return false;
    return true;
}

void AiCore::issue(const isa::Instr& in_) {
    // The kernel API has just written the instruction: it is read here field by field and copied
    // whole only once, into its pipe's queue (a whole copy at once waited for those stores).
    Pipe pipe = in_.pipe;
    if (in_.op == Opcode::SET_FLAG) pipe = in_.flag.src;
    else if (in_.op == Opcode::WAIT_FLAG) pipe = in_.flag.dst;
    else if (in_.op == Opcode::SET_CROSS_FLAG || in_.op == Opcode::WAIT_CROSS_FLAG) pipe = in_.xflag.pipe;
    const uint32_t seq = m_seq++;
    // Keyed on the instruction as written (equal ones get equal pipes). The entry is read in place:
    // only this core's issue changes the cache, and nothing re-enters it while the scalar thread
    // waits below for a queue slot.
    const auto* hit = m_issued.find(in_);
    if (!hit) {
        // The chip's memo for this core kind holds only instructions that passed the same checks on
        // a core like this one, with the same result.
        if (const auto* shared = m_issue_memo ? m_issue_memo->find(in_) : nullptr) {
            hit = &m_issued.put(in_, shared->value);
        } else {
            isa::Instr in = in_;
            in.pipe = pipe;
            in.seq = seq;
            check_operands(in);
            IssueInfo fresh;
            fresh.cost = m_p.issue_cost(in);
            fresh.timing.compute = pipe != Pipe::S && pipe != Pipe::ALL && PipeUnit::starts_arithmetically(in);
            fresh.timing.energy_class = PipeUnit::energy_class(pipe, in);
            if (fresh.timing.compute) fresh.timing.t = sfumato::compute_timing(in, m_p);
            hit = &m_issued.put(in_, fresh);
            if (m_issue_memo) m_issue_memo->put(in_, fresh);
        }
    }
    const IssueInfo& info = hit->value;
    const uint32_t cost = info.cost;
    if (info.timing.compute) m_ub_conflict += info.timing.t.ub_conflict;
    // The first issue of an opcode in a block runs its call site's code: fetch it.
    if (bool& fetched = m_site_fetched[static_cast<size_t>(in_.op)]; !fetched) {
        fetched = true;
        if (m_block.image && !m_block.image->declared)
            m_scalar_cycle =
                m_smem->fetch(m_block.image->site_addr(in_.op), m_block.image->site, m_scalar_cycle);
    }
    m_scalar_cycle += Cycle(cost);
    m_scalar_busy += cost;
    if (pipe == Pipe::S || pipe == Pipe::ALL) {
        isa::Instr in = in_;
        in.pipe = pipe;
        in.seq = seq;
        in.issue_cycle = m_scalar_cycle.v;
        issue_scalar_side(in);
        return;
    }
    PipeUnit* pu = m_pipes[static_cast<size_t>(pipe)].get();
    if (pu->full()) {
        // Blocked on a full queue: the hardware scalar unit resumes when a slot frees. Waking
        // the thread only at the low-water mark and taking each slot's recorded free cycle
        // gives the same issue cycles with far fewer context switches.
        while (pu->count() > pu->low_water()) wait(pu->pop_event());
    }
    m_scalar_cycle = max(m_scalar_cycle, Cycle(pu->slot_free_cycle()));
    // The queue's copy comes from the cache's key, equal to the instruction as written: the kernel
    // API has just written that one field by field, and a whole copy of it waited for those stores
    // (its wide loads cannot be forwarded from narrow stores). The scalar is the one written: the
    // equality takes any two nans as equal.
    pu->push(hit->key, in_.scalar, pipe, seq, m_scalar_cycle.v, info.timing);
}

// An instruction of the scalar unit itself (pipe S) or a barrier of every pipe (ALL).
void AiCore::issue_scalar_side(const isa::Instr& in) {
    if (in.pipe == Pipe::S) {
        // Scalar-side sync: a set from S takes effect now; a wait into S blocks the scalar unit.
        if (in.op == Opcode::SET_FLAG) {
            if (m_race) m_race->on_set_flag(in);
            flag_set(in, m_scalar_cycle);
        } else if (in.op == Opcode::WAIT_FLAG) {
            wait_until_cycle(m_scalar_cycle);
            Flag& f = flag(in.flag.src, in.flag.dst, in.flag.event_id);
            while (!f.set()) wait(m_progress);
            m_scalar_cycle = max(max(m_scalar_cycle, m_clock.ceil_cycle(now_tick())), f.oldest().ready);
            f.take();
            if (m_race) m_race->on_scalar_wait(in, m_seq);
        } else if (in.op == Opcode::SCALAR) {
            m_scalar_cycle += Cycle(in.sc.cycles);
            m_scalar_busy += in.sc.cycles;
        } else if (in.op == Opcode::LD_GM || in.op == Opcode::ST_GM || in.op == Opcode::DCCI) {
            issue_scalar_mem(in);
        } else if (in.op == Opcode::SET_CROSS_FLAG) {
            m_xflags->set(*this, in, m_scalar_cycle, m_scalar_track);
        } else if (in.op == Opcode::WAIT_CROSS_FLAG) {
            wait_until_cycle(m_scalar_cycle);
            m_scalar_wait = &in;
            while (true) {
                Cycle ready;
                const Cycle now = max(m_scalar_cycle, m_clock.ceil_cycle(now_tick()));
                if (m_xflags->try_wait(*this, in, now, ready)) {
                    m_scalar_cycle = now;
                    break;
                }
                if (ready.v > 0) wait_until_cycle(ready);
                else wait(m_progress);
            }
            m_scalar_wait = nullptr;
        }
        return;
    }
    // Pipe::ALL, pipe_barrier(PIPE_ALL): the scalar unit waits for every pipe.
    wait_until_cycle(m_scalar_cycle);
    while (!all_drained()) wait(m_progress);
    m_scalar_cycle = max(m_scalar_cycle, m_clock.ceil_cycle(now_tick()));
    if (m_race) m_race->on_barrier_all(m_seq);
}

void AiCore::issue_scalar_mem(const isa::Instr& in) {
    const uint32_t hit = m_p.smem.dcache_hit_cycles;
    switch (in.op) {
        case Opcode::LD_GM:
            m_scalar_cycle = m_smem->load(in.src0.addr, m_scalar_cycle);
            m_scalar_busy += hit;
            break;
        case Opcode::ST_GM:
            m_scalar_cycle = m_smem->store(in.dst.addr, m_scalar_cycle);
            m_scalar_busy += hit;
            if (functional()) execute(in);
            break;
        default: m_scalar_cycle = m_smem->clean_invalidate(in.dst.addr, in.sc.all != 0, m_scalar_cycle); break;
    }
}

uint64_t AiCore::load(const isa::Instr& in) {
    issue(in);
    // The system counter is the scalar unit's cycle once the read issued, in both modes (a
    // kernel reading the clock sees time, not data).
    if (in.op == isa::Opcode::GET_SYSREG && in.sc.reg == isa::SysReg::SYS_CNT) return m_scalar_cycle.v;
    // A GM word is read when the scalar unit gets to it: the program continues at that point of
    // simulated time, so what other cores stored before then is seen and, when the program polls
    // GM, the other cores run meanwhile.
    if (in.op == isa::Opcode::LD_GM) wait_until_cycle(m_scalar_cycle);
    return functional() ? isa::load_scalar(in, *this) : 0;
}

void AiCore::slice(const char* what, Cycle from, Cycle to) {
    if (m_trace.on(TraceLevel::Instr) && to > from)
        m_trace.sink()->slice(m_scalar_track, what, m_clock.to_tick(from), m_clock.to_tick(to), nullptr, 0);
}

void AiCore::start_up() {
    if (m_block.task_seq != m_task_seq) {  // a new kernel: nothing of the last one is valid
        m_smem->reset();
        m_task_seq = m_block.task_seq;
    }
    m_site_fetched.fill(false);
    m_unit_bits.assign((buffer_size(Pos::L0C) + kUnitBlock - 1) / kUnitBlock, UnitBit{});
    const Cycle t0 = m_scalar_cycle;
    if (CodeImage* img = m_block.image)
        m_scalar_cycle = m_smem->fetch(img->base, img->declared ? img->declared : img->entry, m_scalar_cycle);
    const Cycle init = m_scalar_cycle;
    m_scalar_cycle += Cycle(m_p.smem.init_cycles);
    m_scalar_busy += m_p.smem.init_cycles;
    slice("init", init, m_scalar_cycle);
    const Cycle args = m_scalar_cycle;
    for (uint32_t off = 0; off < m_block.args_bytes; off += 8) {  // one 8-byte scalar load each
        m_scalar_cycle = m_smem->load(m_block.args_addr + off, m_scalar_cycle);
        m_scalar_busy += m_p.smem.dcache_hit_cycles;
    }
    slice("args", args, m_scalar_cycle);
    m_last_startup = (m_scalar_cycle - t0).v;
    m_startup += m_last_startup;
    slice("start-up", t0, m_scalar_cycle);
    entering_block_startup_cycles() = m_last_startup;  // the body comes next (sim/block_startup.h)
}

void AiCore::scalar(uint32_t cycles) {
    m_scalar_cycle += Cycle(cycles);
    m_scalar_busy += cycles;
}

void AiCore::scalar_thread() {
    while (true) {
        while (!m_has_block) wait(m_block_start);
        try {
            wait_until_cycle(Cycle(m_block.start_cycle));
            m_scalar_cycle = m_clock.ceil_cycle(now_tick());
            const Cycle start = m_scalar_cycle;
            m_seq = 0;
            if (m_race) m_race->reset(m_block.block_idx);
            start_up();
            m_block.body(*this);
            m_scalar_cycle = m_smem->flush(m_scalar_cycle);  // the epilogue writes back dirty lines
            wait_until_cycle(m_scalar_cycle);
            while (!all_drained()) wait(m_progress);
            if (m_trace.on(TraceLevel::Instr)) {
                m_trace.sink()->slice_str(m_scalar_track, "block " + std::to_string(m_block.block_idx),
                                          m_clock.to_tick(start), now_tick(), nullptr, 0);
            }
        } catch (...) {
            record_failure(std::current_exception());
            return;
        }
        m_has_block = false;
        ++m_blocks;
        m_listener->block_done(*this);
    }
}

uint8_t* AiCore::local(Pos pos, uint64_t addr, uint64_t len) {
    auto& b = m_buffers[static_cast<size_t>(pos)];
    if (addr + len > b.bytes.size()) throw ModelError(name(), std::string("internal: unchecked access to ") + isa::pos_name(pos));
    return b.bytes.data() + addr;
}

void AiCore::gm_read(uint64_t addr, void* dst, uint64_t len) { m_gm->read(addr, dst, len); }
void AiCore::gm_write(uint64_t addr, const void* src, uint64_t len) { m_gm->write(addr, src, len); }

std::string AiCore::describe_state() const {
    std::string s = std::string(name()) + (m_has_block ? " (block " + std::to_string(m_block.block_idx) + ")" : " (idle)") + "\n";
    if (m_scalar_wait) s += "    SCALAR: blocked in " + describe(*m_scalar_wait) + "\n";
    for (const auto& p : m_pipes)
        if (p) s += "    " + p->describe() + "\n";
    return s;
}

}  // namespace sfumato
