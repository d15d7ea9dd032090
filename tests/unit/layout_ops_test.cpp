// Operators on NC1HWC0 tensors, as the graph's layout pass hands them over, without the chip
// model (every launch on functional memory with the sink's flag and race checks): a Conv reading
// and writing NC1HWC0 (the cube taking img2col(X) x W^T), TransData ND <-> NC1HWC0, pooling and
// global pooling, inference BatchNormalization, Concat along the channels and elementwise ops.
// Outputs match the host reference and the padding channels of a partial C0 block hold zeros.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "node_sink_run.h"
#include "runtime/ops/standalone.h"
#include "runtime/ops/transdata.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;

namespace {

DeviceInfo tiny_split() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4;
    d.l1_bytes = 128 << 10, d.l0a_bytes = d.l0b_bytes = 16 << 10;
    d.l0c_bytes = 32 << 10, d.ub_bytes = 32 << 10;
    d.event_ids = 8;
    return d;
}

TensorRef in_format(const std::vector<int64_t>& shape, ref::ElemType t, Format f) {
    TensorRef r = make_tensor(shape, t);
    r.format = f;
    return r;
}

std::vector<ref::HostTensor> random_inputs(const NodeDesc& node, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<ref::HostTensor> in;
    for (const auto& t : node.inputs) {
        ref::HostTensor h(t.elem, t.shape);
        for (double& v : h.data) v = d(rng);
        ref::round_to_type(h);
        in.push_back(std::move(h));
    }
    return in;
}

std::vector<ref::HostTensor> reference(const NodeDesc& node, const std::vector<ref::HostTensor>& in) {
    std::vector<const ref::HostTensor*> ptrs;
    for (const auto& h : in) ptrs.push_back(&h);
    return ref::run_ref(ref::RefNode{node.name, node.op_type, 17, node.attrs}, ptrs);
}

// Every byte of the padding channels (c >= C in the last C0 block) of an NC1HWC0 tensor is zero.
bool padding_zero(const std::vector<uint8_t>& raw, const TensorRef& t) {
    const uint64_t es = isa::dtype_size(t.dtype), c0 = 32 / es, c = static_cast<uint64_t>(t.shape[1]);
    const uint64_t c1 = (c + c0 - 1) / c0;
    uint64_t hw = 1;
    for (size_t i = 2; i < t.shape.size(); ++i) hw *= static_cast<uint64_t>(t.shape[i]);
    for (uint64_t n = 0; n < static_cast<uint64_t>(t.shape[0]); ++n)
        for (uint64_t p = 0; p < hw; ++p)
            for (uint64_t ch = c; ch < c1 * c0; ++ch) {
                const uint64_t at = (((n * c1 + ch / c0) * hw + p) * c0 + ch % c0) * es;
                for (uint64_t b = 0; b < es; ++b)
                    if (raw.at(at + b) != 0) return false;
            }
    return true;
}

ref::Attr ints(std::vector<int64_t> v) { return ref::Attr::of_ints(std::move(v)); }

}  // namespace

