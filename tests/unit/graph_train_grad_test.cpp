// The training step's backward against the definition of a gradient, on the host (no chip):
// the weight gradients the backward's items give through the host references (host_gradients,
// what `sfumato train-step` checks the device against) equal central finite differences of the
// step's loss, computed by running the forward plan's steps through the references in double.
// This checks the derivation (BatchNormalization through its batch statistics, ...), which the
// device-against-reference check cannot: there both sides run the same decomposition.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <tuple>

#include "runtime/graph/onnx_import.h"
#include "runtime/graph/train_step.h"
#include "runtime/graph/zoo.h"
#include "runtime/graph/zoo/builder.h"
#include "runtime/ref/ref_ops.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

DeviceInfo grad_test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024, d.l1_bytes = 512 * 1024;
    d.l0a_bytes = d.l0b_bytes = 64 * 1024, d.l0c_bytes = 128 * 1024;
    d.gm_bytes = 1ull << 30;
    d.functional = true;
    return d;
}

std::unique_ptr<TrainSetup> fp32_setup(Graph g, int64_t batch) {
    auto ts = std::make_unique<TrainSetup>();
    ts->copt.precision = Precision::FP32;
    ts->compile(std::move(g), batch, grad_test_device());
    ts->make_data(1);
    return ts;
}

ref::HostTensor as_double(ref::HostTensor t) {
    t.type = ref::ElemType::Double;
    return t;
}

// Rank 0's loss (the one whose gradient LossGrad starts: 0.5 |y - t|^2, or the cross-entropy of
// a final Softmax) in double, with element k of weight tensor w moved by d.
double host_loss(const TrainSetup& ts, int w, size_t k, double d) {
    const Plan& p = *ts.plan;
    std::vector<std::shared_ptr<ref::HostTensor>> v(p.tensors.size());
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlanTensor& t = p.tensors[i];
        if (t.kind != PlanTensor::Kind::Weight || !t.weight) continue;
        v[i] = std::make_shared<ref::HostTensor>(as_double(*t.weight->host()));
        if (static_cast<int>(i) == w) v[i]->data[k] += d;
    }
    for (size_t i = 0; i < p.inputs.size(); ++i)
        v[static_cast<size_t>(p.inputs[i])] = std::make_shared<ref::HostTensor>(as_double(ts.inputs[0][i]));
    for (const PlanStep& st : p.steps) {
        std::vector<const ref::HostTensor*> in;
        for (int t : st.in) in.push_back(t >= 0 ? v[static_cast<size_t>(t)].get() : nullptr);
        ref::RefNode n{st.name, st.op_type, st.desc.opset, st.desc.attrs, static_cast<int>(st.out.size())};
        std::vector<ref::HostTensor> o = ref::run_ref(n, in);
        for (size_t j = 0; j < st.out.size() && j < o.size(); ++j)
            if (st.out[j] >= 0)
                v[static_cast<size_t>(st.out[j])] = std::make_shared<ref::HostTensor>(std::move(o[j]));
    }
    const ref::HostTensor& y = *v[static_cast<size_t>(ts.tp.output)];
    const ref::HostTensor& t = ts.targets[0];
    double loss = 0;
    for (size_t i = 0; i < y.data.size(); ++i)
        loss += ts.tp.softmax_ce ? -t.data[i] * std::log(y.data[i])
                                 : 0.5 * (y.data[i] - t.data[i]) * (y.data[i] - t.data[i]);
    return loss * ts.opt.loss_scale;
}

// Every weight gradient of the plan whose weight feeds a step of type `op` (input `slot`, -1: any
// input; `pick`: which of those steps), at a few elements, against central differences.
size_t check_fd(const TrainSetup& ts, const std::string& op, int slot,
                const std::function<bool(const PlanStep&)>& pick = nullptr, double rel = 1e-3) {
    const auto grads = host_gradients(ts, 0);
    size_t checked = 0;
    for (const auto& [id, g] : grads) {
        const int w = ts.tp.tensors[static_cast<size_t>(id)].plan;
        bool feeds = false;
        for (const PlanStep& st : ts.plan->steps)
            for (size_t i = 0; i < st.in.size(); ++i)
                if (st.in[i] == w && st.op_type == op && (slot < 0 || static_cast<int>(i) == slot) &&
                    (!pick || pick(st)))
                    feeds = true;
        if (!feeds) continue;
        double scale = 0;
        for (double x : g.data) scale = std::max(scale, std::fabs(x));
        const size_t n = g.data.size();
        for (size_t k : {size_t{0}, n - 1}) {
            const double h = 1e-6;
            const double fd = (host_loss(ts, w, k, h) - host_loss(ts, w, k, -h)) / (2 * h);
            INFO(op << " weight " << ts.plan->tensors[static_cast<size_t>(w)].name << " element " << k
                    << ": backward " << g.data[k] << ", finite difference " << fd);
            CHECK(std::fabs(fd - g.data[k]) <= rel * (scale + std::fabs(fd)) + 1e-9);
            ++checked;
        }
    }
    return checked;
}

}  // namespace

