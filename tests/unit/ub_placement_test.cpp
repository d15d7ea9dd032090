// The library's vector kernels against the 220x UB bank rules (docs/fidelity.md, "UB bank
// conflicts: the vendor's 220x rules"): the main loop of a kernel issued into a recording sink,
// each instruction's conflict cycles counted by the core's model with the preset's UB layout.
#include <catch2/catch.hpp>

#include "kapi_sink.h"
#include "models/aicore/core_timing.h"
#include "runtime/ops/ew/kernel.h"
#include "runtime/ops/ew/plan.h"
#include "runtime/ops/llm/rope.h"
#include "runtime/ops/llm/swiglu.h"
#include "runtime/ops/norm/pool_kernel.h"
#include "runtime/ops/norm/reduce_kernel.h"
#include "runtime/ops/norm/row_plan.h"
#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/standalone.h"
#include "sim/device_if.h"

using namespace sfumato;
using isa::Opcode;

namespace {

// The preset whose UB layout the library's placement assumes, with its core parameters (which
// keep a scope into the configuration: both live here).
struct Preset910b {
    Config cfg;
    CoreParams cp;
    Preset910b() : cfg(load()), cp(ParamScope(cfg, "chip.aicore")) {}
    static Config load() {
        Config c;
        c.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini");
        return c;
    }
};

// One vector core with the preset's 192 KiB of UB: the device the kernels are planned for.
DeviceInfo one_vector_core() {
    DeviceInfo dev;
    dev.ub_bytes = 192 * 1024;
    dev.vector_cores = 1;
    return dev;
}

}  // namespace

TEST_CASE("ub placement: softmax rows fold out of place and apply per-row values without bank conflicts",
          "[norm][softmax][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    // The library places buffers for the bank span it assumes; the preset's layout gives it.
    REQUIRE(uint64_t{cp.ub_bank_bytes} * cp.ub_bank_groups * cp.ub_bank_rows == ops::norm::kBankSpan);
    const DeviceInfo dev = one_vector_core();
    ops::norm::RowPlan p;
    p.kind = ops::norm::RowPlan::Kind::Softmax;
    p.cols = 4096, p.Q = 16, p.sq = p.cols, p.sp = 0;
    p.x = 0x1000, p.y = 0x100000;
    REQUIRE(ops::norm::plan_rows(p, dev));
    REQUIRE(p.k >= 2);  // tiles of several rows: the split form of apply_rows
    kernel::test::KapiSink sink(isa::CoreKind::Vector);
    sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
    ops::norm::row_kernel(sink, p);
    REQUIRE(sink.errors().empty());
    // Every fold level (two sources one 256-byte unit apart, never writing the span it reads)
    // and every application of a per-row value (a 256-byte source read again each repeat, in
    // the other half of the groups than the row's units) is conflict-free; the conversions in and
    // out (different element sizes, so their operands drift over the groups) are not checked.
    uint64_t folds = 0, applies = 0;
    for (const isa::Instr& in : sink.instrs()) {
        const bool fold = (in.op == Opcode::VMAX || in.op == Opcode::VADD) && in.src1.addr == in.src0.addr + 256;
        const bool apply = (in.op == Opcode::VSUB || in.op == Opcode::VMUL) && in.vec.src1_rep_stride == 0;
        if (!fold && !apply) continue;
        folds += fold, applies += apply;
        CAPTURE(isa::opcode_name(in.op), in.dst.addr, in.src0.addr, in.src1.addr, in.vec.repeat);
        CHECK(ub_conflict_cycles(in, cp) == 0);
    }
    // Each tile: at least log2(cols / 64) fold levels twice (max, sum); two applications, each
    // in two halves for every row.
    const uint64_t tiles = (p.Q + p.k - 1) / p.k;
    CHECK(folds >= tiles * 2 * 6);
    CHECK(applies == tiles * 2 * 2 * p.k);
}

