#include "sim/sparse_memory.h"

#include <algorithm>
#include <cstring>

#include "sim/error.h"

namespace sfumato {

void SparseMemory::check(uint64_t addr, uint64_t len) const {
    if (addr > m_capacity || len > m_capacity - addr)
        throw ModelError("gm", "access [" + std::to_string(addr) + ", +" + std::to_string(len) +
                                   ") outside device memory of " + std::to_string(m_capacity) + " bytes");
}

void SparseMemory::read(uint64_t addr, void* dst, uint64_t len) const {
    check(addr, len);
    auto* out = static_cast<uint8_t*>(dst);
    while (len > 0) {
        uint64_t page = addr / kPageBytes, off = addr % kPageBytes;
        uint64_t n = std::min(len, kPageBytes - off);
        auto it = m_pages.find(page);
        if (it == m_pages.end()) std::memset(out, 0, n);
        else std::memcpy(out, it->second.get() + off, n);
        out += n; addr += n; len -= n;
    }
}

void SparseMemory::write(uint64_t addr, const void* src, uint64_t len) {
    check(addr, len);
    auto* in = static_cast<const uint8_t*>(src);
    while (len > 0) {
        uint64_t page = addr / kPageBytes, off = addr % kPageBytes;
        uint64_t n = std::min(len, kPageBytes - off);
        auto& p = m_pages[page];
        if (!p) p.reset(new uint8_t[kPageBytes]());
        std::memcpy(p.get() + off, in, n);
        in += n; addr += n; len -= n;
    }
}

}  // namespace sfumato