TEST_CASE("train backward: BatchNormalization in training (batch statistics) matches finite differences") {
    auto ts = fp32_setup(zoo_graph("resnet18?image=64&width=8&classes=10"), 2);
    // Not folded: every BatchNormalization runs with batch statistics.
    size_t bn = 0;
    for (const PlanStep& st : ts->plan->steps) bn += st.op_type == "BatchNormTraining";
    CHECK(bn == 20);  // the stem, two per basic block (8 blocks), three downsampling shortcuts
    // The stem's and the last stage's (7 BatchNorms; the gradients of the stem's flow through all).
    auto ends = [](const PlanStep& st) {
        return st.name.rfind("conv1", 0) == 0 || st.name.rfind("layer4", 0) == 0;
    };
    CHECK(check_fd(*ts, "BatchNormTraining", 1, ends) == 2 * 6);  // scale
    CHECK(check_fd(*ts, "BatchNormTraining", 2, ends) == 2 * 6);  // B
    // A convolution's gradient flows through its BatchNorm's statistics (dx).
    CHECK(check_fd(*ts, "Conv", 1, [](const PlanStep& st) { return st.name.rfind("layer4.1", 0) == 0; }) ==
          2 * 2);
}

TEST_CASE("train backward: ReLU6 (Clip) and depthwise convolutions of MobileNetV2 match finite differences") {
    auto ts = fp32_setup(zoo_graph("mobilenet_v2?image=64&width_pct=25&classes=10"), 4);
    size_t clips = 0;
    for (const PlanStep& st : ts->plan->steps) clips += st.op_type == "Clip";
    CHECK(clips > 0);
    auto depthwise = [](const PlanStep& st) { return st.desc.attrs.get_int("group", 1) > 1; };
    const size_t dw = check_fd(*ts, "Conv", 1, depthwise);
    CHECK(dw == 2 * 17);  // one depthwise Conv per inverted residual block
    // The first convolution's gradient flows through every block (Clip, BatchNorm, depthwise dX);
    // through 52 layers the fp32 rounding of each backward item adds up to a few 1e-3.
    CHECK(check_fd(
              *ts, "Conv", 1, [](const PlanStep& st) { return st.name.rfind("features.0", 0) == 0; }, 1e-2) ==
          2);
}

TEST_CASE("train backward: SqueezeNet's Concat of parallel branches matches finite differences") {
    auto ts = fp32_setup(zoo_graph("squeezenet?image=48&classes=10"), 2);
    size_t cats = 0;
    for (const PlanStep& st : ts->plan->steps) cats += st.op_type == "Concat";
    CHECK(cats == 8);
    // The squeeze convolutions feed both branches of their fire module.
    CHECK(check_fd(*ts, "Conv", 1,
                   [](const PlanStep& st) { return st.name.find("squeeze") != std::string::npos; }) == 2 * 8);
}

TEST_CASE("train backward: a grouped convolution (groups of several channels) matches finite differences") {
    // x (N, 8, 9, 9) -> Conv 3x3, 2 groups of 4 -> 12 channels, stride 2, pad 1 -> ReLU ->
    // Conv 1x1, 4 groups of 3 -> 8 -> GlobalAveragePool -> Flatten -> Gemm -> 5.
    zoo::Builder b("grouped", 13, 7);
    std::string x = b.input("input", zoo::kFloat, {-1, 8, 9, 9}, {"N"});
    x = b.op("Conv", {x, b.weight("g2.weight", {12, 4, 3, 3})},
             {zoo::ais("kernel_shape", {3, 3}), zoo::ais("pads", {1, 1, 1, 1}), zoo::ais("strides", {2, 2}),
              zoo::ai("group", 2)},
             "g2");
    x = b.op("Relu", {x});
    x = b.op("Conv", {x, b.weight("g4.weight", {8, 3, 1, 1}), b.weight("g4.bias", {8})},
             {zoo::ais("kernel_shape", {1, 1}), zoo::ai("group", 4)}, "g4");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {x})}, {zoo::ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "grouped"), 3);
    // Both grouped weights (and the first one's gradient through the second's data gradient).
    CHECK(check_fd(*ts, "Conv", 1) == 2 * 2);
    CHECK(check_fd(*ts, "Conv", 2) == 2);  // the second one's bias
}

