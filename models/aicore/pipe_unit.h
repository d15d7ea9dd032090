// One in-order pipe of an AI core (MTE1, MTE2, MTE3, M, FIX or V). The scalar unit pushes
// instructions, stamped with their issue cycle, into a bounded queue; the pipe starts each no
// earlier than its issue cycle and the pipe's throughput allows, waits on flags, and keeps the
// instructions in flight until they complete. pipe_barrier drains the pipe; a set_flag sets its
// flag once every earlier instruction of the pipe completed, and by default (a scoreboard,
// chip.aicore.set_flag_blocks = false) later instructions start meanwhile, so a double-buffered
// MTE2 streams tile after tile instead of draining at each tile's flag.
// Compute instructions have arithmetic latencies; memory instructions are split into requests
// sent to the memory system (at most max_outstanding in flight) and complete when the last
// request returns. The pipe is one SC_METHOD that sleeps until its next event: it never ticks.
// With the bulk memory service a memory instruction's requests go as one burst (sim/mem_if.h):
// the service issues them as the request slots would allow and completes the instruction once.
#pragma once
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "isa/instr.h"
#include "models/aicore/core_timing.h"
#include "models/aicore/gm_pattern.h"
#include "models/aicore/race_checker.h"
#include "sim/mem_if.h"
#include "sim/stats.h"
#include "sim/time.h"
#include "sim/trace.h"

namespace sfumato {

class AiCore;

class PipeUnit : public sc_core::sc_module, public IMemClient {
public:
    SC_HAS_PROCESS(PipeUnit);
    PipeUnit(sc_core::sc_module_name name, AiCore& core, isa::Pipe id, uint32_t depth,
             uint32_t max_outstanding, StatGroup& parent);

    isa::Pipe id() const { return m_id; }
    bool full() const { return m_count == m_depth; }
    size_t count() const { return m_count; }
    // The scalar unit, once blocked on a full queue, resumes when the queue is this empty.
    size_t low_water() const { return m_depth / 2; }
    // The cycle the next push's queue slot became free: when the instruction `depth` pushes
    // earlier left the queue (0 while fewer than depth were pushed). Valid when not full.
    uint64_t slot_free_cycle() const {
        // m_pushed modulo the depth is m_head + m_count (m_head: m_popped modulo the depth).
        return m_pushed < m_depth ? 0 : m_pop_cycle[wrap(m_head + m_count, m_depth)];
    }
    // What the scalar unit hands over with a queued instruction: whether it is a compute
    // instruction (starts_arithmetically) and then its timing, taken from the core's per-instruction
    // cache at issue so that the pipe does not look the instruction up again.
    // Its energy class (energy_class) comes the same way: it depends on the instruction and the
    // pipe only.
    struct Queued {
        bool compute = false;
        uint8_t energy_class = 0;
        ComputeTiming t;
    };
    // The class of an instruction's busy cycles on pipe `pipe` for the energy model: the cube's
    // input type class or the vector op class (0 on other pipes). Observation only.
    static uint8_t energy_class(isa::Pipe pipe, const isa::Instr& in);
    // A compute instruction (not a synchronisation, no GM transfer): its start and end are
    // arithmetic (compute_timing), the pipe starts it without sleeping until its issue cycle.
    static bool starts_arithmetically(const isa::Instr& in);
    // Queues `in` with its scalar, pipe, sequence number and issue cycle set (the queue's is the
    // only whole copy of the instruction made at issue).
    void push(const isa::Instr& in, double scalar, isa::Pipe pipe, uint32_t seq, uint64_t issue_cycle, const Queued& q);
    sc_core::sc_event& pop_event() { return m_pop; }
    // Queue empty and nothing in flight (every started instruction has completed).
    bool drained() const { return m_count == 0 && m_inflight_count == 0 && m_def_head == m_deferred.size(); }
    // Completion cycle of the last instruction (valid when drained).
    Cycle last_end() const { return m_last_end; }
    uint64_t busy_cycles() const { return m_busy.value(); }
    void wake() { m_wake.notify(sc_core::SC_ZERO_TIME); }
    // Describes the pipe's state for deadlock reports.
    std::string describe() const;
    void mem_done(MemRequest& req) override;
    // A completion refill() takes without waking the pipe may come ahead of SystemC time.
    bool takes_ahead(const MemRequest& req) const override;
    void set_trace_track(TrackId t) { m_track = t; }
    TrackId trace_track() const { return m_track; }

private:
    // i mod n for i < 2n.
    static size_t wrap(size_t i, size_t n) { return i >= n ? i - n : i; }
    // Small (no copy of the instruction): a compute instruction is only counted and traced at
    // retirement; a memory instruction's whole instruction waits in m_inflight_mem.
    struct InFlight {
        isa::Opcode op = isa::Opcode::NOP;
        uint8_t energy_class = 0;  // the cube's input type class or the vector op class (energy model)
        uint32_t seq = 0;
        Cycle start, end;
        uint32_t pending = 0;  // memory requests not yet returned
        bool issuing = false;  // still sending requests
        bool done = false;
        uint64_t index = 0;    // start order within the pipe
    };
    // A set_flag waiting for the instructions started before it (those with index < upto).
    struct DeferredSet {
        isa::Instr instr;
        uint64_t upto = 0;
        Cycle at;  // when it left the queue
        RaceChecker::Clock clock{};
    };
    struct MemCursor {  // progress of the memory instruction currently sending requests
        bool active = false;
        uint32_t slot = 0;  // index into m_inflight
        GmPattern pat;
        uint32_t outer = 0, inner = 0;
        uint64_t offset = 0;
        Cycle ready;  // setup done
        uint32_t setup = 0;  // its start-up cycles
    };

