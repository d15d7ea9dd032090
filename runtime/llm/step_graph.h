// The step graph of a decoder model for one batch: an ordinary runtime/graph IR graph, built
// from the ModelConfig (never written per model), of ONNX ops (Gather, MatMul, Add, Split,
// Reshape) and the LLM operators of the contract (RmsNorm fused with the residual add, Rope,
// SwiGlu, PagedAttention, MoeRouter / MoePermute / GroupedMatmul / MoeCombine, Sample). One
// graph serves prefill, chunked
// prefill, decode and mixed batches: the batch says how many new tokens each sequence brings
// (query_lens) and how many it already has in the KV cache (context_lens). QKV and gate/up are
// fused projections; the final norm and the LM head run on the last token of each sequence
// only. Weights, the RoPE table and the per-layer K/V caches are external graph inputs
// (Value::external): the engine places them in device memory once and every step graph's plan
// binds the same addresses. The host-known lengths and block tables are attributes of the
// PagedAttention nodes (the contract's rule); the engine compiles a graph for a length bucket
// and refreshes those attributes per step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/graph/ir.h"
#include "runtime/llm/model_config.h"
#include "runtime/llm/quant.h"

namespace sfumato::llm {

// One step's batch: per sequence the new tokens and the tokens already cached, and the
// blocks of the paged cache it owns (max_blocks entries per row, -1 unused).
struct StepBatch {
    std::vector<int64_t> query_lens, context_lens;
    std::vector<int64_t> block_table;  // sequences x max_blocks, row-major
    int64_t max_blocks = 0;
    // The step's token ids and positions as the host knows them (one per new token; empty:
    // not known yet, zeros are used): the embedding and RoPE kernels address rows by them.
    std::vector<int64_t> ids, positions;
    // MoE: per layer, the experts of each (token, slot) entry, T x experts_per_token row-major,
    // as the host knows them (the contract's host_experts; empty: not known, the kernels read
    // the router's output from device memory).
    std::vector<std::vector<int64_t>> experts;
    // Expert parallel (StepGraphOptions::ep_ranks > 1): per layer, the rows this chip's local
    // experts receive from every chip in the step, as the host knows them (empty: not known, the
    // grouped matmuls read the sizes the dispatch wrote).
    std::vector<std::vector<int64_t>> local_sizes;
    int64_t tokens() const;
    size_t sequences() const { return query_lens.size(); }
};

struct StepGraphOptions {
    ref::ElemType elem = ref::ElemType::Float16;  // activations and weights
    int64_t block_size = 128;
    int64_t num_blocks = 1;      // KV cache blocks per layer
    int64_t rope_positions = 1;  // rows of the RoPE table
    bool sample = true;          // greedy Sample on the device (else the graph outputs logits)
    // W8A8: the quantised projections (quant.h) become DynamicQuant -> QuantMatMul on an int8
    // weight "lN.<role>" and its fp32 per-channel scales "lN.<role>_scale".
    Quant quant = Quant::None;
    // Expert parallel (runtime/llm/expert_parallel.h): the model is chip ep_rank's shard, its
    // num_experts the chip's local experts, E_local (global experts [ep_rank E_local, (ep_rank + 1)
    // E_local) of E = ep_ranks E_local). The router, the top-k and the permutation run over
    // all E experts on the chip's own tokens; the grouped matmuls run the local experts on the
    // rows every chip dispatched here (external input "ep.recv", [ep_ranks T min(k, E_local), H]:
    // the most rows a step of T tokens per chip can send here, grouped by local expert, sizes in
    // the external "ep.sizes" [E_local]); MoeCombine reads the permuted rows, which the combine
    // returns in place. The dispatch and the combine are the host program's copies between the
    // plan steps (the graph does not see them), so a step graph with ep_ranks > 1 is compiled
    // without dead-node removal.
    int64_t ep_ranks = 1, ep_rank = 0;
    // A pipeline stage's share of the model (runtime/llm/pipeline.h): layers [first_layer,
    // end_layer) (end_layer -1: to the last). A stage after the first has no embedding: it
    // starts from the external inputs kPpHidden and kPpResidual [T, hidden] (the previous
    // stage's hidden state and residual, received into a buffer the caller binds); a stage
    // before the last has no head: its outputs are its last layer's hidden state and residual.
    int64_t first_layer = 0, end_layer = -1;
};

// Expert parallel: the rows of "ep.recv" for a step of `tokens` tokens per chip (the most any
// chip can receive: every token of every chip sends min(k, E_local) rows to it); c: the shard.
int64_t ep_recv_rows(const ModelConfig& c, int64_t ep_ranks, int64_t tokens);

// A pipeline stage's received activations (external inputs of a stage after the first).
inline constexpr const char* kPpHidden = "pp_recv.hidden";
inline constexpr const char* kPpResidual = "pp_recv.residual";

// Names of the external inputs, as the engine binds them.
std::string layer_tensor(int64_t layer, const std::string& what);  // "l3.wqkv", "l3.k_cache", ...

// Graph inputs (not external): input_ids [T] int64 (first stage only), positions [T] int64.
// Output: next token ids [B] int64 (sample) or logits [B, V]; a stage before the last: its hidden
// state and residual [T, hidden].
graph::Graph build_step_graph(const ModelConfig& c, const StepBatch& b, const StepGraphOptions& o);

// The host-known attributes of a batch on a node that takes them (PagedAttention: lengths and
// block tables; Rope: host_positions; the embedding Gather: host_ids; MoePermute, GroupedMatmul
// and MoeCombine: host_experts when the batch carries the routing), set at build time and
// again on a cached plan's steps for each step of its bucket. Returns whether the node has any.
bool set_host_attrs(const std::string& node, const std::string& op_type, ref::Attrs& a, const ModelConfig& c,
                    const StepBatch& b, int64_t block_size);

// The layer index a step-graph node belongs to ("l12.qkv_proj" -> 12; -1 for the embedding and
// the head), and its op name without the layer ("qkv_proj").
int64_t node_layer(const std::string& node);
std::string node_role(const std::string& node);

}  // namespace sfumato::llm