namespace {

size_t count_steps(const TrainSetup& ts, const std::string& op) {
    size_t n = 0;
    for (const PlanStep& st : ts.plan->steps) n += st.op_type == op;
    return n;
}

auto named = [](const std::string& part) {
    return [part](const PlanStep& st) { return st.name.find(part) != std::string::npos; };
};

}  // namespace

TEST_CASE("train backward: BERT's embeddings, LayerNorm, attention and erf GELU match finite differences") {
    auto ts = fp32_setup(zoo_graph("bert_base?layers=2&hidden=32&heads=2&seq=8&vocab=50"), 2);
    // The training forward: fused LayerNorms with their statistics, GELU alone (not fused into
    // the Gemm: its gradient needs its input), attention spelled out.
    CHECK(count_steps(*ts, "LayerNormalization") == 5);
    CHECK(count_steps(*ts, "Gelu") == 2);
    CHECK(count_steps(*ts, "Softmax") == 2);
    for (const PlanStep& st : ts->plan->steps)
        if (st.op_type == "LayerNormalization") CHECK(st.out.size() == 3);
    // Embedding table (Gather: the one-hot scatter-add), position and token type embeddings
    // (Adds broadcast over the batch, and over batch and sequence).
    CHECK(check_fd(*ts, "Gather", 0) == 2);
    CHECK(check_fd(*ts, "Add", 1, named("embeddings")) == 2 * 2);
    // Every LayerNorm's scale and bias (the first one's gradient flows through both layers).
    CHECK(check_fd(*ts, "LayerNormalization", 1) == 2 * 5);
    CHECK(check_fd(*ts, "LayerNormalization", 2) == 2 * 5);
    // Query and key projections of the first layer: through Softmax, the scale Div, the batched
    // MatMuls with transposed operands, the head Transposes and views.
    CHECK(check_fd(*ts, "Gemm", 1, named("layer.0.attention.self")) == 2 * 3);
    // The key bias's gradient is zero (softmax ignores a shift of a row's scores): rounding residue
    // on both sides, not compared.
    CHECK(check_fd(*ts, "Gemm", 2, [](const PlanStep& st) {
              return st.name.find("layer.0.attention.self.query") != std::string::npos ||
                     st.name.find("layer.0.attention.self.value") != std::string::npos;
          }) == 2 * 2);
    // The FFN's first projection: through the erf GELU.
    CHECK(check_fd(*ts, "Gemm", 1, named("intermediate")) == 2 * 2);
}

TEST_CASE("train backward: GPT-2's causal mask (Where), Split QKV, tanh GELU and LM head match finite differences") {
    auto ts = fp32_setup(zoo_graph("gpt2_small?layers=2&hidden=32&heads=2&seq=8&vocab=50"), 2);
    CHECK(count_steps(*ts, "Where") == 2);
    CHECK(count_steps(*ts, "Split") == 2);
    CHECK(count_steps(*ts, "Gelu") == 2);
    // The fused QKV projection: its three parts' gradients concatenated, the causal mask.
    CHECK(check_fd(*ts, "Gemm", 1, named("c_attn")) == 2 * 2);
    CHECK(check_fd(*ts, "Gemm", 2, named("c_attn")) == 2 * 2);
    CHECK(check_fd(*ts, "Gemm", 1, named("c_fc")) == 2 * 2);        // tanh GELU
    CHECK(check_fd(*ts, "MatMul", 1) == 2);                          // the LM head, [N, S, H] x [H, V]
    CHECK(check_fd(*ts, "Gather", 0) == 2);                          // word embeddings
    CHECK(check_fd(*ts, "Add", 1, named("embeddings.position")) == 2);
    CHECK(check_fd(*ts, "LayerNormalization", 1) == 2 * 5);
}

