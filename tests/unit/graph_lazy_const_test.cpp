// Constants made on first use (runtime/graph/ir.h): a zoo model's generated weights and the
// weights BatchNormalization folding scales are made only when their values are asked for (a
// timing-mode run never asks), and then equal what making them at once gives.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "runtime/graph/infer.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/passes.h"
#include "runtime/graph/zoo.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

const char* kNet = "resnet18?image=32&classes=10";

void bind_batch(Graph& g) {
    for (int id : g.inputs)
        for (Dim& d : g.val(id).shape)
            if (!d.known()) d = Dim::of(1);
    infer_shapes(g);
}

// The passes up to BN folding, as compile() runs them (mixed precision, then fuse_conv).
void fold(Graph& g) {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2;
    d.vector_cores = 4;
    CompileOptions opt;
    opt.precision = Precision::Mixed;
    PassContext c{d, opt};
    c.accept = [](const Graph&, const Node&) { return true; };
    PassReport r;
    pass_precision(g, c, r);
    pass_fuse_conv(g, c, r);
    infer_shapes(g);
}

}  // namespace

TEST_CASE("graph constants: a lazy value is made once, when first asked for, as declared") {
    const std::vector<float> v = {1, -2.5f, 3, 0.1f, 5, 6};
    int calls = 0;
    ConstValue c(ref::ElemType::Float, {2, 3}, [&] {
        ++calls;
        return raw_from_floats(v, {2, 3}, ref::ElemType::Float);
    });
    CHECK(c.type() == ref::ElemType::Float);
    CHECK(c.shape() == std::vector<int64_t>{2, 3});
    CHECK(c.numel() == 6);
    CHECK_FALSE(c.made());
    CHECK(calls == 0);
    CHECK(c.floats() == v);
    CHECK(c.made());
    const ConstValue eager(raw_from_floats(v, {2, 3}, ref::ElemType::Float));
    CHECK(c.to_device(isa::DType::FP16) == eager.to_device(isa::DType::FP16));
    CHECK(c.host()->data == eager.host()->data);
    CHECK(calls == 1);

    // Converted lazily on top of a lazy value: nothing is made until asked.
    auto lazy = std::make_shared<const ConstValue>(ref::ElemType::Float, std::vector<int64_t>{2, 3},
                                                   [&] { return raw_from_floats(v, {2, 3}, ref::ElemType::Float); });
    auto half = ConstValue::converted(lazy, ref::ElemType::Float16);
    CHECK(half->type() == ref::ElemType::Float16);
    CHECK_FALSE(lazy->made());
    CHECK(half->to_device(isa::DType::FP16) == eager.to_device(isa::DType::FP16));
    CHECK(lazy->made());

    // A function that returns another shape is a programming error, caught when it runs.
    ConstValue wrong(ref::ElemType::Float, {2, 2}, [&] { return raw_from_floats(v, {2, 3}, ref::ElemType::Float); });
    CHECK_THROWS_AS(wrong.floats(), std::logic_error);
    CHECK_FALSE(wrong.made());
    // One that throws leaves the value unmade (and throws again when asked again).
    ConstValue bad(ref::ElemType::Float, {1}, []() -> RawTensor { throw InputError("no data"); });
    CHECK_THROWS_AS(bad.host(), InputError);
    CHECK_THROWS_AS(bad.host(), InputError);
    CHECK_FALSE(bad.made());
}

TEST_CASE("graph constants: zoo weights are generated when first asked for, the serialised model's bytes") {
    Graph lazy = zoo_graph(kNet);
    Graph eager = import_onnx_bytes(zoo_model_bytes(kNet), kNet);
    REQUIRE(lazy.values.size() == eager.values.size());
    size_t weights = 0;
    for (size_t i = 0; i < lazy.values.size(); ++i) {
        const Value& a = lazy.values[i];
        const Value& b = eager.values[i];
        INFO(a.name);
        CHECK(a.name == b.name);
        CHECK(a.initializer == b.initializer);
        if (!a.initializer) continue;
        REQUIRE(a.constant);
        REQUIRE(b.constant);
        if (a.constant->numel() > 1000) {  // the generated weights (not the zoo's small constants)
            ++weights;
            CHECK_FALSE(a.constant->made());
        }
        CHECK(a.constant->type() == b.constant->type());
        CHECK(a.constant->shape() == b.constant->shape());
        CHECK(a.constant->to_device(isa::DType::FP32) == b.constant->to_device(isa::DType::FP32));
        CHECK(a.constant->made());
    }
    CHECK(weights >= 20);  // ResNet-18's convolutions and its classifier
}

TEST_CASE("graph constants: BN folding scales the weights only when they are asked for") {
    Graph lazy = zoo_graph(kNet);
    Graph eager = import_onnx_bytes(zoo_model_bytes(kNet), kNet);
    bind_batch(lazy);
    bind_batch(eager);
    fold(lazy);
    fold(eager);
    REQUIRE(lazy.nodes.size() == eager.nodes.size());
    size_t folded = 0;
    for (size_t i = 0; i < lazy.nodes.size(); ++i) {
        const Node& n = lazy.nodes[i];
        if (n.op_type != "Conv") continue;
        const Value& w = lazy.val(n.inputs[1]);
        INFO(w.name);
        REQUIRE(w.constant);
        if (w.name.find("folded_weight") == std::string::npos) continue;
        ++folded;
        CHECK_FALSE(w.constant->made());
        CHECK(w.constant->type() == ref::ElemType::Float16);
        // Made from generated weights or from the model's bytes: the same fp16 values.
        const Value& e = eager.val(eager.nodes[i].inputs[1]);
        CHECK(w.constant->to_device(isa::DType::FP16) == e.constant->to_device(isa::DType::FP16));
        CHECK(w.constant->made());
    }
    CHECK(folded == 20);
}
