// Address maps: bit-field slicing of the address after a layout string (MSB..LSB above the
// channel-interleave granule), and an XOR variant that permutes the bank bits (bank group and
// bank) with all row bits folded down to the bank width, as a controller's few XOR gates do: two
// streams whose addresses differ only in row bits (e.g. arrays a power of two apart) then land in
// different banks instead of closing each other's rows. For a fixed row the permutation is a
// bijection on the banks, so the map still covers the capacity exactly. chip.hbm.channel_hash
// (with either map) XORs the channel index with all other address bits above the interleave
// granule, folded to the channel width, as SoC interleavers hash the channel select: rows of a
// row-major matrix (a power-of-two stride) then use every channel, not stride / granule of
// them; for fixed other bits it is a bijection on the channels. Field widths come from the HBM
// geometry.
#include <array>
#include <sstream>

#include "models/mem/i_address_map.h"
#include "models/mem/policy_registry.h"

namespace sfumato::mem {

namespace {

enum Field : uint8_t { kRo, kBa, kBg, kCo, kCh, kFields };

struct Layout {
    // Fields from LSB upwards: (field, shift, width).
    std::array<uint8_t, kFields> shift{};
    std::array<uint8_t, kFields> width{};
    uint32_t low_col_bits = 0;   // column bits inside the interleave granule
    uint32_t offset_bits = 0;    // byte offset inside one burst
    uint32_t total_bits = 0;
    uint32_t present = 0;
};

Layout parse_layout(const HbmParams& p, const std::string& key) {
    Layout l;
    l.offset_bits = log2u(p.burst_bytes());
    l.low_col_bits = log2u(p.interleave_bytes / p.burst_bytes());
    const uint32_t col_bits = log2u(p.row_bytes / p.burst_bytes());
    std::array<uint32_t, kFields> w{};
    w[kRo] = log2u(p.rows);
    w[kBa] = log2u(p.banks_per_group);
    w[kBg] = log2u(p.bank_groups);
    w[kCo] = col_bits - l.low_col_bits;
    w[kCh] = log2u(p.total_pcs());
    std::vector<Field> order;
    std::stringstream ss(p.address_layout);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
        Field f;
        if (tok == "Ro") f = kRo;
        else if (tok == "Ba") f = kBa;
        else if (tok == "Bg") f = kBg;
        else if (tok == "Co") f = kCo;
        else if (tok == "Ch") f = kCh;
        else throw ConfigError(key, "unknown field '" + tok + "' (fields: Ro,Ba,Bg,Co,Ch)");
        if (l.present & (1u << f)) throw ConfigError(key, "field '" + tok + "' appears twice");
        l.present |= 1u << f;
        order.push_back(f);
    }
    uint32_t shift = l.offset_bits + l.low_col_bits;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        l.shift[*it] = static_cast<uint8_t>(shift);
        l.width[*it] = static_cast<uint8_t>(w[*it]);
        shift += w[*it];
    }
    l.total_bits = shift;
    for (int f = 0; f < kFields; ++f) {
        if (!(l.present & (1u << f)) && w[f] > 0)
            throw ConfigError(key, "layout '" + p.address_layout + "' leaves out a field, so it does not cover the capacity");
    }
    const uint64_t mapped = uint64_t(1) << l.total_bits;
    if (mapped != p.capacity_bytes) {
        throw ConfigError(key, "the address map covers " + std::to_string(mapped >> 20) + " MiB (" +
                                   std::to_string(p.total_pcs()) + " pseudo-channels x " + std::to_string(p.banks()) +
                                   " banks x " + std::to_string(p.rows) + " rows x " + std::to_string(p.row_bytes) +
                                   " B) but the capacity is " + std::to_string(p.capacity_bytes >> 20) + " MiB");
    }
    return l;
}

