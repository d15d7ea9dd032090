// UB buffer placement for the 220x bank rules (runtime/ops/norm/ub_place.h).
#include "runtime/ops/norm/ub_place.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace sfumato::ops::norm {

namespace {

struct Search {
    const std::vector<UbItem>& items;
    const std::vector<UbApart>& apart;
    std::vector<uint64_t> fill;  // bytes used per span
    std::vector<int> span_of, best;
    uint64_t best_cost = UINT64_MAX, nodes = 0, span;
    static constexpr uint64_t kMaxNodes = 20000;

    // Cost of the pairs between item i (in span s) and the items placed before it.
    uint64_t cost_of(size_t i, int s) const {
        uint64_t c = 0;
        for (const UbApart& p : apart) {
            const int o = p.a == static_cast<int>(i) ? p.b : p.b == static_cast<int>(i) ? p.a : -1;
            if (o >= 0 && o < static_cast<int>(i) && span_of[o] == s) c += p.weight;
        }
        return c;
    }
    static uint64_t at_phase(uint64_t at, uint32_t phase) {
        const uint64_t m = at % 512;
        return at + (phase + 512 - m) % 512;
    }
    void dfs(size_t i, uint64_t cost) {
        if (cost >= best_cost || ++nodes > kMaxNodes) return;
        if (i == items.size()) {
            best_cost = cost, best = span_of;
            return;
        }
        for (int s = 0; s < static_cast<int>(fill.size()); ++s) {
            const uint64_t at = at_phase(fill[s], items[i].phase);
            if (at + items[i].bytes > span) continue;
            const uint64_t was = fill[s];
            fill[s] = at + items[i].bytes;
            span_of[i] = s;
            dfs(i + 1, cost + cost_of(i, s));
            fill[s] = was;
            span_of[i] = -1;
        }
    }
};

std::vector<uint64_t> search(const std::vector<UbItem>& items, const std::vector<UbApart>& apart, uint64_t total,
                             uint64_t span);

}  // namespace

std::vector<uint64_t> place_apart(const std::vector<UbItem>& items, const std::vector<UbApart>& apart, uint64_t total,
                                  uint64_t span) {
    if (span == 0 || total < span) return {};
    // Every block of a launch asks the same question: the answers are kept (a kernel's
    // buffers depend on its plan only).
    std::vector<uint64_t> key = {total, span, items.size()};
    for (const UbItem& i : items) key.push_back(i.bytes), key.push_back(i.phase);
    for (const UbApart& a : apart) key.push_back(uint64_t(a.a)), key.push_back(uint64_t(a.b)), key.push_back(a.weight);
    static std::mutex mu;
    static std::map<std::vector<uint64_t>, std::vector<uint64_t>> cache;
    {
        std::lock_guard<std::mutex> lock(mu);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    std::vector<uint64_t> at = search(items, apart, total, span);
    std::lock_guard<std::mutex> lock(mu);
    if (cache.size() > 4096) cache.clear();
    cache.emplace(std::move(key), at);
    return at;
}

namespace {

std::vector<uint64_t> search(const std::vector<UbItem>& items, const std::vector<UbApart>& apart, uint64_t total,
                             uint64_t span) {
    Search s{items, apart, std::vector<uint64_t>(total / span, 0), std::vector<int>(items.size(), -1), {}, UINT64_MAX, 0,
             span};
    s.dfs(0, 0);
    if (s.best.empty()) return {};
    // Offsets: items in order within their span, each at its phase.
    std::vector<uint64_t> fill(total / span, 0), at(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        const int sp = s.best[i];
        const uint64_t a = Search::at_phase(fill[sp], items[i].phase);
        at[i] = uint64_t(sp) * span + a;
        fill[sp] = a + items[i].bytes;
    }
    return at;
}

}  // namespace

uint64_t shared_weight(const std::vector<UbItem>& items, const std::vector<UbApart>& apart,
                       const std::vector<uint64_t>& at, uint64_t span) {
    uint64_t c = 0;
    for (const UbApart& p : apart) {
        const uint64_t a0 = at[p.a] / span, a1 = (at[p.a] + items[p.a].bytes - 1) / span;
        const uint64_t b0 = at[p.b] / span, b1 = (at[p.b] + items[p.b].bytes - 1) / span;
        if (!(a1 < b0 || b1 < a0)) c += p.weight;
    }
    return c;
}

}  // namespace sfumato::ops::norm
