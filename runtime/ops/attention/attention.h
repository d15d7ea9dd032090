// FusedAttention (FlashAttention-style): O = softmax(scale * Q K^T [causal]) V for G = batch x
// heads independent heads, Q [G, Sq, D], K [G, Sk, D], V [G, Sk, Dv], O [G, Sq, Dv], fp16 or
// bf16, never materialising the Sq x Sk score matrix in global memory.
//
// Work: one item = br query rows of one head; items go round-robin over the blocks (largest
// first under the causal mask). Per item the kernel walks the key/value blocks of bc columns
// (causal: only those at or left of the item's last row) with the online softmax: per row the
// running maximum m, the running sum l and the accumulator O (fp32, on the vector side);
// step j computes S_j = scale Q K_j^T (Cube, fp32 in L0C, the scale applied by the drain),
// m' = max(m, rowmax S_j), P_j = exp(S_j - m') (Vector, cast to the input type for the Cube),
// alpha_j = exp(m - m'), l = alpha_j l + rowsum P_j, then O_j = P_j V_j (Cube) and
// O = alpha_j O + O_j (Vector). At the end O / l is cast and stored.
//
// Split parts (an AIC and its AIVs per block, KernelKind::Mix): the AIC drains S_j and O_j to a
// per-block global workspace through the FixPipe (fp16 for fp16 inputs, as the unfused fp16
// graph holds them; fp32 for bf16) and sets cross-core flags (mode 2); each AIV takes h = br /
// aiv rows, waits, loads its rows, computes and writes P_j rows back to the workspace and flags
// the AIC, which waits for every AIV before loading P_j into L1. The AIC runs `ahead` steps in
// front (S_{j+2} before O_j) so the Cube works while the AIVs run the softmax; ahead + 1 slots
// of S and two of P and O make that safe (see attention_kernel.cpp). Coupled parts run
// the same schedule (one step ahead) on one core: L0C drains into UB through the vector pipe
// and P_j goes UB -> L1 (MTE3, ND -> NZ by strided bursts), no workspace. fp32 Q, K, V (graph
// nodes) are cast to fp16 into the workspace first and the result cast back.
//
// Item lists (AttnPlan::list, used by PagedAttention, runtime/ops/llm/paged_attention.h): instead
// of G dense heads, an explicit list of items, each with its own query and output rows (address
// and row stride), key range, causal shift and key source (a paged cache: key x of the source at
// row blocks[x / bs] * bs + x % bs, rows ld elements apart; bs a multiple of bc so a step's keys
// lie in one cache block). An item may write its normalised fp32 output and log-sum-exp to a
// partial slot instead (flash-decoding: a later kernel combines the slots of one query).
//
// Simplified: Q, K, V contiguous with equal leading dimensions (no broadcast across heads); D
// and Dv multiples of 16 that fit L0 with the chosen tiles; the causal mask is top-left aligned
// (key j visible to query i when j <= i), as the graph's fusion pass recognises it; no
// additive mask input.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/dtype.h"
#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops::attention {

// Keys of one (sequence, kv head) in a paged cache.
struct KvSource {
    uint64_t k = 0, v = 0;        // GM address of cache row 0 of this head
    uint32_t ld = 0;              // elements between consecutive cache rows
    uint32_t bs = 0;              // keys per cache block
    std::vector<int64_t> blocks;  // cache block of keys [b * bs, (b + 1) * bs)
};
struct AttnItem {
    uint64_t q = 0, o = 0;      // GM of the item's first query row and first output row
    uint32_t ldq = 0, ldo = 0;  // elements between consecutive query (output) rows
    uint32_t i0 = 0, tm = 0;    // first query row (its position in the sequence minus shift) and rows
    uint32_t key0 = 0, keys = 0;  // key range [key0, key0 + keys); key0 a multiple of bc
    int64_t shift = 0;          // causal: key j visible to row i when j <= i + shift
    uint32_t src = 0;           // index into AttnList::srcs
    int64_t part = -1;          // >= 0: write O / l (fp32) and m + ln l to partial slot `part`
};
struct AttnList {
    std::vector<AttnItem> items;  // in launch order (round-robin over the blocks)
    std::vector<KvSource> srcs;
    uint64_t partial = 0;         // GM of the partial slots: br x Dv fp32, then br fp32 each
};
// Bytes of one partial slot.
inline uint64_t partial_slot_bytes(uint32_t br, uint32_t dv) { return uint64_t{br} * dv * 4 + uint64_t{br} * 4; }

struct AttnPlan {
    isa::DType dt = isa::DType::FP16;  // Q, K, V, O (FP16 | BF16)
    isa::DType wt = isa::DType::FP32;  // S and O_j in the split parts' workspace (FP16 | FP32)
    uint64_t q = 0, k = 0, v = 0, o = 0, ws = 0;  // GM
    uint32_t G = 1, Sq = 1, Sk = 1, D = 16, Dv = 16;
    double scale = 1.0;
    bool causal = false;
    bool split = true;   // AIC + AIVs (else coupled)
    bool nd2nz = true;   // the MTE2 converts ND -> NZ
    uint32_t aiv = 2;    // vector parts per block (1 on coupled)
    uint32_t br = 64, bc = 64;  // query rows per item, key columns per step (bc: 64 x 2^i)
    uint32_t h = 32;            // rows per vector part (br / aiv)
    uint32_t blocks = 1;
    uint32_t s_bufs = 2, p_bufs = 2, a2_bufs = 2, b2_bufs = 2;
    uint32_t ahead = 1;  // steps the cube's S runs in front of its O (split: 2 when buffers allow)
    // Item list (null: G dense heads). With a list, Sq and Sk bound the items' rows and keys and
    // bc must divide kv_block.
    std::shared_ptr<const AttnList> list;
    uint32_t kv_block = 0;

    uint32_t row_tiles() const { return (Sq + br - 1) / br; }
    uint32_t kv_blocks() const { return (Sk + bc - 1) / bc; }
    uint64_t items() const { return list ? list->items.size() : uint64_t{G} * row_tiles(); }
    // Key/value steps of query rows [i0, i0 + rows).
    uint32_t steps(uint32_t i0, uint32_t rows) const;
    // Workspace bytes per block (split: ahead + 1 slots of S, two each of P and O).
    uint64_t ws_block_bytes() const;
    uint64_t ws_bytes() const { return split ? ws_block_bytes() * blocks : 0; }
    // Useful work (two products of 2 Sq' Sk D flops, the visible half under the mask).
    double flops() const;
    double visible_pairs() const;
};

// Chooses br, bc and buffer counts for the device; false (with the reason) when no tiling fits.
bool plan_attention(AttnPlan& p, const DeviceInfo& dev, std::string& why);
// UB bytes a vector part needs with this plan.
uint64_t attention_ub_bytes(const AttnPlan& p);

void attention_kernel(isa::IInstrSink& sink, const AttnPlan& p);

}  // namespace sfumato::ops::attention
