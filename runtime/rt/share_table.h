// Device memory shared between host processes (contexts) on one device, as the vendor's
// shared-memory / IPC handle mechanism provides: the owner exports a live block under a handle,
// other contexts import the handle and map the same device address, and the physical block lives
// until its owner has freed it and every importer has closed it. The table keeps reference counts
// and the accounting that shows the saving (bytes each context sees vs bytes physically held).
// It models bookkeeping only: no mapping latency beyond the runtime's per-call host cost.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace sfumato::rt {

class ShareTable {
public:
    struct Entry {
        uint32_t owner;
        uint64_t addr, bytes;
        bool owner_freed = false;
        std::multiset<uint32_t> importers;
    };

    // Exports [addr, addr+bytes) of `owner`; a block is exported at most once (the same handle
    // is returned again).
    uint64_t export_block(uint32_t owner, uint64_t addr, uint64_t bytes);
    // Imports a handle into `ctx`; nullopt for an unknown or already-dead handle, or when ctx is
    // the owner.
    std::optional<uint64_t> import(uint32_t ctx, uint64_t handle);
    // ctx closes one import of addr. Returns the entry's owner-side address when the physical
    // block must now be freed (owner already freed it and this was the last importer).
    enum class Close { NotImported, Kept, FreeNow };
    Close close(uint32_t ctx, uint64_t addr);
    // The owner frees addr: FreeNow when nobody imports it (or it was never exported), Kept when
    // importers still map it (the free is deferred to the last close), NotImported when the
    // owner already freed it (a double free).
    Close owner_free(uint32_t owner, uint64_t addr);

    std::optional<uint32_t> owner_of(uint64_t addr) const;
    // Whether ctx imported the block starting at addr and it holds `bytes` from there.
    bool imported_by(uint32_t ctx, uint64_t addr, uint64_t bytes) const;
    // Bytes ctx maps through imports (the memory it uses without holding it).
    uint64_t imported_bytes(uint32_t ctx) const;
    // Sum over contexts of imported bytes: what separate copies would have cost in addition.
    uint64_t saved_bytes() const;
    size_t live_handles() const { return m_by_handle.size(); }

private:
    std::map<uint64_t, Entry> m_by_handle;
    std::map<uint64_t, uint64_t> m_handle_of;  // addr -> handle
    uint64_t m_next = 1;
};

}  // namespace sfumato::rt
