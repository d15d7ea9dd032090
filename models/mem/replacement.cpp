// Replacement policies for the L2 tag array: true LRU (an age rank per line), FIFO (fill order)
// and a deterministic pseudo-random policy (xorshift, fixed seed, so runs stay bit-identical).
#include <algorithm>
#include <vector>

#include "models/mem/i_replacement.h"
#include "models/mem/policy_registry.h"

namespace sfumato::mem {

namespace {

class Lru : public IReplacement {
public:
    // Way w starts with age ways-1-w: untouched ways are the oldest, the lowest index first.
    Lru(uint32_t sets, uint32_t ways) : m_ways(ways), m_age(size_t(sets) * ways) {
        for (size_t i = 0; i < m_age.size(); ++i) m_age[i] = static_cast<uint8_t>(ways - 1 - i % ways);
    }
    void touch(uint32_t s, uint32_t w) override {
        uint8_t* a = &m_age[size_t(s) * m_ways];
        const uint8_t mine = a[w];
        uint32_t i = 0;
        if (m_ways % 16 == 0) {
            // 16 ways at a time (GCC vector extension: a compare gives -1 where true).
            typedef uint8_t V16 __attribute__((vector_size(16)));
            V16 m;
            __builtin_memset(&m, mine, sizeof m);
            for (; i < m_ways; i += 16) {
                V16 v;
                __builtin_memcpy(&v, a + i, sizeof v);
                v -= reinterpret_cast<V16>(v < m);
                __builtin_memcpy(a + i, &v, sizeof v);
            }
        }
        for (; i < m_ways; ++i) a[i] = static_cast<uint8_t>(a[i] + (a[i] < mine ? 1 : 0));
        a[w] = 0;
    }
    void fill(uint32_t s, uint32_t w) override { touch(s, w); }
    void prefetch(uint32_t s) const override { __builtin_prefetch(&m_age[size_t(s) * m_ways], 1); }
    uint32_t victim(uint32_t s) override {
        const uint8_t* a = &m_age[size_t(s) * m_ways];
        const uint8_t oldest = static_cast<uint8_t>(m_ways - 1);
        for (uint32_t w = 0; w < m_ways; ++w)
            if (a[w] == oldest) return w;
        return 0;  // unreachable: the ages of a set are a permutation of 0..ways-1
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
