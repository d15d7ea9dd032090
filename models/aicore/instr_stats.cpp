#include "models/aicore/instr_stats.h"

namespace sfumato {

InstrStats::InstrStats(StatGroup& parent) : m_group(&parent, "instr") {
    m_entries.resize(static_cast<size_t>(isa::Opcode::kCount));
    for (size_t i = 0; i < m_entries.size(); ++i) {
        auto& e = m_entries[i];
        e.group = std::make_unique<StatGroup>(&m_group, isa::opcode_name(static_cast<isa::Opcode>(i)));
        e.count = std::make_unique<Counter>(*e.group, "count", "instr", "instructions executed");
        e.cycles = std::make_unique<Counter>(*e.group, "cycles", "cycle", "cycles from start to completion, summed");
        e.pipe = isa::default_pipe(static_cast<isa::Opcode>(i));
    }
}

}  // namespace sfumato
