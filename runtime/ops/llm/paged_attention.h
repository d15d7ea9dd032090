// PagedAttention (contract: docs/llm.md, "Operators"): attention of the new
// tokens of several sequences (prefill, chunked prefill, decode, mixed) over a
// paged KV cache, one node, up to three launches chosen from the host-known
// attributes (query_lens, context_lens, block_table):
//  1. cache write (vector): the new k and v rows go to their cache slots, one
//  burst per run of
//     consecutive positions inside one cache block, runs spread over the vector
//     cores;
//  2. attention (runtime/ops/attention: the FusedAttention kernel on an item
//  list, Mix on split
//     parts, coupled otherwise): a sequence with query_len > 1 gives items of
//     br query rows of one head (FlashAttention tiles over its keys, causal
//     with the shift context_len: query i sees keys 0..context_len + i); a
//     decode sequence (query_len 1) gives one item per kv head whose rows are
//     the heads of its GQA group (they share the keys; MQA: all heads), and
//     when decode items alone cannot fill the cube cores, each is split over
//     its key blocks (flash-decoding): the parts write O / l and the
//     log-sum-exp to partial slots;
//  3. combine (vector, only when some item was split): per split query group, o
//  = sum_p
//     exp(lse_p - M) O_p / sum_p exp(lse_p - M), cast and stored.
// Keys are read in steps of bc that divide the block size, so each step is one
// strided load from one cache block; K and V rows of a kv head are NKV * D
// elements apart in the cache. Simplified: fp16 and bf16 only (the graph's
// precision); head_dim a multiple of 16 up to 512 and block_size a multiple of
// 64; a GQA group of a prefill sequence reloads its kv head's keys per query
// head (rows of different tokens cannot share the causal mask of one tile).
#pragma once
#include <memory>

#include "runtime/ops/node_op.h"

namespace sfumato::ops::llm {

struct CacheWritePlan {
    isa::DType t = isa::DType::FP16;
    uint64_t k = 0, v = 0, kc = 0, vc = 0;  // GM
    uint64_t row_bytes = 0;                 // NKV * D elements
    struct Run {
        uint64_t token = 0, slot = 0;  // first new token row, first cache row
        uint32_t n = 0;                // rows
    };
    std::vector<Run> runs;
    uint64_t chunk = 0;  // bytes per copy
    uint32_t blocks = 1;
};
void cache_write_kernel(isa::IInstrSink& sink, const CacheWritePlan& p);

struct CombinePlan {
    isa::DType t = isa::DType::FP16;
    uint64_t partial = 0;  // GM of the partial slots
    uint64_t slot_bytes = 0;
    uint32_t br = 0, D = 0;
    uint32_t rows = 1;  // rows per chunk (what fits UB)
    struct Group {
        uint64_t o = 0;  // GM of the first output row
        uint32_t ldo = 0, rows = 0;
        uint32_t part0 = 0, parts = 0;  // slots part0 .. part0 + parts - 1
    };
    std::vector<Group> groups;
    uint32_t blocks = 1;
};
uint64_t combine_ub_bytes(uint32_t br, uint32_t D, uint32_t parts);
void combine_kernel(isa::IInstrSink& sink, const CombinePlan& p);

}  // namespace sfumato::ops::llm
