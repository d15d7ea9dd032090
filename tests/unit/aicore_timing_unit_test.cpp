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

// Reference: per repeat, accesses per bank over all blocks of the operands a binary op touches.
uint64_t brute_conflicts(const isa::Instr& in, const CoreParams& p) {
    uint64_t total = 0;
    const uint32_t per_group = std::max<uint32_t>(1, p.ub_banks / p.ub_bank_groups);
    for (uint32_t r = 0; r < in.vec.repeat; ++r) {
        std::map<uint64_t, uint32_t> count;
        std::vector<std::pair<int, uint64_t>> src_banks;
        auto touch = [&](int op, const isa::Addr& a, uint16_t blk, uint16_t rep, bool src) {
            for (uint32_t b = 0; b < (blk ? 8u : 1u); ++b) {  // block stride 0: one block, read once
                const uint64_t bank = ((a.addr + uint64_t(r) * rep * 32 + uint64_t(b) * blk * 32) / p.ub_bank_bytes) % p.ub_banks;
                ++count[bank];
                if (src) src_banks.push_back({op, bank});
            }
        };
        touch(0, in.src0, in.vec.src0_blk_stride, in.vec.src0_rep_stride, true);
        touch(1, in.src1, in.vec.src1_blk_stride, in.vec.src1_rep_stride, true);
        touch(2, in.dst, in.vec.dst_blk_stride, in.vec.dst_rep_stride, false);
        uint32_t worst = 0;
        for (const auto& [b, c] : count) worst = std::max(worst, c);
        bool clash = false;
        for (const auto& [oa, ba] : src_banks)
            for (const auto& [ob, bb] : src_banks)
                clash = clash || (oa != ob && ba != bb && ba / per_group == bb / per_group);
        total += uint64_t(worst - 1) * p.ub_bank_conflict_cycles + (clash ? p.ub_group_conflict_cycles.get() : 0);
    }
    return total;
}

void random_adds(const CoreParams& p, uint32_t seed, bool unit_blk) {
    std::mt19937 rng(seed);
    for (int t = 0; t < 400; ++t) {
        isa::Instr in = isa::make_instr(Opcode::VADD);
        in.dst = {(rng() % 2048) * 32, Pos::UB};
        in.src0 = {(rng() % 2048) * 32, Pos::UB};
        in.src1 = {(rng() % 2048) * 32, Pos::UB};
        in.vec.repeat = static_cast<uint16_t>(1 + rng() % 6);
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

TEST_CASE("aicore bank conflicts: the contiguous fast path matches a brute-force count") {
    Config c;
    auto p = params(c, {});
    random_adds(*p, 1, true);
}

TEST_CASE("aicore bank conflicts: the general path (strided blocks, odd banks, bank groups) matches brute force") {
    Config c;
    auto p = params(c, {"chip.aicore.ub.banks=48", "chip.aicore.ub.bank_bytes=64", "chip.aicore.ub.bank_groups=12",
                        "chip.aicore.ub.bank_conflict_cycles=3", "chip.aicore.ub.group_conflict_cycles=2"});
    random_adds(*p, 2, false);
    Config c2;
    auto q = params(c2, {});
    random_adds(*q, 3, false);
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
