// Conv and ConvTranspose graph nodes without the chip model: every launch (layout conversions,
// the cube kernel with load3d into L0B, the epilogue) runs on functional memory with the sink's
// flag and race checks, split and coupled, and the output matches the host reference within the
// derived tolerance; plus the ONNX geometry (auto_pad, output_padding, output_shape) on
// hand-computed cases and the errors that name the node.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "kapi_sink.h"
#include "node_sink_run.h"
#include "runtime/ops/conv_kernel.h"
#include "runtime/ops/standalone.h"
#include "models/aicore/gm_pattern.h"
#include "runtime/ref/conv_shape.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::ops;

namespace {

DeviceInfo tiny(const std::string& arch) {
    DeviceInfo d;
    d.arch = arch;
    d.cube_cores = 2, d.vector_cores = arch == "split" ? 4 : 2;
    d.l1_bytes = 128 << 10, d.l0a_bytes = d.l0b_bytes = 16 << 10, d.l0c_bytes = 32 << 10,
    d.ub_bytes = 32 << 10;
    d.event_ids = arch == "split" ? 8 : 4;
    return d;
}

struct ConvCase {
    std::string op = "Conv";
    std::vector<int64_t> x, w;
    std::vector<std::pair<std::string, ref::Attr>> attrs;
    bool bias = false;
    ref::ElemType t = ref::ElemType::Float16;
    bool x5 = false;  // X stored in NC1HWC0
};

sfumato::test::NodeSinkRun check_case(const ConvCase& c, const std::string& arch) {
    NodeDesc node;
    node.name = "conv0";
    node.op_type = c.op;
    node.attrs.set_owner(node.name);
    for (const auto& [k, v] : c.attrs) node.attrs.set(k, v);
    node.inputs.push_back(make_tensor(c.x, c.t));
    if (c.x5) node.inputs.back().format = Format::NC1HWC0;
    node.inputs.push_back(make_tensor(c.w, c.t));
    const int64_t m = c.op == "Conv" ? c.w[0] : c.w[1] * node.attrs.get_int("group", 1);
    if (c.bias) node.inputs.push_back(make_tensor({m}, c.t));
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<ref::HostTensor> in;
    for (const auto& t : node.inputs) {
        ref::HostTensor h(t.elem, t.shape);
        for (double& v : h.data) v = d(rng);
        ref::round_to_type(h);
        in.push_back(std::move(h));
    }
    const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(node, in, tiny(arch));
    INFO(c.op << " x " << ref::shape_str(c.x) << " w " << ref::shape_str(c.w) << " " << arch);
    for (const auto& e : run.errors) FAIL_CHECK(e);
    std::vector<const ref::HostTensor*> ptrs;
    for (const auto& h : in) ptrs.push_back(&h);
    const auto want = ref::run_ref(ref::RefNode{node.name, node.op_type, 17, node.attrs}, ptrs);
    const double taps = double(c.op == "Conv" ? c.w[1] : c.w[0] / node.attrs.get_int("group", 1)) *
                        (c.w.size() > 2 ? c.w[2] : 1) * (c.w.size() > 3 ? c.w[3] : 1);
    Tolerance tol;
    tol.atol = 2.0 * std::ceil(taps / 16) * 0x1p-24 * taps + 0x1p-24;
    if (node.attrs.has("activation") && node.attrs.get_string("activation", "") != "Relu")
        tol.atol = 1.2 * tol.atol + 0x1p-20 * (2 + taps);
    tol.rtol = c.t == ref::ElemType::Float16 ? 0x1p-10 : 0x1p-23;
    const CheckResult r = compare_tensors(run.outs.at(0), want.at(0), tol);
    INFO("max abs err " << r.max_abs_err);
    CHECK(r.passed);
    return run;
}

ref::Attr ints(std::vector<int64_t> v) { return ref::Attr::of_ints(std::move(v)); }

}  // namespace

