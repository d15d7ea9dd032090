// The fused BatchNormalization training kernels on NC1HWC0 tensors (runtime/ops/norm/
// bn_train_kernel.h): the forward BatchNormTraining and the backward BatchNormGradReduce /
// BatchNormGradApply, each run without the chip model (every block on a functional sink with its
// flag and race checks) against the host reference, over tilings that pack several planes per
// tile, split a plane into chunks, and spread a channel block's rows over several items. Also
// the passes they make over memory, from the copies they issue: the statistics read X once, the
// apply reads X once and writes Y once; the backward's reduction reads X and dY once each, its
// apply those two and writes dX once.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "node_sink_run.h"
#include "runtime/ops/norm/bn_train_kernel.h"
#include "runtime/ops/standalone.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;

namespace {

DeviceInfo bn_device(uint64_t ub) {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = ub;
    d.event_ids = 4;  // the 910's per pipe pair
    d.vector_bytes_per_cycle = 256;
    return d;
}

TensorRef c0_tensor(const std::vector<int64_t>& shape, ref::ElemType t) {
    TensorRef r = make_tensor(shape, t);
    r.format = Format::NC1HWC0;
    return r;
}

ref::HostTensor uniform(const std::vector<int64_t>& shape, ref::ElemType t, std::mt19937& rng, double lo, double hi) {
    ref::HostTensor h(t, shape);
    std::uniform_real_distribution<double> d(lo, hi);
    for (double& v : h.data) v = d(rng);
    ref::round_to_type(h);
    return h;
}

std::vector<ref::HostTensor> reference(const NodeDesc& node, const std::vector<ref::HostTensor>& in) {
    std::vector<const ref::HostTensor*> ptrs;
    for (const auto& h : in) ptrs.push_back(&h);
    return ref::run_ref(ref::RefNode{node.name, node.op_type, node.opset, node.attrs}, ptrs);
}

// GM bytes each launch copies in and out (the sink's records of every block).
struct Traffic {
    uint64_t in = 0, out = 0;
};
std::vector<Traffic> traffic(const NodeDesc& node, const DeviceInfo& dev) {
    std::unique_ptr<INodeOp> op = make_node_op(node, dev);
    std::vector<TensorRef> ins = node.inputs, outs = op->outputs();
    uint64_t at = 0x1000;
    for (auto* v : {&ins, &outs})
        for (TensorRef& t : *v) t.addr = at, at += (t.storage_bytes() + 4095) / 4096 * 4096;
    const uint64_t ws = at;
    at += (op->workspace_bytes() + 4095) / 4096 * 4096;
    isa::test::TestMem mem(1 << 20, at + 4096);
    std::vector<Traffic> r;
    for (const KernelDesc& k : op->launches(ins, outs, ws)) {
        Traffic t;
        for (uint32_t b = 0; b < k.block_dim; ++b) {
            kernel::test::KapiSink sink(isa::CoreKind::Vector, &mem);
            sink.set_block(b, k.block_dim);
            sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
            sink.set_event_ids(dev.event_ids);
            k.body(sink);
            for (const auto& i : sink.issued()) {
                const uint64_t bytes = uint64_t{i.in.copy.nburst} * i.in.copy.len_bytes;
                if (i.in.op == isa::Opcode::COPY_GM_TO_UB) t.in += bytes;
                if (i.in.op == isa::Opcode::COPY_UB_TO_GM) t.out += bytes;
            }
        }
        r.push_back(t);
    }
    return r;
}

NodeDesc bn_training(const std::vector<int64_t>& shape, ref::ElemType t, ref::ElemType wt) {
    NodeDesc n;
    n.name = "bn";
    n.op_type = "BatchNormTraining";
    n.attrs.set_owner("bn");
    n.attrs.set("momentum", ref::Attr::of_float(0.75));
    n.inputs = {c0_tensor(shape, t)};
    for (int i = 0; i < 4; ++i) n.inputs.push_back(make_tensor({shape[1]}, wt));
    return n;
}

}  // namespace

