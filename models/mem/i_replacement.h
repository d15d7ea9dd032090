// Contract: an L2 replacement policy keeps its own per-line state for a sets x ways array and
// chooses the victim way of a set whose ways are all valid. touch() is called on every hit and
// fill; no allocation after construction. Picked by name (chip.l2.replacement) from a registry.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sfumato::mem {

class IReplacement {
public:
    virtual ~IReplacement() = default;
    virtual void touch(uint32_t set, uint32_t way) = 0;
    virtual void fill(uint32_t set, uint32_t way) = 0;
    virtual uint32_t victim(uint32_t set) = 0;
    // A hint: bring the set's state into the host cache (no effect on the policy).
    virtual void prefetch(uint32_t) const {}
};

std::vector<std::string> replacement_names();
std::unique_ptr<IReplacement> make_replacement(const std::string& name, const std::string& key, uint32_t sets,
                                               uint32_t ways);

}  // namespace sfumato::mem
