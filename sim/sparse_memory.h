// Sparse functional global memory: pages are allocated on first write, so a 64 GiB device
// costs only what a run touches; reads of untouched pages return zeros.
#pragma once
#include <memory>
#include <unordered_map>

#include "sim/mem_if.h"

namespace sfumato {

class SparseMemory : public IBackingStore {
public:
    static constexpr uint64_t kPageBytes = 64 * 1024;
    explicit SparseMemory(uint64_t capacity) : m_capacity(capacity) {}
    void read(uint64_t addr, void* dst, uint64_t len) const override;
    void write(uint64_t addr, const void* src, uint64_t len) override;
    uint64_t capacity() const override { return m_capacity; }
    uint64_t resident_bytes() const override { return m_pages.size() * kPageBytes; }

private:
    void check(uint64_t addr, uint64_t len) const;
    uint64_t m_capacity;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> m_pages;
};

}  // namespace sfumato
