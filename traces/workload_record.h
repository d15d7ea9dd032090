// Records a host program's device task stream as a workload file: streams with their
// priorities, then every memcpy, operator-library kernel launch, event record and event wait in
// submission order. Host-side timing (delays between calls, synchronisations) is not recorded:
// a replay issues the tasks back to back, each stream still in its order and with its waits.
#pragma once
#include "runtime/rt/context.h"
#include "traces/workload.h"

namespace sfumato::workload {

// Throws InputError when a kernel launch did not come from the operator library (a hand-written
// kernel cannot be replayed by name).
Workload record_workload(const rt::Context& ctx);

}  // namespace sfumato::workload