TEST_CASE(
    "layout ops: a Conv reading and writing NC1HWC0 matches the reference, no conversion, zero padding") {
    struct Case {
        std::vector<int64_t> x, w;
        ref::ElemType t;
        std::vector<std::pair<std::string, ref::Attr>> attrs;
    };
    const std::vector<Case> cases = {
        // fp16: 24 output channels = one full and one half C0 block of 16 (8 padding channels).
        {{1, 20, 9, 11},
         {24, 20, 3, 3},
         ref::ElemType::Float16,
         {{"pads", ints({1, 1, 1, 1})}, {"activation", ref::Attr::of_string("Relu")}}},
        // fp32 (C0 = 8): 12 output channels, 4 padding; stride 2, uneven pads, two images.
        {{2, 5, 8, 7},
         {12, 5, 3, 3},
         ref::ElemType::Float,
         {{"strides", ints({2, 2})}, {"pads", ints({1, 0, 1, 1})}}},
        // Clip(0, 0.5) (ReLU6-like): the FixPipe's ReLU, then min(y, 0.5) in place on NC1HWC0;
        // 20 output channels (12 padding, kept zero).
        {{1, 16, 6, 7},
         {20, 16, 3, 3},
         ref::ElemType::Float16,
         {{"pads", ints({1, 1, 1, 1})},
          {"activation", ref::Attr::of_string("Clip")},
          {"activation_alpha", ref::Attr::of_float(0.0)},
          {"activation_beta", ref::Attr::of_float(0.5)}}},
        // Two groups of 16 input and 16 output channels (whole C0 blocks of the packed tensor,
        // as the depthwise pass makes them), Clip(0, 0.5).
        {{1, 32, 6, 5},
         {32, 16, 3, 3},
         ref::ElemType::Float16,
         {{"pads", ints({1, 1, 1, 1})},
          {"group", ref::Attr::of_int(2)},
          {"activation", ref::Attr::of_string("Clip")},
          {"activation_alpha", ref::Attr::of_float(0.0)},
          {"activation_beta", ref::Attr::of_float(0.5)}}},
    };
    // Coupled parts (no FixPipe to GM) drain through UB: the same results, the MTE3 writing the
    // channel blocks.
    DeviceInfo coupled = tiny_split();
    coupled.arch = "coupled";
    coupled.vector_cores = coupled.cube_cores;
    coupled.event_ids = 4;
    const DeviceInfo dev = tiny_split();
    for (const DeviceInfo& part : {dev, coupled})
    for (const Case& c : cases) {
        INFO("arch " << part.arch);
        NodeDesc node;
        node.name = "conv0";
        node.op_type = "Conv";
        node.attrs.set_owner(node.name);
        for (const auto& [k, v] : c.attrs) node.attrs.set(k, v);
        node.attrs.set("y_format", ref::Attr::of_string("NC1HWC0"));
        node.inputs = {in_format(c.x, c.t, Format::NC1HWC0), in_format(c.w, c.t, Format::NC1HWC0),
                       make_tensor({c.w[0]}, c.t)};
        const auto in = random_inputs(node, 7);
        const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(node, in, part);
        INFO("x " << ref::shape_str(c.x) << " w " << ref::shape_str(c.w));
        for (const auto& e : run.errors) FAIL_CHECK(e);
        // No layout conversion: the cube kernel alone (and the in-place Clip after it).
        const bool clip = node.attrs.get_string("activation", "") == "Clip";
        CHECK(run.kernels.size() == (clip ? 2u : 1u));
        const auto want = reference(node, in);
        const double taps = double(c.w[1] * c.w[2] * c.w[3]);
        Tolerance tol;
        tol.atol = 2.0 * std::ceil(taps / 16) * 0x1p-24 * taps + 0x1p-24;
        tol.rtol = c.t == ref::ElemType::Float16 ? 0x1p-10 : 0x1p-23;
        const CheckResult r = compare_tensors(run.outs.at(0), want.at(0), tol);
        INFO("max abs err " << r.max_abs_err);
        CHECK(r.passed);
        const TensorRef y = make_node_op(node, part)->outputs().at(0);
        CHECK(y.format == Format::NC1HWC0);
        CHECK(padding_zero(run.raw.at(0), y));
    }
    // Groups that do not fill whole C0 blocks: refused, naming the node.
    NodeDesc node;
    node.name = "conv1";
    node.op_type = "Conv";
    node.attrs.set_owner(node.name);
    node.attrs.set("y_format", ref::Attr::of_string("NC1HWC0"));
    node.inputs = {make_tensor({1, 16, 6, 6}, ref::ElemType::Float16),
                   make_tensor({16, 16, 1, 1}, ref::ElemType::Float16)};
    node.attrs.set("group", ref::Attr::of_int(2));
    node.inputs[1].shape = {16, 8, 1, 1};
    CHECK_THROWS_WITH(make_node_op(node, dev), Catch::Contains("one group"));
}

TEST_CASE("layout ops: TransData ND <-> NC1HWC0 on the device is exact (fp16, fp32, partial C0 block)") {
    const DeviceInfo dev = tiny_split();
    for (ref::ElemType t : {ref::ElemType::Float16, ref::ElemType::Float})
        for (const std::vector<int64_t>& shape :
             {std::vector<int64_t>{2, 20, 5, 7}, std::vector<int64_t>{1, 3, 1, 1},
              std::vector<int64_t>{1, 40, 33, 30}}) {
            INFO(ref::shape_str(shape) << " " << ref::elem_type_name(t));
            for (Format src : {Format::ND, Format::NC1HWC0}) {
                NodeDesc node;
                node.name = "td";
                node.op_type = "TransData";
                node.attrs.set_owner(node.name);
                node.attrs.set("dst_format", ref::Attr::of_string(src == Format::ND ? "NC1HWC0" : "ND"));
                node.inputs = {in_format(shape, t, src)};
                const auto in = random_inputs(node, 3);
                const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(node, in, dev);
                for (const auto& e : run.errors) FAIL_CHECK(e);
                CHECK(run.outs.at(0).data == in.at(0).data);
                if (src == Format::ND)
                    CHECK(padding_zero(run.raw.at(0), in_format(shape, t, Format::NC1HWC0)));
            }
        }
}