TEST_CASE("train backward: broadcasting Sub, Mul and Div of weights match finite differences") {
    // y = ((x - a) * b / c) with a [4] broadcast over rows, b [3, 1] over columns, c [1, 4] ->
    // Softmax-free MLP head: Flatten -> Gemm.
    zoo::Builder b("bcast", 13, 11);
    std::string x = b.input("input", zoo::kFloat, {-1, 3, 4}, {"N"});
    x = b.op("Sub", {x, b.weight("a", {4}, 0.5)});
    x = b.op("Mul", {x, b.weight("b", {3, 1}, 0.5)});
    x = b.op("Div", {x, b.constant("c", {1, 4}, {1.5f, 2.0f, 2.5f, 3.0f})});
    x = b.op("Div", {b.weight("d", {1, 1, 4}, 1.0), b.op("Add", {x, b.scalar("three", 3.0f)})});
    x = b.op("Flatten", {x}, {zoo::ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 12}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "bcast"), 3);
    CHECK(check_fd(*ts, "Sub", 1) == 2);
    CHECK(check_fd(*ts, "Mul", 1) == 2);
    CHECK(check_fd(*ts, "Div", 1) == 2);  // c: a constant the gradient also reaches
    CHECK(check_fd(*ts, "Div", 0) == 2);  // d: the numerator
}

TEST_CASE("train backward: PyTorch's nn.TransformerEncoderLayer export (Slices, spelled-out LayerNorm) matches finite differences") {
    auto ts = fp32_setup(import_onnx_file(std::string(SFUMATO_SOURCE_DIR) + "/tests/data/torch/torch_encoder_layer/model.onnx"), 2);
    CHECK(count_steps(*ts, "Slice") > 0);
    CHECK(count_steps(*ts, "LayerNormalization") == 2);
    size_t n = 0;
    for (const char* op : {"Gemm", "MatMul"})
        for (int slot : {1, 2}) n += check_fd(*ts, op, slot);
    CHECK(n == 2 * 8);  // in-projection, out-projection, linear1, linear2: weight and bias each
    CHECK(check_fd(*ts, "LayerNormalization", 1) == 2 * 2);
}

TEST_CASE("train backward: the unary activations (ActivationGrad) and Neg match finite differences") {
    // input [N, 6] -> (Gemm -> activation) per activation -> Gemm -> 4: the first Gemm's gradient
    // flows through every activation's derivative, each later one through fewer.
    const std::vector<std::pair<std::string, std::vector<zoo::A>>> acts = {
        {"Sigmoid", {}},     {"Tanh", {}},
        {"HardSigmoid", {zoo::af("alpha", 0.25), zoo::af("beta", 0.5)}},
        {"HardSwish", {}},   {"LeakyRelu", {zoo::af("alpha", 0.125)}},
        {"Elu", {zoo::af("alpha", 0.75)}}, {"Selu", {}},
        {"Softplus", {}},    {"Softsign", {}},
        {"Erf", {}},         {"Neg", {}}};
    zoo::Builder b("acts", 14, 23);
    std::string x = b.input("input", zoo::kFloat, {-1, 6}, {"N"});
    for (size_t i = 0; i < acts.size(); ++i) {
        const std::string fc = "fc" + std::to_string(i);
        x = b.op("Gemm", {x, b.weight(fc + ".weight", {6, 6}, 1.0), b.weight(fc + ".bias", {6})},
                 {zoo::ai("transB", 1)}, fc);
        x = b.op(acts[i].first, {x}, acts[i].second, acts[i].first);
    }
    x = b.op("Gemm", {x, b.weight("head.weight", {4, 6}), b.weight("head.bias", {4})}, {zoo::ai("transB", 1)},
             "head");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "acts"), 3);
    size_t grads = 0;
    for (const auto& it : ts->tp.backward) grads += it.desc.op_type == "ActivationGrad";
    CHECK(grads == acts.size() - 1);  // Neg's gradient is a Neg
    for (const auto& a : acts) {
        INFO(a.first);
        CHECK(count_steps(*ts, a.first) == 1);  // not fused into the Gemm in training
    }
    CHECK(check_fd(*ts, "Gemm", 1) == 2 * (acts.size() + 1));
    CHECK(check_fd(*ts, "Gemm", 2) == 2 * (acts.size() + 1));
}

