// Contract: the boundary between a kernel (runtime/kernel) and the core that runs it
// (models/aicore). A kernel's scalar code calls issue() for every pipe instruction, in program
// order; issue() may block (in simulated time) while the target pipe's queue is full.
// scalar() charges scalar-unit cycles for control flow; load() is issue() for a scalar load that
// also returns the value. Queries return the block's identity.
// The sink owns no kernel state and never calls back into the kernel.
#pragma once
#include <cstdint>

#include "isa/instr.h"

namespace sfumato::isa {

// Core kind a block runs on (split parts have cube cores and vector cores).
enum class CoreKind : uint8_t { Coupled, Cube, Vector };

class IInstrSink {
public:
    virtual ~IInstrSink() = default;
    virtual void issue(const Instr& in) = 0;
    // A scalar load of global memory (LD_GM): issued like issue(), and returns the raw bits it
    // read, zero-extended (0 where the sink holds no data, e.g. timing mode).
    virtual uint64_t load(const Instr& in) {
        issue(in);
        return 0;
    }
    virtual void scalar(uint32_t cycles) = 0;
    virtual uint32_t block_idx() const = 0;
    virtual uint32_t block_num() const = 0;
    virtual uint32_t sub_block_idx() const = 0;
    virtual CoreKind core_kind() const = 0;
    // Capacity in bytes of a local buffer of this core (0 when the core has none).
    virtual uint64_t buffer_size(Pos pos) const = 0;
    // Event ids available per pipe pair for set_flag/wait_flag.
    virtual uint32_t event_ids() const = 0;
};

}  // namespace sfumato::isa