    void run();
    bool step(Cycle now);  // returns false when the pipe must sleep (trigger already set)
    // `at`: the time (tick) of `now`'s call, for the progress note.
    void retire(Cycle now, Tick at);
    bool issue_requests(Cycle now);
    // Sends the current instruction's requests while request slots are free; true once it sent
    // its last (the instruction leaves the cursor), false when out of slots.
    bool send_requests(Cycle now, Tick now_t);
    // A completion at `at` freed a slot while the pipe waited for one (m_slot_wait): what its
    // wake-up would do, done now (pipe_issue.cpp).
    void refill(Tick at);
    // The current instruction's next request is its last.
    bool cursor_on_last() const;
    // The bulk memory service (IMemTarget::takes_bursts): the instruction's requests as one burst.
    bool issue_burst(Cycle now);
    uint32_t push_inflight(const isa::Instr& in, uint8_t energy_class, Cycle start, Cycle end, bool done);
    void complete(InFlight& f, Cycle end);
    void set_flag_now(const isa::Instr& in, Cycle at, const RaceChecker::Clock* clock);
    void fire_deferred(Cycle now);
    void sleep_until(Cycle now, Cycle at);
    // Head instruction with a unit flag: true when its L0C unit bits are there (ready: when the
    // last changed), else arranges to be woken and counts the wait as flag waiting.
    bool unit_bits_wait(Cycle now, Cycle& ready);
    void sleep_on_wake_or(Cycle now, Cycle at);
    Cycle now_cycle() const;

    AiCore& m_core;
    isa::Pipe m_id;
    std::vector<isa::Instr> m_queue;
    size_t m_depth;  // m_queue.size() (a size of 136-B elements is a multiply and shifts)
    std::vector<Queued> m_queued;  // beside m_queue, slot for slot
    size_t m_head = 0, m_count = 0;
    std::vector<uint64_t> m_pop_cycle;  // ring: the cycle each of the last `depth` instructions left the queue
    uint64_t m_pushed = 0, m_popped = 0;
    uint32_t m_undone = 0;  // in-flight memory instructions not yet complete
    std::vector<InFlight> m_inflight;  // ring, in start order
    std::vector<isa::Instr> m_inflight_mem;  // beside m_inflight: the memory instructions' (for complete())
    size_t m_if_head = 0, m_inflight_count = 0;
    uint64_t m_started = 0;  // instructions ever started (InFlight::index of the next)
    std::vector<DeferredSet> m_deferred;  // FIFO: [m_def_head, size)
    size_t m_def_head = 0;
    std::vector<MemRequest> m_reqs;
    std::vector<uint32_t> m_free_reqs;
    std::vector<MemBurst> m_bursts;  // beside m_reqs, when the memory takes bursts
    MemBurstChain m_chain;           // this pipe's request slots, for its bursts
    MemCursor m_cur;
    Cycle m_next_free;   // throughput: when the pipe can start another instruction
    Cycle m_last_end;    // latest completion among started instructions
    Cycle m_busy_until;  // union accounting of busy intervals
    bool m_waiting_flag = false;
    bool m_slot_wait = false;  // asleep in issue_requests until a completion frees a request slot
    bool m_push_notified = false;  // push notified m_wake and run() has not started since
    bool m_pop_notified = false;   // this run() notified m_pop
    sc_core::sc_event m_wake, m_pop;
    TrackId m_track = 0;

    StatGroup m_stats;
    Counter m_instrs;
    Counter m_busy;
    Counter m_flag_wait_cycles;
    Counter m_requests;
    // For the energy model (models/power), busy cycles by class: the cube pipe's on MADs of 32-bit,
    // 8-bit and 4-bit inputs (the rest ran 16-bit inputs); the vector pipe's on transcendental ops,
    // reductions and sorts, and data movement and casts (the rest ran simple arithmetic and logic).
    // Observation only: the classes change no timing.
    enum CubeClass : uint8_t { k16Bit = 0, kFp32, kInt8, kInt4 };
    enum VecClass : uint8_t { kSimple = 0, kTranscendental, kReduce, kMove };
    static constexpr int kNumClasses = 4;
    std::unique_ptr<Counter> m_class_busy[kNumClasses];
    // MTE2 and MTE3: the GM bytes they requested by the local buffer they wrote or read (the UB;
    // the L1, with MTE2's straight loads into L0A/L0B), for the energy model. Observation only.
    std::unique_ptr<Counter> m_ub_bytes, m_l1_bytes;
    Cycle m_wait_since;
};

}  // namespace sfumato