TEST_CASE("train backward: a Slice with steps, a Softmax over a middle axis and LogSoftmax match finite differences") {
    // input [N, 6, 8] x w [8, 8] -> Slice axes (1, 2), starts (0, 1), steps (3, 2) -> [N, 2, 4]
    // (positions 1, 3, 5, 7 of 8: the last one's skipped position runs past the axis) ->
    // Softmax over axis 1 -> LogSoftmax over the last axis -> Flatten -> Gemm -> 5.
    zoo::Builder b("slices", 13, 31);
    std::string x = b.input("input", zoo::kFloat, {-1, 6, 8}, {"N"});
    x = b.op("MatMul", {x, b.weight("w", {8, 8}, 1.0)}, {}, "proj");
    x = b.op("Slice", {x, b.ints("starts", {0, 1}), b.ints("ends", {6, 8}), b.ints("axes", {1, 2}),
                       b.ints("steps", {3, 2})});
    x = b.op("Softmax", {x}, {zoo::ai("axis", 1)}, "softmax");
    x = b.op("LogSoftmax", {x}, {zoo::ai("axis", -1)}, "log_softmax");
    x = b.op("Flatten", {x}, {zoo::ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "slices"), 3);
    CHECK(count_steps(*ts, "Slice") == 1);
    CHECK(count_steps(*ts, "Softmax") == 1);
    CHECK(count_steps(*ts, "LogSoftmax") == 1);
    size_t pads = 0;
    for (const auto& it : ts->tp.backward) pads += it.desc.op_type == "Pad";
    CHECK(pads == 2);  // the spread of the strided axes, then the offsets
    CHECK(check_fd(*ts, "MatMul", 1) + check_fd(*ts, "Gemm", 1, named("proj")) == 2);
    CHECK(check_fd(*ts, "Gemm", 1, named("fc")) == 2);
}

TEST_CASE("train backward: AveragePool (pads excluded from the count, and kernel = stride) matches finite differences") {
    // x (N, 3, 9, 9) -> Conv 3x3 -> 4 -> AveragePool 3x3 stride 2 pad 1 (count_include_pad 0:
    // 4, 6 or 9 pixels per window) -> Conv 1x1 -> 4 -> AveragePool 2x2 stride 2 (the exporters'
    // adaptive pooling to a divisor of the map) -> Flatten -> Gemm -> 5.
    zoo::Builder b("avgpool", 13, 37);
    std::string x = b.input("input", zoo::kFloat, {-1, 3, 9, 9}, {"N"});
    x = b.op("Conv", {x, b.weight("c1.weight", {4, 3, 3, 3})}, {zoo::ais("kernel_shape", {3, 3})}, "c1");
    x = b.op("AveragePool", {x},
             {zoo::ais("kernel_shape", {3, 3}), zoo::ais("strides", {2, 2}), zoo::ais("pads", {1, 1, 1, 1})}, "p1");
    x = b.op("Conv", {x, b.weight("c2.weight", {4, 4, 1, 1})}, {zoo::ais("kernel_shape", {1, 1})}, "c2");
    x = b.op("AveragePool", {x}, {zoo::ais("kernel_shape", {2, 2}), zoo::ais("strides", {2, 2})}, "p2");
    x = b.op("Flatten", {x}, {zoo::ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 16}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "avgpool"), 2);
    CHECK(count_steps(*ts, "AveragePool") == 2);
    CHECK(check_fd(*ts, "Conv", 1) == 2 * 2);  // c1's gradient through both poolings
}

TEST_CASE("train backward: a training-mode Dropout multiplies forward and backward by one mask, and matches finite differences") {
    // input [N, 16] -> Gemm -> Relu -> Dropout (ratio 0.25, training_mode true) -> Gemm -> 4, and a
    // second Dropout without training_mode (the identity unless every Dropout trains).
    auto model = [] {
        zoo::Builder b("drop", 13, 41);
        std::string x = b.input("input", zoo::kFloat, {-1, 16}, {"N"});
        x = b.op("Gemm", {x, b.weight("fc1.weight", {32, 16}), b.weight("fc1.bias", {32})}, {zoo::ai("transB", 1)}, "fc1");
        x = b.op("Relu", {x});
        const std::string on = b.constant("on", {}, {1.0f});  // made a bool true below
        onnx::TensorProto& t = *b.model().mutable_graph()->mutable_initializer()->rbegin();
        t.set_data_type(onnx::TensorProto::BOOL);
        t.set_raw_data(std::string(1, '\1'));
        x = b.op("Dropout", {x, b.scalar("ratio", 0.25f), on}, {}, "drop1");
        x = b.op("Dropout", {x, b.scalar("ratio2", 0.5f)}, {}, "drop2");
        x = b.op("Gemm", {x, b.weight("fc2.weight", {4, 32}), b.weight("fc2.bias", {4})}, {zoo::ai("transB", 1)}, "fc2");
        b.output(x, zoo::kFloat);
        return import_model(b.model(), "drop");
    };
    for (bool all : {false, true}) {
        INFO("every Dropout trains: " << all);
        auto ts = std::make_unique<TrainSetup>();
        ts->copt.precision = Precision::FP32;
        ts->dropout = all;
        ts->compile(model(), 64, grad_test_device());
        ts->make_data(1);
        CHECK(ts->dropout_masks.size() == (all ? 2u : 1u));
        CHECK(count_steps(*ts, "Dropout") == 0);  // the identity one is a view, the others Muls
        CHECK(count_steps(*ts, "Mul") == ts->dropout_masks.size());
        // Each mask input: ratio of zeros near the ratio, the rest 1 / (1 - ratio).
        for (size_t i = 0; i < ts->plan->inputs.size(); ++i) {
            const auto it = ts->dropout_masks.find(ts->plan->tensors[static_cast<size_t>(ts->plan->inputs[i])].name);
            if (it == ts->dropout_masks.end()) continue;
            const ref::HostTensor& m = ts->inputs[0][i];
            CHECK(m.data.size() == 64u * 32u);
            size_t zeros = 0;
            for (double v : m.data) {
                zeros += v == 0;
                CHECK((v == 0 || v == Approx(1 / (1 - it->second))));
            }
            const double frac = static_cast<double>(zeros) / static_cast<double>(m.data.size());
            CHECK(std::fabs(frac - it->second) < 0.05);  // 2048 draws: 4.3 standard deviations at 0.5
        }
        // The backward's Mul reads the forward's mask: the first layer's gradient through it.
        CHECK(check_fd(*ts, "Gemm", 1) == 2 * 2);
        CHECK(check_fd(*ts, "Gemm", 2) == 2 * 2);
    }
}

