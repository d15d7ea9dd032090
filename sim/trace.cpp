#include "sim/trace.h"

namespace sfumato {

bool parse_trace_level(const std::string& s, TraceLevel& out) {
    static const std::pair<const char*, TraceLevel> kLevels[] = {
        {"off", TraceLevel::Off}, {"op", TraceLevel::Op}, {"task", TraceLevel::Task},
        {"instr", TraceLevel::Instr}, {"mem", TraceLevel::Mem}};
    for (const auto& [n, l] : kLevels)
        if (s == n) { out = l; return true; }
    return false;
}

}  // namespace sfumato