TEST_CASE("fused BatchNorm training forward on NC1HWC0: statistics, Y and running statistics match the reference") {
    // [N, C, H, W]: several planes per tile; a plane in chunks (49 x 61 pixels against a 32 KiB
    // UB); two channel blocks over several items each; fp32 (C0 = 8) and fp16 (C0 = 16).
    struct Case {
        std::vector<int64_t> shape;
        ref::ElemType t;
    };
    const ref::ElemType h = ref::ElemType::Float16, f = ref::ElemType::Float;
    for (const Case& c : {Case{{6, 32, 5, 3}, h}, Case{{2, 16, 49, 61}, h}, Case{{3, 16, 7, 9}, f},
                          Case{{5, 48, 4, 4}, h}}) {
        for (ref::ElemType wt : {f, h}) {
            INFO("shape " << ref::shape_str(c.shape) << " " << ref::elem_type_name(c.t) << ", parameters "
                          << ref::elem_type_name(wt));
            const DeviceInfo dev = bn_device(32 << 10);
            NodeDesc n = bn_training(c.shape, c.t, wt);
            if (wt == h) n.attrs.set("relu", ref::Attr::of_int(1));  // a fused Relu: Y = max(Y, 0)
            std::mt19937 rng(5);
            std::vector<ref::HostTensor> in = {uniform(c.shape, c.t, rng, 1, 3)};  // mean far from 0
            for (int i = 0; i < 4; ++i) in.push_back(uniform({c.shape[1]}, wt, rng, i == 3 ? 0.5 : -2, 2));
            const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(n, in, dev);
            for (const auto& e : run.errors) FAIL_CHECK(e);
            CHECK(run.kernels.size() == 3);
            const auto want = reference(n, in);
            for (size_t o = 0; o < want.size(); ++o) {
                INFO("output " << o);
                // Y and the running statistics: fp32 arithmetic, one rounding to their type; the
                // statistics: fp32 sums of the tile's lanes, E[x^2] - mean^2 in fp32.
                const bool two_byte = run.outs[o].type == h;
                Tolerance tol{two_byte ? 0x1p-12 : 2e-6, two_byte ? 0x1p-10 : 1e-5};
                const CheckResult r = compare_tensors(run.outs[o], want[o], tol);
                INFO("max abs err " << r.max_abs_err);
                CHECK(r.passed);
            }
            // One read of X for the statistics, one read and one write for Y; the rest is
            // per-channel (partials, parameters, statistics).
            const std::vector<Traffic> tr = traffic(n, dev);
            const uint64_t x = n.inputs[0].storage_bytes(), C = static_cast<uint64_t>(c.shape[1]);
            const uint64_t es = isa::dtype_size(n.inputs[0].dtype), ws = isa::dtype_size(n.inputs[1].dtype);
            norm::BnTrainPlan p;
            p.xt = n.inputs[0].dtype, p.C0 = 32 / es, p.N = static_cast<uint64_t>(c.shape[0]), p.C1 = C / p.C0;
            p.L = static_cast<uint64_t>(c.shape[2] * c.shape[3]);
            norm::BnTrainPlan q = p;
            q.kind = norm::BnTrainPlan::Kind::Apply;
            REQUIRE(norm::plan_bn(p, dev.ub_bytes, dev.vector_cores));
            REQUIRE(norm::plan_bn(q, dev.ub_bytes, dev.vector_cores));
            REQUIRE(tr.size() == 3);
            CHECK(tr[0].in == x);
            CHECK(tr[0].out == p.items() * 2 * p.C0 * 4);     // a partial (sum, square sum) per item
            CHECK(tr[1].in == p.S * C * 2 * 4 + 4 * C * ws);  // the partials, scale, B, running inputs
            CHECK(tr[1].out == 4 * C * 4 + 2 * C * ws);       // mean, var, a, c; the running statistics
            CHECK(tr[2].in == x + q.items() * 2 * q.C0 * 4);  // X; a and c once per item
            CHECK(tr[2].out == x);
        }
    }
}

