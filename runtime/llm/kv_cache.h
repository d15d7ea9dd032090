// The paged KV cache's bookkeeping on the host (the block manager of a paged-attention server):
// a pool of fixed-size blocks shared by all sequences, each sequence owning a list of blocks in
// order; a block holds block_size token positions of K and V for every layer (the device
// memory is one region per layer and kind, [num_blocks, block_size, kv_heads, head_dim]).
// Growing a sequence past the pool is an InputError stating the shortfall. Simplified: no
// prefix sharing, no swapping or preemption.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sfumato::llm {

class KvCache {
public:
    KvCache(int64_t num_blocks, int64_t block_size);
    // Makes sequence `seq` hold `tokens` positions (allocating blocks; never shrinks).
    void reserve(size_t seq, int64_t tokens);
    void release(size_t seq);
    // Rows of block ids for these sequences, max_blocks wide (-1 unused).
    std::vector<int64_t> table(const std::vector<size_t>& seqs, int64_t max_blocks) const;
    int64_t free_blocks() const { return static_cast<int64_t>(m_free.size()); }
    int64_t num_blocks() const { return m_num; }
    int64_t block_size() const { return m_bs; }
    static int64_t blocks_for(int64_t tokens, int64_t block_size) { return (tokens + block_size - 1) / block_size; }

private:
    int64_t m_num, m_bs;
    std::vector<int64_t> m_free;  // a stack: lowest ids handed out first
    std::vector<std::vector<int64_t>> m_seqs;
};

}  // namespace sfumato::llm
