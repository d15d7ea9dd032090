// Race detection for one core (`--check-races`): happens-before between the pipes of a block
// with vector clocks. Each pipe counts the instructions it starts; set_flag publishes the
// source pipe's clock (it executes after all earlier instructions of that pipe completed),
// wait_flag joins it into the destination pipe; scalar waits and pipe_barrier(ALL) order every
// later-issued instruction after what the scalar unit learned. Every access (the footprint of
// an instruction) is checked against the recorded accesses of other pipes: two overlapping
// accesses, at least one a write, neither ordered before the other, are a race (SimError with
// exit code 3 naming both instructions, the core and the block). Unit flags (mad/fixpipe `uf`,
// ai_core.h): per 512-B block of L0C, the last instruction with unit flag 3 of each side (a mad
// sets the blocks' bits at its end, a fixpipe clears them) publishes its pipe's clock, and an
// instruction with a unit flag joins the other side's clocks of its blocks before it starts (a mad
// waits for the last clearing fixpipe, a fixpipe for the last setting mad). Logical ordering only, so the
// verdict does not depend on timing. Costs nothing when off (the core holds no checker).
// Simplified: races between different cores (GM shared by blocks) are not tracked.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/instr.h"

namespace sfumato {

class RaceChecker {
public:
    using Clock = std::array<uint32_t, isa::kNumPipes>;
    explicit RaceChecker(std::string core_name);
    void reset(uint32_t block);
    // A pipe starts an instruction: checks its footprint against unordered accesses, then records it.
    void on_start(isa::Pipe p, const isa::Instr& in);
    void on_set_flag(const isa::Instr& in);   // in the source pipe (or the scalar unit)
    // A set_flag whose flag is set later than it leaves its pipe's queue: the clock is taken in
    // program order (set_flag_clock, when it leaves the queue) and published when the flag is set.
    Clock set_flag_clock(const isa::Instr& in);
    void publish_flag(const isa::Instr& in, const Clock& c);
    void on_wait_flag(const isa::Instr& in);  // in the destination pipe
    // The scalar unit learned more (a wait_flag into S, or a PIPE_ALL barrier with every pipe
    // drained); instructions it issues from seq `next_seq` on are ordered after it.
    void on_scalar_wait(const isa::Instr& in, uint32_t next_seq);
    void on_barrier_all(uint32_t next_seq);

private:
    struct Access {
        isa::Pipe pipe;
        uint32_t epoch;
        uint64_t lo, hi;
        bool write;
        isa::Instr instr;
    };
    struct Join {
        uint32_t seq;
        Clock clock;
    };
    void advance(isa::Pipe p, uint32_t seq);
    static void join(Clock& a, const Clock& b);
    void prune(std::vector<Access>& v);
    // Unit flags: joins the clocks its L0C blocks' other side published (uf 2 or 3) into `me`;
    // publishes `me` for its side (uf 3) with `publish`.
    void unit_flags(const isa::Instr& in, Clock& me, bool publish);

    std::string m_core;
    uint32_t m_block = 0;
    std::array<Clock, isa::kNumPipes> m_clock{};
    Clock m_scalar{};
    std::vector<std::vector<Clock>> m_flags;  // [src][dst][id]: the clocks of its pending sets, oldest first
    void take_flag(const isa::Instr& in, Clock& into);  // join the oldest pending set's clock
    std::array<std::vector<Join>, isa::kNumPipes> m_pending;
    std::array<size_t, isa::kNumPipes> m_pending_pos{};
    std::array<std::vector<Access>, static_cast<size_t>(isa::Pos::kCount)> m_access;
    // Per 512-B L0C block: [0] the last setting mad's clock, [1] the last clearing fixpipe's.
    std::array<std::vector<Clock>, 2> m_unit;
};

}  // namespace sfumato
