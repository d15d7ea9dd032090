// Replacement policies for the L2 tag array: true LRU (a use stamp per line), FIFO (fill order)
// and a deterministic pseudo-random policy (xorshift, fixed seed, so runs stay bit-identical).
#include <algorithm>

#include "models/mem/i_replacement.h"
#include "models/mem/policy_registry.h"

namespace sfumato::mem {

namespace {

class Lru : public IReplacement {
public:
    Lru(uint32_t sets, uint32_t ways) : m_ways(ways), m_stamp(size_t(sets) * ways, 0) {}
    void touch(uint32_t s, uint32_t w) override {
        if (++m_clock == 0) renormalise();
        m_stamp[size_t(s) * m_ways + w] = m_clock;
    }
    void fill(uint32_t s, uint32_t w) override { touch(s, w); }
    void prefetch(uint32_t s) const override { __builtin_prefetch(&m_stamp[size_t(s) * m_ways], 1); }
    uint32_t victim(uint32_t s) override {
        const uint32_t* st = &m_stamp[size_t(s) * m_ways];
        uint32_t v = 0;
        for (uint32_t w = 1; w < m_ways; ++w)
            if (st[w] < st[v]) v = w;
        return v;
    }

private:
    // 32-bit stamps keep a 16-way set's state in one cache line; on wrap-around every stamp is
    // re-ranked within its set, which preserves each set's order.
    void renormalise() {
        std::vector<uint32_t> order(m_ways);
        for (size_t base = 0; base < m_stamp.size(); base += m_ways) {
            for (uint32_t i = 0; i < m_ways; ++i) order[i] = i;
            std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return m_stamp[base + a] < m_stamp[base + b]; });
            for (uint32_t r = 0; r < m_ways; ++r) m_stamp[base + order[r]] = r + 1;
        }
        m_clock = m_ways + 1;
    }
    uint32_t m_ways;
    uint32_t m_clock = 0;
    std::vector<uint32_t> m_stamp;
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
