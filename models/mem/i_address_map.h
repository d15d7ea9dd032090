// Contract: an address map turns a device byte address into HBM coordinates (global
// pseudo-channel, bank group, bank, row, column burst). It is a pure function of the address,
// fixed at construction; decode() is called once per memory request on the hot path and must
// not allocate. Maps are picked by name (chip.hbm.address_map) from a registry.
#pragma once
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
    virtual ~IAddressMap() = default;
    // Writes the coordinates into `out` (the hot path's request, no copy through a temporary).
    virtual void decode_into(uint64_t addr, DramAddr& out) const = 0;
    DramAddr decode(uint64_t addr) const {
        DramAddr d;
        decode_into(addr, d);
        return d;
    }
};

std::vector<std::string> address_map_names();
std::unique_ptr<IAddressMap> make_address_map(const HbmParams& p, const std::string& key);
// Throws ConfigError(key) when the layout is malformed or does not cover the capacity exactly.
void validate_address_map(const HbmParams& p, const std::string& key);

}  // namespace sfumato::mem