TEST_CASE("fused BatchNorm training backward on NC1HWC0: the reduction's [5, C] and dX match the reference") {
    struct Case {
        std::vector<int64_t> shape;
        ref::ElemType t;
    };
    const ref::ElemType h = ref::ElemType::Float16, f = ref::ElemType::Float;
    for (const Case& c : {Case{{6, 32, 5, 3}, h}, Case{{2, 16, 49, 61}, h}, Case{{3, 16, 7, 9}, f},
                          Case{{5, 48, 4, 4}, h}}) {
        INFO("shape " << ref::shape_str(c.shape) << " " << ref::elem_type_name(c.t));
        const DeviceInfo dev = bn_device(32 << 10);
        const int64_t C = c.shape[1];
        std::mt19937 rng(9);
        // X with its batch statistics (the forward's fp32 outputs), dY, an fp32 scale.
        const ref::HostTensor x = uniform(c.shape, c.t, rng, 1, 3), dy = uniform(c.shape, c.t, rng, -1, 1);
        NodeDesc fw = bn_training(c.shape, c.t, f);
        std::vector<ref::HostTensor> fin = {x};
        for (int i = 0; i < 4; ++i) fin.push_back(uniform({C}, f, rng, i == 3 ? 0.5 : -2, 2));
        const auto stats = reference(fw, fin);
        NodeDesc red;
        red.name = "bn/reduce_grad";
        red.op_type = "BatchNormGradReduce";
        red.attrs.set_owner(red.name);
        red.inputs = {c0_tensor(c.shape, c.t), c0_tensor(c.shape, c.t), make_tensor({C}, f), make_tensor({C}, f),
                      make_tensor({C}, f)};
        const std::vector<ref::HostTensor> rin = {x, dy, stats[3], stats[4], fin[1]};
        const sfumato::test::NodeSinkRun rr = sfumato::test::run_node_on_sinks(red, rin, dev);
        for (const auto& e : rr.errors) FAIL_CHECK(e);
        const auto want = reference(red, rin);
        // fp32 sums of fp32 products of the lanes (per tile, then pairwise), against double.
        double scale = 0;
        for (double v : want[0].data) scale = std::max(scale, std::fabs(v));
        const CheckResult r = compare_tensors(rr.outs.at(0), want[0], Tolerance{1e-5 * scale, 1e-5});
        INFO("max abs err " << r.max_abs_err << " of " << scale);
        CHECK(r.passed);
        NodeDesc app;
        app.name = "bn/dX";
        app.op_type = "BatchNormGradApply";
        app.inputs = {c0_tensor(c.shape, c.t), c0_tensor(c.shape, c.t), make_tensor({5, C}, f)};
        const std::vector<ref::HostTensor> ain = {x, dy, want[0]};
        const sfumato::test::NodeSinkRun ra = sfumato::test::run_node_on_sinks(app, ain, dev);
        for (const auto& e : ra.errors) FAIL_CHECK(e);
        const auto dx = reference(app, ain);
        CHECK(make_node_op(app, dev)->outputs().at(0).format == Format::NC1HWC0);
        const bool two_byte = c.t == h;
        const CheckResult q = compare_tensors(ra.outs.at(0), dx[0], Tolerance{two_byte ? 0x1p-12 : 1e-6, two_byte ? 0x1p-10 : 1e-5});
        INFO("dX max abs err " << q.max_abs_err);
        CHECK(q.passed);
        // Memory passes: the reduction reads X and dY once (and the mean once per item), the
        // finalize the partials and three channel vectors; the apply reads X, dY and three
        // coefficient rows per item and writes dX once.
        const uint64_t xb = red.inputs[0].storage_bytes(), es = isa::dtype_size(red.inputs[0].dtype);
        norm::BnTrainPlan p, pa;
        p.kind = norm::BnTrainPlan::Kind::GradStats;
        p.xt = red.inputs[0].dtype, p.C0 = 32 / es, p.N = static_cast<uint64_t>(c.shape[0]);
        p.C1 = static_cast<uint64_t>(C) / p.C0, p.L = static_cast<uint64_t>(c.shape[2] * c.shape[3]);
        pa = p;
        pa.kind = norm::BnTrainPlan::Kind::GradApply;
        REQUIRE(norm::plan_bn(p, dev.ub_bytes, dev.vector_cores));
        REQUIRE(norm::plan_bn(pa, dev.ub_bytes, dev.vector_cores));
        const uint64_t Cu = static_cast<uint64_t>(C);
        const std::vector<Traffic> tr = traffic(red, dev), ta = traffic(app, dev);
        REQUIRE(tr.size() == 2);
        REQUIRE(ta.size() == 1);
        CHECK(tr[0].in == 2 * xb + p.items() * p.C0 * 4);
        CHECK(tr[0].out == p.items() * 2 * p.C0 * 4);
        CHECK(tr[1].in == p.S * Cu * 2 * 4 + 3 * Cu * 4);
        CHECK(tr[1].out == 5 * Cu * 4);
        CHECK(ta[0].in == 2 * xb + pa.items() * 3 * pa.C0 * 4);
        CHECK(ta[0].out == xb);
    }
}

TEST_CASE("fused BatchNorm training kernels refuse what they cannot run, naming the input") {
    const DeviceInfo dev = bn_device(32 << 10);
    const ref::ElemType h = ref::ElemType::Float16, f = ref::ElemType::Float;
    NodeDesc red;
    red.name = "bn/reduce_grad";
    red.op_type = "BatchNormGradReduce";
    red.inputs = {c0_tensor({2, 24, 3, 3}, h), c0_tensor({2, 24, 3, 3}, h), make_tensor({24}, f), make_tensor({24}, f),
                  make_tensor({24}, f)};
    // 24 fp16 channels: a partial C0 block, whose padding would enter the sums.
    CHECK_THROWS_WITH(make_node_op(red, dev), Catch::Contains("whole C0 blocks"));
    red.inputs[0] = red.inputs[1] = c0_tensor({2, 32, 3, 3}, h);
    for (size_t i = 2; i < 5; ++i) red.inputs[i] = make_tensor({32}, f);
    red.inputs[1] = make_tensor({2, 32, 3, 3}, h);  // dY in ND
    CHECK_THROWS_WITH(make_node_op(red, dev), Catch::Contains("dY must be a contiguous NC1HWC0 tensor"));
    red.inputs[1] = c0_tensor({2, 32, 3, 3}, h);
    red.inputs[2] = make_tensor({32}, h);  // the statistics are fp32
    CHECK_THROWS_WITH(make_node_op(red, dev), Catch::Contains("'batch_mean' must be fp32"));
    NodeDesc app;
    app.name = "bn/dX";
    app.op_type = "BatchNormGradApply";
    app.inputs = {c0_tensor({2, 32, 3, 3}, h), c0_tensor({2, 32, 3, 3}, h), make_tensor({4, 32}, f)};
    CHECK_THROWS_WITH(make_node_op(app, dev), Catch::Contains("'coefficients' has 128 values, want 160"));
}
