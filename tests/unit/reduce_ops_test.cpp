// The Reduce* operators and GlobalAveragePool/GlobalMaxPool as graph-node operators, run without
// the chip model (tests/unit/norm_rig.h) against the host references: every reduction kind,
// axes that are contiguous, split (two passes through the workspace), negative, empty (all, or
// noop), keepdims, rows longer than UB (chunked), columns longer than UB, int32, fp16/bf16/fp32.
#include <catch2/catch.hpp>

#include "norm_rig.h"
#include "runtime/ref/axes.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::normtest;
using ref::ElemType;

namespace {

NodeDesc reduce_node(const std::string& op, const std::vector<int64_t>& shape, ElemType t, std::vector<int64_t> axes,
                     bool keep, int opset, bool noop = false) {
    NodeDesc n;
    n.name = "r";
    n.op_type = op;
    n.opset = opset;
    n.attrs.set_owner("r");
    n.attrs.set("keepdims", ref::Attr::of_int(keep ? 1 : 0));
    if (noop) n.attrs.set("noop_with_empty_axes", ref::Attr::of_int(1));
    n.inputs.push_back(make_tensor(shape, t));
    if (ref::reduce_axes_from_input(op, opset)) {
        ref::HostTensor a(ElemType::Int64, {static_cast<int64_t>(axes.size())});
        for (size_t i = 0; i < axes.size(); ++i) a.data[i] = static_cast<double>(axes[i]);
        n.inputs.push_back(make_tensor(a.shape, ElemType::Int64));
        n.constants = {nullptr, std::make_shared<ref::HostTensor>(a)};
    } else if (!axes.empty()) {
        n.attrs.set("axes", ref::Attr::of_ints(axes));
    }
    return n;
}

std::string reduce_case(const std::string& op, const std::vector<int64_t>& shape, ElemType t, std::vector<int64_t> axes,
                        bool keep = true, int opset = 13, const DeviceInfo& dev = device(4, 32 << 10), bool noop = false) {
    const NodeDesc n = reduce_node(op, shape, t, axes, keep, opset, noop);
    std::mt19937 rng(9);
    // Positive inputs for the logarithmic kinds; products of values near 1 stay in range.
    const bool pos = op == "ReduceLogSum";
    const bool prod = op == "ReduceProd";
    std::vector<ref::HostTensor> v = {random_tensor(shape, t, rng, pos ? 0.1 : prod ? 0.7 : -4, pos ? 4 : prod ? 1.3 : 4)};
    if (n.inputs.size() > 1) v.push_back(*n.constants[1]);
    const double ulp = t == ElemType::Float16 ? 1.0 / 1024 : t == ElemType::Bfloat16 ? 1.0 / 128 : 0.0;
    // fp32 sums of up to a few thousand terms: relative error ~ log2(n) ulps of the partial sums.
    return check_op(n, v, dev, {1e-4, ulp + 1e-5});
}

}  // namespace

TEST_CASE("every reduction kind over the last axis and over a middle axis", "[norm][reduce]") {
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
        INFO(op);
        CHECK(reduce_case(op, {3, 4, 70}, ElemType::Float, {-1}) == "");
        CHECK(reduce_case(op, {3, 40, 5}, ElemType::Float16, {1}, false) == "");
        CHECK(reduce_case(op, {2, 3, 4, 5}, ElemType::Float, {0, 2}) == "");
    }
}

TEST_CASE("reductions: all axes, noop, opset 11 attribute form, long rows and columns", "[norm][reduce]") {
    CHECK(reduce_case("ReduceSum", {3, 2, 2}, ElemType::Float, {}, true, 13) == "");
    CHECK(reduce_case("ReduceSum", {3, 2, 2}, ElemType::Float, {}, true, 13, device(4, 32 << 10), true) == "");
    CHECK(reduce_case("ReduceMean", {3, 2, 2}, ElemType::Float, {}, false, 11) == "");
    CHECK(reduce_case("ReduceMax", {2, 3, 4, 5}, ElemType::Bfloat16, {-3, -1}, true, 11) == "");
    CHECK(reduce_case("ReduceSum", {2, 20000}, ElemType::Float, {1}) == "");
    CHECK(reduce_case("ReduceMax", {2, 20000}, ElemType::Float16, {1}) == "");
    CHECK(reduce_case("ReduceProd", {3, 9000}, ElemType::Float, {1}, true, 13) == "");
    CHECK(reduce_case("ReduceSum", {3000, 40}, ElemType::Float, {0}) == "");
    CHECK(reduce_case("ReduceL2", {2, 3, 4, 5}, ElemType::Float, {1, 3}, false) == "");
    CHECK(reduce_case("ReduceSum", {2, 1, 4, 1}, ElemType::Float, {1, 3}, false) == "");
}

