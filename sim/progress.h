// A monotonic count of forward progress (instructions retired, tasks completed, memory requests
// served). The run driver samples it between simulation slices: a slice without progress while
// the host program is still waiting is a deadlock, even if some timer keeps the kernel busy.
#pragma once
#include <cstdint>

namespace sfumato {

inline uint64_t& progress_counter() {
    static uint64_t n = 0;
    return n;
}
inline void note_progress() { ++progress_counter(); }

}  // namespace sfumato