TEST_CASE("ub placement: place_apart keeps paired buffers in different bank spans at their phases", "[ub_bank]") {
    using ops::norm::UbApart;
    using ops::norm::UbItem;
    const uint64_t span = ops::norm::kBankSpan, ub = 3 * span;
    // Three buffers that feed each other in a ring and a fourth paired with the first: each
    // pair can be apart with three spans; the phases are kept.
    const std::vector<UbItem> items = {{span / 2, 0}, {span / 2, 0}, {span / 2, 256}, {span / 4, 256}};
    const std::vector<UbApart> apart = {{0, 1, 4}, {1, 2, 4}, {0, 2, 4}, {0, 3, 1}};
    const std::vector<uint64_t> at = ops::norm::place_apart(items, apart, ub, span);
    REQUIRE(at.size() == items.size());
    CHECK(ops::norm::shared_weight(items, apart, at, span) == 0);
    for (size_t i = 0; i < items.size(); ++i) {
        CAPTURE(i, at[i]);
        CHECK(at[i] % 512 == items[i].phase);
        CHECK(at[i] / span == (at[i] + items[i].bytes - 1) / span);  // whole inside one span
        CHECK(at[i] + items[i].bytes <= ub);
    }
    for (size_t i = 0; i < items.size(); ++i)  // no overlap
        for (size_t j = i + 1; j < items.size(); ++j) CHECK((at[i] + items[i].bytes <= at[j] || at[j] + items[j].bytes <= at[i]));
    // Four buffers that must all be apart in three spans: the lightest pair shares one.
    const std::vector<UbItem> four(4, UbItem{span / 2, 0});
    const std::vector<UbApart> all = {{0, 1, 5}, {0, 2, 5}, {0, 3, 5}, {1, 2, 5}, {1, 3, 5}, {2, 3, 1}};
    const std::vector<uint64_t> at4 = ops::norm::place_apart(four, all, ub, span);
    REQUIRE(at4.size() == 4);
    CHECK(ops::norm::shared_weight(four, all, at4, span) == 1);
    // A buffer larger than a span, or a UB smaller than one: no placement (the caller keeps its
    // sequential layout).
    CHECK(ops::norm::place_apart({{span + 32, 0}}, {}, ub, span).empty());
    CHECK(ops::norm::place_apart({{32, 0}}, {}, span / 2, span).empty());
}

TEST_CASE("ub placement: layernorm rows convert in and out and fold across bank spans", "[norm][layernorm][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    const DeviceInfo dev = one_vector_core();
    ops::norm::RowPlan p;
    p.kind = ops::norm::RowPlan::Kind::LayerNorm;
    p.cols = 4096, p.Q = 4, p.sq = p.cols, p.sp = 0;
    p.x = 0x1000, p.y = 0x100000;
    REQUIRE(ops::norm::plan_rows(p, dev));
    kernel::test::KapiSink sink(isa::CoreKind::Vector);
    sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
    ops::norm::row_kernel(sink, p);
    REQUIRE(sink.errors().empty());
    // The conversions (fp16 rows into fp32 and back) and every fold level after the first
    // (two sources a unit apart) are conflict-free: their destinations lie in another bank
    // span than their sources. (The squares t * t read one buffer twice: charged by the rules.)
    uint64_t convs = 0, folds = 0;
    for (const isa::Instr& in : sink.instrs()) {
        const bool conv = in.op == Opcode::VCONV && in.vec.repeat > 1;
        const bool fold = in.op == Opcode::VADD && in.src1.addr == in.src0.addr + 256;
        if (!conv && !fold) continue;
        convs += conv, folds += fold;
        CAPTURE(isa::opcode_name(in.op), in.dst.addr, in.src0.addr, in.src1.addr, in.vec.repeat);
        CHECK(ub_conflict_cycles(in, cp) == 0);
    }
    CHECK(convs == 2 * p.Q);          // one in, one out per row
    CHECK(folds >= 2 * 5 * p.Q);      // two sums per row, log2(cols / 64) - 1 levels each after the first
}

