// VBITSORT (Sort32), VMRGSORT4 (MrgSort) and VGATHERB (Gatherb) against host references: descending
// scores with ties in input order, the (score, index) structure layouts of fp32 and fp16, the merge's
// valid lists, exhausted suspension and repeats, the block gather's strides; validate's rejections.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "isa/instr.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
constexpr Pos U = Pos::UB;

// A score pattern with ties: values repeat every 7 elements.
double score_of(uint32_t i) { return static_cast<double>((i * 5u) % 7u) - 3.0 + (i % 3u == 0 ? 0.5 : 0.0); }

Instr sort_instr(Opcode op, DType t, uint64_t d, uint64_t s0, uint64_t s1, uint16_t repeat) {
    Instr in = make_instr(op);
    in.dtype = t;
    in.dst = at(U, d), in.src0 = at(U, s0), in.src1 = at(U, s1);
    in.vec.repeat = repeat;
    return in;
}

// Host reference of one sorted group: positions ordered by score, descending, ties by position.
std::vector<uint32_t> ref_order(const std::vector<double>& s) {
    std::vector<uint32_t> o(s.size());
    for (uint32_t i = 0; i < o.size(); ++i) o[i] = i;
    std::stable_sort(o.begin(), o.end(), [&](uint32_t a, uint32_t b) { return s[a] > s[b]; });
    return o;
}
}  // namespace

TEST_CASE(
    "isa sort: vbitsort sorts each group of 32 descending, ties in input order, fp32 and fp16 layouts") {
    for (DType t : {DType::FP32, DType::FP16}) {
        TestMem m;
        const uint32_t es = dtype_size(t);
        for (uint32_t i = 0; i < 64; ++i) {
            m.set(U, 0x1000 + i * es, t, score_of(i));
            m.put<uint32_t>(U, 0x2000 + i * 4, 1000 + i);
        }
        for (uint32_t i = 0; i < 64 * 2; ++i) m.put<uint32_t>(U, 0x3000 + i * 4, 0xdeadbeefu);
        Instr in = sort_instr(Opcode::VBITSORT, t, 0x3000, 0x1000, 0x2000, 2);
        REQUIRE(validate(in).empty());
        execute(in, m);
        for (uint32_t r = 0; r < 2; ++r) {
            std::vector<double> s(32);
            for (uint32_t i = 0; i < 32; ++i) s[i] = score_of(r * 32 + i);
            const std::vector<uint32_t> o = ref_order(s);
            for (uint32_t k = 0; k < 32; ++k) {
                const uint64_t at_ = 0x3000 + (r * 32 + k) * 8;
                CHECK(m.val(U, at_, t) == s[o[k]]);
                CHECK(m.get<uint32_t>(U, at_ + 4) == 1000 + r * 32 + o[k]);
                if (t == DType::FP16) CHECK(m.get<uint16_t>(U, at_ + 2) == 0);  // reserved bytes
            }
        }
        Extent ex[kMaxExtents];
        REQUIRE(footprint(in, ex) == 3);
        CHECK(ex[0].hi - ex[0].lo == 64 * es);
        CHECK(ex[1].hi - ex[1].lo == 64 * 4);
        CHECK((ex[2].write && ex[2].hi - ex[2].lo == 64 * 8));
    }
    CHECK(!validate(sort_instr(Opcode::VBITSORT, DType::INT32, 0, 0, 0, 1)).empty());
}

