// One AI core of a DaVinci-style chip at instruction level: a scalar unit that runs a block
// of a kernel (the kernel's C++ code, in an SC_THREAD) and issues instructions into in-order
// pipes (PipeUnit), local buffers with capacity and alignment checks, and the set/wait flags
// between pipes. Kinds: Coupled (all pipes and buffers), Cube (AIC of a split part: MTE1, MTE2,
// M, FIX; L1/L0A/L0B/L0C) and Vector (AIV: MTE2, V, MTE3; UB).
// Temporal decoupling: the scalar unit keeps a local cycle count and synchronises with SystemC
// only when a queue is full or the block ends; every instruction carries its issue cycle and no
// pipe starts it earlier, so decoupling never changes a cycle count.
// Functional effects: loads (GM->local) apply when they complete, all else when it starts.
// Start-up: a block first fetches its kernel's entry code into the instruction cache (through the
// TLB and the memory system), initialises the core (init_cycles) and reads the kernel's argument
// block with scalar loads through the data cache; the first issue of each opcode fetches that
// call site's code; the block ends by writing back dirty data-cache lines. A core given a block of
// a new kernel starts with empty caches and TLB (scalar_mem.h). Issuing an instruction costs the
// scalar unit issue_cycles plus setup_cycles per register value it takes (CoreParams::issue_cost).
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "isa/instr_sink.h"
#include "isa/semantics.h"
#include "models/aicore/core_params.h"
#include "models/aicore/core_timing.h"
#include "models/aicore/cross_flags.h"
#include "models/aicore/race_checker.h"
#include "models/aicore/scalar_mem.h"
#include "models/aicore/system_region.h"
#include "models/aicore/instr_cache.h"
#include "models/aicore/instr_stats.h"
#include "models/aicore/pipe_unit.h"
#include "sim/mem_if.h"
#include "sim/stats.h"
#include "sim/time.h"
#include "sim/trace.h"

namespace sfumato {

class AiCore;

// Per distinct instruction whose operands passed a core's checks: its issue cost and, for a
// compute instruction, its pipe timing (one lookup per issue serves both). A function of the
// instruction and of what the core's kind and the chip's parameters fix (the checks read the
// kind's pipes and buffers, the GM capacity, whether cross-core flags exist; the timing reads the
// parameters), so the cores of one kind on a chip can share a memo of it.
struct IssueInfo {
    uint32_t cost = 0;
    PipeUnit::Queued timing;
};
using IssueMemo = InstrMemo<IssueInfo>;

// Contract: told when a core finishes the block it was given (at the current SystemC time).
class ICoreListener {
public:
    virtual ~ICoreListener() = default;
    virtual void block_done(AiCore& core) = 0;
};

struct BlockAssignment {
    std::function<void(isa::IInstrSink&)> body;
    uint32_t block_idx = 0, block_num = 1, sub_block_idx = 0;
    uint64_t start_cycle = 0;  // not before this cycle (dispatch latency)
    CodeImage* image = nullptr;  // the kernel's code on this core kind (null: no code fetches)
    uint64_t args_addr = 0;      // the launch's argument block, read at start-up
    uint32_t args_bytes = 0;
    uint64_t task_seq = 0;       // which launch: a new one starts with empty caches
    uint32_t kind_cores = 1;     // cores of this core's kind the launch uses (its mode-0 flag barrier)
};

class AiCore : public sc_core::sc_module, public isa::IInstrSink, public isa::IMemView {
public:
    SC_HAS_PROCESS(AiCore);
    // page_table: device address of the page table the scalar unit's TLB walks.
    AiCore(sc_core::sc_module_name name, uint32_t index, isa::CoreKind kind, const CoreParams& p,
           ClockDomain clock, IMemTarget& mem, IBackingStore* gm, uint64_t gm_capacity, TraceHub& trace,
           InstrStats& instr_stats, StatGroup& parent, uint64_t page_table = 0);

    // Starts a block (the scheduler calls this only on an idle core).
    void assign(BlockAssignment a, ICoreListener& listener);
    bool busy() const { return m_has_block; }
    uint32_t index() const { return m_index; }
    ClockDomain clock() const { return m_clock; }
    const CoreParams& params() const { return m_p; }
    PipeUnit* pipe(isa::Pipe p) { return m_pipes[static_cast<size_t>(p)].get(); }
    uint64_t pipe_busy(isa::Pipe p) const;
    uint64_t scalar_busy() const { return m_scalar_busy.value(); }
    // Cycles of the last block from its start to its kernel body (fetch, init, arguments).
    uint64_t last_startup_cycles() const { return m_last_startup; }
    std::string describe_state() const;
    std::string path() const { return name(); }
    // Split parts: the shared cross-core flags, this core's group (its AIC's index) and its
    // index among the group's AIVs.
    void attach_cross_flags(CrossFlags* x, uint32_t group, uint32_t sub) {
        m_xflags = x;
        m_group = group;
        m_sub = sub;
    }
    CrossFlags* cross_flags() { return m_xflags; }
    // A memo of issue work shared with the chip's other cores of this kind, which must have the same
    // parameters, GM capacity and cross-core flags (or none) as this one; asked when this core's
    // own issue cache misses.
    void share_issue_memo(IssueMemo* memo) { m_issue_memo = memo; }
    uint32_t group() const { return m_group; }
    uint32_t sub_index() const { return m_sub; }
    // The block's launch and how many cores of this kind it uses (cross-core mode-0 barriers).
    uint64_t launch_seq() const { return m_block.task_seq; }
    uint32_t launch_kind_cores() const { return m_block.kind_cores; }
    // A cross-core flag was set somewhere: wake the pipes (and the scalar unit) to re-check.
    void cross_flag_changed();
    RaceChecker* race_checker() { return m_race.get(); }

