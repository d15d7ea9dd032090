// Softmax, LogSoftmax, LayerNormalization and InstanceNormalization as graph-node operators,
// run without the chip model (tests/unit/norm_rig.h) against the host references: ragged row
// lengths around the 64-lane unit, awkward axes (the column kernel), the pre-13 2-D coercion,
// every float dtype, statistics outputs, the tiny and 910B-like UB sizes, and bad attributes.
#include <catch2/catch.hpp>

#include "norm_rig.h"
#include "runtime/ref/host_tensor.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::normtest;
using ref::ElemType;

namespace {

// One ulp of the output type plus the fp32 computation's error.
Tolerance tol_for(ElemType t, double rel, double atol) {
    const double ulp = t == ElemType::Float16 ? 1.0 / 1024 : t == ElemType::Bfloat16 ? 1.0 / 128 : 0.0;
    return {atol, ulp + rel};
}

NodeDesc softmax_node(const std::vector<int64_t>& shape, ElemType t, int64_t axis, bool log, int opset = 13) {
    NodeDesc n;
    n.name = "sm";
    n.op_type = log ? "LogSoftmax" : "Softmax";
    n.opset = opset;
    n.attrs.set_owner("sm");
    n.attrs.set("axis", ref::Attr::of_int(axis));
    n.inputs.push_back(make_tensor(shape, t));
    return n;
}

std::string softmax_case(const std::vector<int64_t>& shape, ElemType t, int64_t axis, bool log, const DeviceInfo& dev,
                         int opset = 13, bool races = false) {
    std::mt19937 rng(7);
    const NodeDesc n = softmax_node(shape, t, axis, log, opset);
    const Tolerance tol = log ? tol_for(t, 1e-5, 1e-5) : tol_for(t, 2e-6, 1e-7);
    return check_op(n, {random_tensor(shape, t, rng)}, dev, tol, races);
}

}  // namespace

TEST_CASE("softmax over the last axis matches the reference for ragged row lengths", "[norm][softmax]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    for (int64_t cols : {1, 7, 16, 63, 64, 65, 130, 200, 1000}) {
        for (ElemType t : {ElemType::Float16, ElemType::Float}) {
            INFO("cols " << cols << " dtype " << ref::elem_type_name(t));
            CHECK(softmax_case({5, cols}, t, -1, false, tiny, 13, true) == "");
            CHECK(softmax_case({5, cols}, t, -1, true, tiny) == "");
        }
    }
}

TEST_CASE("softmax bf16 and many rows spread over cores", "[norm][softmax]") {
    const DeviceInfo tiny = device(4, 32 << 10), big = device(48, 192 << 10);
    CHECK(softmax_case({300, 77}, ElemType::Bfloat16, -1, false, tiny) == "");
    CHECK(softmax_case({2000, 33}, ElemType::Float16, 1, false, big) == "");
    CHECK(softmax_case({3, 4000}, ElemType::Float, -1, true, big) == "");
}

TEST_CASE("softmax rows longer than UB run in two passes over chunks", "[norm][softmax]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    CHECK(softmax_case({3, 5000}, ElemType::Float16, -1, false, tiny) == "");
    CHECK(softmax_case({2, 20001}, ElemType::Float, -1, true, tiny) == "");
    CHECK(softmax_case({2, 3, 4111}, ElemType::Bfloat16, 2, false, tiny) == "");
    CHECK(softmax_case({2, 6000}, ElemType::Float, -1, false, tiny) == "");
}

TEST_CASE("softmax over a non-last axis walks strided rows", "[norm][softmax]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    CHECK(softmax_case({2, 3, 4, 5}, ElemType::Float, 1, false, tiny, 13, true) == "");
    CHECK(softmax_case({2, 3, 4, 5}, ElemType::Float16, 0, true, tiny) == "");
    CHECK(softmax_case({3, 50, 300}, ElemType::Float16, 1, false, tiny) == "");
    CHECK(softmax_case({7, 9, 3}, ElemType::Bfloat16, -2, true, tiny) == "");
    CHECK(softmax_case({2, 5, 2000}, ElemType::Float, 1, false, tiny) == "");
}

TEST_CASE("softmax before opset 13 coerces to 2-D at the axis", "[norm][softmax]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    CHECK(softmax_case({2, 3, 4, 5}, ElemType::Float, 1, false, tiny, 11) == "");
    CHECK(softmax_case({2, 3, 4, 5}, ElemType::Float, 0, true, tiny, 11) == "");
    CHECK(softmax_case({2, 3, 4, 5}, ElemType::Float16, 3, false, tiny, 11) == "");
}

TEST_CASE("softmax axis out of range names the attribute", "[norm][softmax]") {
    const NodeDesc n = softmax_node({2, 3}, ElemType::Float, 2, false);
    try {
        make_node_op(n, device(4, 32 << 10));
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("'axis'") != std::string::npos);
    }
    NodeDesc i = softmax_node({2, 3}, ElemType::Int32, -1, false);
    CHECK_THROWS_AS(make_node_op(i, device(4, 32 << 10)), UnsupportedError);
}