TEST_CASE(
    "conv node: 2-D convolutions (stride, dilation, pads, groups, depthwise, bias) match the reference") {
    std::vector<ConvCase> cases;
    ConvCase a;
    a.x = {1, 20, 9, 11}, a.w = {24, 20, 3, 3}, a.bias = true, a.attrs = {{"pads", ints({1, 1, 1, 1})}};
    cases.push_back(a);
    ConvCase b;
    b.x = {2, 8, 10, 7}, b.w = {12, 2, 3, 2}, b.t = ref::ElemType::Float;
    b.attrs = {{"group", ref::Attr::of_int(4)},
               {"strides", ints({2, 1})},
               {"dilations", ints({1, 2})},
               {"pads", ints({2, 0, 1, 2})},
               {"activation", ref::Attr::of_string("Relu")}};
    cases.push_back(b);
    ConvCase dw;  // depthwise, multiplier 2
    dw.x = {1, 18, 6, 6}, dw.w = {36, 1, 3, 3}, dw.bias = true;
    dw.attrs = {{"group", ref::Attr::of_int(18)}, {"auto_pad", ref::Attr::of_string("SAME_UPPER")}};
    cases.push_back(dw);
    ConvCase one;  // 1-D with a fused Sigmoid (vector epilogue)
    one.x = {2, 5, 30}, one.w = {7, 5, 4};
    one.attrs = {
        {"strides", ints({3})}, {"pads", ints({2, 1})}, {"activation", ref::Attr::of_string("Sigmoid")}};
    cases.push_back(one);
    for (const auto& c : cases)
        for (const char* arch : {"split", "coupled"}) check_case(c, arch);
}

TEST_CASE("conv node: a 1 x 1 Conv of whole C0 blocks of input channels turns an ND W into FRACTAL_Z by a block copy") {
    // OIHW [M][C][1][1] with C a multiple of C0 is rows of K = C: one block-copy kernel (no
    // gather) writes FRACTAL_Z, moving the weight's bytes twice, and the values are the
    // reference's (fp16 C0 16, fp32 C0 8; a stride 2 downsample); 20 fp16 channels (a partial
    // block) keep the gather conversion.
    ConvCase h, f, part;
    h.x = {2, 32, 6, 5}, h.w = {24, 32, 1, 1}, h.attrs = {{"strides", ints({2, 2})}};
    f.x = {1, 16, 5, 7}, f.w = {8, 16, 1, 1}, f.t = ref::ElemType::Float, f.bias = true;
    part.x = {1, 20, 4, 4}, part.w = {16, 20, 1, 1};
    for (const ConvCase* c : {&h, &f, &part})
        for (const char* arch : {"split", "coupled"}) {
            check_case(*c, arch);
            NodeDesc node;
            node.name = "conv0";
            node.op_type = "Conv";
            node.attrs.set_owner(node.name);
            for (const auto& [k, v] : c->attrs) node.attrs.set(k, v);
            node.inputs = {make_tensor(c->x, c->t), make_tensor(c->w, c->t)};
            if (c->bias) node.inputs.push_back(make_tensor({c->w[0]}, c->t));
            std::vector<TensorRef> outs = make_node_op(node, tiny(arch))->outputs();
            size_t conversions = 0, copies = 0;
            for (const KernelDesc& k : make_node_op(node, tiny(arch))->launches(node.inputs, outs, 0)) {
                conversions += k.name.find("w_to_c1hwc0") != std::string::npos;
                if (k.name.find("w_to_fractal_z") != std::string::npos) {
                    ++copies;
                    CHECK(k.bytes == 2 * node.inputs[1].storage_bytes());
                }
            }
            CHECK(conversions == (c == &part ? 1u : 0u));
            CHECK(copies == (c == &part ? 0u : 1u));
        }
}