TEST_CASE("layout ops: pooling, BatchNormalization, Concat, elementwise ops on NC1HWC0 match the reference") {
    const DeviceInfo dev = tiny_split();
    const ref::ElemType h = ref::ElemType::Float16;
    std::vector<NodeDesc> nodes;
    NodeDesc mp;
    mp.op_type = "MaxPool";
    mp.attrs.set_owner("maxpool");
    mp.attrs.set("kernel_shape", ints({3, 3}));
    mp.attrs.set("strides", ints({2, 2}));
    mp.attrs.set("pads", ints({1, 1, 1, 1}));
    mp.inputs = {in_format({2, 20, 9, 9}, h, Format::NC1HWC0)};
    nodes.push_back(mp);
    NodeDesc ap = mp;
    ap.op_type = "AveragePool";
    ap.attrs.set("count_include_pad", ref::Attr::of_int(0));
    ap.inputs = {in_format({1, 20, 8, 7}, ref::ElemType::Float, Format::NC1HWC0)};
    nodes.push_back(ap);
    NodeDesc add;
    add.op_type = "Add";
    add.inputs = {in_format({1, 24, 5, 6}, h, Format::NC1HWC0), in_format({1, 24, 5, 6}, h, Format::NC1HWC0)};
    nodes.push_back(add);
    NodeDesc relu;
    relu.op_type = "Relu";
    relu.inputs = {in_format({1, 24, 5, 6}, h, Format::NC1HWC0)};
    nodes.push_back(relu);
    NodeDesc cat;  // channels of whole C0 blocks, then a partial last block (its padding kept)
    cat.op_type = "Concat";
    cat.attrs.set_owner("concat");
    cat.attrs.set("axis", ref::Attr::of_int(1));
    cat.inputs = {in_format({2, 16, 3, 5}, h, Format::NC1HWC0), in_format({2, 32, 3, 5}, h, Format::NC1HWC0),
                  in_format({2, 12, 3, 5}, h, Format::NC1HWC0)};
    nodes.push_back(cat);
    NodeDesc gap;  // global pooling of a partial last C0 block: 20 channels
    gap.op_type = "GlobalAveragePool";
    gap.inputs = {in_format({2, 20, 7, 7}, h, Format::NC1HWC0)};
    nodes.push_back(gap);
    NodeDesc gmp;
    gmp.op_type = "GlobalMaxPool";
    gmp.inputs = {in_format({1, 20, 5, 3}, ref::ElemType::Float, Format::NC1HWC0)};
    nodes.push_back(gmp);
    for (ref::ElemType t : {h, ref::ElemType::Float}) {  // inference BatchNormalization, 20 channels
        NodeDesc bn;
        bn.op_type = "BatchNormalization";
        bn.inputs = {in_format({2, 20, 5, 3}, t, Format::NC1HWC0)};
        for (int i = 0; i < 4; ++i) bn.inputs.push_back(make_tensor({20}, ref::ElemType::Float));
        nodes.push_back(bn);
    }
    for (NodeDesc& node : nodes) {
        node.name = node.op_type;
        node.attrs.set_owner(node.name);
        INFO(node.op_type << " " << ref::elem_type_name(node.inputs[0].elem));
        auto in = random_inputs(node, 11);
        if (node.op_type == "BatchNormalization")
            for (double& v : in[4].data) v = std::fabs(v) + 0.25;  // variances
        const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(node, in, dev);
        for (const auto& e : run.errors) FAIL_CHECK(e);
        const auto want = reference(node, in);
        Tolerance tol;
        // MaxPool, GlobalMaxPool, Relu exact; Add one fp16 rounding; AveragePool's fp32 sum of 4
        // taps and division, GlobalAveragePool's of 49 pixels; BatchNormalization's fp32
        // x * a + b (rsqrt to fp32) and the output rounding.
        const bool fp32_math = node.op_type == "AveragePool" || node.op_type == "BatchNormalization" ||
                               node.op_type == "GlobalAveragePool";
        tol.atol = fp32_math ? 0x1p-20 : 0;
        tol.rtol = fp32_math && node.inputs[0].elem == ref::ElemType::Float ? 0x1p-20 : 0x1p-11;
        const CheckResult r = compare_tensors(run.outs.at(0), want.at(0), tol);
        INFO("max abs err " << r.max_abs_err);
        CHECK(r.passed);
        const TensorRef y = make_node_op(node, dev)->outputs().at(0);
        CHECK(y.format == Format::NC1HWC0);
        CHECK(padding_zero(run.raw.at(0), y));
    }
    // A Concat whose first input ends in a partial C0 block is refused (it would need a shift).
    std::swap(cat.inputs[0], cat.inputs[2]);
    CHECK_THROWS_WITH(make_node_op(cat, dev), Catch::Contains("not whole C0 blocks"));
    // An operand of another shape (a per-channel broadcast) is refused: the layout keeps ND there.
    add.inputs[1] = make_tensor({24, 1, 1}, h);
    CHECK_THROWS_WITH(make_node_op(add, dev), Catch::Contains("only NC1HWC0 of the output's shape"));
}
