// Per-instruction statistics of a whole chip: for every opcode, how often it ran and the cycles
// it spent from start to completion (the columns of the vendor simulator's instruction table).
// One table per chip, registered once; cores increment plain counters.
#pragma once
#include <memory>
#include <vector>

#include "isa/instr.h"
#include "sim/stats.h"

namespace sfumato {

class InstrStats {
public:
    explicit InstrStats(StatGroup& parent);
    void record(isa::Opcode op, isa::Pipe pipe, uint64_t cycles) {
        auto& e = m_entries[static_cast<size_t>(op)];
        ++*e.count;
        *e.cycles += cycles;
        e.pipe = pipe;
    }
    struct Entry {
        std::unique_ptr<StatGroup> group;
        std::unique_ptr<Counter> count, cycles;
        isa::Pipe pipe = isa::Pipe::S;
    };
    const std::vector<Entry>& entries() const { return m_entries; }

private:
    StatGroup m_group;
    std::vector<Entry> m_entries;
};

}  // namespace sfumato
