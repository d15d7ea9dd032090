// The task scheduler's view of which AI cores are free. On a split chip a Vector block takes one
// AIV, a Cube block one AIC, and a Mix block one AIC together with its own AIVs; on a coupled chip
// every block takes one coupled core. Lowest free index first, so placement is deterministic.
// Bookkeeping only (no timing).
#pragma once
#include <cstdint>
#include <vector>

#include "models/ts/i_block_runner.h"
#include "sim/device_if.h"

namespace sfumato::ts {

class CorePool {
public:
    CorePool(uint32_t cube_cores, uint32_t vector_cores, uint32_t aiv_per_aic);
    // How many blocks of this kind the chip could run at once, and could start now.
    uint32_t capacity(KernelKind k) const;
    uint32_t free_slots(KernelKind k) const;
    // Takes the lowest free slot; the caller checks free_slots() first.
    CoreSlot take(KernelKind k);
    void give(const CoreSlot& s);
    uint32_t cube_cores() const { return static_cast<uint32_t>(m_cube_busy.size()); }
    uint32_t vector_cores() const { return static_cast<uint32_t>(m_vec_busy.size()); }
    bool coupled() const { return m_per_aic == 0; }

private:
    bool mix_free(uint32_t c) const;
    std::vector<bool> m_cube_busy, m_vec_busy;
    uint32_t m_per_aic;
};

}  // namespace sfumato::ts
