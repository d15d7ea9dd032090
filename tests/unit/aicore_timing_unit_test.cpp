// Pure C++ checks of the AI core's timing helpers: the GM pattern of every GM-touching opcode
// against the ISA's footprint, and the UB bank-conflict count (fast and general paths) against
// a brute-force count over every block of every repeat.
#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "isa/semantics.h"
#include "models/aicore/core_timing.h"
#include "models/aicore/gm_pattern.h"
#include "tests/unit/isa_samples.h"

using namespace sfumato;
using isa::Opcode;
using isa::Pos;

namespace {

// Walks a pattern run by run.
template <class F>
void runs(const GmPattern& p, F f) {
    for (uint32_t o = 0; o < p.outer; ++o)
        for (uint32_t i = 0; i < p.inner; ++i) f(p.base + o * p.outer_stride + i * p.inner_stride, p.len);
}

void check_pattern(const isa::Instr& in) {
    CAPTURE(isa::opcode_name(in.op));
    GmPattern p;
    const bool has = gm_pattern(in, p);
    isa::Extent ext[isa::kMaxExtents];
    const int n = isa::footprint(in, ext);
    const isa::Extent* gm = nullptr;
    for (int i = 0; i < n; ++i)
        if (ext[i].pos == Pos::GM) gm = &ext[i];
    REQUIRE(has == (gm != nullptr));
    if (!has) return;
    CHECK(p.write == gm->write);
    if (in.op == Opcode::FIXPIPE && !in.fix.nz2nd)  // NZ rows are whole rows of C0 elements (zero-padded)
        CHECK(p.total() == (in.fix.n + isa::fix_nz_c0(in.fix) - 1) / isa::fix_nz_c0(in.fix) * in.fix.m *
                               isa::fix_nz_row_bytes(in.fix));
    else
        CHECK(p.total() == isa::gm_bytes(in));
    uint64_t lo = ~0ull, hi = 0;
    runs(p, [&](uint64_t a, uint64_t len) {
        lo = std::min(lo, a);
        hi = std::max(hi, a + len);
    });
    CHECK(lo == gm->lo);
    CHECK(hi == gm->hi);
}

std::unique_ptr<CoreParams> params(Config& c, const std::vector<std::string>& sets) {
    for (const auto& s : sets) c.apply_override(s);
    return std::make_unique<CoreParams>(ParamScope(c, "chip.aicore"));
}

// Reference: per repeat, the cycles the UB needs for every block of every operand, counted one
// by one: a bank group reads one row and writes one row per cycle, a bank serves one access
// (a row's group is row mod bank_groups; its bank also depends on its span of
// bank_groups x bank_rows rows).
uint64_t brute_conflicts(const isa::Instr& in, const CoreParams& p) {
    uint64_t total = 0;
    const uint64_t g = p.ub_bank_groups, span = g * p.ub_bank_rows;
    for (uint32_t r = 0; r < in.vec.repeat; ++r) {
        std::map<uint64_t, uint32_t> reads, writes;
        std::map<std::pair<uint64_t, uint64_t>, uint32_t> bank;
        auto touch = [&](const isa::Addr& a, uint16_t blk, uint16_t rep, bool src) {
            for (uint32_t b = 0; b < (blk ? 8u : 1u); ++b) {  // block stride 0: one block, read once
                const uint64_t row = (a.addr + uint64_t(r) * rep * 32 + uint64_t(b) * blk * 32) / p.ub_bank_bytes;
                ++(src ? reads : writes)[row % g];
                ++bank[{row / span, row % g}];
            }
        };
        touch(in.src0, in.vec.src0_blk_stride, in.vec.src0_rep_stride, true);
        touch(in.src1, in.vec.src1_blk_stride, in.vec.src1_rep_stride, true);
        touch(in.dst, in.vec.dst_blk_stride, in.vec.dst_rep_stride, false);
        uint32_t worst = 1;
        for (const auto& [k, c] : reads) worst = std::max(worst, c);
        for (const auto& [k, c] : writes) worst = std::max(worst, c);
        for (const auto& [k, c] : bank) worst = std::max(worst, c);
        total += uint64_t(worst - 1) * p.ub_bank_conflict_cycles;
    }
    return total;
}

// One vector instruction for the published examples: dst = f(src0, src1), one repeat.
isa::Instr vinstr(Opcode op, uint64_t dst, uint16_t dst_blk, uint64_t src0, uint16_t src0_blk, uint64_t src1 = 0,
                  uint16_t src1_blk = 1) {
    isa::Instr in = isa::make_instr(op);
    in.dst = {dst, Pos::UB};
    in.src0 = {src0, Pos::UB};
    in.src1 = {src1, Pos::UB};
    in.vec.repeat = 1;
    in.vec.dst_blk_stride = dst_blk;
    in.vec.src0_blk_stride = src0_blk;
    in.vec.src1_blk_stride = src1_blk;
    return in;
}

void random_adds(const CoreParams& p, uint32_t seed, bool unit_blk, int cases = 400, uint32_t max_repeat = 6) {
    std::mt19937 rng(seed);
    for (int t = 0; t < cases; ++t) {
        isa::Instr in = isa::make_instr(Opcode::VADD);
        in.dst = {(rng() % 6144) * 32, Pos::UB};  // up to 192 KiB: every bank of a 220x UB
        in.src0 = {(rng() % 6144) * 32, Pos::UB};
        in.src1 = {(rng() % 6144) * 32, Pos::UB};
        in.vec.repeat = static_cast<uint16_t>(1 + rng() % max_repeat);
        if (!unit_blk) {
            in.vec.dst_blk_stride = static_cast<uint16_t>(rng() % 70);
            in.vec.src0_blk_stride = static_cast<uint16_t>(rng() % 70);
            in.vec.src1_blk_stride = static_cast<uint16_t>(rng() % 70);
        }
        in.vec.dst_rep_stride = static_cast<uint16_t>(rng() % 80);
        in.vec.src0_rep_stride = rng() % 2 ? in.vec.dst_rep_stride : static_cast<uint16_t>(rng() % 80);
        in.vec.src1_rep_stride = in.vec.src0_rep_stride;
        CAPTURE(t, in.dst.addr, in.src0.addr, in.src1.addr, in.vec.repeat);
        REQUIRE(ub_conflict_cycles(in, p) == brute_conflicts(in, p));
    }
}

}  // namespace

