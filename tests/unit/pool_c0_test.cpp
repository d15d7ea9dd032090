// MaxPool on NC1HWC0 as a vmax of whole C0 rows per window tap (runtime/ops/norm/pool_c0_kernel.h),
// without the chip model (every block on a functional sink with flag and race checks): outputs
// equal the host reference exactly (max is exact in the storage type) over strides, paddings,
// ceil mode, output widths that are not whole groups of 8 pixels and bands of output rows; the
// kernel copies each band's input rows in once and writes the output once.
#include <catch2/catch.hpp>
#include <random>

#include "node_sink_run.h"
#include "runtime/ops/norm/pool_c0_kernel.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/pool.h"

using namespace sfumato;
using namespace sfumato::ops;

namespace {

DeviceInfo pool_device(uint64_t ub) {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = ub;
    d.event_ids = 4;
    d.vector_bytes_per_cycle = 256;
    return d;
}

}  // namespace

TEST_CASE("MaxPool on NC1HWC0: a vmax of whole C0 rows per tap matches the reference exactly") {
    struct Case {
        std::vector<int64_t> shape, k, s, pads;
        bool ceil;
        ref::ElemType t;
    };
    const ref::ElemType h = ref::ElemType::Float16, f = ref::ElemType::Float;
    for (const Case& c : {Case{{2, 32, 17, 17}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, h},  // ResNet's stem pool
                          Case{{1, 16, 12, 10}, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, h},
                          Case{{2, 20, 9, 11}, {3, 3}, {1, 1}, {1, 1, 1, 1}, false, h},  // partial C0 block
                          Case{{1, 16, 10, 13}, {3, 2}, {2, 3}, {0, 1, 1, 0}, true, f},
                          Case{{3, 8, 40, 40}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, f}}) {
        INFO("shape " << ref::shape_str(c.shape) << " " << ref::elem_type_name(c.t));
        const DeviceInfo dev = pool_device(32 << 10);
        NodeDesc n;
        n.name = "maxpool";
        n.op_type = "MaxPool";
        n.opset = 12;
        n.attrs.set_owner(n.name);
        n.attrs.set("kernel_shape", ref::Attr::of_ints(c.k));
        n.attrs.set("strides", ref::Attr::of_ints(c.s));
        n.attrs.set("pads", ref::Attr::of_ints(c.pads));
        n.attrs.set("ceil_mode", ref::Attr::of_int(c.ceil));
        n.inputs = {make_tensor(c.shape, c.t)};
        n.inputs[0].format = Format::NC1HWC0;
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> d(-4, 4);
        ref::HostTensor x(c.t, c.shape);
        for (double& v : x.data) v = d(rng);
        ref::round_to_type(x);
        const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(n, {x}, dev);
        for (const auto& e : run.errors) FAIL_CHECK(e);
        CHECK(make_node_op(n, dev)->describe().find("NC1HWC0: a vmax") != std::string::npos);
        const auto want = ref::run_ref({n.name, n.op_type, n.opset, n.attrs}, {&x});
        const CheckResult r = compare_tensors(run.outs.at(0), want.at(0), Tolerance{0, 0});
        INFO("max abs err " << r.max_abs_err);
        CHECK(r.passed);
        // Traffic: per band the input rows its windows reach, once; the output once.
        const ref::PoolGeom g = ref::pool_geometry(n.name, n.op_type, n.attrs, c.shape);
        norm::PoolC0Plan p;
        const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(n.inputs[0].dtype));
        p.xt = n.inputs[0].dtype, p.planes = static_cast<uint64_t>(c.shape[0] * ((c.shape[1] + c0 - 1) / c0));
        p.H = g.in[0], p.W = g.in[1], p.OH = g.out[0], p.OW = g.out[1], p.kh = g.kernel[0], p.kw = g.kernel[1];
        p.sh = g.stride[0], p.sw = g.stride[1], p.pt = g.pad_begin[0], p.pl = g.pad_begin[1];
        REQUIRE(norm::plan_pool_c0(p, dev.ub_bytes, dev.vector_cores));
        uint64_t rows = 0;
        for (int64_t o0 = 0; o0 < p.OH; o0 += p.ob) {
            const int64_t lo = o0 * p.sh - p.pt, hi = (std::min(p.OH, o0 + p.ob) - 1) * p.sh - p.pt + p.kh;
            rows += static_cast<uint64_t>(std::max<int64_t>(0, std::min(p.H, hi) - std::max<int64_t>(0, lo)));
        }
        std::unique_ptr<INodeOp> op = make_node_op(n, dev);
        std::vector<TensorRef> ins = n.inputs, outs = op->outputs();
        ins[0].addr = 0x1000, outs[0].addr = 0x1000 + (ins[0].storage_bytes() + 4095) / 4096 * 4096;
        isa::test::TestMem mem(1 << 20, outs[0].addr + outs[0].storage_bytes() + 4096);
        uint64_t in_b = 0, out_b = 0;
        for (const KernelDesc& k : op->launches(ins, outs, 0))
            for (uint32_t b = 0; b < k.block_dim; ++b) {
                kernel::test::KapiSink sink(isa::CoreKind::Vector, &mem);
                sink.set_block(b, k.block_dim);
                sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
                sink.set_event_ids(dev.event_ids);
                k.body(sink);
                for (const auto& i : sink.issued()) {
                    const uint64_t bytes = uint64_t{i.in.copy.nburst} * i.in.copy.len_bytes;
                    if (i.in.op == isa::Opcode::COPY_GM_TO_UB) in_b += bytes;
                    if (i.in.op == isa::Opcode::COPY_UB_TO_GM) out_b += bytes;
                }
            }
        CHECK(in_b == p.planes * rows * static_cast<uint64_t>(p.W) * 32);
        CHECK(out_b == outs[0].storage_bytes());
    }
}