TEST_CASE("ub placement: SwiGlu's fp32 chain runs out of place over three bank spans", "[llm][swiglu][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    const DeviceInfo dev = one_vector_core();
    for (const uint64_t inter : {uint64_t{11008}, uint64_t{1024}}) {  // column chunks; whole rows, several a tile
        CAPTURE(inter);
        ops::llm::SwiGluPlan p;
        p.rows = 8, p.inter = inter, p.x = 0x1000, p.y = 0x200000;
        REQUIRE(ops::llm::plan_swiglu(p, dev));
        kernel::test::KapiSink sink(isa::CoreKind::Vector);
        sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
        ops::llm::swiglu_kernel(sink, p);
        REQUIRE(sink.errors().empty());
        // Every vector instruction (conversions in and out, product, negation, exp, add,
        // division) is free of bank conflicts.
        uint64_t vec = 0;
        for (const isa::Instr& in : sink.instrs()) {
            if (isa::exec_pipe(in) != isa::Pipe::V || in.vec.repeat == 0) continue;
            ++vec;
            CAPTURE(isa::opcode_name(in.op), in.dst.addr, in.src0.addr, in.src1.addr, in.vec.repeat);
            CHECK(ub_conflict_cycles(in, cp) == 0);
        }
        CHECK(vec >= 7 * ((p.rows * p.nch + p.k - 1) / p.k));  // seven passes a tile at least
    }
}

TEST_CASE("ub placement: Rope's rotation runs out of place over three bank spans", "[llm][rope][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    const DeviceInfo dev = one_vector_core();
    ops::llm::RopePlan p;
    p.T = 4, p.N = 32, p.D = 128, p.R = 128, p.P = 16;
    p.host_pos = {0, 1, 2, 3};
    p.x = 0x1000, p.pos = 0x80000, p.cs = 0x90000, p.y = 0x100000;
    REQUIRE(ops::llm::plan_rope(p, dev));
    kernel::test::KapiSink sink(isa::CoreKind::Vector);
    sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
    ops::llm::rope_kernel(sink, p);
    REQUIRE(sink.errors().empty());
    // The products by cos and sin and their sum walk every head of a row (repeats over the
    // heads or the lanes): each is conflict-free, as are the conversions in and out.
    uint64_t rot = 0;
    for (const isa::Instr& in : sink.instrs()) {
        const bool row = (in.op == Opcode::VMUL || in.op == Opcode::VADD) && in.vec.repeat >= p.N;
        const bool conv = in.op == Opcode::VCONV && in.vec.repeat * 64 >= p.N * p.D;
        if (!row && !conv) continue;
        rot += row;
        CAPTURE(isa::opcode_name(in.op), in.dst.addr, in.src0.addr, in.src1.addr, in.vec.repeat);
        CHECK(ub_conflict_cycles(in, cp) == 0);
    }
    CHECK(rot >= 3 * p.T);  // three per row at least
}

