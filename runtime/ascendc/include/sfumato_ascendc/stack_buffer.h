// PopStackBuffer: the part of a local position's buffer the current TPipe has not handed out, as a
// tensor (the advanced APIs' scratch when the caller passes none, and what kernels take with
// PopStackBuffer<uint8_t, TPosition::LCM>). Nothing is reserved: a later InitBuffer may take the
// same bytes, as on the chip.
#pragma once
#include <cstdint>

#include "runtime/kernel/kernel_context.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/pipe.h"
#include "sfumato_ascendc/tensor.h"

namespace AscendC {

template <class T, TPosition pos>
bool PopStackBuffer(LocalTensor<T>& popBuffer) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("PopStackBuffer");
    TPipe* pipe = s.pipe;
    if (pipe == nullptr) return false;
    constexpr sfumato::kernel::TPosition kp = sfumato::ascendc::kernel_position(pos);
    const uint32_t used = pipe->kp().Reserve(kp, 0, "PopStackBuffer");
    const uint64_t cap = s.ctx->sink().buffer_size(sfumato::ascendc::physical(pos));
    if (used >= cap) return false;
    popBuffer = LocalTensor<T>(pos, used, static_cast<uint32_t>((cap - used) / sizeof(T)));
    return true;
}

}  // namespace AscendC