    // isa::IInstrSink (called from the kernel body on the scalar thread)
    void issue(const isa::Instr& in) override;
    uint64_t load(const isa::Instr& in) override;
    void scalar(uint32_t cycles) override;
    uint32_t block_idx() const override { return m_block.block_idx; }
    uint32_t block_num() const override { return m_block.block_num; }
    uint32_t sub_block_idx() const override { return m_block.sub_block_idx; }
    isa::CoreKind core_kind() const override { return m_kind; }
    uint64_t buffer_size(isa::Pos pos) const override;
    uint32_t event_ids() const override { return m_p.event_ids; }

    // isa::IMemView (functional semantics)
    uint8_t* local(isa::Pos pos, uint64_t addr, uint64_t len) override;
    void gm_read(uint64_t addr, void* dst, uint64_t len) override;
    void gm_write(uint64_t addr, const void* src, uint64_t len) override;

    // Used by the pipes.
    bool functional() const { return m_gm != nullptr; }
    IMemTarget& mem() { return m_mem; }
    TraceHub& trace() { return m_trace; }
    using sc_core::sc_object::trace;  // SystemC's trace(sc_trace_file*) stays visible
    InstrStats& instr_stats() { return m_instr_stats; }
    // Event flags count their sets: each set_flag adds one, visible from its `ready` cycle; a
    // wait_flag takes the oldest (the vendor's examples set an event again before the first wait
    // has seen it; docs/reference.md). Empty: the flag is clear.
    struct Flag {
        struct Set {
            Cycle ready;
            Tick tick;
        };
        std::vector<Set> sets;  // oldest first
        bool set() const { return !sets.empty(); }
        const Set& oldest() const { return sets.front(); }
        void take() { sets.erase(sets.begin()); }
    };
    Flag& flag(isa::Pipe src, isa::Pipe dst, uint8_t id);
    void flag_set(const isa::Instr& in, Cycle at);
    void notify_progress() { m_progress.notify(sc_core::SC_ZERO_TIME); }
    std::string describe(const isa::Instr& in) const;
    // L0C unit bits (the Mmad/FixPipe unit flags, isa/instr.h): one per 512-B block of L0C with the
    // cycle it took its value, all 0 when a block starts. unit_bits_ready: every block of the
    // instruction's L0C range holds what it waits for (a mad 0, a fixpipe 1); `ready` is the
    // latest cycle one of them took it. unit_bits_reading (a fixpipe with unit flag 3 whose end is
    // not known yet): its blocks are neither 0 nor 1 until it ends, so no mad writes them and no
    // later fixpipe reads them meanwhile. unit_bits_done (unit flag 3): a mad sets its blocks'
    // bits, a fixpipe clears them, at `at`, and the other pipe is woken to re-check.
    bool unit_bits_ready(const isa::Instr& in, Cycle& ready) const;
    void unit_bits_reading(const isa::Instr& in);
    void unit_bits_done(const isa::Instr& in, Cycle at);
    // Applies an instruction's effect (functional mode); an operand the data make invalid (a gather
    // offset outside its source) is a ProgramError naming the core and the instruction (exit 2).
    void execute(const isa::Instr& in);

private:
    void scalar_thread();
    void start_up();
    void issue_scalar_side(const isa::Instr& in);
    void issue_scalar_mem(const isa::Instr& in);
    void slice(const char* what, Cycle from, Cycle to);
    void check_operands(const isa::Instr& in) const;
    void wait_until_cycle(Cycle c);
    bool all_drained() const;

    struct LocalBuffer {
        uint64_t size = 0, align = 1;
        std::vector<uint8_t> bytes;
    };

    uint32_t m_index;
    isa::CoreKind m_kind;
    const CoreParams& m_p;
    ClockDomain m_clock;
    IMemTarget& m_mem;
    IBackingStore* m_gm;
    uint64_t m_gm_capacity;
    TraceHub& m_trace;
    InstrStats& m_instr_stats;
    std::array<std::unique_ptr<PipeUnit>, isa::kNumPipes> m_pipes;
    std::array<LocalBuffer, static_cast<size_t>(isa::Pos::kCount)> m_buffers;
    std::vector<Flag> m_flags;
    struct UnitBit {
        uint8_t state = 0;  // 0, 1, or 2: being read
        Cycle at;
    };
    std::vector<UnitBit> m_unit_bits;

    BlockAssignment m_block;
    ICoreListener* m_listener = nullptr;
    bool m_has_block = false;
    Cycle m_scalar_cycle;  // the scalar unit's local time
    uint32_t m_seq = 0;
    sc_core::sc_event m_block_start, m_progress;
    std::unique_ptr<ScalarMem> m_smem;
    uint64_t m_task_seq = ~uint64_t(0);  // the launch whose blocks the caches hold
    std::array<bool, static_cast<size_t>(isa::Opcode::kCount)> m_site_fetched{};  // this block
    uint64_t m_last_startup = 0;

    CrossFlags* m_xflags = nullptr;
    const isa::Instr* m_scalar_wait = nullptr;  // a cross-core wait blocking the scalar unit
    uint32_t m_group = 0, m_sub = 0;
    std::unique_ptr<RaceChecker> m_race;
    InstrCache<IssueInfo> m_issued;
    IssueMemo* m_issue_memo = nullptr;  // shared with the chip's other cores of this kind

    StatGroup m_stats;
    Counter m_blocks;
    Counter m_scalar_busy;
    Counter m_startup;
    Counter m_ub_conflict;
    TrackId m_scalar_track = 0;
};

}  // namespace sfumato