TEST_CASE("ub placement: elementwise programs write no slot they read, across bank spans", "[ew][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    const uint64_t span = uint64_t{cp.ub_bank_bytes} * cp.ub_bank_groups * cp.ub_bank_rows;
    REQUIRE(span == ops::norm::kBankSpan);
    const DeviceInfo dev = one_vector_core();
    using ref::ElemType;
    struct Case {
        const char* op;
        std::vector<int64_t> b;  // second input's shape (empty: a unary op)
        isa::DType dt;
        ElemType elem;
        bool apart;  // every destination apart from its sources (else: the placement's best)
    };
    const std::vector<int64_t> a = {64, 1024};
    // A unary chain in fp32 between conversions, two inputs in their storage type, the same in
    // fp32, a row broadcast (the row resident in the staging area), and the long chains of Tanh
    // and Gelu (a select or a product a tile whose slots the placement cannot separate).
    for (const Case& c : {Case{"Sigmoid", {}, isa::DType::FP16, ElemType::Float16, true},
                          Case{"Add", a, isa::DType::FP16, ElemType::Float16, true},
                          Case{"Add", a, isa::DType::BF16, ElemType::Bfloat16, true},
                          Case{"Mul", {1, 1024}, isa::DType::FP16, ElemType::Float16, true},
                          Case{"Tanh", {}, isa::DType::FP16, ElemType::Float16, false},
                          Case{"Gelu", {}, isa::DType::FP16, ElemType::Float16, false}}) {
        CAPTURE(c.op, isa::dtype_name(c.dt), c.b.size());
        std::vector<ops::ew::EwIn> in(c.b.empty() ? 1 : 2);
        for (ops::ew::EwIn& x : in) x.shape = a, x.storage = c.dt, x.elem = c.elem;
        if (!c.b.empty()) in[1].shape = c.b;
        ops::ew::Plan p = ops::ew::make_ew_plan({"n", c.op, 17, {}}, in, a, c.dt, c.elem, dev);
        REQUIRE(p.placed);
        if (c.apart) CHECK(p.shared_weight == 0);
        for (size_t i = 0; i < in.size(); ++i) p.in_addr[i] = 0x100000 * (i + 1);
        p.out_addr = 0x1000000;
        kernel::test::KapiSink sink(isa::CoreKind::Vector);
        sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
        ops::ew::ew_kernel(sink, p);
        REQUIRE(sink.errors().empty());
        // Every vector instruction over the tile (operands advancing every repeat, two distinct
        // sources) writes no address it reads, and is conflict-free when its destination lies in
        // another span than its sources and its two sources start 256 B apart modulo 512 (in
        // different halves of the groups). (A stride-0 constant block or x * x reads one group
        // twice: charged by the rules, not counted here.)
        uint64_t vec = 0;
        for (const isa::Instr& i : sink.instrs()) {
            if (isa::exec_pipe(i) != isa::Pipe::V || i.vec.repeat == 0 || i.op == Opcode::VDUP || i.op == Opcode::COPY_UB_TO_UB ||
                i.dst.pos != isa::Pos::UB || i.src0.pos != isa::Pos::UB)
                continue;
            const isa::VecParams& v = i.vec;
            const bool two = i.op == Opcode::VADD || i.op == Opcode::VSUB || i.op == Opcode::VMUL || i.op == Opcode::VDIV ||
                             i.op == Opcode::VMAX || i.op == Opcode::VMIN || i.op == Opcode::VSEL || i.op == Opcode::VCMP;
            if (v.src0_blk_stride == 0 || (two && (v.src1_blk_stride == 0 || i.src1.addr == i.src0.addr))) continue;
            ++vec;
            CAPTURE(isa::opcode_name(i.op), i.dst.addr, i.src0.addr, i.src1.addr, v.repeat);
            CHECK(i.dst.addr != i.src0.addr);
            if (two) CHECK(i.dst.addr != i.src1.addr);
            const bool rule = i.dst.addr / span != i.src0.addr / span && (!two || (i.dst.addr / span != i.src1.addr / span &&
                                                                                    (i.src0.addr + 512 - i.src1.addr % 512) % 512 == 256));
            if (c.apart) CHECK(rule);
            if (rule) CHECK(ub_conflict_cycles(i, cp) == 0);
        }
        // Each tile runs every such step of the program at least once.
        uint64_t tile_steps = 0;
        for (const ops::ew::Step& s : p.prog.steps) {
            bool tile = s.op != Opcode::COPY_UB_TO_UB && s.a != s.b;
            for (int r : {s.a, s.b})
                if (r >= 0) tile = tile && p.prog.regs[static_cast<size_t>(r)].kind != ops::ew::RegKind::Block;
            tile_steps += tile;
        }
        CHECK(tile_steps >= 1);
        CHECK(vec >= tile_steps * p.R * ((static_cast<uint64_t>(p.L) + p.T - 1) / p.T) / (p.chunk ? 1 : p.k));
    }
}

