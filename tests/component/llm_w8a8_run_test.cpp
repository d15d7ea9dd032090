// runtime/llm with `--quant w8a8` end to end (functional mode), the tiny model with int8 QKV,
// output, gate/up and down projections (per-channel weight scales, per-token DynamicQuant,
// QuantMatMul's dequant epilogue):
// - in place, every DynamicQuant on the device equals the host quantisation of its actual input
//   and every QuantMatMul the exact int32 product of its actual inputs dequantised, bit for bit;
// - the int8 weights halve the projections' bytes;
// - no operator's output holds a NaN;
// - tokens: the first generated token is the fp16 reference's and the W8A8 reference's, and
//   teacher-forced most tokens are the W8A8 reference's own choice. Not all: int8 steps are
//   about 16 times coarser than fp16's, so an activation one fp16 unit away (the device's
//   operators accumulate in other orders than the reference) can round to the next int8 step
//   and move a later layer's output by a whole step, and the tiny random model has near-ties.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "runtime/llm/engine.h"
#include "runtime/llm/reference.h"
#include "runtime/ref/llm_moe.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::llm;

namespace {

// Checks W8A8 steps against their own inputs as the device holds them.
struct QuantChecker {
    const ModelConfig& c;
    const ModelWeights& w;
    std::map<int, ref::HostTensor> seen;
    size_t quant_steps = 0, matmul_steps = 0, mismatches = 0, nans = 0;

    const ref::HostTensor* input(const graph::Plan& p, int t) const {
        for (const graph::PlanStep& v : p.steps)  // a view (reshape) stands for its input
            if (v.view && !v.out.empty() && v.out[0] == t) t = v.in[0];
        auto it = seen.find(t);
        return it == seen.end() ? nullptr : &it->second;
    }
    void operator()(const graph::Plan& p, size_t s, const std::vector<ref::HostTensor>& outs) {
        const graph::PlanStep& st = p.steps[s];
        for (size_t i = 0; i < outs.size() && i < st.out.size(); ++i)
            if (st.out[i] >= 0 && !outs[i].data.empty()) seen[st.out[i]] = outs[i];
        for (const ref::HostTensor& o : outs)
            for (double v : o.data) nans += std::isnan(v);
        if (st.op_type == "DynamicQuant") dynamic_quant(p, st, outs);
        if (st.op_type == "QuantMatMul") quant_matmul(p, st, outs);
    }
    void dynamic_quant(const graph::Plan& p, const graph::PlanStep& st,
                       const std::vector<ref::HostTensor>& outs) {
        const ref::HostTensor* x = input(p, st.in[0]);
        REQUIRE(x);
        const int64_t K = outs[0].shape.back(), T = static_cast<int64_t>(x->data.size()) / K;
        std::vector<float> row(static_cast<size_t>(K));
        std::vector<int8_t> q(static_cast<size_t>(K));
        for (int64_t r = 0; r < T; ++r) {
            for (int64_t k = 0; k < K; ++k)
                row[static_cast<size_t>(k)] = static_cast<float>(x->data[static_cast<size_t>(r * K + k)]);
            const float scale = ref::quant_row(row.data(), K, q.data());
            mismatches += scale != static_cast<float>(outs[1].data[static_cast<size_t>(r)]);
            for (int64_t k = 0; k < K; ++k)
                mismatches += q[static_cast<size_t>(k)] != outs[0].data[static_cast<size_t>(r * K + k)];
        }
        ++quant_steps;
    }
    void quant_matmul(const graph::Plan& p, const graph::PlanStep& st,
                      const std::vector<ref::HostTensor>& outs) {
        const ref::HostTensor *q = input(p, st.in[0]), *as = input(p, st.in[3]);
        REQUIRE(q);
        REQUIRE(as);
        const std::string name = p.tensors[static_cast<size_t>(st.in[1])].name;  // "l0.wqkv"
        const LayerWeights& L = w.layers[static_cast<size_t>(node_layer(name))];
        const std::string role = node_role(name);
        const std::vector<float>& f = role == "wqkv"        ? L.wqkv
                                      : role == "wo"        ? L.wo
                                      : role == "w_gate_up" ? L.w_gate_up
                                                            : L.w_down;
        const int64_t K = q->shape.back(), T = static_cast<int64_t>(q->data.size()) / K,
                      N = static_cast<int64_t>(f.size()) / K;
        const QuantizedMatrix m = quantize_weight(f, K, N);
        for (int64_t r = 0; r < T; ++r)
            for (int64_t n = 0; n < N; ++n) {
                int32_t acc = 0;
                for (int64_t k = 0; k < K; ++k)
                    acc += static_cast<int32_t>(q->data[static_cast<size_t>(r * K + k)]) *
                           m.q[static_cast<size_t>(k * N + n)];
                const float y = round_to_model(static_cast<float>(acc) * m.scale[static_cast<size_t>(n)] *
                                                   static_cast<float>(as->data[static_cast<size_t>(r)]),
                                               c);
                mismatches += y != static_cast<float>(outs[0].data[static_cast<size_t>(r * N + n)]);
            }
        ++matmul_steps;
    }
};

}  // namespace

