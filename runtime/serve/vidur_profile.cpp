// Serving profiles in Vidur's CSV layouts (runtime/serve/vidur_profile.h).
#include "runtime/serve/vidur_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>

#include "runtime/llm/step_graph.h"
#include "sim/error.h"

namespace sfumato::serve {

namespace {

// Our layer ops -> Vidur's names (mlp.csv's and attention.csv's time_stats groups).
const std::map<std::string, std::string>& layer_ops() {
    static const std::map<std::string, std::string> m = {
        {"input_norm", "input_layernorm"},   {"qkv_proj", "attn_pre_proj"},   {"qkv_bias", "attn_pre_proj"},
        {"rope_q", "attn_rope"},             {"rope_k", "attn_rope"},         {"o_proj", "attn_post_proj"},
        {"post_attention_norm", "post_attention_layernorm"},                  {"gate_up_proj", "mlp_up_proj"},
        {"swiglu", "mlp_act"},               {"down_proj", "mlp_down_proj"},  {"qkv_split", "attn_input_reshape"},
        {"attention", "attention"}};
    return m;
}

const char* const kMlpOps[] = {"emb",  "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
                               "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"};
const char* const kAttnOps[] = {"attn_input_reshape", "attn_decode", "attn_output_reshape", "attn_prefill"};

std::string stats_header(const char* op) {
    const std::string p = std::string("time_stats.") + op + ".";
    return p + "min," + p + "max," + p + "mean," + p + "median," + p + "std";
}

// min, max, mean, median (the middle value; the mean of the two middle ones), std (population).
std::string stats(std::vector<double> v) {
    if (v.empty()) return ",,,,";
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    const double mean = sum / static_cast<double>(v.size());
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    if (v.front() == v.back()) var = 0;  // equal samples (the sum's rounding is not a spread)
    const size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    char b[160];
    std::snprintf(b, sizeof b, "%.9g,%.9g,%.9g,%.9g,%.9g", v.front(), v.back(), mean, median,
                  std::sqrt(var / static_cast<double>(n)));
    return b;
}

// The op's time: its tasks' span (first start to last end), ms.
double span_ms(const llm::StepOp& op) {
    uint64_t b = UINT64_MAX, e = 0;
    for (const auto& t : op.tasks) {
        b = std::min(b, t->start_tick.v);
        e = std::max(e, t->end_tick.v);
    }
    return e > b ? static_cast<double>(e - b) * 1e-9 : 0.0;
}

}  // namespace

void VidurProfile::add_step(const llm::StepBatch& b, size_t real, const llm::StepRecord& r) {
    Samples& mlp = m_mlp[b.tokens()];
    // The attention row: decodes only, or one prompt piece only (padding excluded from the key).
    size_t decodes = 0, prompts = 0;
    int64_t ctx = 0;
    for (size_t s = 0; s < real && s < b.query_lens.size(); ++s) {
        (b.query_lens[s] == 1 && b.context_lens[s] > 0 ? decodes : prompts) += 1;
        ctx += b.context_lens[s];
    }
    Samples* attn = nullptr;
    if (prompts == 0 && decodes > 0) {
        attn = &m_attn[{false, static_cast<int64_t>(b.sequences()), 0,
                        (ctx + static_cast<int64_t>(decodes) / 2) / static_cast<int64_t>(decodes)}];
    } else if (prompts == 1 && decodes == 0) {
        attn = &m_attn[{true, 1, b.query_lens[0], b.context_lens[0]}];
    }
    // Per layer and Vidur op, the sum of our ops that make it (rope_q + rope_k: attn_rope).
    std::map<std::pair<int64_t, std::string>, double> per_layer;
    for (const llm::StepOp& op : r.ops) {
        if (op.tasks.empty()) continue;
        const double ms = span_ms(op);
        if (op.name == "embedding") {
            mlp["emb"].push_back(ms);
            continue;
        }
        const int64_t l = llm::node_layer(op.name);
        if (l < 0) continue;
        auto it = layer_ops().find(llm::node_role(op.name));
        if (it != layer_ops().end()) per_layer[{l, it->second}] += ms;
    }
    std::set<int64_t> layers;
    for (const auto& [key, ms] : per_layer) {
        layers.insert(key.first);
        if (key.second == "attention") {
            if (attn) (*attn)[prompts ? "attn_prefill" : "attn_decode"].push_back(ms);
        } else if (key.second == "attn_input_reshape") {
            if (attn) (*attn)["attn_input_reshape"].push_back(ms);
        } else {
            mlp[key.second].push_back(ms);
        }
    }
    for (size_t l = 0; l < layers.size(); ++l) {
        mlp["add"].push_back(0.0);
        if (attn) (*attn)["attn_output_reshape"].push_back(0.0);
    }
}

void VidurProfile::merge(const VidurProfile& o) {
    for (const auto& [k, s] : o.m_mlp)
        for (const auto& [op, v] : s) m_mlp[k][op].insert(m_mlp[k][op].end(), v.begin(), v.end());
    for (const auto& [k, s] : o.m_attn)
        for (const auto& [op, v] : s) m_attn[k][op].insert(m_attn[k][op].end(), v.begin(), v.end());
    for (const auto& [k, v] : o.m_copies) m_copies[k].insert(m_copies[k].end(), v.begin(), v.end());
    for (const auto& [k, v] : o.m_all_reduces)
        m_all_reduces[k].insert(m_all_reduces[k].end(), v.begin(), v.end());
}

std::string VidurProfile::mlp_csv() const {
    std::string s;
    for (const char* op : kMlpOps) s += stats_header(op) + ",";
    s += "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers\n";
    for (const auto& [tokens, samples] : m_mlp) {
        for (const char* op : kMlpOps) {
            auto it = samples.find(op);
            s += stats(it == samples.end() ? std::vector<double>{} : it->second) + ",";
        }
        s += std::to_string(m_c.num_heads) + "," + std::to_string(m_c.num_kv_heads) + "," +
             std::to_string(m_c.hidden_size) + "," + std::to_string(m_c.intermediate_size) + "," +
             std::to_string(m_c.vocab_size) + ",True," + std::to_string(tokens) + "," + std::to_string(m_tp) +
             "\n";
    }
    return s;
}

std::string VidurProfile::attention_csv() const {
    std::string s;
    for (const char* op : kAttnOps) s += stats_header(op) + ",";
    s += "n_embd,n_q_head,n_kv_head,block_size,num_tensor_parallel_workers,max_model_len,batch_size,"
         "prefill_chunk_size,kv_cache_size,is_prefill,attention_backend,profile_method\n";
    for (const auto& [key, samples] : m_attn) {
        for (const char* op : kAttnOps) {
            auto it = samples.find(op);
            s += stats(it == samples.end() ? std::vector<double>{} : it->second) + ",";
        }
        s += std::to_string(m_c.hidden_size) + "," + std::to_string(m_c.num_heads) + "," +
             std::to_string(m_c.num_kv_heads) + "," + std::to_string(m_bs) + "," + std::to_string(m_tp) +
             "," + std::to_string(m_len) + "," + std::to_string(std::get<1>(key)) + "," +
             std::to_string(std::get<2>(key)) + "," + std::to_string(std::get<3>(key)) + "," +
             (std::get<0>(key) ? "True" : "False") + ",sfumato_paged_attention,sfumato_chip_timer\n";
    }
    return s;
}

std::string VidurProfile::send_recv_csv() const {
    std::string s = "," + stats_header("send_recv") + ",rank,num_workers,size,collective,devices_per_node,"
                    "max_devices_per_node\n";
    size_t row = 0;
    for (const auto& [bytes, times] : m_copies)
        s += std::to_string(row++) + "," + stats(times) + ",0,2," + std::to_string(bytes) + ",send_recv," +
             std::to_string(m_per_node) + "," + std::to_string(m_per_node) + "\n";
    return s;
}

std::string VidurProfile::all_reduce_csv() const {
    std::string s = "," + stats_header("all_reduce") +
                    ",rank,num_workers,size,collective,devices_per_node,max_devices_per_node\n";
    size_t row = 0;
    for (const auto& [bytes, times] : m_all_reduces)
        s += std::to_string(row++) + "," + stats(times) + ",0," + std::to_string(m_tp) + "," +
             std::to_string(bytes) + ",all_reduce," + std::to_string(m_per_node) + "," +
             std::to_string(m_per_node) + "\n";
    return s;
}

void VidurProfile::write(const std::string& dir) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
        throw InputError("--export-profile " + dir + ": cannot create the directory (" + ec.message() + ")");
    const std::pair<const char*, std::string> files[] = {{"mlp.csv", mlp_csv()},
                                                         {"attention.csv", attention_csv()},
                                                         {"send_recv.csv", send_recv_csv()},
                                                         {"all_reduce.csv", all_reduce_csv()}};
    for (const auto& [name, text] : files) {
        const fs::path p = fs::path(dir) / name, tmp = fs::path(dir) / (std::string(name) + ".tmp");
        {
            std::ofstream f(tmp, std::ios::binary);
            f << text;
            if (!f) throw InputError("--export-profile " + dir + ": cannot write " + name);
        }
        fs::rename(tmp, p, ec);
        if (ec) throw InputError("--export-profile " + dir + ": cannot write " + name + " (" + ec.message() + ")");
    }
}

}  // namespace sfumato::serve