TEST_CASE("train backward: Pow, PRelu (a trained slope), Max, Min, Sum, Tile and GlobalMaxPool match finite differences") {
    // a = Pow(PRelu(c1(x), slope), 2); m = Max(a, c2(x)); GlobalMaxPool -> [N, 4, 1, 1] -> Tile
    // (1, 1, 1, 2) -> Flatten [N, 8] -> f; Sum(f, Min(f, w)) -> Gemm -> 5.
    zoo::Builder b("ew_more", 13, 43);
    const std::string x = b.input("input", zoo::kFloat, {-1, 3, 4, 4}, {"N"});
    std::string a = b.op("Conv", {x, b.weight("c1.weight", {4, 3, 1, 1}, 1.0)}, {zoo::ais("kernel_shape", {1, 1})}, "c1");
    a = b.op("PRelu", {a, b.weight("slope", {4, 1, 1}, 0.5)}, {}, "prelu");
    a = b.op("Pow", {a, b.scalar("two", 2.0f)}, {}, "square");
    const std::string c = b.op("Conv", {x, b.weight("c2.weight", {4, 3, 1, 1}, 1.0)}, {zoo::ais("kernel_shape", {1, 1})}, "c2");
    std::string m = b.op("Max", {a, c}, {}, "max");
    m = b.op("GlobalMaxPool", {m}, {}, "gmp");
    m = b.op("Tile", {m, b.ints("repeats", {1, 1, 1, 2})}, {}, "tile");
    const std::string f = b.op("Flatten", {m}, {zoo::ai("axis", 1)});
    std::string y = b.op("Sum", {f, b.op("Min", {f, b.weight("cap", {8}, 1.0)}, {}, "min")}, {}, "sum");
    y = b.op("Gemm", {y, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(y, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "ew_more"), 3);
    for (const char* op : {"Pow", "PRelu", "Max", "Min", "Sum", "Tile", "GlobalMaxPool"}) {
        INFO(op);
        CHECK(count_steps(*ts, op) == 1);
    }
    CHECK(check_fd(*ts, "Conv", 1) == 2 * 2);   // c1 through PRelu, Pow, Max; c2 through Max
    CHECK(check_fd(*ts, "PRelu", 1) == 2);      // the slope, summed over H and W
    CHECK(check_fd(*ts, "Min", 1) == 2);        // the cap where it is the smaller
}

TEST_CASE("train backward: InstanceNormalization (and GroupNorm as PyTorch exports it) matches finite differences") {
    // x (N, 3, 6, 6) -> Conv 3x3 -> 8 -> InstanceNormalization (scale, B) -> Relu -> Conv 1x1 -> 8
    // -> GroupNorm of 2 groups as exported (Reshape [N, 2, -1], InstanceNormalization of 2
    // channels, Reshape back, Mul gamma, Add beta) -> GlobalAveragePool -> Flatten -> Gemm -> 5.
    zoo::Builder b("inorm", 13, 47);
    std::string x = b.input("input", zoo::kFloat, {-1, 3, 6, 6}, {"N"});
    x = b.op("Conv", {x, b.weight("c1.weight", {8, 3, 3, 3})}, {zoo::ais("kernel_shape", {3, 3})}, "c1");
    x = b.op("InstanceNormalization", {x, b.weight("in.scale", {8}, 1.0), b.weight("in.bias", {8}, 0.5)},
             {zoo::af("epsilon", 1e-5)}, "in");
    x = b.op("Relu", {x});
    x = b.op("Conv", {x, b.weight("c2.weight", {8, 8, 1, 1})}, {zoo::ais("kernel_shape", {1, 1})}, "c2");
    std::string gview = b.op("Reshape", {x, b.ints("groups", {0, 2, -1})});
    gview = b.op("InstanceNormalization", {gview, b.weight("gn.scale", {2}, 1.0), b.weight("gn.bias", {2}, 0.5)}, {}, "gn");
    x = b.op("Reshape", {gview, b.ints("back", {0, 8, 4, 4})});
    x = b.op("Add", {b.op("Mul", {x, b.weight("gn.gamma", {8, 1, 1}, 1.0)}, {}, "gn_mul"),
                     b.weight("gn.beta", {8, 1, 1}, 0.5)}, {}, "gn_add");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {b.op("Relu", {x})})}, {zoo::ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "inorm"), 3);
    CHECK(count_steps(*ts, "InstanceNormalization") == 2);
    CHECK(check_fd(*ts, "InstanceNormalization", 1) == 2 * 2);  // scale
    CHECK(check_fd(*ts, "InstanceNormalization", 2) == 2 * 2);  // B
    CHECK(check_fd(*ts, "Conv", 1) == 2 * 2);  // c1 through the first, c2 through the group norm
}

