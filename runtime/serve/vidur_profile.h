// Serving profiles for other simulators (issue 25, `sfumato serve --export-profile DIR`): the
// per-operator times the chip's step timer measured while serving, written in the layouts of
// Vidur's profiling CSVs, so that a table-driven serving simulator can serve on a chip that does
// not exist. Files (times in ms, as Vidur's; each time_stats.<op> column group is min, max,
// mean, median, std over every layer's instance of the op in every step of the row's shape):
//  - mlp.csv: one row per step size (num_tokens, as the step ran: padding included): emb,
//    input_layernorm, attn_pre_proj (the fused QKV projection), attn_rope (q and k), attn_post_proj,
//    post_attention_layernorm, mlp_up_proj (fused gate/up), mlp_act, mlp_down_proj, add (0: the
//    residual add is fused into the norms here), then the model's shape columns;
//  - attention.csv: one row per (is_prefill, batch_size, prefill_chunk_size, kv_cache_size):
//    steps of decodes only (batch_size sequences, kv_cache_size their mean cached context) and
//    steps of one prompt piece only (prefill_chunk_size tokens after kv_cache_size cached);
//    attn_prefill / attn_decode is the paged-attention kernel, attn_input_reshape the QKV split,
//    attn_output_reshape 0 (no separate kernel); steps that mix prompts and decodes have no row
//    (Vidur's attention profile keeps the two apart);
//  - send_recv.csv: the disaggregated KV transfers' peer copies over the links, or a pipeline's
//    stage 0 sends to stage 1 (serve.pp), one row per copy size (empty without either);
//  - all_reduce.csv: a tensor-parallel instance's all-reduces (serve.tp), one row per size (the
//    bytes reduced), each time its tasks' span on rank 0; its header only with TP 1 instances.
// With serve.tp T the model columns stay the whole model's, num_tensor_parallel_workers is T and
// the op times are rank 0's (its shard's), as Vidur profiles one worker of T. With serve.pp the
// op times are stage 0 rank 0's (its layers and the embedding).
// An op's time is the span of its kernels' tasks (first start to last end), as the trace's op
// track shows it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/llm/engine.h"

namespace sfumato::serve {

class VidurProfile {
public:
    explicit VidurProfile(const llm::ModelConfig& c, int64_t block_size, int64_t max_model_len)
        : m_c(c), m_bs(block_size), m_len(max_model_len) {}
    // One step as it ran: its batch (padding included; `real` its first sequences are requests)
    // and its record (the ops' tasks).
    void add_step(const llm::StepBatch& b, size_t real, const llm::StepRecord& r);
    // One peer copy of `bytes` that took `ps`.
    void add_copy(uint64_t bytes, uint64_t ps) { m_copies[bytes].push_back(static_cast<double>(ps) * 1e-9); }
    void set_topology(int64_t devices_per_node) { m_per_node = devices_per_node; }
    // Tensor parallelism: T workers, and one all-reduce of `bytes` that took `ps`.
    void set_tensor_parallel(int64_t tp) { m_tp = tp; }
    void add_all_reduce(uint64_t bytes, uint64_t ps) {
        m_all_reduces[bytes].push_back(static_cast<double>(ps) * 1e-9);
    }
    // Adds another instance's samples (instances of one model and block size).
    void merge(const VidurProfile& o);
    // Writes DIR/{mlp,attention,send_recv,all_reduce}.csv (each atomically); InputError naming the
    // directory when it cannot be created.
    void write(const std::string& dir) const;
    // The CSV texts (for tests and write()).
    std::string mlp_csv() const;
    std::string attention_csv() const;
    std::string send_recv_csv() const;
    std::string all_reduce_csv() const;

private:
    using Samples = std::map<std::string, std::vector<double>>;  // Vidur op -> times (ms)
    using AttnKey = std::tuple<bool, int64_t, int64_t, int64_t>;  // is_prefill, batch, chunk, kv
    llm::ModelConfig m_c;
    int64_t m_bs, m_len, m_per_node = 1, m_tp = 1;
    std::map<int64_t, Samples> m_mlp;  // num_tokens ->
    std::map<AttnKey, Samples> m_attn;
    std::map<uint64_t, std::vector<double>> m_copies;  // bytes -> times (ms)
    std::map<uint64_t, std::vector<double>> m_all_reduces;  // bytes -> times (ms)
};

}  // namespace sfumato::serve
