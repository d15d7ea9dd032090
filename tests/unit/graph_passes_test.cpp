// The graph passes' pattern matching on zoo models (written as PyTorch exports them), with the
// operator-library probe replaced by one that accepts every node, so the rewrites are tested
// apart from which operators exist: LayerNorm and attention fusion, GELU recognition, conv +
// BatchNormalization folding, bias and activation epilogues, MatMul + bias to Gemm on a view,
// elementwise chains, mixed precision, and that every pass leaves a graph that still infers.
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/graph/infer.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/passes.h"
#include "runtime/graph/zoo.h"
#include "runtime/graph/zoo/builder.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

DeviceInfo dev() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2;
    d.vector_cores = 4;
    return d;
}

Graph bound(const std::string& spec) {
    Graph g = zoo_graph(spec);
    for (int id : g.inputs) {
        Value& v = g.val(id);
        for (Dim& d : v.shape)
            if (!d.known()) d = Dim::of(1);
    }
    infer_shapes(g);
    return g;
}

size_t count(const Graph& g, const std::string& op) {
    size_t n = 0;
    for (const Node& x : g.nodes) n += x.op_type == op;
    return n;
}

const Node* first(const Graph& g, const std::string& op) {
    for (const Node& x : g.nodes)
        if (x.op_type == op) return &x;
    return nullptr;
}

struct Run {
    CompileOptions opt;
    PassReport rep;
    void operator()(Graph& g, void (*pass)(Graph&, const PassContext&, PassReport&)) {
        const DeviceInfo d = dev();
        PassContext c{d, opt};
        c.accept = [](const Graph&, const Node&) { return true; };
        pass(g, c, rep);
        infer_shapes(g);  // the rewritten graph is still well formed
    }
};

const char* kBert = "bert_base?layers=2&hidden=64&heads=4&seq=16&vocab=100";
const char* kGpt = "gpt2_small?layers=2&hidden=32&heads=2&seq=8&vocab=50";

}  // namespace

TEST_CASE("graph passes: LayerNorm spelled out in nine ops becomes LayerNormalization") {
    Graph g = bound(kBert);
    Run run;
    run(g, pass_fuse_layernorm);
    CHECK(count(g, "LayerNormalization") == 1 + 2 * 2);  // embeddings + two per layer
    CHECK(count(g, "ReduceMean") == 0);
    CHECK(count(g, "Sqrt") == 0);
    CHECK(run.rep.changes == 5);
    const Node* ln = first(g, "LayerNormalization");
    REQUIRE(ln);
    CHECK(ln->opset == 17);
    CHECK(ln->attrs.get_int("axis", 0) == -1);
    CHECK(ln->attrs.get_float("epsilon", 0) == Approx(1e-12));
    CHECK(ln->fused.size() == 9);
    // The affine parameters are the model's.
    CHECK(g.val(ln->inputs[1]).constant->numel() == 64);
}

TEST_CASE("graph passes: attention becomes FusedAttention, K^T is undone, causal masks are recognised") {
    Graph g = bound(kBert);
    Run run;
    run(g, pass_fuse_attention);
    CHECK(count(g, "FusedAttention") == 2);
    CHECK(count(g, "Softmax") == 0);
    const Node* fa = first(g, "FusedAttention");
    REQUIRE(fa);
    CHECK(fa->attrs.get_int("causal", -1) == 0);
    CHECK(fa->attrs.get_float("scale", 0) == Approx(1.0 / std::sqrt(16.0)));
    // Q, K and V all [batch, heads, seq, head_dim].
    for (int i = 0; i < 3; ++i)
        CHECK(shape_str(g.val(fa->inputs[static_cast<size_t>(i)]).shape) == "[1,4,16,16]");

    Graph h = bound(kGpt);
    Run r2;
    r2(h, pass_fuse_attention);
    CHECK(count(h, "FusedAttention") == 2);
    CHECK(count(h, "Where") == 0);
    CHECK(first(h, "FusedAttention")->attrs.get_int("causal", -1) == 1);
    CHECK(r2.rep.patterns.count("FusedAttention (causal)"));
}

