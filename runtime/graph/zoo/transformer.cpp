// Zoo builders for transformers as PyTorch (HuggingFace models, opset 13)
// exports them: bert_base (encoder: embeddings, post-LN blocks, erf GELU) and
// gpt2_small (decoder: pre-LN blocks, fused QKV projection split three ways,
// causal mask by Where, tanh GELU, LM head). LayerNorm is spelled out
// (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), attention as
// MatMul/Div/Softmax/MatMul between Reshape and Transpose, as opset-13 exports
// write them.
#include <cmath>

#include "runtime/graph/zoo/builder.h"

namespace sfumato::graph::zoo {

namespace {

std::string layer_norm(Builder& b, const std::string& x, int64_t h, float eps, const std::string& nm) {
    const std::string mean = b.op("ReduceMean", {x}, {ais("axes", {-1}), ai("keepdims", 1)}, nm + ".mean");
    const std::string d = b.op("Sub", {x, mean}, {}, nm + ".sub");
    const std::string sq = b.op("Pow", {d, b.scalar("two", 2.0f)}, {}, nm + ".pow");
    const std::string var = b.op("ReduceMean", {sq}, {ais("axes", {-1}), ai("keepdims", 1)}, nm + ".var");
    const std::string sd =
        b.op("Sqrt", {b.op("Add", {var, b.scalar("eps", eps)}, {}, nm + ".add_eps")}, {}, nm + ".sqrt");
    std::string y = b.op("Div", {d, sd}, {}, nm + ".div");
    std::vector<float> ones(static_cast<size_t>(h)), zeros(static_cast<size_t>(h));
    std::uniform_real_distribution<float> g(0.9f, 1.1f), s(-0.05f, 0.05f);
    for (size_t i = 0; i < ones.size(); ++i) ones[i] = g(b.rng()), zeros[i] = s(b.rng());
    y = b.op("Mul", {y, b.constant(nm + ".weight", {h}, ones)}, {}, nm + ".mul");
    return b.op("Add", {y, b.constant(nm + ".bias", {h}, zeros)}, {}, nm + ".add");
}

std::string linear(Builder& b, const std::string& x, int64_t in, int64_t out, const std::string& nm) {
    const std::string y = b.op(
        "MatMul", {x, b.weight(nm + ".weight", {in, out}, std::sqrt(3.0 / static_cast<double>(in)))}, {}, nm);
    return b.op("Add", {y, b.weight(nm + ".bias", {out}, 0.02)}, {}, nm + ".bias_add");
}

// [N, S, H] -> [N, heads, S, dh] (perm 0,2,1,3) or its transpose [N, heads, dh,
// S] (0,2,3,1).
std::string heads_view(Builder& b, const std::string& x, int64_t heads, int64_t dh, bool transposed,
                       const std::string& nm) {
    const std::string r = b.op("Reshape", {x, b.ints("shape", {0, 0, heads, dh})}, {}, nm + ".reshape");
    return b.op(
        "Transpose", {r},
        {ais("perm", transposed ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3})},
        nm + ".transpose");
}

std::string attention_core(Builder& b, const std::string& q, const std::string& kt, const std::string& v,
                           int64_t dh, int64_t h, const std::string& causal_cond, const std::string& nm) {
    std::string w = b.op("MatMul", {q, kt}, {}, nm + ".qk");
    w = b.op("Div", {w, b.scalar("scale", static_cast<float>(std::sqrt(static_cast<double>(dh))))}, {},
             nm + ".scale");
    if (!causal_cond.empty())
        w = b.op("Where", {causal_cond, w, b.scalar("masked_bias", -10000.0f)}, {}, nm + ".mask");
    w = b.op("Softmax", {w}, {ai("axis", -1)}, nm + ".softmax");
    std::string o = b.op("MatMul", {w, v}, {}, nm + ".pv");
    o = b.op("Transpose", {o}, {ais("perm", {0, 2, 1, 3})}, nm + ".merge_transpose");
    return b.op("Reshape", {o, b.ints("shape", {0, 0, h})}, {}, nm + ".merge_reshape");
}

std::string embeddings(Builder& b, int64_t vocab, int64_t seq, int64_t h, const std::string& wname,
                       const std::string& pname) {
    const std::string ids = b.input("input_ids", kInt64, {-1, seq}, {"N"});
    std::string x =
        b.op("Gather", {b.weight(wname, {vocab, h}, 0.5), ids}, {ai("axis", 0)}, "embeddings.word");
    return b.op("Add", {x, b.weight(pname, {seq, h}, 0.1)}, {}, "embeddings.position");
}

}  // namespace