namespace {
std::string layer_norm_case(const std::vector<int64_t>& shape, int64_t axis, ElemType t, bool bias, int outs,
                            const DeviceInfo& dev, bool scalar_scale = false, bool races = false) {
    NodeDesc n;
    n.name = "ln";
    n.op_type = "LayerNormalization";
    n.opset = 17;
    n.attrs.set_owner("ln");
    n.attrs.set("axis", ref::Attr::of_int(axis));
    n.attrs.set("epsilon", ref::Attr::of_float(1e-3));
    const size_t a = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis);
    const std::vector<int64_t> norm = scalar_scale ? std::vector<int64_t>{1}
                                                   : std::vector<int64_t>(shape.begin() + static_cast<long>(a), shape.end());
    n.inputs = {make_tensor(shape, t), make_tensor(norm, t)};
    if (bias) n.inputs.push_back(make_tensor(norm, t));
    n.num_outputs = outs;
    std::mt19937 rng(11);
    std::vector<ref::HostTensor> v = {random_tensor(shape, t, rng), random_tensor(norm, t, rng, -2, 2)};
    if (bias) v.push_back(random_tensor(norm, t, rng, -2, 2));
    return check_op(n, v, dev, tol_for(t, 1e-5, 1e-5), races);
}
}  // namespace

TEST_CASE("layer normalization matches the reference", "[norm][layernorm]") {
    const DeviceInfo tiny = device(4, 32 << 10), big = device(48, 192 << 10);
    for (int64_t cols : {1, 5, 64, 100, 129, 768}) {
        INFO("cols " << cols);
        CHECK(layer_norm_case({6, cols}, -1, ElemType::Float16, true, 1, tiny, false, cols == 100) == "");
        CHECK(layer_norm_case({6, cols}, -1, ElemType::Float, false, 3, tiny) == "");
    }
    CHECK(layer_norm_case({2, 3, 4, 5}, 1, ElemType::Float, true, 3, tiny) == "");
    CHECK(layer_norm_case({2, 3, 4, 5}, 0, ElemType::Bfloat16, true, 2, tiny) == "");
    CHECK(layer_norm_case({500, 300}, -1, ElemType::Float16, true, 1, big) == "");
    CHECK(layer_norm_case({9, 70}, -1, ElemType::Float, true, 1, tiny, true) == "");
}

TEST_CASE("layer and instance normalization of rows longer than UB: two passes", "[norm][layernorm]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    CHECK(layer_norm_case({3, 5000}, -1, ElemType::Float16, true, 3, tiny) == "");
    CHECK(layer_norm_case({2, 3, 3001}, 1, ElemType::Float, false, 1, tiny) == "");
    CHECK(layer_norm_case({2, 7000}, -1, ElemType::Bfloat16, true, 1, tiny, true) == "");
    NodeDesc n;
    n.name = "in";
    n.op_type = "InstanceNormalization";
    n.opset = 6;
    n.attrs.set_owner("in");
    n.inputs = {make_tensor({2, 2, 70, 80}, ElemType::Float16), make_tensor({2}, ElemType::Float16),
                make_tensor({2}, ElemType::Float16)};
    std::mt19937 rng(3);
    CHECK(check_op(n, {random_tensor({2, 2, 70, 80}, ElemType::Float16, rng), random_tensor({2}, ElemType::Float16, rng),
                       random_tensor({2}, ElemType::Float16, rng)},
                   tiny, tol_for(ElemType::Float16, 1e-5, 1e-5)) == "");
}

TEST_CASE("instance normalization matches the reference", "[norm][instancenorm]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    for (auto shape : std::vector<std::vector<int64_t>>{{2, 3, 4, 5}, {3, 7, 10}, {1, 2, 33, 17}, {5, 1, 2, 2}}) {
        for (ElemType t : {ElemType::Float, ElemType::Float16}) {
            NodeDesc n;
            n.name = "in";
            n.op_type = "InstanceNormalization";
            n.opset = 6;
            n.attrs.set_owner("in");
            n.attrs.set("epsilon", ref::Attr::of_float(1e-2));
            const int64_t C = shape[1];
            n.inputs = {make_tensor(shape, t), make_tensor({C}, t), make_tensor({C}, t)};
            std::mt19937 rng(3);
            CHECK(check_op(n, {random_tensor(shape, t, rng), random_tensor({C}, t, rng), random_tensor({C}, t, rng)}, tiny,
                           tol_for(t, 1e-5, 1e-5)) == "");
        }
    }
}

