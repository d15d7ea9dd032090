// Running one block of an Ascend C kernel on a core: the state behind the implicit context is
// set up from the core's sink, kept current across coroutine switches, and any error the
// kernel's calls raise is rethrown naming the block and the call (exit 2 for bad input).
#pragma once
#include <array>
#include <cstdint>
#include <functional>

#include "isa/instr_sink.h"

namespace sfumato::ascendc {

struct BlockSetup {
    bool functional = true;    // the core holds data (scalar access to local buffers reads it)
    bool mix = false;          // a mix kernel: AIVs number their blocks b * aiv_per_aic + sub
    uint32_t aiv_per_aic = 0;  // split parts' vector cores per cube core
    uint64_t aiv_ub_bytes = 0;  // an AIV's UB (a mix kernel's AIC keeps its AIVs' UB buffers' books)
    // The AIC's buffers by isa::Pos (a mix kernel's AIV keeps the books of buffers in them: catlass's
    // Arch::Resource reserves L1, L0A/B/C, the bias table and the FixPipe buffer on every core).
    std::array<uint64_t, static_cast<size_t>(isa::Pos::kCount)> aic_bytes{};
};
void run_block(isa::IInstrSink& real, const BlockSetup& setup, const std::function<void()>& body);

}  // namespace sfumato::ascendc