void build_bert(Builder& b, const Params& p) {
    const int64_t layers = p.at("layers"), h = p.at("hidden"), heads = p.at("heads"), seq = p.at("seq"),
                  vocab = p.at("vocab");
    const int64_t dh = h / heads, ffn = 4 * h;
    std::string x = embeddings(b, vocab, seq, h, "embeddings.word_embeddings.weight",
                               "embeddings.position_embeddings.weight");
    x = b.op("Add", {x, b.weight("embeddings.token_type_embeddings.weight", {h}, 0.1)}, {},
             "embeddings.token_type");
    x = layer_norm(b, x, h, 1e-12f, "embeddings.LayerNorm");
    for (int64_t l = 0; l < layers; ++l) {
        const std::string nm = "encoder.layer." + std::to_string(l);
        const std::string q =
            heads_view(b, linear(b, x, h, h, nm + ".attention.self.query"), heads, dh, false, nm + ".q");
        const std::string k =
            heads_view(b, linear(b, x, h, h, nm + ".attention.self.key"), heads, dh, true, nm + ".k");
        const std::string v =
            heads_view(b, linear(b, x, h, h, nm + ".attention.self.value"), heads, dh, false, nm + ".v");
        std::string a = attention_core(b, q, k, v, dh, h, "", nm + ".attention.self");
        a = linear(b, a, h, h, nm + ".attention.output.dense");
        x = layer_norm(b, b.op("Add", {a, x}, {}, nm + ".attention.residual"), h, 1e-12f,
                       nm + ".attention.output.LayerNorm");
        std::string f = linear(b, x, h, ffn, nm + ".intermediate.dense");
        // erf GELU: x * 0.5 * (1 + erf(x / sqrt(2)))
        std::string e = b.op("Erf", {b.op("Div", {f, b.scalar("sqrt2", 1.41421356f)}, {}, nm + ".gelu.div")},
                             {}, nm + ".gelu.erf");
        e = b.op("Add", {e, b.scalar("one", 1.0f)}, {}, nm + ".gelu.add");
        e = b.op("Mul", {f, e}, {}, nm + ".gelu.mul");
        f = b.op("Mul", {e, b.scalar("half", 0.5f)}, {}, nm + ".gelu.half");
        f = linear(b, f, ffn, h, nm + ".output.dense");
        x = layer_norm(b, b.op("Add", {f, x}, {}, nm + ".output.residual"), h, 1e-12f,
                       nm + ".output.LayerNorm");
    }
    b.output(x, kFloat);
}

void build_gpt2(Builder& b, const Params& p) {
    const int64_t layers = p.at("layers"), h = p.at("hidden"), heads = p.at("heads"), seq = p.at("seq"),
                  vocab = p.at("vocab");
    const int64_t dh = h / heads, ffn = 4 * h;
    std::string x = embeddings(b, vocab, seq, h, "transformer.wte.weight", "transformer.wpe.weight");
    // Causal mask: position j visible from i when j <= i (a bool constant, as
    // HF's `bias` buffer).
    auto* cond = b.model().mutable_graph()->add_initializer();
    cond->set_name("causal_mask");
    cond->set_data_type(onnx::TensorProto::BOOL);
    for (int64_t d : {int64_t{1}, int64_t{1}, seq, seq}) cond->add_dims(d);
    std::string bits(static_cast<size_t>(seq * seq), '\0');
    for (int64_t i = 0; i < seq; ++i)
        for (int64_t j = 0; j <= i; ++j) bits[static_cast<size_t>(i * seq + j)] = 1;
    cond->set_raw_data(bits);
    for (int64_t l = 0; l < layers; ++l) {
        const std::string nm = "transformer.h." + std::to_string(l);
        const std::string ln1 = layer_norm(b, x, h, 1e-5f, nm + ".ln_1");
        const std::string qkv = linear(b, ln1, h, 3 * h, nm + ".attn.c_attn");
        const auto parts =
            b.node("Split", {qkv, b.ints("split", {h, h, h})}, {ai("axis", 2)}, 3, nm + ".attn.split");
        const std::string q = heads_view(b, parts[0], heads, dh, false, nm + ".q");
        const std::string k = heads_view(b, parts[1], heads, dh, true, nm + ".k");
        const std::string v = heads_view(b, parts[2], heads, dh, false, nm + ".v");
        std::string a = attention_core(b, q, k, v, dh, h, "causal_mask", nm + ".attn");
        a = linear(b, a, h, h, nm + ".attn.c_proj");
        x = b.op("Add", {x, a}, {}, nm + ".attn.residual");
        std::string f = linear(b, layer_norm(b, x, h, 1e-5f, nm + ".ln_2"), h, ffn, nm + ".mlp.c_fc");
        // tanh GELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
        std::string t = b.op("Pow", {f, b.scalar("three", 3.0f)}, {}, nm + ".gelu.pow");
        t = b.op("Mul", {t, b.scalar("c", 0.044715f)}, {}, nm + ".gelu.mul1");
        t = b.op("Add", {f, t}, {}, nm + ".gelu.add1");
        t = b.op("Mul", {t, b.scalar("k", 0.7978845608f)}, {}, nm + ".gelu.mul2");
        t = b.op("Tanh", {t}, {}, nm + ".gelu.tanh");
        t = b.op("Add", {t, b.scalar("one", 1.0f)}, {}, nm + ".gelu.add2");
        const std::string hx = b.op("Mul", {f, b.scalar("half", 0.5f)}, {}, nm + ".gelu.half");
        f = b.op("Mul", {hx, t}, {}, nm + ".gelu.mul3");
        f = linear(b, f, ffn, h, nm + ".mlp.c_proj");
        x = b.op("Add", {x, f}, {}, nm + ".mlp.residual");
    }
    x = layer_norm(b, x, h, 1e-5f, "transformer.ln_f");
    x = b.op("MatMul", {x, b.weight("lm_head.weight", {h, vocab}, std::sqrt(3.0 / static_cast<double>(h)))},
             {}, "lm_head");
    b.output(x, kFloat);
}

}  // namespace sfumato::graph::zoo