TEST_CASE("conv node: each core loads a weight tile once per L1 buffer (weight-major tiles, FRACTAL_Z runs)") {
    // 6 images x 3 channel tiles (48 output channels; the tiny part's plan takes tiles of 16)
    // over 2 cores: the old image-major round robin gave each core every third channel tile in
    // turn, so every tile re-read its weights (18 tile loads, 6 x the converted W). A core's
    // contiguous run of the weight-major order loads a weight tile at most once per L1 buffer
    // (2) per channel tile it touches, so the cube kernel reads the converted W (the conversion
    // kernel's output) at least once and at most 2 x cores times.
    ConvCase c;
    c.x = {6, 32, 6, 6}, c.w = {48, 32, 3, 3}, c.attrs = {{"pads", ints({1, 1, 1, 1})}};
    for (const char* arch : {"split", "coupled"}) {
        check_case(c, arch);
        NodeDesc node;
        node.name = "conv0";
        node.op_type = "Conv";
        node.attrs.set_owner(node.name);
        for (const auto& [k, v] : c.attrs) node.attrs.set(k, v);
        node.inputs = {make_tensor(c.x, c.t), make_tensor(c.w, c.t)};
        std::vector<ref::HostTensor> in;
        for (const auto& t : node.inputs) in.emplace_back(t.elem, t.shape);
        const DeviceInfo dev = tiny(arch);
        const std::string plan = make_node_op(node, dev)->describe();
        INFO(arch << ": " << plan);
        REQUIRE(plan.find("2 of 2 channel blocks per L1 chunk") != std::string::npos);  // whole K in L1
        REQUIRE(plan.find("FRACTAL_Z") != std::string::npos);
        const sfumato::test::NodeSinkRun run = sfumato::test::run_node_on_sinks(node, in, dev);
        uint64_t lo = ~0ull, hi = 0, w_read = 0;
        for (size_t k = 0; k < run.kernels.size(); ++k)
            for (const isa::Instr& i : run.issued[k]) {
                GmPattern g;
                if (!gm_pattern(i, g) || g.total() == 0) continue;
                const uint64_t end = g.base + uint64_t{g.outer - 1} * g.outer_stride +
                                     uint64_t{g.inner - 1} * g.inner_stride + g.len;
                if (run.kernels[k] == "conv0/w_to_c1hwc0" && g.write) lo = std::min(lo, g.base), hi = std::max(hi, end);
                if (run.kernels[k] == "conv0" && !g.write && lo < hi && g.base >= lo && end <= hi) w_read += g.total();
            }
        const uint64_t w_bytes = 48 * 32 * 9 * 2;
        CHECK(hi - lo == w_bytes);
        CHECK(w_read >= w_bytes);
        CHECK(w_read <= 2 * dev.cube_cores * w_bytes);
    }
}

TEST_CASE(
    "conv node: ConvTranspose (stride, output_padding, output_shape, groups, dilation) matches the "
    "reference") {
    std::vector<ConvCase> cases;
    ConvCase a;
    a.op = "ConvTranspose", a.x = {1, 6, 4, 5}, a.w = {6, 5, 3, 3}, a.bias = true;
    a.attrs = {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"output_padding", ints({1, 0})}};
    cases.push_back(a);
    ConvCase b;
    b.op = "ConvTranspose", b.x = {2, 4, 3, 3}, b.w = {4, 3, 2, 3}, b.t = ref::ElemType::Float;
    b.attrs = {{"group", ref::Attr::of_int(2)},
               {"strides", ints({3, 2})},
               {"dilations", ints({2, 1})},
               {"output_shape", ints({8, 6})}};
    cases.push_back(b);
    ConvCase c1;  // pads beyond the kernel extent crop the full result
    c1.op = "ConvTranspose", c1.x = {1, 3, 6, 6}, c1.w = {3, 2, 2, 2};
    c1.attrs = {{"strides", ints({1, 1})}, {"pads", ints({2, 2, 0, 1})}};
    cases.push_back(c1);
    for (const auto& c : cases)
        for (const char* arch : {"split", "coupled"}) check_case(c, arch);
}