TEST_CASE("aicore gm pattern: every GM opcode's runs span exactly its GM footprint and gm_bytes") {
    // The pipes' GM instructions; the scalar unit's own loads and stores (LD_GM, ST_GM) go through
    // its data cache, not through GM patterns.
    for (int i = 0; i < static_cast<int>(Opcode::kCount); ++i)
        if (isa::default_pipe(static_cast<Opcode>(i)) != isa::Pipe::S) check_pattern(isa::test::sample(static_cast<Opcode>(i)));
    isa::Instr fix = isa::test::sample(Opcode::FIXPIPE);
    fix.dst = {0x3000, Pos::GM};
    fix.fix.nz2nd = 1;
    fix.fix.dst_stride = std::max<uint32_t>(fix.fix.dst_stride, fix.fix.n);
    check_pattern(fix);
    fix.fix.nz2nd = 0;
    fix.fix.dst_stride = std::max<uint32_t>(fix.fix.m, 1);
    check_pattern(fix);
}

TEST_CASE("aicore bank conflicts: contiguous operands match a brute-force count") {
    Config c;
    auto p = params(c, {});
    random_adds(*p, 1, true);
}

TEST_CASE("aicore bank conflicts: strided blocks and other bank layouts match brute force") {
    Config c;
    auto p = params(c, {"chip.aicore.ub.bank_bytes=64", "chip.aicore.ub.bank_groups=12", "chip.aicore.ub.bank_rows=5",
                        "chip.aicore.ub.bank_conflict_cycles=3"});
    random_adds(*p, 2, false);
    Config c2;
    auto q = params(c2, {});
    random_adds(*q, 3, false);
}

