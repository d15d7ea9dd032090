// Contract: an address map turns a device byte address into HBM coordinates (global
// pseudo-channel, bank group, bank, row, column burst). It is a pure function of the address,
// fixed at construction; decode() is called once per memory request on the hot path and must
// not allocate. Maps are picked by name (chip.hbm.address_map) from a registry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/mem/hbm_params.h"

namespace sfumato::mem {

struct DramAddr {
    uint32_t pc = 0;    // global pseudo-channel index
    uint32_t bg = 0;    // bank group
    uint32_t bank = 0;  // bank within its group
    uint32_t bank_index = 0;  // bank in its pseudo-channel: bg * banks_per_group + bank
    uint64_t row = 0;
    uint32_t col = 0;   // column burst index within the row
};

class IAddressMap {
public:
    IAddressMap() = default;
    IAddressMap(const IAddressMap&) = delete;  // the published tables point into the map
    IAddressMap& operator=(const IAddressMap&) = delete;
    virtual ~IAddressMap() = default;
    // Writes the coordinates into `out` (the hot path's request, no copy through a temporary).
    virtual void decode_into(uint64_t addr, DramAddr& out) const = 0;
    DramAddr decode(uint64_t addr) const {
        DramAddr d;
        decode_into(addr, d);
        return d;
    }
    // The same coordinates as decode_into(), inline without a virtual call when the map has
    // published its selector tables (set_fast()) and they are three chunks at most, and the
    // address is below the capacity: the memory system's per-request decode. kCol false leaves
    // d.col as it was on the tables' path (the controllers never read a request's column: it is
    // set only for the callers that show it; decode_into() sets it anyway).
    template <bool kCol = true>
    [[gnu::always_inline]] void decode_fast(uint64_t a, DramAddr& d) const {
        if (m_fast.tab && !(a >> m_fast.total_bits)) {
            // Three chunks of kChunk bits above the granule (x < 2^(3 kChunk) below the capacity),
            // each selecting pc, bg, bank and bank index at once; their XOR is the address's.
            const uint64_t x = a >> m_fast.base;
            const Sel* t = m_fast.tab;
            Sel s0, s1, s2;
            __builtin_memcpy(&s0, t + (x & kChunkMask), sizeof(Sel));
            __builtin_memcpy(&s1, t + kChunkSize + ((x >> kChunk) & kChunkMask), sizeof(Sel));
            __builtin_memcpy(&s2, t + 2 * kChunkSize + (x >> 2 * kChunk), sizeof(Sel));
            put<kCol>(a, s0 ^ s1 ^ s2, d);
            return;
        }
        decode_into(a, d);
    }
    // Whether decode_fast() decodes by the tables inline (tests).
    bool has_fast() const { return m_fast.tab != nullptr; }

    // A map's field layout for the tables: the row and column are bit fields, and the
    // pseudo-channel, bank group, bank and bank index are XOR-linear in the address bits above a
    // granule of `base` bits (true of bit fields, a bank XOR and a channel hash alike), so they
    // are the XOR of per-chunk selectors.
    struct FastLayout {
        uint32_t base = 0, total_bits = 0;  // the granule's bits; the capacity's
        uint32_t row_shift = 0, co_shift = 0, offset_bits = 0;
        uint64_t row_mask = 0, co_mask = 0, low_mask = 0;
    };

protected:
    // Builds the selector tables, one of 2^kChunk entries per chunk of the address bits above
    // the granule up to the capacity's: `coords(a)` must give the map's coordinates of any
    // address a below 2^total_bits. decode_fast() uses them inline when there are three chunks
    // at most (a capacity up to 2^(base + 3 kChunk) bytes), decode_tables() in any case.
    template <class Coords>
    void set_fast(const FastLayout& l, Coords&& coords) {
        const uint32_t bits = l.total_bits > l.base ? l.total_bits - l.base : 0;
        m_chunks = (bits + kChunk - 1) / kChunk;  // total_bits <= 63: at most 7, shifts below 64
        m_fast_tab.assign(size_t(m_chunks) * kChunkSize, Sel{0, 0, 0, 0});
        for (uint32_t c = 0; c < m_chunks; ++c)
            for (uint64_t v = 0; v < kChunkSize; ++v) {
                const uint64_t a = v << (l.base + c * kChunk);
                if (a >> l.total_bits) break;  // beyond the capacity: never indexed
                const DramAddr d = coords(a);
                m_fast_tab[c * kChunkSize + v] = Sel{d.pc, d.bg, d.bank, d.bank_index};
            }
        static_cast<FastLayout&>(m_fast) = l;
        // Three chunks or fewer: decode_fast() reads three tables (the unused ones all zero).
        if (m_chunks <= 3) {
            m_fast_tab.resize(3 * kChunkSize, Sel{0, 0, 0, 0});
            m_fast.tab = m_fast_tab.data();
        }
    }
    // The coordinates of an address below the capacity from set_fast()'s tables, every chunk.
    void decode_tables(uint64_t a, DramAddr& d) const {
        const uint64_t x = a >> m_fast.base;
        Sel sel = {0, 0, 0, 0};
        for (uint32_t c = 0; c < m_chunks; ++c) {
            Sel s;
            __builtin_memcpy(&s, m_fast_tab.data() + c * kChunkSize + ((x >> (c * kChunk)) & kChunkMask), sizeof(Sel));
            sel ^= s;
        }
        put<true>(a, sel, d);
    }

private:
    static_assert(offsetof(DramAddr, bg) == 4 && offsetof(DramAddr, bank) == 8 && offsetof(DramAddr, bank_index) == 12,
                  "the tables hold pc, bg, bank and bank_index as one 16-byte selector");
    typedef uint32_t Sel __attribute__((vector_size(16)));  // pc, bg, bank, bank_index
    static constexpr uint32_t kChunk = 10;
    static constexpr uint64_t kChunkSize = uint64_t(1) << kChunk, kChunkMask = kChunkSize - 1;
    // A selector's coordinates and the row and (kCol) column fields of `a` into d.
    template <bool kCol>
    [[gnu::always_inline]] void put(uint64_t a, const Sel& sel, DramAddr& d) const {
        __builtin_memcpy(&d.pc, &sel, sizeof(Sel));  // pc, bg, bank, bank_index
        d.row = (a >> m_fast.row_shift) & m_fast.row_mask;
        if constexpr (kCol)
            d.col = static_cast<uint32_t>(((a >> m_fast.co_shift) & m_fast.co_mask) |
                                          ((a >> m_fast.offset_bits) & m_fast.low_mask));
    }
    struct FastDecode : FastLayout {
        const Sel* tab = nullptr;  // decode_fast()'s three tables (set_fast(): three chunks at most)
    };
    FastDecode m_fast;
    uint32_t m_chunks = 0;
    std::vector<Sel> m_fast_tab;  // m_chunks tables of kChunkSize selectors (three at least when published)
};

std::vector<std::string> address_map_names();
std::unique_ptr<IAddressMap> make_address_map(const HbmParams& p, const std::string& key);
// Throws ConfigError(key) when the layout is malformed or does not cover the capacity exactly.
void validate_address_map(const HbmParams& p, const std::string& key);

}  // namespace sfumato::mem