TEST_CASE("conv node: a strided ConvTranspose into NC1HWC0 runs as stride-1 phase convolutions, merged in whole rows") {
    // A stride-2 Conv's data gradient (3 x 3, pad 1, output padding 1: ResNet's) on dZ as the
    // backward keeps it (NC1HWC0): s x s stride-1 convolutions of the un-spread dZ, each with the
    // taps that reach one phase of dX, no zeros multiplied: the cube issues the spread form's
    // products over s_h x s_w (per dimension 8 outputs x (1 + 2) taps per phase pair against
    // 16 x 3); a vector kernel merges the phases' grids into dX. A 1 x 1 stride-2 kernel (the
    // downsample's) reaches one phase: the merge writes the others as zeros. Strides (3, 2) with
    // uneven phases, a bias and a Relu; fp16 and fp32 (C0 8); split and coupled parts.
    ConvCase r3, r1, odd;
    r3.op = r1.op = odd.op = "ConvTranspose";
    r3.x = {1, 32, 8, 8}, r3.w = {32, 32, 3, 3}, r3.x5 = true;
    r3.attrs = {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"output_padding", ints({1, 1})},
                {"y_format", ref::Attr::of_string("NC1HWC0")}};
    r1.x = {2, 16, 3, 5}, r1.w = {16, 24, 1, 1}, r1.x5 = true, r1.t = ref::ElemType::Float;
    r1.attrs = {{"strides", ints({2, 2})}, {"output_padding", ints({1, 1})},
                {"y_format", ref::Attr::of_string("NC1HWC0")}};
    odd.x = {1, 20, 3, 4}, odd.w = {20, 18, 4, 3}, odd.bias = true, odd.x5 = true;
    odd.attrs = {{"strides", ints({3, 2})}, {"pads", ints({1, 1, 2, 1})},
                 {"activation", ref::Attr::of_string("Relu")}, {"y_format", ref::Attr::of_string("NC1HWC0")}};
    auto macs = [](const sfumato::test::NodeSinkRun& run) {
        double n = 0;
        for (size_t k = 0; k < run.kernels.size(); ++k)
            for (const isa::Instr& i : run.issued[k])
                if (i.op == isa::Opcode::MAD) n += double(i.mad.m) * i.mad.k * i.mad.n;
        return n;
    };
    auto has = [](const sfumato::test::NodeSinkRun& run, const std::string& k) {
        return std::find(run.kernels.begin(), run.kernels.end(), "conv0/" + k) != run.kernels.end();
    };
    const double spread_macs = 16.0 * 16 * 3 * 3 * 32 * 32;  // OH x OW x kh x kw x C x M
    for (const char* arch : {"split", "coupled"}) {
        for (const ConvCase* c : {&r3, &r1, &odd}) {
            const sfumato::test::NodeSinkRun run = check_case(*c, arch);
            CHECK(has(run, "merge_phases"));
            CHECK_FALSE(has(run, "x_to_nc1hwc0"));
            CHECK_FALSE(has(run, "zero"));
            if (c == &r3) CHECK(macs(run) * 4 == spread_macs);
        }
        ConvCase spread = r3;  // ND X and Y: the spread form
        spread.x5 = false;
        spread.attrs.pop_back();
        const sfumato::test::NodeSinkRun run = check_case(spread, arch);
        CHECK(has(run, "zero"));
        CHECK(macs(run) == spread_macs);
    }
}

