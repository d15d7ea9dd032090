// The LLM operators (runtime/ops/llm: RmsNorm with the fused residual add, Rope
// in both styles, SwiGlu, the embedding row gather) as graph-node operators,
// run without the chip model (tests/unit/norm_rig.h: every block on a checking
// sink, flags balanced, operands aligned) against the host references in
// runtime/ref. Tolerance: one unit in the last place of the output type (fp16
// 2^-10, bf16 2^-7) plus the fp32 computation's relative error (1e-5) and an
// absolute 1e-5 for results that cancel to near zero (Rope, SwiGlu at g ~ 0).
#include <catch2/catch.hpp>

#include "norm_rig.h"
#include "runtime/ref/host_tensor.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::normtest;
using ref::ElemType;

namespace {

Tolerance tol_for(ElemType t) {
    const double ulp = t == ElemType::Float16 ? 1.0 / 1024 : t == ElemType::Bfloat16 ? 1.0 / 128 : 0.0;
    return {1e-5, ulp + 1e-5};
}

NodeDesc node(const std::string& op) {
    NodeDesc n;
    n.name = op;
    n.op_type = op;
    n.attrs.set_owner(op);
    return n;
}

std::string rms_case(int64_t T, int64_t H, ElemType t, bool residual, const DeviceInfo& dev,
                     bool races = false) {
    std::mt19937 rng(static_cast<uint32_t>(T * 131 + H));
    NodeDesc n = node("RmsNorm");
    n.attrs.set("epsilon", ref::Attr::of_float(1e-5));
    n.inputs = {make_tensor({T, H}, t), make_tensor({H}, t)};
    std::vector<ref::HostTensor> v = {random_tensor({T, H}, t, rng), random_tensor({H}, t, rng, -2, 2)};
    if (residual) {
        n.inputs.push_back(make_tensor({T, H}, t));
        v.push_back(random_tensor({T, H}, t, rng));
        n.num_outputs = 2;
    }
    return check_op(n, v, dev, tol_for(t), races);
}

ref::HostTensor positions(int64_t T, int64_t P, std::mt19937& rng) {
    ref::HostTensor p(ElemType::Int64, {T});
    std::uniform_int_distribution<int64_t> d(0, P - 1);
    for (double& x : p.data) x = static_cast<double>(d(rng));
    return p;
}

std::string rope_case(int64_t T, int64_t N, int64_t D, int64_t R, const std::string& style, ElemType t,
                      const DeviceInfo& dev, bool races = false) {
    std::mt19937 rng(static_cast<uint32_t>(T * 7 + N * 3 + D + R));
    const int64_t P = 50;
    NodeDesc n = node("Rope");
    n.attrs.set("style", ref::Attr::of_string(style));
    n.attrs.set("rotary_dim", ref::Attr::of_int(R));
    n.inputs = {make_tensor({T, N, D}, t), make_tensor({T}, ElemType::Int64), make_tensor({P, R}, t)};
    return check_op(
        n, {random_tensor({T, N, D}, t, rng), positions(T, P, rng), random_tensor({P, R}, t, rng, -1, 1)},
        dev, tol_for(t), races);
}

std::string swiglu_case(int64_t T, int64_t I, ElemType t, const DeviceInfo& dev, bool races = false) {
    std::mt19937 rng(static_cast<uint32_t>(T + I));
    NodeDesc n = node("SwiGlu");
    n.inputs = {make_tensor({T, 2 * I}, t)};
    return check_op(n, {random_tensor({T, 2 * I}, t, rng, -6, 6)}, dev, tol_for(t), races);
}

}  // namespace

TEST_CASE("RmsNorm matches the reference for ragged rows, every float type, with and without the residual",
          "[llm][rmsnorm]") {
    const DeviceInfo tiny = device(4, 32 << 10), big = device(48, 192 << 10);
    for (int64_t H : {16, 64, 100, 130, 700}) {
        for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float}) {
            INFO("H " << H << " dtype " << ref::elem_type_name(t));
            CHECK(rms_case(7, H, t, false, tiny, H == 100) == "");
            CHECK(rms_case(33, H, t, true, tiny, H == 130) == "");
        }
    }
    CHECK(rms_case(300, 4096, ElemType::Float16, true, big) == "");
    CHECK(rms_case(3, 8192, ElemType::Bfloat16, true, big) == "");
    CHECK(rms_case(1, 8192, ElemType::Float16, false, big) == "");
}