class BitfieldMap : public IAddressMap {
public:
    BitfieldMap(const HbmParams& p, const std::string& key, bool xor_banks)
        : m_l(parse_layout(p, key)), m_xor(xor_banks), m_ch_hash(p.channel_hash && m_l.width[kCh] > 0) {
        for (int f = 0; f < kFields; ++f) m_mask[f] = (uint64_t(1) << m_l.width[f]) - 1;
        m_low_mask = (uint64_t(1) << m_l.low_col_bits) - 1;
        m_bw = m_l.width[kBg] + m_l.width[kBa];
        m_bw_mask = (uint64_t(1) << m_bw) - 1;
        m_xor = m_xor && m_bw;
        if (m_xor) m_bw_steps = fold_steps(m_l.width[kRo], m_bw);
        if (m_ch_hash) m_ch_steps = fold_steps(m_l.total_bits - m_l.offset_bits - m_l.low_col_bits, m_l.width[kCh]);
        // The selector tables (IAddressMap::set_fast) from the fields' definitions; the row and
        // column are plain fields (the column's upper bits land above its low_col_bits: one shift).
        FastLayout f;
        f.base = m_l.offset_bits + m_l.low_col_bits;
        f.total_bits = m_l.total_bits;
        f.row_shift = m_l.shift[kRo];
        f.row_mask = m_mask[kRo];
        f.co_shift = m_l.width[kCo] ? m_l.shift[kCo] - m_l.low_col_bits : 0;
        f.co_mask = m_mask[kCo] << m_l.low_col_bits;
        f.offset_bits = m_l.offset_bits;
        f.low_mask = m_low_mask;
        set_fast(f, [this](uint64_t a) { return decode_fields(a); });
    }
    // The pseudo-channel, bank group and bank are each an XOR of address bits (bit fields, the
    // bank XOR and the channel hash alike: all linear in the bits), so they are the XOR of the
    // selectors of the address's chunks above the granule, each alone (set_fast()'s tables): a
    // table look-up per chunk instead of the fields and folds, the same values for every address
    // below the capacity (decode_fields() above it).
    void decode_into(uint64_t a, DramAddr& d) const override {
        if (a >> m_l.total_bits) {
            d = decode_fields(a);
            return;
        }
        decode_tables(a, d);
    }

private:
    // The fields by their definitions (the tables are built from it). Out of line: decode_into()
    // calls it only above the capacity, and inlined its registers would be saved on every call.
    [[gnu::noinline]] DramAddr decode_fields(uint64_t a) const {
        DramAddr d;
        d.pc = static_cast<uint32_t>(get(a, kCh));
        if (m_ch_hash) {
            // Every address bit above the granule but the channel's own, folded to its width.
            const uint32_t base = m_l.offset_bits + m_l.low_col_bits, w = m_l.width[kCh];
            const uint64_t rest = (a & ~(m_mask[kCh] << m_l.shift[kCh])) >> base;
            d.pc ^= static_cast<uint32_t>(fold(rest, w, m_ch_steps) & m_mask[kCh]);
        }
        d.bg = static_cast<uint32_t>(get(a, kBg));
        d.bank = static_cast<uint32_t>(get(a, kBa));
        d.row = get(a, kRo);
        const uint64_t low = (a >> m_l.offset_bits) & m_low_mask;
        d.col = static_cast<uint32_t>((get(a, kCo) << m_l.low_col_bits) | low);
        if (m_xor) {
            const uint64_t h = fold(d.row, m_bw, m_bw_steps) & m_bw_mask;
            d.bg ^= static_cast<uint32_t>(h & m_mask[kBg]);
            d.bank ^= static_cast<uint32_t>(h >> m_l.width[kBg]);
        }
        d.bank_index = (d.bg << m_l.width[kBa]) | d.bank;
        return d;
    }
    uint64_t get(uint64_t a, Field f) const { return (a >> m_l.shift[f]) & m_mask[f]; }
    // The XOR of x's w-bit chunks in its low w bits (w >= 1), by doubling: after the step of
    // shift s, each chunk holds the XOR of itself and the next 2s / w - 1 chunks, so `steps`
    // (fold_steps) steps fold 2^steps chunks, all that x's bits span.
    // The steps commute (each is x -> x ^ (x >> s), a polynomial in the shift), so they run from
    // the widest down, unrolled: no loop branch per step.
    static uint64_t fold(uint64_t x, uint32_t w, uint32_t steps) {
        switch (steps) {
            default:
                for (uint32_t k = 6; k < steps; ++k) x ^= x >> (w << k);  // (w = 1 needs at most 6)
                [[fallthrough]];
            case 6: x ^= x >> (w << 5); [[fallthrough]];
            case 5: x ^= x >> (w << 4); [[fallthrough]];
            case 4: x ^= x >> (w << 3); [[fallthrough]];
            case 3: x ^= x >> (w << 2); [[fallthrough]];
            case 2: x ^= x >> (w << 1); [[fallthrough]];
            case 1: x ^= x >> w; [[fallthrough]];
            case 0: break;
        }
        return x;
    }
    // The steps that fold `bits` bits in chunks of w: the least k with w * 2^k >= bits.
    static uint32_t fold_steps(uint32_t bits, uint32_t w) {
        uint32_t k = 0;
        while ((uint64_t(w) << k) < bits) ++k;
        return k;
    }
    Layout m_l;
    bool m_xor;
    bool m_ch_hash;
    // Precomputed from the layout: field masks, and the bank width the XOR variant folds to.
    std::array<uint64_t, kFields> m_mask{};
    uint64_t m_low_mask = 0, m_bw_mask = 0;
    uint32_t m_bw = 0;
    uint32_t m_bw_steps = 0, m_ch_steps = 0;  // fold() steps of the bank XOR and the channel hash
};

using MapRegistry = PolicyRegistry<IAddressMap, const HbmParams&, const std::string&>;
SFUMATO_REGISTER_POLICY(MapRegistry, "bitfield", [](const HbmParams& p, const std::string& k) { return std::unique_ptr<IAddressMap>(new BitfieldMap(p, k, false)); });
SFUMATO_REGISTER_POLICY(MapRegistry, "xor", [](const HbmParams& p, const std::string& k) { return std::unique_ptr<IAddressMap>(new BitfieldMap(p, k, true)); });

}  // namespace

std::vector<std::string> address_map_names() { return MapRegistry::names(); }

std::unique_ptr<IAddressMap> make_address_map(const HbmParams& p, const std::string& key) {
    return MapRegistry::create(p.address_map, key, p, key);
}

void validate_address_map(const HbmParams& p, const std::string& key) { (void)parse_layout(p, key); }

}  // namespace sfumato::mem