TEST_CASE("conv node: a weight goes to FRACTAL_Z in whole pieces, not a pixel's 32 B") {
    // A 3 x 3 Conv's OIHW W (each row's C0 channels x 9 taps are one 288-byte piece) and a
    // ConvTranspose's W (each channel's rows x taps, flipped): the conversion reads whole pieces
    // and writes runs of several FRACTAL_Z rows (32 B each); the values are the reference's.
    ConvCase f, t;
    f.x = {1, 32, 6, 6}, f.w = {48, 32, 3, 3}, f.attrs = {{"pads", ints({1, 1, 1, 1})}};
    t.op = "ConvTranspose", t.x = {1, 40, 4, 4}, t.w = {40, 36, 3, 3}, t.x5 = true;
    t.attrs = {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"output_padding", ints({1, 1})},
               {"y_format", ref::Attr::of_string("NC1HWC0")}};
    for (const char* arch : {"split", "coupled"})
        for (const ConvCase* c : {&f, &t}) {
            const sfumato::test::NodeSinkRun run = check_case(*c, arch);
            size_t reads = 0, writes = 0;
            for (size_t k = 0; k < run.kernels.size(); ++k) {
                if (run.kernels[k] != "conv0/w_to_c1hwc0") continue;
                for (const isa::Instr& i : run.issued[k]) {
                    GmPattern g;
                    if (!gm_pattern(i, g) || g.total() == 0) continue;
                    if (g.write) {
                        ++writes;
                        CHECK(g.len >= 2 * 32);
                    } else {
                        ++reads;
                        CHECK(g.len >= (c == &f ? 16u * 9 * 2 : 2u * 9 * 2));  // a piece, or two rows x taps
                    }
                }
            }
            CHECK(reads > 0);
            CHECK(writes > 0);
        }
}

TEST_CASE("conv geometry: auto_pad, ConvTranspose output sizes, and errors naming the node") {
    ref::Attrs at("n0");
    at.set("auto_pad", ref::Attr::of_string("SAME_LOWER"));
    at.set("strides", ints({2, 2}));
    ref::ConvGeometry g = ref::conv_geometry("n0", "Conv", at, {1, 1, 7, 8}, {1, 1, 4, 4});
    CHECK(g.out == std::vector<int64_t>{4, 4});
    // Height: needs (4 - 1) * 2 + 4 - 7 = 3 pad rows, SAME_LOWER puts 2 at the top.
    CHECK(g.pad_begin[0] == 2);
    CHECK(g.pad_end[0] == 1);
    CHECK(g.pad_begin[1] == 1);  // width: 2 of pad
    at.set("auto_pad", ref::Attr::of_string("SAME_UPPER"));
    g = ref::conv_geometry("n0", "Conv", at, {1, 1, 7, 8}, {1, 1, 4, 4});
    CHECK(g.pad_begin[0] == 1);
    ref::Attrs tr("n1");
    tr.set("strides", ints({3, 3}));
    tr.set("output_padding", ints({1, 2}));
    g = ref::conv_geometry("n1", "ConvTranspose", tr, {1, 2, 3, 3}, {2, 4, 3, 3});
    CHECK(g.m == 4);
    CHECK(g.out == std::vector<int64_t>{3 * 2 + 1 + 3, 3 * 2 + 2 + 3});
    tr.set("output_shape", ints({10, 10}));
    g = ref::conv_geometry("n1", "ConvTranspose", tr, {1, 2, 3, 3}, {2, 4, 3, 3});
    CHECK(g.out == std::vector<int64_t>{10, 10});
    CHECK(g.pad_begin[1] + g.pad_end[1] == 11 - 10);
    CHECK_THROWS_WITH(ref::conv_geometry("n2", "Conv", ref::Attrs("n2"), {1, 3, 5, 5}, {4, 2, 3, 3}),
                      Catch::Contains("n2") && Catch::Contains("input channels"));
    ref::Attrs grp("n3");
    grp.set("group", ref::Attr::of_int(2));
    CHECK_THROWS_WITH(ref::conv_geometry("n3", "Conv", grp, {1, 3, 5, 5}, {4, 1, 3, 3}),
                      Catch::Contains("group"));
}