TEST_CASE("batch normalization (inference) matches the reference", "[norm][batchnorm]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    for (auto shape : std::vector<std::vector<int64_t>>{{2, 3, 4, 5}, {4, 10}, {3, 7, 33}, {1, 70, 2, 2}, {2, 3000}}) {
        for (ElemType t : {ElemType::Float, ElemType::Float16, ElemType::Bfloat16}) {
            INFO("shape " << ref::shape_str(shape) << " " << ref::elem_type_name(t));
            NodeDesc n;
            n.name = "bn";
            n.op_type = "BatchNormalization";
            n.opset = 15;
            n.attrs.set_owner("bn");
            n.attrs.set("epsilon", ref::Attr::of_float(1e-3));
            const int64_t C = shape[1];
            n.inputs = {make_tensor(shape, t)};
            std::mt19937 rng(5);
            std::vector<ref::HostTensor> v = {random_tensor(shape, t, rng)};
            for (int i = 0; i < 4; ++i) {
                n.inputs.push_back(make_tensor({C}, i < 2 ? t : ElemType::Float));  // mixed parameter types
                v.push_back(random_tensor({C}, n.inputs.back().elem, rng, i == 3 ? 0.5 : -2, 2));
            }
            CHECK(check_op(n, v, tiny, tol_for(t, 1e-5, 1e-5)) == "");
        }
    }
}

TEST_CASE("batch normalization of planes larger than UB works in segments", "[norm][batchnorm]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    for (auto shape : std::vector<std::vector<int64_t>>{{1, 3, 50, 61}, {2, 2, 4100}, {1, 1, 8192}}) {
        for (ElemType t : {ElemType::Float, ElemType::Float16}) {
            INFO("shape " << ref::shape_str(shape) << " " << ref::elem_type_name(t));
            NodeDesc n;
            n.name = "bn";
            n.op_type = "BatchNormalization";
            n.opset = 15;
            n.attrs.set_owner("bn");
            const int64_t C = shape[1];
            n.inputs = {make_tensor(shape, t)};
            std::mt19937 rng(7);
            std::vector<ref::HostTensor> v = {random_tensor(shape, t, rng)};
            for (int i = 0; i < 4; ++i) {
                n.inputs.push_back(make_tensor({C}, t));
                v.push_back(random_tensor({C}, t, rng, i == 3 ? 0.5 : -2, 2));
            }
            // The plane does not fit in this UB: the op must take the segments form, not refuse.
            CHECK(make_node_op(n, tiny)->describe().rfind("segments", 0) == 0);
            CHECK(check_op(n, v, tiny, tol_for(t, 1e-5, 1e-5)) == "");
        }
    }
}

TEST_CASE("batch normalization in training mode is unsupported on the device", "[norm][batchnorm]") {
    NodeDesc n;
    n.name = "bn";
    n.op_type = "BatchNormalization";
    n.opset = 15;
    n.attrs.set("training_mode", ref::Attr::of_int(1));
    for (int i = 0; i < 5; ++i) n.inputs.push_back(make_tensor(i ? std::vector<int64_t>{3} : std::vector<int64_t>{2, 3, 4}, ElemType::Float));
    CHECK_THROWS_AS(make_node_op(n, device(4, 32 << 10)), UnsupportedError);
}

TEST_CASE("batch normalization with batch statistics (BatchNormTraining) matches the reference", "[norm][batchnorm]") {
    // Y, the running statistics and the batch mean and variance (population) over N and the
    // spatial dims; several planes per channel, a plane larger than this UB, [N, C] rows.
    const DeviceInfo tiny = device(4, 32 << 10);
    for (auto shape : std::vector<std::vector<int64_t>>{{2, 3, 5, 7}, {4, 16, 3, 3}, {1, 2, 50, 61}, {6, 5}}) {
        for (ElemType t : {ElemType::Float, ElemType::Float16}) {
            INFO("shape " << ref::shape_str(shape) << " " << ref::elem_type_name(t));
            NodeDesc n;
            n.name = "bn";
            n.op_type = "BatchNormTraining";
            n.attrs.set_owner("bn");
            n.attrs.set("momentum", ref::Attr::of_float(0.75));
            const int64_t C = shape[1];
            n.inputs = {make_tensor(shape, t)};
            std::mt19937 rng(11);
            std::vector<ref::HostTensor> v = {random_tensor(shape, t, rng, 1, 3)};  // mean far from 0
            for (int i = 0; i < 4; ++i) {
                n.inputs.push_back(make_tensor({C}, t));
                v.push_back(random_tensor({C}, t, rng, i == 3 ? 0.5 : -2, 2));
            }
            CHECK(check_op(n, v, tiny, tol_for(t, 1e-5, 1e-5)) == "");
        }
    }
}

TEST_CASE("reductions with fp32_output write an fp32 result from a 2-byte input", "[norm][reduce]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceSumSquare"})
        for (ElemType t : {ElemType::Float16, ElemType::Bfloat16}) {
            INFO(op << " " << ref::elem_type_name(t));
            NodeDesc n;
            n.name = "r";
            n.op_type = op;
            n.opset = 11;
            n.attrs.set_owner("r");
            n.attrs.set("axes", ref::Attr::of_ints({0, 2, 3}));
            n.attrs.set("keepdims", ref::Attr::of_int(0));
            n.attrs.set("fp32_output", ref::Attr::of_int(1));
            n.inputs = {make_tensor({3, 6, 5, 9}, t)};
            CHECK(make_node_op(n, tiny)->outputs()[0].dtype == isa::DType::FP32);
            std::mt19937 rng(3);
            CHECK(check_op(n, {random_tensor({3, 6, 5, 9}, t, rng)}, tiny, tol_for(ElemType::Float, 1e-5, 1e-5)) == "");
        }
}
