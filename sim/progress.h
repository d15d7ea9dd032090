// Forward progress, for deadlock detection. progress_counter() counts completed work
// (instructions retired, tasks completed); work_in_flight() counts long operations under way
// whose completion is scheduled (a DMA transfer, a timed host delay). The run driver samples
// both between simulation slices: a slice without progress while nothing is in flight and the
// host program still waits is a deadlock, even if some periodic timer keeps the kernel busy.
// last_progress_tick() is the simulated time of the latest progress, so a deadlock report names
// the time it set in rather than the end of the slice that detected it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <systemc>

namespace sfumato {

inline uint64_t& progress_counter() {
    static uint64_t n = 0;
    return n;
}
inline uint64_t& last_progress_tick() {
    static uint64_t t = 0;
    return t;
}
inline void note_progress(uint64_t steps = 1) {
    progress_counter() += steps;
    last_progress_tick() = sc_core::sc_time_stamp().value();
}
// As above, for work done at `tick` (ahead of SystemC time, when a model runs ahead).
inline void note_progress(uint64_t steps, uint64_t tick) {
    progress_counter() += steps;
    last_progress_tick() = std::max(last_progress_tick(), tick);
}

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
