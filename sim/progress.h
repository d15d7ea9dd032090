// Forward progress, for deadlock detection. progress_counter() counts completed work
// (instructions retired, tasks completed); work_in_flight() counts long operations under way
// whose completion is scheduled (a DMA transfer, a timed host delay). The run driver samples
// both between simulation slices: a slice without progress while nothing is in flight and the
// host program still waits is a deadlock, even if some periodic timer keeps the kernel busy.
#pragma once
#include <cstdint>

namespace sfumato {

inline uint64_t& progress_counter() {
    static uint64_t n = 0;
    return n;
}
inline void note_progress() { ++progress_counter(); }

inline int64_t& work_in_flight() {
    static int64_t n = 0;
    return n;
}
inline void work_begin() { ++work_in_flight(); }
inline void work_end() {
    --work_in_flight();
    note_progress();
}

}  // namespace sfumato
