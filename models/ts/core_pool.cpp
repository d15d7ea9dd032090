#include "models/ts/core_pool.h"

namespace sfumato::ts {

CorePool::CorePool(uint32_t cube_cores, uint32_t vector_cores, uint32_t aiv_per_aic)
    : m_cube_busy(cube_cores, false), m_vec_busy(aiv_per_aic ? vector_cores : 0, false), m_per_aic(aiv_per_aic) {}

bool CorePool::mix_free(uint32_t c) const {
    if (m_cube_busy[c]) return false;
    for (uint32_t v = c * m_per_aic; v < (c + 1) * m_per_aic && v < m_vec_busy.size(); ++v) {
        if (m_vec_busy[v]) return false;
    }
    return true;
}

uint32_t CorePool::capacity(KernelKind k) const {
    if (coupled() || k != KernelKind::Vector) return cube_cores();
    return vector_cores();
}

uint32_t CorePool::free_slots(KernelKind k) const {
    uint32_t n = 0;
    if (coupled() || k == KernelKind::Cube) {
        for (bool b : m_cube_busy) n += !b;
    } else if (k == KernelKind::Vector) {
        for (bool b : m_vec_busy) n += !b;
    } else {
        for (uint32_t c = 0; c < m_cube_busy.size(); ++c) n += mix_free(c);
    }
    return n;
}

CoreSlot CorePool::take(KernelKind k) {
    CoreSlot s;
    if (coupled() || k == KernelKind::Cube) {
        for (uint32_t c = 0; c < m_cube_busy.size(); ++c) {
            if (!m_cube_busy[c]) {
                m_cube_busy[c] = true;
                s.cube = static_cast<int32_t>(c);
                return s;
            }
        }
    } else if (k == KernelKind::Vector) {
        for (uint32_t v = 0; v < m_vec_busy.size(); ++v) {
            if (!m_vec_busy[v]) {
                m_vec_busy[v] = true;
                s.vec_first = static_cast<int32_t>(v);
                s.vec_count = 1;
                return s;
            }
        }
    } else {
        for (uint32_t c = 0; c < m_cube_busy.size(); ++c) {
            if (mix_free(c)) {
                m_cube_busy[c] = true;
                s.cube = static_cast<int32_t>(c);
                s.vec_first = static_cast<int32_t>(c * m_per_aic);
                s.vec_count = m_per_aic;
                for (uint32_t v = 0; v < m_per_aic; ++v) m_vec_busy[c * m_per_aic + v] = true;
                return s;
            }
        }
    }
    return s;
}

void CorePool::give(const CoreSlot& s) {
    if (s.cube >= 0) m_cube_busy[static_cast<uint32_t>(s.cube)] = false;
    for (uint32_t v = 0; v < s.vec_count; ++v) m_vec_busy[static_cast<uint32_t>(s.vec_first) + v] = false;
}

}  // namespace sfumato::ts