TEST_CASE("conv kernel: the phases' launch gives each block an equal share of the products, not of tiles") {
    // Two plans of one launch (a strided ConvTranspose's phases) whose tilings differ: the first
    // takes base_m channels per tile, the second 16. Each block's contiguous share of the
    // products is then total / blocks, give or take one tile (a share ends at a tile's start);
    // weighting tiles by K alone gave the block holding the wide tiles base_m / 16 x its share.
    DeviceInfo dev = tiny("coupled");
    dev.l1_bytes = 512 << 10, dev.l0a_bytes = dev.l0b_bytes = 64 << 10, dev.l0c_bytes = 128 << 10,
    dev.ub_bytes = 128 << 10, dev.cube_cores = 8;
    ConvCubePlan wide;
    wide.n = 4, wide.c1 = 2, wide.hi = wide.wi = wide.oh = wide.ow = 7, wide.mg = wide.mtot = 128;
    wide.y_5hd = true, wide.out = isa::DType::FP16;
    plan_conv(wide, dev);
    REQUIRE(wide.base_m > 16);
    ConvCubePlan narrow = wide;
    narrow.base_m = 16, narrow.tiles_m = wide.mg / 16;
    const std::vector<ConvCubePlan> ps = {wide, narrow};
    auto tile_products = [](const ConvCubePlan& p) { return double(p.base_m) * p.base_n * p.kdim(); };
    const double total = wide.tiles() * tile_products(wide) + narrow.tiles() * tile_products(narrow);
    const uint32_t blocks = dev.cube_cores;
    double sum = 0;
    for (uint32_t b = 0; b < blocks; ++b) {
        kernel::test::KapiSink sink(isa::CoreKind::Coupled);
        sink.set_block(b, blocks);
        sink.set_event_ids(4);
        sink.set_buffer(isa::Pos::L1, dev.l1_bytes);
        sink.set_buffer(isa::Pos::L0A, dev.l0a_bytes);
        sink.set_buffer(isa::Pos::L0B, dev.l0b_bytes);
        sink.set_buffer(isa::Pos::L0C, dev.l0c_bytes);
        sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
        run_conv_phases(sink, ps);
        CHECK(sink.errors().empty());
        double mine = 0;  // the block's products, padded as the tiles pad them
        for (const isa::Instr& i : sink.instrs())
            if (i.op == isa::Opcode::MAD) mine += double(i.mad.m) * i.mad.k * i.mad.n;
        CHECK(mine <= total / blocks + tile_products(wide));
        sum += mine;
    }
    CHECK(sum == total);  // every tile once
}

TEST_CASE("conv node: tiles of several images (small outputs, long K) match the reference") {
    // A 1 x 1 Conv of 1024 input channels onto 3 x 3 outputs in NC1HWC0: K does not fit L1 beside
    // the windows, so a one-image tile reloads its weight chunks per image; the tiling takes
    // several images per tile (their windows one after the other in L1, each load3d'ed into its
    // own rows of L0A, one weight load for all). Five images: the last tile holds fewer. A bias
    // and a Relu; split and coupled parts; exact against the reference as every Conv.
    for (const char* arch : {"split", "coupled"}) {
        ConvCubePlan p;
        p.n = 5, p.c1 = 64, p.hi = p.wi = p.oh = p.ow = 3, p.mg = p.mtot = 16, p.y_5hd = true;
        plan_conv(p, tiny(arch));
        INFO(arch);
        REQUIRE(p.imgs > 1);
        CHECK(p.tiles() == (p.n + p.imgs - 1) / p.imgs);
        ConvCase c;
        c.x = {5, 1024, 3, 3}, c.w = {16, 1024, 1, 1}, c.bias = true, c.x5 = true;
        c.attrs = {{"activation", ref::Attr::of_string("Relu")},
                   {"y_format", ref::Attr::of_string("NC1HWC0")}};
        const sfumato::test::NodeSinkRun run = check_case(c, arch);
        // The weights' K blocks (64, and the bias's) go to L0B once per tile, not once per image.
        size_t w_loads = 0;
        for (const auto& issued : run.issued)
            for (const isa::Instr& i : issued)
                w_loads += i.op == isa::Opcode::LOAD2D && i.dst.pos == isa::Pos::L0B;
        CHECK(w_loads == (p.n + p.imgs - 1) / p.imgs * (p.c1 + 1));
    }
}