TEST_CASE(
    "llm w8a8: the tiny model's quantised projections are exact on the device and its tokens follow the "
    "references",
    "[llm][w8a8][functional]") {
    test::Harness h;
    const ModelConfig c = load_model_config("tiny", {std::string(SFUMATO_SOURCE_DIR) + "/configs/llm"});
    const ModelWeights w = random_weights(c, 11);
    RunOptions o;
    o.prefill = 40;
    o.decode = 32;
    o.batch = 2;
    o.block_size = 64;
    o.quant = Quant::W8A8;
    o.weights = &w;
    o.prompts.assign(2, {});
    for (int64_t i = 0; i < o.prefill; ++i) {
        o.prompts[0].push_back((i * 37 + 5) % c.vocab_size);
        o.prompts[1].push_back((i * i + 3 * i + 1) % c.vocab_size);
    }
    QuantChecker check{c, w, {}, 0, 0, 0, 0};
    o.watch = [&check](const graph::Plan& p, size_t s, const std::vector<ref::HostTensor>& outs) {
        check(p, s, outs);
    };
    // The int8 weights take half the bytes of the fp16 ones they replace (plus 4 bytes a channel).
    const uint64_t H = 64, I = 128, QKV = 64 + 2 * 32, L = 2;
    const uint64_t mats = H * QKV + 64 * H + H * 2 * I + I * H, chans = QKV + H + 2 * I + H;
    CHECK(weight_bytes(c, Quant::None) - weight_bytes(c, Quant::W8A8) == L * (mats - 4 * chans));
    LlmRun run(c, o, h.chip().info());
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        run.run(rt);
    }));
    // 33 steps, 2 layers, 4 projections each.
    CHECK(check.quant_steps == 33 * L * 4);
    CHECK(check.matmul_steps == 33 * L * 4);
    CHECK(check.mismatches == 0);
    // No operator's output holds a NaN (attention's P V once read V rows past the keys of a
    // step from stale L1, where an earlier kernel's int8 data read as fp16 NaN).
    CHECK(check.nans == 0);

    Reference ref(c, w, o.prefill + o.decode + 1, Quant::W8A8), fp(c, w, o.prefill + o.decode + 1);
    int same = 0, tokens = 0;
    for (int s = 0; s < 2; ++s) {
        const std::vector<int64_t>& got = run.tokens()[static_cast<size_t>(s)];
        REQUIRE(got.size() == 33);
        std::vector<float> logits = ref.step(s, o.prompts[static_cast<size_t>(s)]);
        CHECK(got[0] == argmax(logits));
        CHECK(got[0] == argmax(fp.step(s, o.prompts[static_cast<size_t>(s)])));
        for (size_t i = 0; i < got.size(); ++i, ++tokens) {
            same += got[i] == argmax(logits);
            if (i + 1 < got.size()) logits = ref.step(s, {got[i]});
        }
    }
    INFO(same << " of " << tokens << " device tokens are the W8A8 reference's greedy choice");
    CHECK(same * 4 >= tokens * 3);
}
