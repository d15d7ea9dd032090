// Host references of the matrix family (runtime/ref/matmul.cpp) on
// hand-computed cases: numpy matmul's 1-D and broadcast rules, Gemm's
// transposes, alpha/beta and C broadcasting, MatMulInteger's zero points, fused
// activations, and the errors that name the node.
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/ref/activation.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ref;

namespace {

HostTensor tensor(ElemType t, std::vector<int64_t> shape, std::vector<double> v) {
    HostTensor h(t, std::move(shape));
    REQUIRE(h.data.size() == v.size());
    h.data = std::move(v);
    return h;
}

std::vector<HostTensor> run(const std::string& op, const std::vector<const HostTensor*>& in,
                            Attrs attrs = {}) {
    attrs.set_owner("n0");
    return run_ref(RefNode{"n0", op, 17, attrs}, in);
}

}  // namespace

TEST_CASE("ref MatMul: 2-D, 1-D operands and broadcast batches as numpy") {
    const HostTensor a = tensor(ElemType::Float, {2, 3}, {1, 2, 3, 4, 5, 6});
    const HostTensor b = tensor(ElemType::Float, {3, 2}, {1, 0, 0, 1, 1, 1});
    auto y = run("MatMul", {&a, &b})[0];
    CHECK(y.shape == std::vector<int64_t>{2, 2});
    CHECK(y.data == std::vector<double>{4, 5, 10, 11});
    // 1-D A (3) x B (3 x 2) -> (2); A (2 x 3) x 1-D B (3) -> (2).
    const HostTensor v = tensor(ElemType::Float, {3}, {1, 1, 1});
    y = run("MatMul", {&v, &b})[0];
    CHECK(y.shape == std::vector<int64_t>{2});
    CHECK(y.data == std::vector<double>{2, 2});
    y = run("MatMul", {&a, &v})[0];
    CHECK(y.shape == std::vector<int64_t>{2});
    CHECK(y.data == std::vector<double>{6, 15});
    // (2, 1, 1, 3) x (3, 3, 1) -> (2, 3, 1, 1): batch (2,1) and (3) broadcast to
    // (2, 3).
    const HostTensor ba = tensor(ElemType::Float, {2, 1, 1, 3}, {1, 0, 0, 0, 0, 1});
    const HostTensor bb = tensor(ElemType::Float, {3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    y = run("MatMul", {&ba, &bb})[0];
    CHECK(y.shape == std::vector<int64_t>{2, 3, 1, 1});
    CHECK(y.data == std::vector<double>{1, 4, 7, 3, 6, 9});
    // Mismatched inner or batch dimensions name the node.
    const HostTensor bad = tensor(ElemType::Float, {2, 2}, {1, 2, 3, 4});
    CHECK_THROWS_WITH(run("MatMul", {&a, &bad}), Catch::Contains("n0") && Catch::Contains("inner"));
    const HostTensor b2 = tensor(ElemType::Float, {2, 3, 3}, std::vector<double>(18, 1.0));
    const HostTensor a3 = tensor(ElemType::Float, {3, 1, 3}, std::vector<double>(9, 1.0));
    CHECK_THROWS_WITH(run("MatMul", {&a3, &b2}), Catch::Contains("broadcast"));
}

TEST_CASE(
    "ref MatMul: fp16 result rounds once, a fused activation applies to "
    "the exact product") {
    const HostTensor a = tensor(ElemType::Float16, {1, 2}, {1, 1});
    const HostTensor b = tensor(ElemType::Float16, {2, 1}, {2048, 1});  // 2049 -> 2048 in fp16
    CHECK(run("MatMul", {&a, &b})[0].data[0] == 2048);
    Attrs at;
    at.set("activation", Attr::of_string("LeakyRelu"));
    at.set("activation_alpha", Attr::of_float(0.5));
    const HostTensor n = tensor(ElemType::Float, {1, 2}, {-1, -3});
    const HostTensor one = tensor(ElemType::Float, {2, 1}, {1, 1});
    CHECK(run("MatMul", {&n, &one}, at)[0].data[0] == -2.0);
    at.set("activation", Attr::of_string("Bogus"));
    CHECK_THROWS_WITH(run("MatMul", {&n, &one}, at), Catch::Contains("Bogus"));
}

TEST_CASE("ref Gemm: transposes, alpha, beta and the broadcast forms of C") {
    const HostTensor a = tensor(ElemType::Float, {2, 3}, {1, 2, 3, 4, 5, 6});  // used as A^T (3 x 2)
    const HostTensor b = tensor(ElemType::Float, {3, 2}, {1, 0, 0, 1, 1, 0});  // used as B^T (2 x 3)
    Attrs at;
    at.set("transA", Attr::of_int(1));
    at.set("transB", Attr::of_int(1));
    at.set("alpha", Attr::of_float(2.0));
    at.set("beta", Attr::of_float(0.5));
    // A' = [[1,4],[2,5],[3,6]] (3 x 2), B' = [[1,0,1],[0,1,0]] (2 x 3).
    const std::vector<double> ab = {1, 4, 1, 2, 5, 2, 3, 6, 3};
    const HostTensor row = tensor(ElemType::Float, {3}, {10, 20, 30});
    auto y = run("Gemm", {&a, &b, &row}, at)[0];
    REQUIRE(y.shape == std::vector<int64_t>{3, 3});
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) CHECK(y.data[i * 3 + j] == 2 * ab[i * 3 + j] + 0.5 * row.data[j]);
    const HostTensor col = tensor(ElemType::Float, {3, 1}, {10, 20, 30});
    y = run("Gemm", {&a, &b, &col}, at)[0];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) CHECK(y.data[i * 3 + j] == 2 * ab[i * 3 + j] + 0.5 * col.data[i]);
    const HostTensor scalar = tensor(ElemType::Float, {}, {4});
    y = run("Gemm", {&a, &b, &scalar}, at)[0];
    CHECK(y.data[4] == 2 * ab[4] + 2);
    y = run("Gemm", {&a, &b, nullptr}, at)[0];  // C omitted (opset 11+)
    CHECK(y.data[8] == 6);
    const HostTensor wrong = tensor(ElemType::Float, {2}, {1, 2});
    CHECK_THROWS_WITH(run("Gemm", {&a, &b, &wrong}, at), Catch::Contains("broadcast"));
}

