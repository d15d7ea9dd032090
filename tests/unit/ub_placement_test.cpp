// The library's vector kernels against the 220x UB bank rules (docs/fidelity.md, "UB bank
// conflicts: the vendor's 220x rules"): the main loop of a kernel issued into a recording sink,
// each instruction's conflict cycles counted by the core's model with the preset's UB layout.
#include <catch2/catch.hpp>

#include "kapi_sink.h"
#include "models/aicore/core_timing.h"
#include "runtime/ops/norm/row_plan.h"
#include "runtime/ops/norm/vec_nest.h"
#include "sim/device_if.h"

using namespace sfumato;
using isa::Opcode;

TEST_CASE("ub placement: softmax rows fold out of place and apply per-row values without bank conflicts",
          "[norm][softmax][ub_bank]") {
    Config cfg;
    cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini");
    const CoreParams cp(ParamScope(cfg, "chip.aicore"));
    // The library places buffers for the bank span it assumes; the preset's layout gives it.
    REQUIRE(uint64_t{cp.ub_bank_bytes} * cp.ub_bank_groups * cp.ub_bank_rows == ops::norm::kBankSpan);
    DeviceInfo dev;
    dev.ub_bytes = 192 * 1024;
    dev.vector_cores = 1;
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
        // The destination of an application may reach into the per-row vectors' bank span at
        // a buffer's end (the layout is not span-aligned): those repeats are not checked.
        const uint64_t bytes = uint64_t{in.vec.repeat} * in.vec.dst_rep_stride * 32;
        if (fold || ops::norm::spans_apart(in.dst.addr, bytes, in.src1.addr, 512)) CHECK(ub_conflict_cycles(in, cp) == 0);
    }
    // Each tile: at least log2(cols / 64) fold levels twice (max, sum); two applications, each
    // in two halves for every row.
    const uint64_t tiles = (p.Q + p.k - 1) / p.k;
    CHECK(folds >= tiles * 2 * 6);
    CHECK(applies == tiles * 2 * 2 * p.k);
}