TEST_CASE("MaxPoolGrad on NC1HWC0: every maximum of a window takes its gradient, as the reference") {
    struct Case {
        std::vector<int64_t> shape, k, s, pads;
        bool ceil;
        ref::ElemType t;
    };
    const ref::ElemType h = ref::ElemType::Float16, f = ref::ElemType::Float;
    for (const Case& c : {Case{{2, 32, 17, 17}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, h},
                          Case{{1, 16, 12, 10}, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, h},
                          Case{{2, 20, 9, 11}, {3, 3}, {1, 1}, {1, 1, 1, 1}, false, h},
                          Case{{1, 16, 10, 13}, {3, 2}, {2, 3}, {0, 1, 1, 0}, true, f},
                          Case{{3, 8, 40, 40}, {3, 3}, {2, 2}, {1, 1, 1, 1}, false, f}}) {
        INFO("shape " << ref::shape_str(c.shape) << " " << ref::elem_type_name(c.t));
        const DeviceInfo dev = pool_device(48 << 10);
        ref::Attrs at;
        at.set_owner("maxpool");
        at.set("kernel_shape", ref::Attr::of_ints(c.k));
        at.set("strides", ref::Attr::of_ints(c.s));
        at.set("pads", ref::Attr::of_ints(c.pads));
        at.set("ceil_mode", ref::Attr::of_int(c.ceil));
        // X on a coarse grid (ties within windows), Y its MaxPool, dY random.
        std::mt19937 rng(7);
        std::uniform_int_distribution<int> d(-3, 3);
        std::uniform_real_distribution<double> u(-1, 1);
        ref::HostTensor x(c.t, c.shape);
        for (double& v : x.data) v = d(rng);
        const ref::HostTensor y = ref::run_ref({"maxpool", "MaxPool", 12, at}, {&x}).at(0);
        ref::HostTensor dy(c.t, y.shape);
        for (double& v : dy.data) v = u(rng);
        ref::round_to_type(dy);
        NodeDesc n;
        n.name = "maxpool/grad";
        n.op_type = "MaxPoolGrad";
        n.attrs = at;
        n.attrs.set_owner(n.name);
        for (const ref::HostTensor* t : std::vector<const ref::HostTensor*>{&x, &y, &dy}) {
            n.inputs.push_back(make_tensor(t->shape, c.t));
            n.inputs.back().format = Format::NC1HWC0;
        }
        const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(n, {x, y, dy}, dev);
        for (const auto& e : run.errors) FAIL_CHECK(e);
        std::unique_ptr<INodeOp> op = make_node_op(n, dev);
        CHECK(op->describe().find("NC1HWC0") != std::string::npos);
        CHECK(op->outputs().at(0).format == Format::NC1HWC0);
        const auto want = ref::run_ref({n.name, n.op_type, 1, n.attrs}, {&x, &y, &dy});
        // Sums of up to (k / s)^2 gradients in the storage type: a rounding per addition.
        const bool two_byte = c.t == h;
        const CheckResult r = compare_tensors(run.outs.at(0), want.at(0), Tolerance{two_byte ? 0x1p-9 : 1e-6, two_byte ? 0x1p-9 : 1e-6});
        INFO("max abs err " << r.max_abs_err);
        CHECK(r.passed);
    }
}
