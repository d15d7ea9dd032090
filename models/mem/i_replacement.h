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
    // For a policy whose whole state is an age rank per way, kept apart per set (LRU, FIFO): set
    // `set`'s ranks (rank_ages.h: the victim is the way of rank ways-1; a fill makes its way rank
    // 0), for a caller that applies many accesses to one set at once and moves the ranks itself
    // exactly as touch() and fill() would (L2Tags::replay_set); *hit_touches: whether a hit also
    // makes its way rank 0 (LRU) or leaves the ranks (FIFO). nullptr: another policy (its state
    // may span sets, so accesses must reach it in their own order).
    virtual uint8_t* set_ranks(uint32_t /*set*/, bool* /*hit_touches*/) { return nullptr; }
};

std::vector<std::string> replacement_names();
std::unique_ptr<IReplacement> make_replacement(const std::string& name, const std::string& key, uint32_t sets,
                                               uint32_t ways);

}  // namespace sfumato::mem
