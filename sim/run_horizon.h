// The last tick the current sc_start() slice runs, when its driver acts between slices on the
// model's behalf (delivers other ranks' messages, stops at --max-cycles and reports the state).
// A model that takes work ahead of SystemC time up to the kernel's next activity (the memory
// system's completions ahead, models/mem/memory_system.h) stops before it: the kernel cannot
// know what the driver will do then. ~0: no such slice (a run to the end).
#pragma once
#include <cstdint>

namespace sfumato {

inline uint64_t& run_horizon() {
    static uint64_t t = ~uint64_t(0);
    return t;
}

}  // namespace sfumato