TEST_CASE("aicore bank conflicts: long instructions (runs between bank-span crossings) match brute force") {
    // Up to 255 repeats: operands cross bank spans mid-instruction, and the repeats between two
    // crossings are counted by their groups' period.
    Config c;
    auto p = params(c, {});
    random_adds(*p, 4, true, 60, 255);
    random_adds(*p, 5, false, 60, 255);
    Config c2;
    auto q = params(c2, {"chip.aicore.ub.bank_bytes=64", "chip.aicore.ub.bank_groups=12", "chip.aicore.ub.bank_rows=5"});
    random_adds(*q, 6, false, 60, 255);
}

TEST_CASE("aicore bank conflicts: the vendor's published 220x examples") {
    // The vendor's Ascend C best practice "avoid UB bank conflicts" (NPU arch 220x, Atlas A2/A3):
    // 16 bank groups of 3 banks of 128 rows x 32 B, 0x10000 in bank 16, 0x10020 in bank 17,
    // 0x20020 in bank 33. Its examples, each with the cycles per repeat it states (1: none).
    Config cfg;
    const uint32_t cc = 2;
    auto p = params(cfg, {"chip.aicore.ub.bank_bytes=32", "chip.aicore.ub.bank_groups=16",
                          "chip.aicore.ub.bank_rows=128", "chip.aicore.ub.bank_conflict_cycles=" + std::to_string(cc)});
    auto extra = [&](const isa::Instr& in) { return ub_conflict_cycles(in, *p); };
    auto cycles = [&](uint64_t n) { return (n - 1) * cc; };  // a repeat taking n cycles pays n - 1 extra
    // Read-write: a source block and the destination block in one bank conflict (block stride 0:
    // one block each, as the examples compare single addresses).
    CHECK(extra(vinstr(Opcode::VMULS, 0x10000, 0, 0x10020, 0)) == cycles(1));  // banks 16 and 17
    CHECK(extra(vinstr(Opcode::VMULS, 0x10E20, 0, 0x10020, 0)) == cycles(2));  // both bank 17
    CHECK(extra(vinstr(Opcode::VMULS, 0x10000, 0, 0x0, 0)) == cycles(1));      // banks 16 and 0: one group, no conflict
    // Write-write: the 8 destination blocks of a repeat 512 B apart fall in one group (8 cycles),
    // 256 B apart in two (4 cycles).
    CHECK(extra(vinstr(Opcode::VMULS, 0x1FE00, 16, 0x100, 0)) == cycles(8));
    CHECK(extra(vinstr(Opcode::VMULS, 0x1FE00, 8, 0x100, 0)) == cycles(4));
    // Read-read: two sources in one group conflict even in different banks; 8 blocks of one
    // source in one group take 8 cycles.
    CHECK(extra(vinstr(Opcode::VADD, 0x20100, 0, 0x10020, 0, 0x20020, 0)) == cycles(2));
    CHECK(extra(vinstr(Opcode::VADD, 0x20100, 0, 0x10020, 0, 0x10000, 0)) == cycles(1));
    CHECK(extra(vinstr(Opcode::VMULS, 0x20100, 1, 0x1FE00, 16)) == cycles(8));
    // In place (x = x * y): every destination block is its source block's bank, a read-write
    // conflict by the same rule; y in the other 8 groups and x's writes add nothing else.
    CHECK(extra(vinstr(Opcode::VMUL, 0x0, 1, 0x0, 1, 0x100, 1)) == cycles(2));
    // The same product into a buffer in another bank of the same groups: no conflict.
    CHECK(extra(vinstr(Opcode::VMUL, 0x10000, 1, 0x0, 1, 0x100, 1)) == cycles(1));
    // Reading one buffer twice (x * x): two reads of every group.
    CHECK(extra(vinstr(Opcode::VMUL, 0x10000, 1, 0x0, 1, 0x0, 1)) == cycles(2));
}