TEST_CASE("graph passes: fuse_conv recognises GELU and puts bias and activation on the Gemm") {
    Graph g = bound(kBert);
    Run run;
    run(g, pass_fuse_conv);
    CHECK(count(g, "Erf") == 0);
    CHECK(count(g, "MatMul") == 2 * 2);  // QK^T and PV per layer stay MatMul
    CHECK(count(g, "Gemm") == 6 * 2);    // q, k, v, output, two FFN linears per layer
    size_t gelu_epilogues = 0;
    for (const Node& n : g.nodes)
        if (n.op_type == "Gemm" && n.attrs.get_string("activation", "") == "Gelu") ++gelu_epilogues;
    CHECK(gelu_epilogues == 2);
    CHECK(run.rep.patterns.count("Gelu(erf) from 5 ops"));

    Graph h = bound(kGpt);
    Run r2;
    r2(h, pass_fuse_conv);
    CHECK(count(h, "Tanh") == 0);
    CHECK(count(h, "Gelu") == 2);  // the tanh form stays a Gelu node
    CHECK(first(h, "Gelu")->attrs.get_string("approximate", "") == "tanh");
}

TEST_CASE(
    "graph passes: Conv + BatchNormalization + Relu fold into one Conv with the BN scaled into its weights") {
    zoo::Builder b("cbr", 13, 7);
    const std::string x = b.input("x", onnx::TensorProto::FLOAT, {1, 2, 4, 4});
    const std::string w = b.constant("w", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
    std::string y = b.op("Conv", {x, w}, {zoo::ais("kernel_shape", {1, 1})}, "conv");
    y = b.op("BatchNormalization",
             {y, b.constant("s", {3}, {2, 1, 0.5f}), b.constant("bb", {3}, {0, 1, -1}),
              b.constant("m", {3}, {1, 0, 2}), b.constant("v", {3}, {3, 0.25f, 1})},
             {zoo::af("epsilon", 1.0)}, "bn");
    b.output(b.op("Relu", {y}, {}, "relu"), onnx::TensorProto::FLOAT);
    Graph g = import_onnx_bytes(b.model().SerializeAsString(), "cbr");
    infer_shapes(g);
    Run run;
    run(g, pass_fuse_conv);
    REQUIRE(g.nodes.size() == 1);
    const Node& c = g.nodes[0];
    CHECK(c.op_type == "Conv");
    CHECK(c.attrs.get_string("activation", "") == "Relu");
    CHECK(c.fused == std::vector<std::string>{"conv", "bn", "relu"});
    // k = s / sqrt(v + eps): 2/2 = 1, 1/sqrt(1.25), 0.5/sqrt(2); bias = (0 - m) * k + bb.
    // The weights are scaled when first asked for (tests/unit/graph_lazy_const_test.cpp).
    CHECK_FALSE(g.val(c.inputs[1]).constant->made());
    const auto wt = g.val(c.inputs[1]).constant->host();
    const auto bt = g.val(c.inputs[2]).constant->host();
    const double k1 = 1 / std::sqrt(1.25), k2 = 0.5 / std::sqrt(2.0);
    CHECK(wt->data[0] == Approx(1));
    CHECK(wt->data[2] == Approx(3 * k1));
    CHECK(wt->data[5] == Approx(6 * k2));
    CHECK(bt->data[0] == Approx(-1));
    CHECK(bt->data[1] == Approx(1));
    CHECK(bt->data[2] == Approx(-2 * k2 - 1));
    std::string pats;
    for (const auto& [k, v] : run.rep.patterns) pats += k + ";";
    INFO(pats);
    CHECK(run.rep.patterns.count("Conv+BatchNormalization+Relu"));
}

TEST_CASE(
    "graph passes: ResNet's convolutions absorb BN and Relu, the residual Add + Relu becomes one chain") {
    Graph g = bound("resnet18?image=32&classes=10");
    // Mixed precision first, as the pipeline runs it: inference BN is affine, so no Cast
    // separates it from its Conv and it still folds.
    Run mixed;
    mixed.opt.precision = Precision::Mixed;
    mixed(g, pass_precision);
    for (const Node& n : g.nodes)
        if (n.op_type == "BatchNormalization") CHECK(g.val(n.outputs[0]).elem == ref::ElemType::Float16);
    Run run;
    run(g, pass_fuse_conv);
    CHECK(count(g, "BatchNormalization") == 0);
    CHECK(count(g, "Conv") == 20);
    Run r2;
    r2(g, pass_fuse_elementwise);
    CHECK(count(g, "Add") == 0);
    CHECK(count(g, "ElementwiseChain") == 8);
    const Node* ch = first(g, "ElementwiseChain");
    REQUIRE(ch);
    const ref::Attr* prog = ch->attrs.find("program");
    REQUIRE(prog);
    CHECK(prog->strings == std::vector<std::string>{"Add", "Relu"});
    CHECK(ch->inputs.size() == 2);
}

TEST_CASE(
    "graph passes: mixed precision keeps normalisations in fp32 behind Casts, fp16 converts everything") {
    Graph g = bound(kBert);
    Run ln;
    ln(g, pass_fuse_layernorm);
    Run mixed;
    mixed.opt.precision = Precision::Mixed;
    mixed(g, pass_precision);
    for (const Node& n : g.nodes) {
        if (n.op_type == "LayerNormalization") CHECK(g.val(n.outputs[0]).elem == ref::ElemType::Float);
        if (n.op_type == "MatMul") CHECK(g.val(n.outputs[0]).elem == ref::ElemType::Float16);
    }
    CHECK(count(g, "Cast") > 0);
    CHECK(mixed.rep.patterns.count("ops kept in fp32"));

    Graph h = bound(kBert);
    Run half;
    half.opt.precision = Precision::FP16;
    half(h, pass_precision);
    CHECK(count(h, "Cast") == 0);
    for (const Value& v : h.values)
        if (!v.constant && ref::is_float(v.elem)) CHECK(v.elem == ref::ElemType::Float16);
}

TEST_CASE("graph passes: constant folding and dead-node removal") {
    zoo::Builder b("f", 13, 1);
    const std::string x = b.input("x", onnx::TensorProto::FLOAT, {4});
    const std::string c = b.op("Identity", {b.constant("c", {4}, {1, 2, 3, 4})}, {}, "const_identity");
    const std::string unused = b.op("Copy", {x}, {}, "unused_copy");
    (void)unused;
    b.output(b.op("Copy", {b.op("Dropout", {b.op("Identity", {x}, {}, "id")}, {}, "drop")}, {}, "used_copy"),
             onnx::TensorProto::FLOAT);
    b.output(c, onnx::TensorProto::FLOAT);
    Graph g = import_onnx_bytes(b.model().SerializeAsString(), "f");
    infer_shapes(g);
    Run fold;
    fold(g, pass_fold);
    CHECK(fold.rep.patterns.count("Identity"));  // the constant one
    CHECK(g.val(g.outputs[1]).constant);
    Run dce;
    dce(g, pass_dce);
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].name == "used_copy");
    CHECK(dce.rep.patterns.count("dead Copy"));
}

