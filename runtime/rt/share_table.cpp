#include "runtime/rt/share_table.h"

namespace sfumato::rt {

uint64_t ShareTable::export_block(uint32_t owner, uint64_t addr, uint64_t bytes) {
    if (auto it = m_handle_of.find(addr); it != m_handle_of.end()) return it->second;
    const uint64_t h = m_next++;
    m_by_handle.emplace(h, Entry{owner, addr, bytes, false, {}});
    m_handle_of.emplace(addr, h);
    return h;
}

std::optional<uint64_t> ShareTable::import(uint32_t ctx, uint64_t handle) {
    auto it = m_by_handle.find(handle);
    if (it == m_by_handle.end() || it->second.owner_freed || it->second.owner == ctx) return std::nullopt;
    it->second.importers.insert(ctx);
    return it->second.addr;
}

ShareTable::Close ShareTable::close(uint32_t ctx, uint64_t addr) {
    auto h = m_handle_of.find(addr);
    if (h == m_handle_of.end()) return Close::NotImported;
    Entry& e = m_by_handle.at(h->second);
    auto imp = e.importers.find(ctx);
    if (imp == e.importers.end()) return Close::NotImported;
    e.importers.erase(imp);
    if (e.importers.empty() && e.owner_freed) {
        m_by_handle.erase(h->second);
        m_handle_of.erase(h);
        return Close::FreeNow;
    }
    return Close::Kept;
}

ShareTable::Close ShareTable::owner_free(uint32_t owner, uint64_t addr) {
    auto h = m_handle_of.find(addr);
    if (h == m_handle_of.end()) return Close::FreeNow;
    Entry& e = m_by_handle.at(h->second);
    if (e.owner != owner || e.owner_freed) return Close::NotImported;
    if (e.importers.empty()) {
        m_by_handle.erase(h->second);
        m_handle_of.erase(h);
        return Close::FreeNow;
    }
    e.owner_freed = true;
    return Close::Kept;
}

std::optional<uint32_t> ShareTable::owner_of(uint64_t addr) const {
    auto h = m_handle_of.find(addr);
    if (h == m_handle_of.end()) return std::nullopt;
    return m_by_handle.at(h->second).owner;
}

bool ShareTable::imported_by(uint32_t ctx, uint64_t addr, uint64_t bytes) const {
    auto h = m_handle_of.find(addr);
    if (h == m_handle_of.end()) return false;
    const Entry& e = m_by_handle.at(h->second);
    return e.importers.count(ctx) > 0 && bytes <= e.bytes;
}

uint64_t ShareTable::imported_bytes(uint32_t ctx) const {
    uint64_t n = 0;
    for (const auto& [h, e] : m_by_handle) n += e.importers.count(ctx) * e.bytes;
    return n;
}

uint64_t ShareTable::saved_bytes() const {
    uint64_t n = 0;
    for (const auto& [h, e] : m_by_handle) n += e.importers.size() * e.bytes;
    return n;
}

}  // namespace sfumato::rt
