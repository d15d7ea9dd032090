// The serving scheduler's view of the paged KV cache (issue 25): a pool of blocks of
// `block_size` tokens, each sequence holding a list of them, and prefix caching as vLLM's V1 KV
// cache manager does it: a full block whose tokens lie inside a request's shared prefix is named
// by (prefix id, block index) once computed; a later request with the same prefix takes the
// named blocks instead of computing them (the hit); blocks whose last holder finished go to the
// back of one free queue, keeping their name, and allocation takes from the front, so the least
// recently freed cached block is evicted first (LRU). A free-block watermark keeps a share of
// the pool for the running sequences' growth: admitting a new sequence must leave it free.
// Simplified: prefixes are named by the trace (prefix id), not found by hashing token ids.
#pragma once
#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sfumato::serve {

class KvBlockPool {
public:
    // InputError for blocks < 1, block_size < 1 or a watermark outside [0, 1).
    KvBlockPool(int64_t blocks, int64_t block_size, bool prefix_caching, double watermark = 0.0);

    int64_t blocks() const { return static_cast<int64_t>(m_ref.size()); }
    int64_t block_size() const { return m_bs; }
    int64_t free_blocks() const { return static_cast<int64_t>(m_free.size()); }  // cached ones included
    int64_t used_blocks() const { return blocks() - free_blocks(); }
    int64_t blocks_for(int64_t tokens) const { return (tokens + m_bs - 1) / m_bs; }
    const std::vector<int64_t>& held(size_t seq) const;

    // Takes the cached blocks of `prefix_id` 0, 1, ... (up to `max_blocks`) for sequence `seq`,
    // which holds none yet; returns how many (0 without prefix caching).
    int64_t take_prefix(size_t seq, const std::string& prefix_id, int64_t max_blocks);
    // Grows `seq` to hold `tokens` tokens. False (nothing changed) when the free queue is short,
    // or, with `admit`, when it would leave fewer free blocks than the watermark.
    bool grow(size_t seq, int64_t tokens, bool admit);
    // Names the blocks of `seq` that now hold computed prefix tokens (full blocks within the
    // first `prefix_tokens` of `computed` tokens), so that later requests can take them.
    void name_prefix(size_t seq, const std::string& prefix_id, int64_t prefix_tokens, int64_t computed);
    // Returns the blocks of `seq` to the free queue, last block first (so that a prefix's first
    // blocks are evicted last).
    void release(size_t seq);

private:
    using Name = std::pair<std::string, int64_t>;
    int64_t m_bs;
    bool m_caching;
    double m_watermark;
    std::vector<int64_t> m_ref;                      // holders per block
    std::vector<Name> m_name;                        // per block; empty string: unnamed
    std::vector<std::list<int64_t>::iterator> m_at;  // per block: its place in m_free
    std::list<int64_t> m_free;
    std::map<Name, int64_t> m_named;  // name -> block
    std::map<size_t, std::vector<int64_t>> m_held;
    int64_t pop_free();
};

}  // namespace sfumato::serve