TEST_CASE("ub placement: inference BatchNormalization applies out of place across bank spans", "[norm][batchnorm][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    const uint64_t span = uint64_t{cp.ub_bank_bytes} * cp.ub_bank_groups * cp.ub_bank_rows;
    REQUIRE(span == ops::norm::kBankSpan);
    DeviceInfo dev;
    dev.arch = "split";
    dev.cube_cores = 1, dev.vector_cores = 2, dev.aiv_per_aic = 2;
    dev.ub_bytes = 192 * 1024;
    dev.event_ids = 8;
    dev.vector_bytes_per_cycle = 256;
    using ref::ElemType;
    // Planes of 56 x 56 in fp16 (x converted into xf: xf a -> t, t + b -> xf) and fp32 (x a -> t,
    // t + b -> the output; two rows a tile, which place), and lane vectors (x is [N, C]).
    struct Case {
        std::vector<int64_t> shape;
        ElemType t;
    };
    for (const Case& c : {Case{{2, 16, 56, 56}, ElemType::Float16}, Case{{2, 8, 56, 56}, ElemType::Float},
                          Case{{64, 300}, ElemType::Float16}}) {
        CAPTURE(c.shape.size(), ref::elem_type_name(c.t));
        ops::NodeDesc n;
        n.name = "bn", n.op_type = "BatchNormalization", n.opset = 15;
        n.attrs.set_owner("bn");
        n.inputs = {ops::make_tensor(c.shape, c.t)};
        for (int i = 0; i < 4; ++i) n.inputs.push_back(ops::make_tensor({c.shape[1]}, ElemType::Float));
        std::unique_ptr<ops::INodeOp> op = ops::make_node_op(n, dev);
        CAPTURE(op->describe());
        REQUIRE(op->describe().find("placed") != std::string::npos);
        std::vector<ops::TensorRef> ins = n.inputs, outs = op->outputs();
        uint64_t at = 0x100000;
        for (auto* v : {&ins, &outs})
            for (ops::TensorRef& t : *v) t.addr = at, at += (t.storage_bytes() + 4095) / 4096 * 4096;
        const std::vector<KernelDesc> ks = op->launches(ins, outs, at);
        REQUIRE(ks.size() == 1);
        kernel::test::KapiSink sink(isa::CoreKind::Vector);
        sink.set_block(0, ks[0].block_dim);
        sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
        sink.set_event_ids(dev.event_ids);
        ks[0].body(sink);
        REQUIRE(sink.errors().empty());
        // The tile's instructions (the conversions, and the product and sum with a per-row
        // block or a lane vector read again every repeat) write no address they read, in another
        // bank span than the tile they read; the conversions are conflict-free. (The coefficient
        // block read beside the tile is charged by the rules, not counted here; the coefficients
        // themselves, a few repeats per tile, are not checked.)
        uint64_t tile = 0, single = 0;
        for (const isa::Instr& i : sink.instrs()) {
            const isa::VecParams& v = i.vec;
            const bool two = (i.op == Opcode::VMUL || i.op == Opcode::VADD) && v.src1_rep_stride == 0;
            if (isa::exec_pipe(i) != isa::Pipe::V || i.dst.pos != isa::Pos::UB || i.src0.pos != isa::Pos::UB ||
                v.src0_rep_stride == 0 || (!two && i.op != Opcode::VCONV))
                continue;
            ++tile;
            CAPTURE(isa::opcode_name(i.op), i.dst.addr, i.src0.addr, i.src1.addr, v.repeat);
            CHECK(i.dst.addr != i.src0.addr);
            CHECK(i.dst.addr / span != i.src0.addr / span);
            if (!two) {
                ++single;
                CHECK(ub_conflict_cycles(i, cp) == 0);
            }
        }
        // Each tile: the application's product and sum, and for fp16 its two conversions.
        CHECK(tile >= 2);
        if (c.t == ElemType::Float16) CHECK(single >= 2);
    }
}

