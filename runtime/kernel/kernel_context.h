// The state a kernel's scalar code carries: its instruction sink (the core it runs on), block
// identity, and the allocation of set/wait event ids per pipe pair. Kernel-API objects hold a
// pointer to it (SystemC switches between cores' threads, so there is no "current" global).
#pragma once
#include <array>
#include <string>

#include "isa/instr_sink.h"

namespace sfumato::kernel {

using isa::Pipe;

// Scalar instructions of the kernel API's own bookkeeping, charged through scalar() at one cycle
// each (the in-order scalar unit issues one ALU instruction per cycle). Issuing a pipe instruction
// is charged by the core (its issue and register setup); these are what the API does around it.
struct ApiOps {
    static constexpr uint32_t kQueueOp = 2;        // a queue operation: ring index update, buffer lookup
    static constexpr uint32_t kLoopIteration = 2;  // a loop the API runs: counter update, compare and branch
    static constexpr uint32_t kAddressAdvance = 1;  // per operand address the loop advances
};

class KernelContext {
public:
    explicit KernelContext(isa::IInstrSink& sink) : m_sink(sink) {}
    KernelContext(const KernelContext&) = delete;
    KernelContext& operator=(const KernelContext&) = delete;

    isa::IInstrSink& sink() { return m_sink; }
    uint32_t block_idx() const { return m_sink.block_idx(); }
    uint32_t block_num() const { return m_sink.block_num(); }
    uint32_t sub_block_idx() const { return m_sink.sub_block_idx(); }

    void issue(const isa::Instr& in) { m_sink.issue(in); }
    void scalar(uint32_t cycles) { m_sink.scalar(cycles); }
    void set_flag(Pipe src, Pipe dst, uint8_t id);
    void wait_flag(Pipe src, Pipe dst, uint8_t id);
    void pipe_barrier(Pipe p);

    // A fresh event id for the (src, dst) pipe pair; throws when the pair has none left.
    uint8_t alloc_event(Pipe src, Pipe dst, const std::string& who);
    // Every event id free again: a kernel body that ran to its end (its pipes destroyed, their flags
    // drained) runs again on the same core (the Ascend C layer's Matmul server, runtime/ascendc/core.cpp).
    void reset_events() { m_next_event.fill(0); }
    // The instruction the count-form vector builders (vec_api.cpp) write before issuing it: kept
    // from call to call, each call writes every field an instruction is compared by, and only those.
    isa::Instr& vec_scratch() { return m_vec_scratch; }

private:
    isa::IInstrSink& m_sink;
    std::array<uint8_t, isa::kNumPipes * isa::kNumPipes> m_next_event{};
    isa::Instr m_vec_scratch;
};

}  // namespace sfumato::kernel