TEST_CASE("train backward: Gather of plan-time indices along a middle axis (x[:, 0], scattered and consecutive lists) matches finite differences") {
    // h = input [N, 4, 6] x w [6, 6]; a = h[:, 0] (a scalar index: [N, 6]); b = h[:, (3, 1)] (two
    // scattered indices: [N, 2, 6]); c = h[:, :, (1, 2, 3)] (consecutive, axis 2: [N, 4, 3]);
    // Concat of the flattened three -> Gemm -> 5.
    zoo::Builder b("cgather", 13, 53);
    std::string x = b.input("input", zoo::kFloat, {-1, 4, 6}, {"N"});
    const std::string h = b.op("MatMul", {x, b.weight("w", {6, 6}, 1.0)}, {}, "proj");
    const std::string i0 = b.ints("i0", {0});
    b.model().mutable_graph()->mutable_initializer()->rbegin()->clear_dims();  // a scalar index
    const std::string g0 = b.op("Gather", {h, i0}, {zoo::ai("axis", 1)}, "cls");
    const std::string g1 = b.op("Gather", {h, b.ints("i1", {3, 1})}, {zoo::ai("axis", 1)}, "pick");
    const std::string g2 = b.op("Gather", {h, b.ints("i2", {1, 2, 3})}, {zoo::ai("axis", 2)}, "cols");
    std::vector<std::string> flat;
    for (const std::string& t : {g0, g1, g2}) flat.push_back(b.op("Flatten", {t}, {zoo::ai("axis", 1)}));
    std::string y = b.op("Concat", flat, {zoo::ai("axis", 1)});
    y = b.op("Gemm", {y, b.weight("fc.weight", {5, 6 + 12 + 12}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(y, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "cgather"), 3);
    CHECK(count_steps(*ts, "Gather") == 3);
    CHECK(check_fd(*ts, "MatMul", 1) + check_fd(*ts, "Gemm", 1, named("proj")) == 2);
}

TEST_CASE("train backward: ConvTranspose (stride 2, pads, output padding, bias) matches finite differences") {
    // x (N, 3, 5, 5) -> Conv 1x1 -> 4 -> ConvTranspose 3x3 stride 2 pad 1 output_padding 1 -> 3 x
    // 10 x 10 (+ bias) -> Relu -> GlobalAveragePool -> Flatten -> Gemm -> 5.
    zoo::Builder b("convt", 13, 59);
    std::string x = b.input("input", zoo::kFloat, {-1, 3, 5, 5}, {"N"});
    x = b.op("Conv", {x, b.weight("c.weight", {4, 3, 1, 1})}, {zoo::ais("kernel_shape", {1, 1})}, "c");
    x = b.op("ConvTranspose", {x, b.weight("up.weight", {4, 3, 3, 3}), b.weight("up.bias", {3})},
             {zoo::ais("kernel_shape", {3, 3}), zoo::ais("strides", {2, 2}), zoo::ais("pads", {1, 1, 1, 1}),
              zoo::ais("output_padding", {1, 1})},
             "up");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {b.op("Relu", {x})})}, {zoo::ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 3}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(x, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "convt"), 2);
    CHECK(count_steps(*ts, "ConvTranspose") == 1);
    CHECK(check_fd(*ts, "ConvTranspose", 1) == 2);  // W
    CHECK(check_fd(*ts, "ConvTranspose", 2) == 2);  // B
    CHECK(check_fd(*ts, "Conv", 1) == 2);           // through dX = Conv(dY, W)
}

