// Replacement policies for the L2 tag array: true LRU (an age rank per line), FIFO (fill order)
// and a deterministic pseudo-random policy (xorshift, fixed seed, so runs stay bit-identical).
#include <algorithm>
#include <vector>

#include "models/mem/i_replacement.h"
#include "models/mem/policy_registry.h"
#include "models/mem/rank_ages.h"

namespace sfumato::mem {

namespace {

class Lru : public IReplacement {
public:
    // Way w starts with age ways-1-w: untouched ways are the oldest, the lowest index first.
    Lru(uint32_t sets, uint32_t ways) : m_ways(ways), m_age(size_t(sets) * ways) {
        for (size_t i = 0; i < m_age.size(); ++i) m_age[i] = static_cast<uint8_t>(ways - 1 - i % ways);
    }
    void touch(uint32_t s, uint32_t w) override { touch_rank(&m_age[size_t(s) * m_ways], m_ways, w); }
    void fill(uint32_t s, uint32_t w) override { touch(s, w); }
    void prefetch(uint32_t s) const override { __builtin_prefetch(&m_age[size_t(s) * m_ways], 1); }
    uint32_t victim(uint32_t s) override { return oldest_rank(&m_age[size_t(s) * m_ways], m_ways); }
    uint8_t* set_ranks(uint32_t s, bool* hit_touches) override {
        *hit_touches = true;
        return &m_age[size_t(s) * m_ways];
    }

private:
    // Per set, each way's age as a rank (0: most recently used, ways-1: least): the ages of a
    // set are a permutation, so a 16-way set's state is 16 bytes (the whole array stays small
    // enough for the host caches) and there is no clock to wrap.
    uint32_t m_ways;
    std::vector<uint8_t> m_age;
};

class Fifo : public Lru {
public:
    using Lru::Lru;
    void touch(uint32_t, uint32_t) override {}
    void fill(uint32_t s, uint32_t w) override { Lru::touch(s, w); }
    uint8_t* set_ranks(uint32_t s, bool* hit_touches) override {
        uint8_t* a = Lru::set_ranks(s, hit_touches);
        *hit_touches = false;  // a hit leaves the fill order
        return a;
    }
};

class Random : public IReplacement {
public:
    Random(uint32_t, uint32_t ways) : m_ways(ways) {}
    void touch(uint32_t, uint32_t) override {}
    void fill(uint32_t, uint32_t) override {}
    uint32_t victim(uint32_t) override {
        m_x ^= m_x << 13;
        m_x ^= m_x >> 7;
        m_x ^= m_x << 17;
        return static_cast<uint32_t>(m_x % m_ways);
    }

private:
    uint32_t m_ways;
    uint64_t m_x = 0x9e3779b97f4a7c15ull;
};

using ReplRegistry = PolicyRegistry<IReplacement, uint32_t, uint32_t>;
SFUMATO_REGISTER_POLICY(ReplRegistry, "lru", [](uint32_t s, uint32_t w) { return std::unique_ptr<IReplacement>(new Lru(s, w)); });
SFUMATO_REGISTER_POLICY(ReplRegistry, "fifo", [](uint32_t s, uint32_t w) { return std::unique_ptr<IReplacement>(new Fifo(s, w)); });
SFUMATO_REGISTER_POLICY(ReplRegistry, "random", [](uint32_t s, uint32_t w) { return std::unique_ptr<IReplacement>(new Random(s, w)); });

}  // namespace

std::vector<std::string> replacement_names() { return ReplRegistry::names(); }

std::unique_ptr<IReplacement> make_replacement(const std::string& name, const std::string& key, uint32_t sets,
                                               uint32_t ways) {
    return ReplRegistry::create(name, key, sets, ways);
}

}  // namespace sfumato::mem
