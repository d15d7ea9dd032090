// Data-movement operators without the chip model: every op (and each of its ONNX attribute or
// input forms) run block by block on a functional memory against the host reference, with
// ragged shapes, 16- and 32-bit types and strided views (transposes that move the last axis,
// negative slice steps, reflected pads).
#include <catch2/catch.hpp>

#include "op_rig.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::test;
using ref::ElemType;

namespace {

std::shared_ptr<ref::HostTensor> ints(const std::vector<int64_t>& v) {
    auto t = std::make_shared<ref::HostTensor>(ElemType::Int64, std::vector<int64_t>{static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t->data[i] = static_cast<double>(v[i]);
    return t;
}

// Runs n with random data for input 0 (and any non-constant inputs) and the given constants.
RigResult run(NodeDesc n, const std::map<size_t, std::shared_ptr<ref::HostTensor>>& consts, uint32_t seed = 1,
              const DeviceInfo& dev = tiny_dev()) {
    std::mt19937 rng(seed);
    n.constants.resize(n.inputs.size());
    std::vector<ref::HostTensor> vals;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        auto it = consts.find(i);
        if (it != consts.end()) {
            n.constants[i] = it->second;
            n.inputs[i].shape = it->second->shape;
            vals.push_back(*it->second);
        } else {
            vals.push_back(random_tensor(n.inputs[i].shape, n.inputs[i].elem, rng));
        }
    }
    return run_node(n, vals, dev, {0, 0});
}

NodeDesc with_attr(NodeDesc n, const std::string& k, ref::Attr a) {
    n.attrs.set(k, std::move(a));
    return n;
}

}  // namespace

TEST_CASE("mv: Transpose, every permutation and a strided last axis") {
    const std::vector<std::vector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (const auto& p : perms)
        for (ElemType t : {ElemType::Float, ElemType::Float16}) {
            const RigResult r = run(with_attr(node("Transpose", {{{2, 3, 37}, t}}), "perm", ref::Attr::of_ints(p)), {});
            INFO(ref::shape_str(p) << " " << ref::elem_type_name(t) << ": " << r.why << " | " << r.describe);
            CHECK(r.passed);
        }
    const RigResult d = run(node("Transpose", {{{4, 5, 6}, ElemType::Int32}}), {});  // default: reversed
    INFO(d.why);
    CHECK(d.passed);
}

TEST_CASE("mv: Concat and Split along every axis") {
    for (int64_t axis : {0, 1, -1}) {
        NodeDesc n = node("Concat", {{{3, 5, 7}, ElemType::Float16}, {{3, 5, 7}, ElemType::Float16}, {{3, 5, 7}, ElemType::Float16}});
        n.inputs[1].shape[static_cast<size_t>(axis < 0 ? 2 : axis)] = 2;
        n.attrs.set("axis", ref::Attr::of_int(axis));
        const RigResult r = run(n, {});
        INFO("concat axis " << axis << ": " << r.why);
        CHECK(r.passed);
    }
    {
        NodeDesc n = with_attr(node("Split", {{{5, 6}, ElemType::Float}}), "axis", ref::Attr::of_int(1));
        n.attrs.set("num_outputs", ref::Attr::of_int(3));
        const RigResult r = run(n, {});
        CHECK(r.passed);
        CHECK(r.out.size() == 3);
    }
    {
        NodeDesc n = node("Split", {{{7, 3}, ElemType::Int32}, {{2}, ElemType::Int64}});
        const RigResult r = run(n, {{1, ints({3, 4})}});
        CHECK(r.passed);
        REQUIRE(r.out.size() == 2);
        CHECK(r.out[1].shape == std::vector<int64_t>{4, 3});
    }
    {  // opset 11: sizes as an attribute
        NodeDesc n = with_attr(node("Split", {{{9}, ElemType::Float}}, 11), "split", ref::Attr::of_ints({2, 7}));
        CHECK(run(n, {}).passed);
    }
}

TEST_CASE("mv: Slice with steps, negative steps, clamping and default axes") {
    struct S {
        std::vector<int64_t> starts, ends, axes, steps;
    };
    const std::vector<S> cases = {{{0, 0}, {3, 10}, {0, 1}, {1, 1}},      {{1}, {1000}, {1}, {1}},  {{-1}, {-1000}, {2}, {-1}},
                                  {{20, 10, 4}, {0, 0, 1}, {0, 1, 2}, {-1, -3, -2}}, {{0, 0, 3}, {20, 10, 4}, {}, {}},
                                  {{1000}, {1000}, {1}, {1}}};
    for (const S& s : cases) {
        NodeDesc n = node("Slice", {{{20, 10, 5}, ElemType::Float}, {{1}, ElemType::Int64}, {{1}, ElemType::Int64},
                                    {{1}, ElemType::Int64}, {{1}, ElemType::Int64}},
                          13);
        std::map<size_t, std::shared_ptr<ref::HostTensor>> c = {{1, ints(s.starts)}, {2, ints(s.ends)}};
        if (!s.axes.empty()) c[3] = ints(s.axes);
        else n.inputs[3].present = false;
        if (!s.steps.empty()) c[4] = ints(s.steps);
        else n.inputs[4].present = false;
        const RigResult r = run(n, c);
        INFO(ref::shape_str(s.starts) << ref::shape_str(s.ends) << ref::shape_str(s.steps) << ": " << r.why << " | " << r.describe);
        CHECK(r.passed);
    }
}

TEST_CASE("mv: Gather with constant and run-time indices") {
    for (int64_t axis : {0, 1, 2}) {
        NodeDesc n = with_attr(node("Gather", {{{5, 4, 6}, ElemType::Float}, {{4}, ElemType::Int64}}), "axis", ref::Attr::of_int(axis));
        auto idx = ints({1, 2, -1, 0});
        const RigResult c = run(n, {{1, idx}});  // constant: copy jobs
        INFO("constant, axis " << axis << ": " << c.why << " | " << c.describe);
        CHECK(c.passed);
        std::mt19937 rng(2);
        std::vector<ref::HostTensor> vals = {random_tensor({5, 4, 6}, ElemType::Float, rng), *idx};
        const RigResult r = run_node(n, vals, tiny_dev(), {0, 0});  // run time: vgather
        INFO("axis " << axis << ": " << r.why << " | " << r.describe);
        CHECK(r.passed);
    }
    {  // a table larger than one UB chunk on tiny (32 KiB): chunks and selects
        NodeDesc n = node("Gather", {{{3000, 8}, ElemType::Float16}, {{2, 5}, ElemType::Int32}});
        std::mt19937 rng(4);
        ref::HostTensor idx(ElemType::Int32, {2, 5});
        for (size_t i = 0; i < idx.data.size(); ++i) idx.data[i] = static_cast<double>((i * 677) % 3000) - (i % 3 ? 0 : 3000);
        const RigResult r = run_node(n, {random_tensor({3000, 8}, ElemType::Float16, rng), idx}, tiny_dev(), {0, 0});
        INFO(r.why << " | " << r.describe);
        CHECK(r.passed);
        CHECK(r.describe.find("chunk") != std::string::npos);
    }
}

TEST_CASE("mv: Pad in every mode, with crops") {
    for (const char* mode : {"constant", "reflect", "edge", "wrap"})
        for (ElemType t : {ElemType::Float, ElemType::Int32, ElemType::Float16}) {
            NodeDesc n = with_attr(node("Pad", {{{1, 3, 4, 5}, t}, {{8}, ElemType::Int64}, {{}, t}}, 13), "mode",
                                   ref::Attr::of_string(mode));
            auto value = std::make_shared<ref::HostTensor>(t, std::vector<int64_t>{});
            value->data[0] = 2;
            const RigResult r = run(n, {{1, ints({0, 0, 1, 3, 0, 1, 2, 2})}, {2, value}});
            INFO(mode << " " << ref::elem_type_name(t) << ": " << r.why);
            CHECK(r.passed);
        }
    NodeDesc crop = node("Pad", {{{4, 6}, ElemType::Float}, {{4}, ElemType::Int64}}, 13);
    crop.inputs.push_back(make_tensor({}, ElemType::Float));
    crop.inputs[2].present = false;
    CHECK(run(crop, {{1, ints({-1, 2, 1, -3})}}).passed);
    NodeDesc old = with_attr(node("Pad", {{{2, 3}, ElemType::Float}}, 2), "pads", ref::Attr::of_ints({1, 0, 0, 2}));
    old.attrs.set("value", ref::Attr::of_float(-1.5));
    CHECK(run(old, {}).passed);
}

TEST_CASE("mv: Expand, Tile and the reshape family") {
    CHECK(run(node("Expand", {{{3, 1}, ElemType::Float}, {{3}, ElemType::Int64}}), {{1, ints({2, 1, 6})}}).passed);
    CHECK(run(node("Expand", {{{1, 4}, ElemType::Float16}, {{2}, ElemType::Int64}}), {{1, ints({3, 1})}}).passed);
    CHECK(run(node("Tile", {{{2, 3, 4, 5}, ElemType::Float}, {{4}, ElemType::Int64}}), {{1, ints({7, 6, 4, 2})}}).passed);
    CHECK(run(node("Tile", {{{2, 2}, ElemType::Int32}, {{2}, ElemType::Int64}}), {{1, ints({2, 2})}}).passed);
    const DeviceInfo d = tiny_dev();
    {
        NodeDesc n = node("Reshape", {{{2, 3, 4}, ElemType::Float}, {{3}, ElemType::Int64}});
        n.constants = {nullptr, ints({4, 0, -1})};
        auto op = make_node_op(n, d);
        CHECK(op->view_of(0) == 0);
        CHECK(op->outputs()[0].shape == std::vector<int64_t>{4, 3, 2});
        CHECK(op->launches(n.inputs, op->outputs(), 0).empty());
    }
    CHECK(run(with_attr(node("Flatten", {{{2, 3, 4, 5}, ElemType::Float}}), "axis", ref::Attr::of_int(-2)), {}).passed);
    CHECK(run(node("Squeeze", {{{1, 3, 1, 5}, ElemType::Float}, {{1}, ElemType::Int64}}), {{1, ints({-2})}}).passed);
    CHECK(run(with_attr(node("Unsqueeze", {{{3, 4, 5}, ElemType::Float}}, 11), "axes", ref::Attr::of_ints({2, 4, 5})), {}).passed);
    {  // a strided input is materialised
        NodeDesc n = node("Flatten", {{{3, 4}, ElemType::Float}});
        n.inputs[0].strides = {1, 3};  // a transposed view
        std::mt19937 rng(9);
        auto op = make_node_op(n, d);
        CHECK(op->view_of(0) == -1);
    }
    CHECK_THROWS_WITH(make_node_op(with_attr(node("Transpose", {{{2, 3}, ElemType::Float}}), "perm", ref::Attr::of_ints({0, 0})), d),
                      Catch::Contains("repeats axis"));
    CHECK_THROWS_WITH(make_node_op(with_attr(node("Concat", {{{2, 3}, ElemType::Float}}), "axis", ref::Attr::of_int(2)), d),
                      Catch::Contains("out of range"));
}
