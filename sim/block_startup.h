// The start-up of the block whose body a simulated core is entering: the cycles from the block's
// start on its core to its body (code fetch, initialisation, argument loads). A core sets it as the
// last thing before it calls a block's body, in the same SystemC process and with no wait between,
// so a body that reads it before its first instruction reads its own block's value. Timing re-use
// (runtime/reuse) needs it: a stand-in block charges its template's block time less its own
// start-up, which differs from the template's (the template's code may have come from HBM, its
// later blocks' fetches may have queued behind its earlier blocks' traffic). Kept here rather than
// in the kernel interface (isa::IInstrSink): only a body that stands in for another kernel asks.
// One value per host thread (SystemC runs its processes one at a time on it).
#pragma once
#include <cstdint>

namespace sfumato {

inline uint64_t& entering_block_startup_cycles() {
    thread_local uint64_t cycles = 0;
    return cycles;
}

}  // namespace sfumato
