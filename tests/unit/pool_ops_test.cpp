// MaxPool and AveragePool as graph-node operators, run without the chip model
// (tests/unit/norm_rig.h) against the host references: 1-D/2-D/3-D, strides, pads, dilations,
// ceil mode, SAME/VALID auto_pad, count_include_pad, uint8, planes too large for UB (boxes),
// and the ONNX backend examples' shapes.
#include <catch2/catch.hpp>

#include "norm_rig.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::normtest;
using ref::ElemType;

namespace {

struct PoolCase {
    std::vector<int64_t> shape, kernel, strides, pads, dil;
    bool ceil = false;
    std::string auto_pad = "NOTSET";
    bool include_pad = false;
};

std::string pool_case(const std::string& op, const PoolCase& c, ElemType t, const DeviceInfo& dev = device(4, 32 << 10)) {
    NodeDesc n;
    n.name = "p";
    n.op_type = op;
    n.opset = op == "MaxPool" ? 12 : 11;
    n.attrs.set_owner("p");
    n.attrs.set("kernel_shape", ref::Attr::of_ints(c.kernel));
    if (!c.strides.empty()) n.attrs.set("strides", ref::Attr::of_ints(c.strides));
    if (!c.pads.empty()) n.attrs.set("pads", ref::Attr::of_ints(c.pads));
    if (!c.dil.empty()) n.attrs.set("dilations", ref::Attr::of_ints(c.dil));
    if (c.ceil) n.attrs.set("ceil_mode", ref::Attr::of_int(1));
    if (c.auto_pad != "NOTSET") n.attrs.set("auto_pad", ref::Attr::of_string(c.auto_pad));
    if (c.include_pad) n.attrs.set("count_include_pad", ref::Attr::of_int(1));
    n.inputs.push_back(make_tensor(c.shape, t));
    std::mt19937 rng(8);
    const bool u8 = t == ElemType::Uint8;
    const double ulp = t == ElemType::Float16 ? 1.0 / 1024 : t == ElemType::Bfloat16 ? 1.0 / 128 : 0.0;
    return check_op(n, {random_tensor(c.shape, t, rng, u8 ? 0 : -4, u8 ? 25 : 4)}, dev, {1e-6, ulp + 1e-6});
}

}  // namespace

TEST_CASE("max and average pooling match the reference", "[norm][pool]") {
    const std::vector<PoolCase> cases = {
        {{1, 3, 32}, {2}, {}, {}, {}},                                   // 1-D default
        {{2, 3, 8, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},                // ResNet-style
        {{1, 1, 4, 4}, {3, 3}, {2, 2}, {}, {}, true},                    // ceil mode
        {{1, 2, 7, 9}, {2, 3}, {1, 2}, {0, 1, 1, 0}, {}},                // asymmetric pads
        {{1, 1, 5, 5}, {3, 3}, {}, {}, {}, false, "SAME_UPPER"},
        {{1, 1, 5, 6}, {2, 3}, {2, 2}, {}, {}, false, "SAME_LOWER"},
        {{1, 1, 6, 6}, {3, 3}, {}, {}, {}, false, "VALID"},
        {{1, 3, 28, 28}, {3, 3}, {}, {2, 2, 2, 2}, {}, false, "NOTSET", true},
        {{2, 3, 4, 4, 4}, {2, 2, 2}, {1, 2, 1}, {}, {}},                 // 3-D
        {{1, 2, 60, 70}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}},              // plane too large: boxes
    };
    for (const char* op : {"MaxPool", "AveragePool"}) {
        for (size_t i = 0; i < cases.size(); ++i) {
            INFO(op << " case " << i);
            CHECK(pool_case(op, cases[i], ElemType::Float) == "");
            CHECK(pool_case(op, cases[i], ElemType::Float16) == "");
        }
    }
}

TEST_CASE("max pooling with dilation, long 1-D rows and uint8", "[norm][pool]") {
    CHECK(pool_case("MaxPool", {{1, 1, 4, 4}, {2, 2}, {1, 1}, {}, {2, 2}}, ElemType::Float) == "");
    CHECK(pool_case("MaxPool", {{1, 1, 3000}, {20}, {10}, {10, 10}, {5}}, ElemType::Float) == "");
    CHECK(pool_case("MaxPool", {{1, 3, 5, 5}, {2, 2}, {}, {}, {}}, ElemType::Uint8) == "");
    CHECK(pool_case("AveragePool", {{1, 2, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, "NOTSET", true},
                    ElemType::Bfloat16) == "");
}

TEST_CASE("max pooling with the Indices output, row- and column-major", "[norm][pool]") {
    for (int order = 0; order < 2; ++order) {
        for (auto [shape, pads] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
                 {{2, 3, 9, 7}, {1, 1, 1, 1}}, {{1, 2, 5, 5}, {0, 0, 0, 0}}}) {
            NodeDesc n;
            n.name = "p";
            n.op_type = "MaxPool";
            n.opset = 12;
            n.attrs.set_owner("p");
            n.attrs.set("kernel_shape", ref::Attr::of_ints({3, 2}));
            n.attrs.set("strides", ref::Attr::of_ints({2, 1}));
            n.attrs.set("pads", ref::Attr::of_ints(pads));
            n.attrs.set("storage_order", ref::Attr::of_int(order));
            n.inputs.push_back(make_tensor(shape, ElemType::Float));
            n.num_outputs = 2;
            std::mt19937 rng(6);
            CHECK(check_op(n, {random_tensor(shape, ElemType::Float, rng)}, device(4, 32 << 10), {0, 0}) == "");
        }
    }
}