TEST_CASE(
    "isa sort: vmrgsort4 merges the valid lists, stops on an exhausted list, repeats over contiguous lists") {
    TestMem m;
    // Three sorted fp32 lists of 5, 3 and 4 structures (list 3 not valid: validBit 7); equal scores across
    // lists come out list 0 first.
    const double l0[] = {9, 7, 7, 2, -1}, l1[] = {8, 7, 0}, l2[] = {10, 7, 3, -5};
    const double* ls[] = {l0, l1, l2};
    const uint16_t len[] = {5, 3, 4, 0};
    const uint64_t base[] = {0x1000, 0x1400, 0x1800};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < len[i]; ++k) {
            m.set(U, base[i] + k * 8, DType::FP32, ls[i][k]);
            m.put<uint32_t>(U, base[i] + k * 8 + 4, 100 * i + k);
        }
    Instr in = sort_instr(Opcode::VMRGSORT4, DType::FP32, 0x4000, base[0], base[1], 1);
    in.src2 = at(U, base[2]);
    set_mrgsort4_config(in, MrgSort4Config{{5, 3, 4, 0}, 7, false}, 0);
    REQUIRE(validate(in).empty());
    execute(in, m);
    const uint32_t want[] = {200, 0, 100, 1, 2, 101, 201, 202, 3, 102, 4, 203};  // list*100 + position
    for (int k = 0; k < 12; ++k) CHECK(m.get<uint32_t>(U, 0x4000 + k * 8 + 4) == want[k]);
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 4);
    CHECK((ex[3].write && ex[3].lo == 0x4000 && ex[3].hi == 0x4000 + 12 * 8));

    // Exhausted suspension: list 1 runs out with the 10th structure (102): the merge stops there.
    for (int k = 0; k < 12; ++k) m.put<uint32_t>(U, 0x5000 + k * 8 + 4, 0xffffffffu);
    Instr ex_in = in;
    ex_in.dst = at(U, 0x5000);
    set_mrgsort4_config(ex_in, MrgSort4Config{{5, 3, 4, 0}, 7, true}, 0);
    execute(ex_in, m);
    for (int k = 0; k < 10; ++k) CHECK(m.get<uint32_t>(U, 0x5000 + k * 8 + 4) == want[k]);
    CHECK(m.get<uint32_t>(U, 0x5000 + 10 * 8 + 4) == 0xffffffffu);
    const uint8_t* lists[4] = {m.of(U).data() + base[0], m.of(U).data() + base[1], m.of(U).data() + base[2],
                               nullptr};
    uint32_t consumed[4];
    CHECK(mrgsort4_merge(DType::FP32, lists, mrgsort4_config(ex_in), nullptr, consumed) == 10);
    CHECK((consumed[0] == 4 && consumed[1] == 3 && consumed[2] == 3 && consumed[3] == 0));

    // Repeat 2 over eight contiguous fp16 lists of 2: each repeat merges the next four.
    for (int i = 0; i < 16; ++i) {
        m.set(U, 0x6000 + i * 8, DType::FP16, (i % 2 ? 1.0 : 5.0) + i / 2);  // each list descending
        m.put<uint32_t>(U, 0x6000 + i * 8 + 4, i);
    }
    Instr r2 = sort_instr(Opcode::VMRGSORT4, DType::FP16, 0x7000, 0x6000, 0x6010, 2);
    r2.src2 = at(U, 0x6020);
    set_mrgsort4_config(r2, MrgSort4Config{{2, 2, 2, 2}, 15, false}, 0x6030);
    REQUIRE(validate(r2).empty());
    execute(r2, m);
    for (int r = 0; r < 2; ++r) {
        std::vector<double> s(8);
        for (int k = 0; k < 8; ++k) s[k] = m.val(U, 0x6000 + (r * 8 + k) * 8, DType::FP16);
        const std::vector<uint32_t> o = ref_order(s);  // the lists are contiguous: input order = list order
        for (int k = 0; k < 8; ++k)
            CHECK(m.get<uint32_t>(U, 0x7000 + (r * 8 + k) * 8 + 4) == static_cast<uint32_t>(r * 8 + o[k]));
    }

    Instr bad = r2;
    set_mrgsort4_config(bad, MrgSort4Config{{2, 2, 2, 2}, 5, false}, 0x6030);  // validBit 5
    CHECK(!validate(bad).empty());
    set_mrgsort4_config(bad, MrgSort4Config{{2, 2, 2, 2}, 15, false}, 0x6040);  // list 3 not contiguous
    CHECK(!validate(bad).empty());
    set_mrgsort4_config(bad, MrgSort4Config{{2, 2, 2, 2}, 15, true}, 0x6030);  // repeat 2 with suspension
    CHECK(!validate(bad).empty());
    bad = in;
    set_mrgsort4_config(bad, MrgSort4Config{{4096, 3, 4, 0}, 7, false}, 0);
    CHECK(!validate(bad).empty());
    bad = in;
    bad.dst = at(U, base[1] + 8);  // dst overlaps list 1
    CHECK(!validate(bad).empty());
}

TEST_CASE("isa sort: vgatherb copies 8 blocks per repeat from byte offsets, dst strides in blocks") {
    TestMem m;
    for (uint32_t i = 0; i < 1024; ++i) m.put<uint16_t>(U, 0x1000 + i * 2, static_cast<uint16_t>(i));
    for (uint32_t j = 0; j < 16; ++j) m.put<uint32_t>(U, 0x800 + j * 4, (15 - j) * 64);  // every other block
    Instr in = sort_instr(Opcode::VGATHERB, DType::INT16, 0x4000, 0x1000, 0x800, 2);
    in.vec.dst_blk_stride = 2, in.vec.dst_rep_stride = 16, in.vec.gather_span = 2048;
    REQUIRE(validate(in).empty());
    execute(in, m);
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t j = 0; j < 8; ++j)
            for (uint32_t e = 0; e < 16; ++e) {
                const uint64_t d = 0x4000 + (r * 16 + j * 2) * 32 + e * 2;
                CHECK(m.get<uint16_t>(U, d) == (15 - (r * 8 + j)) * 32 + e);
            }
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 3);
    CHECK((ex[2].write && ex[2].hi == 0x4000 + (16 + 7 * 2) * 32 + 32));
    m.put<uint32_t>(U, 0x800, 2048);  // past the span
    CHECK_THROWS(execute(in, m));
    m.put<uint32_t>(U, 0x800, 16);  // not a whole block
    CHECK_THROWS(execute(in, m));
    CHECK(!validate(sort_instr(Opcode::VGATHERB, DType::INT8, 0, 0, 0, 1)).empty());
}