TEST_CASE("ub placement: row reductions fold out of place across bank spans", "[norm][reduce][ub_bank]") {
    const Preset910b preset;
    const CoreParams& cp = preset.cp;
    const uint64_t span = uint64_t{cp.ub_bank_bytes} * cp.ub_bank_groups * cp.ub_bank_rows;
    REQUIRE(span == ops::norm::kBankSpan);
    const uint64_t ub = 192 * 1024;
    // Sum and LogSumExp over fp16 rows of 8192 (converted into fp32, folded 128 -> 1 units), and a
    // sum of squares over fp32 rows (the square in t folded).
    using Op = ops::norm::ReducePlan::Op;
    struct Case {
        Op op;
        ops::norm::ReducePlan::Pre pre;
        isa::DType xt;
    };
    for (const Case& c : {Case{Op::Sum, ops::norm::ReducePlan::Pre::None, isa::DType::FP16},
                          Case{Op::LogSumExp, ops::norm::ReducePlan::Pre::None, isa::DType::FP16},
                          Case{Op::Sum, ops::norm::ReducePlan::Pre::Square, isa::DType::FP32}}) {
        CAPTURE(static_cast<int>(c.op), isa::dtype_name(c.xt));
        ops::norm::ReducePlan p;
        p.op = c.op, p.pre = c.pre, p.xt = p.yt = c.xt;
        p.outer = 64, p.len = 8192, p.inner = 1;
        p.x = 0x100000, p.y = 0x4000000;
        REQUIRE(ops::norm::plan_reduce(p, ub, 8));
        REQUIRE(p.rows);
        kernel::test::KapiSink sink(isa::CoreKind::Vector);
        sink.set_buffer(isa::Pos::UB, ub);
        ops::norm::reduce_kernel(sink, p);
        REQUIRE(sink.errors().empty());
        // Every fold level (two sources one 256-byte unit apart) writes another bank span than it
        // reads and is conflict-free; so is every conversion of the tile into fp32.
        uint64_t levels = 0, convs = 0;
        for (const isa::Instr& i : sink.instrs()) {
            const bool level = (i.op == Opcode::VADD || i.op == Opcode::VMAX) && i.src1.addr == i.src0.addr + 256;
            const bool conv = i.op == Opcode::VCONV && i.vec.src_dtype == c.xt && c.xt != isa::DType::FP32;
            if (!level && !conv) continue;
            levels += level, convs += conv;
            CAPTURE(isa::opcode_name(i.op), i.dst.addr, i.src0.addr, i.src1.addr, i.vec.repeat);
            CHECK(i.dst.addr / span != i.src0.addr / span);
            CHECK(ub_conflict_cycles(i, cp) == 0);
        }
        // Each tile folds 128 units to one: 7 levels (twice for LogSumExp: its maximum and sum).
        const uint64_t tiles = (64 / 8 + p.k - 1) / p.k;
        CHECK(levels >= tiles * 7 * (c.op == Op::LogSumExp ? 2 : 1));
        if (c.xt == isa::DType::FP16) CHECK(convs >= tiles);
    }
}

TEST_CASE("ub placement: pooling accumulates its taps out of place", "[norm][pool][ub_bank]") {
    // 3 x 3 windows, stride 2, pad 1 over 56 x 56 planes (max and average, fp16 and fp32): each
    // tap's max or sum writes the other accumulator, never one it reads.
    for (const bool is_max : {true, false})
        for (const isa::DType xt : {isa::DType::FP16, isa::DType::FP32}) {
            CAPTURE(is_max, isa::dtype_name(xt));
            ops::norm::PoolPlan p;
            p.is_max = is_max, p.xt = xt, p.planes = 16, p.nd = 2;
            for (int i = 0; i < 2; ++i) p.in[i] = 56, p.out[i] = 28, p.k[i] = 3, p.s[i] = 2, p.pb[i] = p.pe[i] = 1;
            p.x = 0x100000, p.y = 0x400000;
            REQUIRE(ops::norm::plan_pool(p, 192 * 1024, 8));
            kernel::test::KapiSink sink(isa::CoreKind::Vector);
            sink.set_buffer(isa::Pos::UB, 192 * 1024);
            ops::norm::pool_kernel(sink, p);
            REQUIRE(sink.errors().empty());
            uint64_t acc = 0;
            for (const isa::Instr& i : sink.instrs()) {
                if ((i.op != Opcode::VMAX && i.op != Opcode::VADD) || i.dtype != isa::DType::FP32) continue;
                ++acc;
                CAPTURE(i.dst.addr, i.src0.addr, i.src1.addr);
                CHECK(i.dst.addr != i.src0.addr);
                CHECK(i.dst.addr != i.src1.addr);
            }
            // Every tile of block 0: 8 taps after the first.
            CHECK(acc >= 8 * std::min<uint64_t>(p.per_block, p.tiles()));
        }
}
