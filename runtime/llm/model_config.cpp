// Hugging Face config.json → ModelConfig (see model_config.h), and the RoPE tables.
#include "runtime/llm/model_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/error.h"

namespace sfumato::llm {

namespace {

using json = nlohmann::json;

// Bounds that keep every derived size (weights, KV bytes, table sizes) far from overflow; they
// are an order of magnitude past the largest public models.
constexpr int64_t kMaxHidden = 1 << 17, kMaxLayers = 4096, kMaxHeads = 4096, kMaxVocab = 1 << 23;
constexpr int64_t kMaxIntermediate = 1 << 20, kMaxPositions = int64_t{1} << 24, kMaxExperts = 4096;

class Reader {
public:
    Reader(const json& j, std::string name) : m_j(j), m_name(std::move(name)) {}

    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw InputError(m_name + ": config.json field '" + field + "' " + what);
    }
    bool has(const char* f) const { return m_j.contains(f) && !m_j.at(f).is_null(); }

    int64_t integer(const char* f, int64_t lo, int64_t hi, const int64_t* dflt = nullptr) const {
        if (!has(f)) {
            if (dflt) return *dflt;
            fail(f, "is missing");
        }
        const json& v = m_j.at(f);
        if (!v.is_number_integer()) fail(f, "must be an integer, not " + v.dump());
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
            fail(f, "= " + v.dump() + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        const int64_t x = v.get<int64_t>();
        if (x < lo || x > hi)
            fail(f, "= " + v.dump() + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return x;
    }
    double number(const json& o, const std::string& f, double lo, double hi, double dflt, bool required) const {
        if (!o.contains(f) || o.at(f).is_null()) {
            if (required) fail(f, "is missing");
            return dflt;
        }
        const json& v = o.at(f);
        if (!v.is_number()) fail(f, "must be a number, not " + v.dump());
        const double x = v.get<double>();
        if (!std::isfinite(x) || x < lo || x > hi)
            fail(f, "= " + v.dump() + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return x;
    }
    bool boolean(const char* f, bool dflt) const {
        if (!has(f)) return dflt;
        if (!m_j.at(f).is_boolean()) fail(f, "must be true or false, not " + m_j.at(f).dump());
        return m_j.at(f).get<bool>();
    }
    std::string string(const json& o, const char* f, const std::string& dflt) const {
        if (!o.contains(f) || o.at(f).is_null()) return dflt;
        if (!o.at(f).is_string()) fail(f, "must be a string, not " + o.at(f).dump());
        return o.at(f).get<std::string>();
    }
    const json& j() const { return m_j; }

private:
    const json& m_j;
    std::string m_name;
};

Arch parse_arch(const Reader& r) {
    if (!r.has("architectures")) r.fail("architectures", "is missing");
    const json& a = r.j().at("architectures");
    if (!a.is_array() || a.size() != 1 || !a[0].is_string())
        r.fail("architectures", "must list exactly one architecture, not " + a.dump());
    const std::string s = a[0].get<std::string>();
    for (Arch x : {Arch::Llama, Arch::Mistral, Arch::Qwen2, Arch::Mixtral})
        if (s == arch_name(x)) return x;
    r.fail("architectures", "names '" + s +
                                "': unsupported architecture (supported: LlamaForCausalLM, MistralForCausalLM, "
                                "Qwen2ForCausalLM, MixtralForCausalLM)");
}

void parse_rope_scaling(const Reader& r, ModelConfig& c) {
    if (!r.has("rope_scaling")) return;
    const json& s = r.j().at("rope_scaling");
    if (!s.is_object()) r.fail("rope_scaling", "must be an object or null, not " + s.dump());
    // transformers reads "rope_type", older configs say "type".
    std::string type = r.string(s, "rope_type", "");
    if (type.empty()) type = r.string(s, "type", "");
    if (type.empty()) r.fail("rope_scaling", "has no 'rope_type' (or 'type')");
    if (type == "default") return;
    if (type == "linear")
        c.rope_scaling = RopeScaling::Linear;
    else if (type == "dynamic")
        c.rope_scaling = RopeScaling::Dynamic;
    else if (type == "llama3")
        c.rope_scaling = RopeScaling::Llama3;
    else
        r.fail("rope_scaling", "type '" + type + "' is not supported (supported: linear, dynamic, llama3)");
    c.rope_factor = r.number(s, "factor", 1.0, 1e6, 1.0, true);
    c.rope_original_max_position = c.max_position_embeddings;
    if (c.rope_scaling == RopeScaling::Llama3) {
        c.rope_low_freq_factor = r.number(s, "low_freq_factor", 1e-6, 1e6, 1.0, true);
        c.rope_high_freq_factor = r.number(s, "high_freq_factor", 1e-6, 1e6, 4.0, true);
        if (c.rope_high_freq_factor <= c.rope_low_freq_factor)
            r.fail("rope_scaling", "high_freq_factor must exceed low_freq_factor");
        const double orig = r.number(s, "original_max_position_embeddings", 1, static_cast<double>(kMaxPositions),
                                     0, true);
        if (orig != std::floor(orig)) r.fail("original_max_position_embeddings", "must be an integer");
        c.rope_original_max_position = static_cast<int64_t>(orig);
    }
}

}  // namespace

const char* arch_name(Arch a) {
    switch (a) {
        case Arch::Mistral: return "MistralForCausalLM";
        case Arch::Qwen2: return "Qwen2ForCausalLM";
        case Arch::Mixtral: return "MixtralForCausalLM";
        default: return "LlamaForCausalLM";
    }
}

const char* rope_scaling_name(RopeScaling s) {
    switch (s) {
        case RopeScaling::Linear: return "linear";
        case RopeScaling::Dynamic: return "dynamic";
        case RopeScaling::Llama3: return "llama3";
        default: return "none";
    }
}

int64_t ModelConfig::layer_params() const {
    const int64_t h = hidden_size;
    int64_t p = h * (q_size() + 2 * kv_size()) + q_size() * h + 2 * h;
    if (qkv_bias) p += q_size() + 2 * kv_size();
    p += moe() ? num_experts * 3 * h * intermediate_size + h * num_experts : 3 * h * intermediate_size;
    return p;
}

int64_t ModelConfig::params() const {
    return num_layers * layer_params() + vocab_size * hidden_size * (tie_word_embeddings ? 1 : 2) + hidden_size;
}

ModelConfig parse_model_config(const std::string& text, const std::string& name) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw InputError(name + ": config.json is not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw InputError(name + ": config.json must be a JSON object");
    const Reader r(j, name);
    ModelConfig c;
    c.name = name;
    c.arch = parse_arch(r);
    c.hidden_size = r.integer("hidden_size", 1, kMaxHidden);
    c.intermediate_size = r.integer("intermediate_size", 1, kMaxIntermediate);
    c.num_layers = r.integer("num_hidden_layers", 1, kMaxLayers);
    c.num_heads = r.integer("num_attention_heads", 1, kMaxHeads);
    c.num_kv_heads = r.integer("num_key_value_heads", 1, kMaxHeads, &c.num_heads);
    if (c.num_heads % c.num_kv_heads != 0)
        r.fail("num_key_value_heads", "= " + std::to_string(c.num_kv_heads) + " does not divide num_attention_heads = " +
                                          std::to_string(c.num_heads));
    if (!r.has("head_dim") && c.hidden_size % c.num_heads != 0)
        r.fail("num_attention_heads", "= " + std::to_string(c.num_heads) + " does not divide hidden_size = " +
                                          std::to_string(c.hidden_size) + " (and there is no head_dim)");
    const int64_t hd = c.hidden_size / c.num_heads;
    c.head_dim = r.integer("head_dim", 2, 4096, &hd);
    if (c.head_dim % 2 != 0) r.fail("head_dim", "= " + std::to_string(c.head_dim) + " must be even (RoPE pairs)");
    c.vocab_size = r.integer("vocab_size", 1, kMaxVocab);
    const int64_t dflt_pos = 2048;
    c.max_position_embeddings = r.integer("max_position_embeddings", 1, kMaxPositions, &dflt_pos);
    c.rope_theta = r.number(j, "rope_theta", 1.0, 1e12, 10000.0, false);
    c.rms_norm_eps = r.number(j, "rms_norm_eps", 1e-12, 1.0, 1e-6, false);
    c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
    parse_rope_scaling(r, c);
    const std::string act = r.string(j, "hidden_act", "silu");
    if (act != "silu") r.fail("hidden_act", "= '" + act + "' is not supported (only silu: SwiGLU MLPs)");
    if (r.boolean("mlp_bias", false)) r.fail("mlp_bias", "= true is not supported (no MLP bias is modelled)");
    c.qkv_bias = c.arch == Arch::Qwen2 || r.boolean("attention_bias", false);
    c.torch_dtype = r.string(j, "torch_dtype", "float16");
    if (c.torch_dtype != "float16" && c.torch_dtype != "bfloat16" && c.torch_dtype != "float32")
        r.fail("torch_dtype", "= '" + c.torch_dtype + "' is not supported (float16, bfloat16, float32)");
    if (c.arch == Arch::Mixtral) {
        c.num_experts = r.integer("num_local_experts", 1, kMaxExperts);
        c.experts_per_token = r.integer("num_experts_per_tok", 1, c.num_experts);
    } else if (r.has("num_local_experts")) {
        r.fail("num_local_experts", "is set but " + std::string(arch_name(c.arch)) + " has no experts");
    }
    const bool window_used = c.arch == Arch::Mistral || c.arch == Arch::Mixtral || r.boolean("use_sliding_window", false);
    if (window_used && r.has("sliding_window")) c.sliding_window = r.integer("sliding_window", 1, kMaxPositions);
    return c;
}

ModelConfig load_model_config(const std::string& path_or_name, const std::vector<std::string>& dirs) {
    namespace fs = std::filesystem;
    std::string path = path_or_name;
    std::string name = fs::path(path_or_name).stem().string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        path.clear();
        for (const auto& d : dirs) {
            const fs::path p = fs::path(d) / (path_or_name + ".json");
            if (path_or_name.find('/') == std::string::npos && fs::is_regular_file(p, ec)) {
                path = p.string();
                break;
            }
        }
        if (path.empty()) {
            std::string known;
            for (const auto& d : dirs)
                for (const auto& e : fs::directory_iterator(d, ec))
                    if (e.path().extension() == ".json") known += " " + e.path().stem().string();
            throw InputError("llm: no model config file or shipped model '" + path_or_name +
                             "' (shipped:" + (known.empty() ? std::string(" none found") : known) + ")");
        }
    }
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("llm: cannot read " + path);
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse_model_config(ss.str(), name);
}

std::vector<double> rope_inv_freq(const ModelConfig& c, int64_t seq_len) {
    const int64_t d = c.head_dim;
    double base = c.rope_theta;
    // Dynamic NTK scaling: transformers grows the base once the sequence passes the trained length.
    if (c.rope_scaling == RopeScaling::Dynamic && seq_len > c.max_position_embeddings) {
        const double ratio = c.rope_factor * static_cast<double>(seq_len) / static_cast<double>(c.max_position_embeddings) -
                             (c.rope_factor - 1.0);
        base *= std::pow(ratio, static_cast<double>(d) / static_cast<double>(d - 2));
    }
    std::vector<double> f(static_cast<size_t>(d / 2));
    for (int64_t i = 0; i < d / 2; ++i)
        f[static_cast<size_t>(i)] = 1.0 / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(d));
    if (c.rope_scaling == RopeScaling::Linear)
        for (double& x : f) x /= c.rope_factor;
    if (c.rope_scaling == RopeScaling::Llama3) {
        const double orig = static_cast<double>(c.rope_original_max_position);
        const double low_wavelen = orig / c.rope_low_freq_factor, high_wavelen = orig / c.rope_high_freq_factor;
        for (double& x : f) {
            const double wavelen = 2.0 * M_PI / x;
            if (wavelen < high_wavelen) continue;
            if (wavelen > low_wavelen) {
                x /= c.rope_factor;
                continue;
            }
            const double smooth =
                (orig / wavelen - c.rope_low_freq_factor) / (c.rope_high_freq_factor - c.rope_low_freq_factor);
            x = (1.0 - smooth) * x / c.rope_factor + smooth * x;
        }
    }
    return f;
}

std::vector<float> rope_cos_sin(const ModelConfig& c, int64_t positions) {
    const std::vector<double> f = rope_inv_freq(c, positions);
    const size_t half = f.size();
    std::vector<float> t(static_cast<size_t>(positions) * 2 * half);
    for (int64_t p = 0; p < positions; ++p) {
        float* row = t.data() + static_cast<size_t>(p) * 2 * half;
        for (size_t i = 0; i < half; ++i) {
            // fp32 angle as transformers computes it (positions * inv_freq in float32).
            const float a = static_cast<float>(p) * static_cast<float>(f[i]);
            row[i] = std::cos(a);
            row[half + i] = std::sin(a);
        }
    }
    return t;
}

}  // namespace sfumato::llm