TEST_CASE("RmsNorm rejects a weight of the wrong size and a row longer than UB, naming the node",
          "[llm][rmsnorm]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    NodeDesc n = node("RmsNorm");
    n.inputs = {make_tensor({2, 64}, ElemType::Float16), make_tensor({32}, ElemType::Float16)};
    CHECK_THROWS_WITH(make_node_op(n, tiny), Catch::Contains("'RmsNorm'") && Catch::Contains("weight"));
    n.inputs = {make_tensor({2, 20000}, ElemType::Float16), make_tensor({20000}, ElemType::Float16)};
    CHECK_THROWS_WITH(make_node_op(n, tiny), Catch::Contains("does not fit in UB"));
}

TEST_CASE("SwiGlu matches the reference, whole rows and rows in column chunks", "[llm][swiglu]") {
    const DeviceInfo tiny = device(4, 32 << 10), big = device(48, 192 << 10);
    for (int64_t I : {1, 63, 64, 200, 5000}) {
        for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float}) {
            INFO("I " << I << " dtype " << ref::elem_type_name(t));
            CHECK(swiglu_case(9, I, t, tiny, I == 200) == "");
        }
    }
    CHECK(swiglu_case(64, 11008, ElemType::Float16, big) == "");
}

TEST_CASE("Rope half and interleaved match the reference, full and partial rotary dims", "[llm][rope]") {
    const DeviceInfo tiny = device(4, 32 << 10), big = device(48, 192 << 10);
    for (const char* style : {"half", "interleaved"}) {
        for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float}) {
            INFO(style << " " << ref::elem_type_name(t));
            CHECK(rope_case(5, 2, 64, 64, style, t, tiny, true) == "");
            CHECK(rope_case(17, 3, 32, 16, style, t, tiny) == "");
            CHECK(rope_case(40, 4, 128, 96, style, t, big) == "");
        }
    }
    CHECK(rope_case(1, 32, 128, 128, "half", ElemType::Float16, big) == "");
}

TEST_CASE("Rope rejects head and rotary dims that are not multiples of 16", "[llm][rope]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    NodeDesc n = node("Rope");
    n.inputs = {make_tensor({2, 2, 72}, ElemType::Float16), make_tensor({2}, ElemType::Int64),
                make_tensor({8, 72}, ElemType::Float16)};
    CHECK_THROWS_WITH(make_node_op(n, tiny), Catch::Contains("multiples of 16"));
    n.inputs[0].shape = {2, 2, 64};
    n.inputs[2].shape = {8, 64};
    n.attrs.set("style", ref::Attr::of_string("neox"));
    CHECK_THROWS_WITH(make_node_op(n, tiny), Catch::Contains("'style'"));
}

TEST_CASE("Gather of a table beyond the L2 takes the row gather and matches the reference",
          "[llm][embedding]") {
    DeviceInfo dev = device(4, 32 << 10);
    dev.l2_bytes = 64 << 10;
    for (int64_t H : {96, 5000}) {
        INFO("H " << H);
        std::mt19937 rng(static_cast<uint32_t>(H));
        const int64_t V = H == 96 ? 1000 : 40;
        const ElemType t = H == 96 ? ElemType::Float16 : ElemType::Float;
        NodeDesc n = node("Gather");
        n.opset = 13;
        n.attrs.set("axis", ref::Attr::of_int(0));
        n.inputs = {make_tensor({V, H}, t), make_tensor({3, 5}, ElemType::Int64)};
        ref::HostTensor ids(ElemType::Int64, {3, 5});
        std::uniform_int_distribution<int64_t> d(-V, V - 1);
        for (double& x : ids.data) x = static_cast<double>(d(rng));
        RunResult keep;
        CHECK(check_op(n, {random_tensor({V, H}, t, rng), ids}, dev, {0, 0}, H == 96, &keep) == "");
        CHECK_THAT(keep.describe, Catch::Contains("row gather"));
    }
}