TEST_CASE(
    "graph passes: a depthwise Conv of whole C0 blocks becomes groups of C0 channels, W block-diagonal") {
    // x [1, C, 6, 6] -> depthwise 3x3 (group C, W [C, 1, 3, 3]) -> y; fp32: C0 = 8 channels.
    auto depthwise = [](int64_t c, int64_t group) {
        zoo::Builder b("dw", 13, 7);
        const std::string x = b.input("x", onnx::TensorProto::FLOAT, {1, c, 6, 6});
        const std::string w = b.weight("w", {c, c / group, 3, 3});
        b.output(b.op("Conv", {x, w}, {zoo::ai("group", group), zoo::ais("pads", {1, 1, 1, 1})}, "dw"),
                 onnx::TensorProto::FLOAT);
        Graph g = import_onnx_bytes(b.model().SerializeAsString(), "dw");
        infer_shapes(g);
        return g;
    };
    const int64_t c0 = 32 / 4;
    for (const int64_t c : {c0, 3 * c0}) {
        Graph g = depthwise(c, c);
        const auto w0 = g.val(g.nodes[0].inputs[1]).constant->host();
        Run run;
        run(g, pass_depthwise);
        REQUIRE(g.nodes.size() == 1);
        const Node& n = g.nodes[0];
        CHECK(n.attrs.get_int("group", 1) == c / c0);
        CHECK(run.rep.changes == 1);
        CHECK(run.rep.patterns.at("depthwise Conv -> groups of C0 channels") == 1);
        const auto w = g.val(n.inputs[1]).constant->host();
        REQUIRE(w->shape == std::vector<int64_t>{c, c0, 3, 3});
        // Output channel o of group o / C0 reads input channel o of the group (lane o mod C0)
        // with the depthwise taps, every other lane with zeros.
        for (int64_t o = 0; o < c; ++o)
            for (int64_t j = 0; j < c0; ++j)
                for (int64_t t = 0; t < 9; ++t) {
                    const double want = j == o % c0 ? w0->data[static_cast<size_t>(o * 9 + t)] : 0.0;
                    CHECK(w->data[static_cast<size_t>((o * c0 + j) * 9 + t)] == want);
                }
    }
    // Left alone: channels of a partial C0 block, and grouped (not depthwise) Convs.
    for (const auto& [c, group] : std::vector<std::pair<int64_t, int64_t>>{{c0 + 4, c0 + 4}, {2 * c0, 2}}) {
        Graph g = depthwise(c, group);
        Run run;
        run(g, pass_depthwise);
        CHECK(g.nodes[0].attrs.get_int("group", 1) == group);
        CHECK(run.rep.changes == 0);
    }
}
