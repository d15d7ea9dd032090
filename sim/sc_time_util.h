// The one place where integer simulated time meets sc_time: the kernel resolution is 1 ps, so
// a Tick converts exactly.
#pragma once
#include <systemc>

#include "sim/time.h"

namespace sfumato {

inline sc_core::sc_time to_sc_time(Tick t) { return sc_core::sc_time::from_value(t.v); }
inline Tick now_tick() { return Tick(sc_core::sc_time_stamp().value()); }
// Must be called before any sc_time is created (before elaboration).
void init_time_resolution();

}  // namespace sfumato
