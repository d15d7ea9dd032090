// Paged KV cache block manager (see kv_cache.h).
#include "runtime/llm/kv_cache.h"

#include <string>

#include "sim/error.h"

namespace sfumato::llm {

KvCache::KvCache(int64_t num_blocks, int64_t block_size) : m_num(num_blocks), m_bs(block_size) {
    if (num_blocks < 1 || block_size < 1) throw InputError("KV cache: needs at least one block of at least one token");
    for (int64_t b = num_blocks - 1; b >= 0; --b) m_free.push_back(b);
}

void KvCache::reserve(size_t seq, int64_t tokens) {
    if (seq >= m_seqs.size()) m_seqs.resize(seq + 1);
    auto& blocks = m_seqs[seq];
    const int64_t need = blocks_for(tokens, m_bs) - static_cast<int64_t>(blocks.size());
    if (need <= 0) return;
    if (need > free_blocks())
        throw InputError("KV cache: sequence " + std::to_string(seq) + " needs " + std::to_string(need) +
                         " more blocks of " + std::to_string(m_bs) + " tokens, " + std::to_string(free_blocks()) +
                         " are free (" + std::to_string(m_num) + " in all): short by " +
                         std::to_string(need - free_blocks()) + " blocks");
    for (int64_t i = 0; i < need; ++i) {
        blocks.push_back(m_free.back());
        m_free.pop_back();
    }
}

void KvCache::release(size_t seq) {
    if (seq >= m_seqs.size()) return;
    for (auto it = m_seqs[seq].rbegin(); it != m_seqs[seq].rend(); ++it) m_free.push_back(*it);
    m_seqs[seq].clear();
}

std::vector<int64_t> KvCache::table(const std::vector<size_t>& seqs, int64_t max_blocks) const {
    std::vector<int64_t> t(seqs.size() * static_cast<size_t>(max_blocks), -1);
    for (size_t r = 0; r < seqs.size(); ++r) {
        if (seqs[r] >= m_seqs.size()) continue;
        const auto& b = m_seqs[seqs[r]];
        if (static_cast<int64_t>(b.size()) > max_blocks)
            throw InputError("KV cache: sequence " + std::to_string(seqs[r]) + " holds " + std::to_string(b.size()) +
                             " blocks, the step's table has room for " + std::to_string(max_blocks));
        for (size_t i = 0; i < b.size(); ++i) t[r * static_cast<size_t>(max_blocks) + i] = b[i];
    }
    return t;
}

}  // namespace sfumato::llm