TEST_CASE("integer reductions stay in int32", "[norm][reduce]") {
    CHECK(reduce_case("ReduceSum", {3, 4, 70}, ElemType::Int32, {-1}) == "");
    CHECK(reduce_case("ReduceMax", {3, 40, 5}, ElemType::Int64, {1}) == "");
    CHECK(reduce_case("ReduceMin", {2, 3, 4, 5}, ElemType::Int32, {0, 2}) == "");
    CHECK_THROWS_AS(make_node_op(reduce_node("ReduceMean", {2, 3}, ElemType::Int32, {1}, true, 13), device(4, 32 << 10)),
                    UnsupportedError);
}

TEST_CASE("reduction axis out of range names 'axes'", "[norm][reduce]") {
    try {
        make_node_op(reduce_node("ReduceSum", {2, 3}, ElemType::Float, {2}, true, 11), device(4, 32 << 10));
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("'axes'") != std::string::npos);
    }
}

TEST_CASE("ReduceSum at opset 13 carrying the attribute 'axes' is refused, not reduced over every axis", "[norm][reduce]") {
    // From opset 13 ReduceSum reads its axes from input 1 only: an attribute left on the node
    // would be ignored and the node would reduce to a scalar. The kernel and the host reference
    // both refuse it, naming the node.
    NodeDesc n = reduce_node("ReduceSum", {2, 3}, ElemType::Float, {}, true, 13);
    n.attrs.set("axes", ref::Attr::of_ints({1}));
    try {
        make_node_op(n, device(4, 32 << 10));
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("'r'") != std::string::npos);
        CHECK(std::string(e.what()).find("'axes'") != std::string::npos);
    }
    ref::HostTensor x(ElemType::Float, {2, 3});
    ref::RefNode rn{"r", "ReduceSum", 13, n.attrs, 1};
    CHECK_THROWS_AS(ref::run_ref(rn, {&x}), InputError);
}

TEST_CASE("global pools are one reduction pass over the spatial dims", "[norm][pool]") {
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        for (auto shape : std::vector<std::vector<int64_t>>{{2, 3, 4, 5}, {1, 64, 7, 7}, {2, 3, 130}, {1, 2, 120, 120}}) {
            NodeDesc n;
            n.name = "g";
            n.op_type = op;
            n.opset = 1;
            n.inputs.push_back(make_tensor(shape, ElemType::Float16));
            std::mt19937 rng(2);
            CHECK(check_op(n, {random_tensor(shape, ElemType::Float16, rng)}, device(4, 32 << 10),
                           {1e-4, 1.0 / 1024 + 1e-5}) == "");
        }
    }
}

TEST_CASE("argmax and argmin: axes, keepdims, ties with select_last_index", "[norm][argmax]") {
    for (const char* op : {"ArgMax", "ArgMin"}) {
        for (int last = 0; last < 2; ++last) {
            for (auto [shape, axis] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
                     {{3, 70}, 1}, {{3, 4, 5}, 1}, {{6, 300}, -1}, {{40, 3}, 0}, {{2, 3, 4, 5}, 2}}) {
                INFO(op << " last " << last << " " << ref::shape_str(shape) << " axis " << axis);
                NodeDesc n;
                n.name = "a";
                n.op_type = op;
                n.opset = 13;
                n.attrs.set_owner("a");
                n.attrs.set("axis", ref::Attr::of_int(axis));
                n.attrs.set("keepdims", ref::Attr::of_int(last));
                n.attrs.set("select_last_index", ref::Attr::of_int(last));
                n.inputs.push_back(make_tensor(shape, ElemType::Float16));
                std::mt19937 rng(4);
                // Few distinct values: many ties.
                ref::HostTensor x = random_tensor(shape, ElemType::Float16, rng, -3, 3);
                for (double& v : x.data) v = std::round(v);
                CHECK(check_op(n, {x}, device(4, 32 << 10), {0, 0}) == "");
            }
        }
    }
}