TEST_CASE(
    "ref MatMulInteger: zero points per tensor and per row / column, "
    "int32 result") {
    const HostTensor a = tensor(ElemType::Uint8, {2, 2}, {11, 12, 13, 14});
    const HostTensor b = tensor(ElemType::Uint8, {2, 2}, {1, 2, 3, 4});
    const HostTensor za = tensor(ElemType::Uint8, {}, {10});
    auto y = run("MatMulInteger", {&a, &b, &za})[0];
    CHECK(y.type == ElemType::Int32);
    CHECK(y.data == std::vector<double>{1 * 1 + 2 * 3, 1 * 2 + 2 * 4, 3 * 1 + 4 * 3, 3 * 2 + 4 * 4});
    const HostTensor zb = tensor(ElemType::Uint8, {2}, {1, 2});  // per column of B
    y = run("MatMulInteger", {&a, &b, nullptr, &zb})[0];
    CHECK(y.data[0] == 11 * 0 + 12 * 2);
    CHECK(y.data[1] == 11 * 0 + 12 * 2);
}

TEST_CASE("ref activations follow the ONNX operators' defaults") {
    Attrs at("n");
    at.set("activation", Attr::of_string("HardSigmoid"));
    Activation h = activation_of(at);
    CHECK(activate(h, 0.0) == 0.5);
    CHECK(activate(h, 10.0) == 1.0);
    at.set("activation", Attr::of_string("Clip"));
    at.set("activation_alpha", Attr::of_float(-1.0));
    Activation c = activation_of(at);
    CHECK(activate(c, -5.0) == -1.0);
    CHECK(activate(c, 5.0) == 5.0);  // no max: unbounded
    at.set("activation", Attr::of_string("Gelu"));
    CHECK(activate(activation_of(at), 1.0) == Approx(0.8413447460685429));
    at.set("activation", Attr::of_string("HardSwish"));
    CHECK(activate(activation_of(at), 1.0) == Approx(1.0 * (1.0 / 6.0 + 0.5)));
}
