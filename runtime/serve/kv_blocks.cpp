// The serving scheduler's paged KV block pool with prefix caching (runtime/serve/kv_blocks.h).
#include "runtime/serve/kv_blocks.h"

#include <cmath>

#include "sim/error.h"

namespace sfumato::serve {

KvBlockPool::KvBlockPool(int64_t blocks, int64_t block_size, bool prefix_caching, double watermark)
    : m_bs(block_size), m_caching(prefix_caching), m_watermark(watermark) {
    if (blocks < 1) throw InputError("KV cache: " + std::to_string(blocks) + " blocks (at least 1)");
    if (block_size < 1) throw InputError("KV cache: block size " + std::to_string(block_size) + " (at least 1)");
    if (!(watermark >= 0.0 && watermark < 1.0))
        throw InputError("KV cache: free-block watermark " + std::to_string(watermark) + " not in [0, 1)");
    m_ref.assign(static_cast<size_t>(blocks), 0);
    m_name.resize(static_cast<size_t>(blocks));
    m_at.resize(static_cast<size_t>(blocks));
    for (int64_t b = 0; b < blocks; ++b) m_at[static_cast<size_t>(b)] = m_free.insert(m_free.end(), b);
}

const std::vector<int64_t>& KvBlockPool::held(size_t seq) const {
    static const std::vector<int64_t> none;
    auto it = m_held.find(seq);
    return it == m_held.end() ? none : it->second;
}

int64_t KvBlockPool::pop_free() {
    const int64_t b = m_free.front();
    m_free.pop_front();
    Name& n = m_name[static_cast<size_t>(b)];
    if (!n.first.empty()) {  // evict its cached content
        m_named.erase(n);
        n = Name();
    }
    return b;
}

int64_t KvBlockPool::take_prefix(size_t seq, const std::string& prefix_id, int64_t max_blocks) {
    if (!m_caching || prefix_id.empty()) return 0;
    std::vector<int64_t>& h = m_held[seq];
    int64_t n = 0;
    for (; n < max_blocks; ++n) {
        auto it = m_named.find(Name(prefix_id, n));
        if (it == m_named.end()) break;
        const size_t b = static_cast<size_t>(it->second);
        if (m_ref[b]++ == 0) m_free.erase(m_at[b]);
        h.push_back(it->second);
    }
    return n;
}

bool KvBlockPool::grow(size_t seq, int64_t tokens, bool admit) {
    std::vector<int64_t>& h = m_held[seq];
    const int64_t need = blocks_for(tokens) - static_cast<int64_t>(h.size());
    if (need <= 0) return true;
    const int64_t keep = admit ? static_cast<int64_t>(std::ceil(m_watermark * static_cast<double>(blocks()))) : 0;
    if (free_blocks() - need < keep) return false;
    for (int64_t i = 0; i < need; ++i) {
        const int64_t b = pop_free();
        m_ref[static_cast<size_t>(b)] = 1;
        h.push_back(b);
    }
    return true;
}

void KvBlockPool::name_prefix(size_t seq, const std::string& prefix_id, int64_t prefix_tokens, int64_t computed) {
    if (!m_caching || prefix_id.empty()) return;
    const std::vector<int64_t>& h = held(seq);
    const int64_t full = std::min(prefix_tokens, computed) / m_bs;
    for (int64_t i = 0; i < full && i < static_cast<int64_t>(h.size()); ++i) {
        const Name n(prefix_id, i);
        if (m_named.count(n)) continue;  // this block, or another holding the same tokens
        m_named.emplace(n, h[static_cast<size_t>(i)]);
        m_name[static_cast<size_t>(h[static_cast<size_t>(i)])] = n;
    }
}

void KvBlockPool::release(size_t seq) {
    auto it = m_held.find(seq);
    if (it == m_held.end()) return;
    for (auto b = it->second.rbegin(); b != it->second.rend(); ++b) {
        const size_t k = static_cast<size_t>(*b);
        if (--m_ref[k] == 0) m_at[k] = m_free.insert(m_free.end(), *b);
    }
    m_held.erase(it);
}

}  // namespace sfumato::serve