TEST_CASE("aicore timing: MAD cycles follow the fractal shape per input type") {
    Config c;
    auto p = params(c, {});
    isa::Instr mad = isa::make_instr(Opcode::MAD);
    mad.mad = {33, 70, 16, 0, 0};
    mad.dtype = isa::DType::FP16;
    CHECK(mad_cycles(mad, *p) == 3 * 5 * 1 * p->cube_cycles_per_step);
    // k = 70 in steps of the per-type depth per cycle (fp16 16, int8 32, fp32 4).
    auto kd = [](uint32_t depth) { return (70 + depth - 1) / depth; };
    mad.dtype = isa::DType::INT8;
    CHECK(mad_cycles(mad, *p) == 3 * kd(p->cube_k0_int8) * 1 * p->cube_cycles_per_step);
    mad.dtype = isa::DType::INT4;
    CHECK(mad_cycles(mad, *p) == 3 * kd(p->cube_k0_int4) * 1 * p->cube_cycles_per_step);
    CHECK(p->cube_k0_int4 == isa::cube_k0(isa::DType::INT4));  // one 512-B fractal a step
    mad.dtype = isa::DType::FP32;
    CHECK(mad_cycles(mad, *p) == 3 * kd(p->cube_k0_fp32) * 1 * p->cube_cycles_per_step);
    CHECK(p->cube_k0_fp32 * 4 == p->cube_k0_16bit);  // fp32 at a quarter of the fp16 rate
    CHECK(compute_timing(mad, *p).latency == p->cube_fill);
}

TEST_CASE("aicore timing: a sparse MAD costs the dense product of half its k, a sparse load2d its index bytes too") {
    Config c;
    auto p = params(c, {});
    isa::Instr mad = isa::make_instr(Opcode::MAD);
    mad.dtype = isa::DType::INT8;
    mad.mad.m = 33, mad.mad.k = 136, mad.mad.n = 40;
    isa::Instr half_k = mad;
    half_k.mad.k = 68;
    mad.mad.sparse = 1;
    const uint64_t steps = ((33 + 15) / 16) * ((68 + p->cube_k0_int8 - 1) / p->cube_k0_int8) * ((40 + 15) / 16);
    CHECK(mad_cycles(mad, *p) == steps * p->cube_cycles_per_step);
    CHECK(mad_cycles(mad, *p) == mad_cycles(half_k, *p));
    CHECK(isa::mad_blocks(mad) == isa::mad_blocks(half_k));
    isa::Instr ld = isa::make_instr(Opcode::LOAD2D);
    ld.dtype = isa::DType::INT8;
    ld.dst.pos = Pos::L0B, ld.src1.pos = Pos::L1;
    ld.l2d.repeat = 6;
    const uint64_t dense = compute_timing(ld, *p).occupancy;
    CHECK(dense == (6 * 512 + p->mte1_l1_l0b_bpc - 1) / p->mte1_l1_l0b_bpc);
    ld.l2d.sparse = 1;
    CHECK(compute_timing(ld, *p).occupancy == (6 * (512 + 128) + p->mte1_l1_l0b_bpc - 1) / p->mte1_l1_l0b_bpc);
}

TEST_CASE("aicore timing: copy_l1_to_fb moves its bytes at the FixPipe buffer rate, in the FIX pipe") {
    Config c;
    auto p = params(c, {});
    isa::Instr f = isa::make_instr(Opcode::COPY_L1_TO_FB);
    f.copy = {2, 1024, 0, 0};  // 256 quantisation words
    CHECK(isa::default_pipe(Opcode::COPY_L1_TO_FB) == isa::Pipe::FIX);
    CHECK(compute_timing(f, *p).occupancy == (2048 + p->fix_l1_fb_bpc - 1) / p->fix_l1_fb_bpc);
    CHECK(compute_timing(f, *p).latency == p->fix_startup);
    CHECK(p->fb.size == 7 * 1024);  // FIXBUF of dav-2201 in the vendor's CPU-mode buffer table
    CHECK(isa::default_pipe(Opcode::COPY_L1_TO_GM) == isa::Pipe::MTE3);
}