TEST_CASE("train backward: ReduceMax, ReduceMin, ReduceSumSquare, ReduceL2, ReduceLogSumExp and ReduceL1 match finite differences") {
    // h = input [N, 4, 6] x w [6, 6]; each reduction of h over an axis (kept or dropped), flattened
    // and concatenated -> Gemm -> 5.
    zoo::Builder b("reductions", 13, 61);
    std::string x = b.input("input", zoo::kFloat, {-1, 4, 6}, {"N"});
    const std::string h = b.op("MatMul", {x, b.weight("w", {6, 6}, 1.0)}, {}, "proj");
    const std::vector<std::tuple<std::string, std::vector<int64_t>, int64_t>> reds = {
        {"ReduceMax", {2}, 0},       {"ReduceMin", {1}, 1}, {"ReduceSumSquare", {2}, 1},
        {"ReduceL2", {1}, 0},        {"ReduceLogSumExp", {1, 2}, 0}, {"ReduceL1", {2}, 0}};
    std::vector<std::string> flat;
    for (const auto& [op, axes, keep] : reds)
        flat.push_back(b.op("Flatten", {b.op(op, {h}, {zoo::ais("axes", axes), zoo::ai("keepdims", keep)}, op)},
                            {zoo::ai("axis", 1)}));
    std::string y = b.op("Concat", flat, {zoo::ai("axis", 1)});
    y = b.op("Gemm", {y, b.weight("fc.weight", {5, 25}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(y, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "reductions"), 3);
    for (const auto& r : reds) CHECK(count_steps(*ts, std::get<0>(r)) == 1);
    CHECK(check_fd(*ts, "MatMul", 1) + check_fd(*ts, "Gemm", 1, named("proj")) == 2);
}

TEST_CASE("train backward: an RMSNorm spelled out as exporters write it (Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul) matches finite differences") {
    // h = input [N, 4, 8] x w [8, 8]; y = h * Reciprocal(Sqrt(ReduceMean(Pow(h, 2), -1) + eps)) * g;
    // Flatten -> Gemm -> 5 (LLaMA / T5's normalisation, no fused kernel in training).
    zoo::Builder b("rmsnorm", 13, 67);
    std::string x = b.input("input", zoo::kFloat, {-1, 4, 8}, {"N"});
    const std::string h = b.op("MatMul", {x, b.weight("w", {8, 8}, 1.0)}, {}, "proj");
    std::string r = b.op("ReduceMean", {b.op("Pow", {h, b.scalar("two", 2.0f)}, {}, "sq")},
                         {zoo::ais("axes", {-1}), zoo::ai("keepdims", 1)}, "ms");
    r = b.op("Reciprocal", {b.op("Sqrt", {b.op("Add", {r, b.scalar("eps", 1e-6f)})}, {}, "rms")}, {}, "inv");
    std::string y = b.op("Mul", {b.op("Mul", {h, r}, {}, "normed"), b.weight("g", {8}, 1.0)}, {}, "scaled");
    y = b.op("Flatten", {y}, {zoo::ai("axis", 1)});
    y = b.op("Gemm", {y, b.weight("fc.weight", {5, 32}), b.weight("fc.bias", {5})}, {zoo::ai("transB", 1)}, "fc");
    b.output(y, zoo::kFloat);
    auto ts = fp32_setup(import_model(b.model(), "rmsnorm"), 3);
    for (const char* op : {"Pow", "ReduceMean", "Sqrt", "Reciprocal"}) {
        INFO(op);
        CHECK(count_steps(*ts, op) == 1);
    }
    CHECK(check_fd(*ts, "MatMul", 1) + check_fd(*ts, "Gemm", 1, named("proj")) == 2);  // through the statistics
    CHECK(check_fd(*ts, "Mul", 1, named("scaled")) == 2);                              // the gain g
}