TEST_CASE("aicore timing: sorts write their structures at the per-type sort rate, counter-mode GatherMask per group") {
    Config c;
    auto p = params(c, {});
    auto ceil = [](uint64_t a, uint64_t b) { return (a + b - 1) / b; };
    // vbitsort: 32 structures of 8 bytes per repeat.
    isa::Instr s = isa::make_instr(Opcode::VBITSORT);
    s.vec.repeat = 5;
    s.dtype = isa::DType::FP16;
    CHECK(compute_timing(s, *p).occupancy == ceil(5 * 32 * 8, p->vec_sort_fp16_bpc));
    s.dtype = isa::DType::FP32;
    CHECK(compute_timing(s, *p).occupancy == ceil(5 * 32 * 8, p->vec_sort_fp32_bpc));
    CHECK(compute_timing(s, *p).latency == p->vec_startup);
    // vmrgsort4: every structure its valid lists hold (list 3 ignored with validBit 7).
    isa::Instr m = isa::make_instr(Opcode::VMRGSORT4);
    m.dtype = isa::DType::FP32;
    isa::set_mrgsort4_config(m, isa::MrgSort4Config{{100, 37, 5, 999}, 7, true}, 0);
    CHECK(compute_timing(m, *p).occupancy == ceil((100 + 37 + 5) * 8, p->vec_sort_fp32_bpc));
    isa::set_mrgsort4_config(m, isa::MrgSort4Config{{16, 16, 16, 16}, 15, false}, 0x180);
    m.vec.repeat = 3;
    CHECK(compute_timing(m, *p).occupancy == ceil(3 * 64 * 8, p->vec_sort_fp32_bpc));
    // vreducev2 in counter mode: each repeat's 256-byte groups at the simple rate.
    isa::Instr g = isa::make_instr(Opcode::VREDUCEV2);
    g.dtype = isa::DType::FP32;
    g.vec.repeat = 2, g.vec.with_index = 1, g.vec.mask_lo = 70, g.vec.mask_hi = 0;
    CHECK(compute_timing(g, *p).occupancy == 2 * ceil(70 * 4, 256) * p->vec_cycles_per_repeat);
    isa::Instr b = isa::make_instr(Opcode::VGATHERB);
    b.vec.repeat = 4;
    CHECK(compute_timing(b, *p).occupancy == 4 * p->vec_gather_cycles_per_repeat);
}

TEST_CASE("aicore timing: vtranspose moves a 16 x 16 block of 16-bit data in two vector repeat times") {
    Config c;
    auto p = params(c, {});
    isa::Instr t = isa::make_instr(Opcode::VTRANSPOSE);
    t.dtype = isa::DType::FP16;
    t.dst.pos = t.src0.pos = isa::Pos::UB;
    t.dst.addr = 0x10000, t.src0.addr = 0;  // destination and source in different 64 KiB spans: no bank conflict
    for (uint32_t r : {1u, 3u}) {
        t.vec.repeat = static_cast<uint16_t>(r);
        // 16 x 16 elements of 2 bytes a repeat at the vector unit's 256 bytes a repeat time (the A2 table's 128
        // elements a cycle).
        const ComputeTiming ct = compute_timing(t, *p);
        CHECK(ct.ub_conflict == 0);
        CHECK(ct.occupancy == r * (16 * 16 * 2 / 256) * p->vec_cycles_per_repeat);
        CHECK(ct.latency == p->vec_startup);
    }
}

TEST_CASE("aicore timing: vnchwconv moves 256 bytes per vector repeat time (1-byte types: half blocks)") {
    Config c;
    auto p = params(c, {});
    isa::Instr n = isa::make_instr(Opcode::VNCHWCONV);
    n.nchw.repeat = 7;
    for (isa::DType t : {isa::DType::FP16, isa::DType::FP32, isa::DType::INT8}) {
        n.dtype = t;
        // A repeat reads 16 blocks of 32 bytes (1-byte types: 16 bytes of each).
        const uint64_t bytes = 16 * (t == isa::DType::INT8 ? 16 : 32);
        INFO(isa::dtype_name(t));
        CHECK(compute_timing(n, *p).occupancy == 7 * (bytes / 256) * p->vec_cycles_per_repeat);
        CHECK(compute_timing(n, *p).latency == p->vec_startup);
    }
}
