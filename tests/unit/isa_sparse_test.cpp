// The cube's 4:2 sparse forms (isa/sem_sparse.cpp): a sparse load2d moves B's fractals into L0B and their
// index fractals into the index buffer at a quarter of the L0B address; a sparse mad selects A's columns
// by the index as the vendor's MmadWithSparse table gives them. The host reference below is that table.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "isa/asm.h"
#include "isa/instr.h"
#include "isa/layout.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {

// The reference's selection table: index pair (i0, i1) -> the positions of the two kept elements
// among a group's four (the two "X/X" rows select one element twice).
struct Pick {
    uint8_t i0, i1, x, y;
};
constexpr Pick kTable[8] = {{2, 2, 2, 3}, {1, 2, 1, 3}, {0, 2, 0, 3}, {1, 1, 1, 2},
                            {0, 1, 0, 2}, {0, 0, 0, 1}, {2, 0, 2, 2}, {1, 0, 1, 1}};

int8_t a_val(uint32_t i, uint32_t k) { return static_cast<int8_t>(static_cast<int>((i * 5 + k * 3) % 23) - 11); }
int8_t d_val(uint32_t d, uint32_t j) { return static_cast<int8_t>(static_cast<int>((d * 7 + j * 13) % 19) - 9); }
const Pick& pick(uint32_t g, uint32_t j) { return kTable[(g * 3 + j * 5) % 8]; }

// m x k A, a densified k/2 x n B with its index; B and the index in fractal order (ZN / 128-byte index
// fractals) at L1 0x8000 and 0xc000, A as ZZ in L0A directly.
struct Case {
    uint32_t m, k, n;
    uint32_t n1() const { return (n + 15) / 16; }
    uint32_t kb() const { return (k / 2 + 31) / 32; }
    void fill(TestMem& mem) const {
        const std::vector<uint8_t> a = [&] {
            std::vector<uint8_t> nd(uint64_t{m} * k);
            for (uint32_t i = 0; i < m; ++i)
                for (uint32_t q = 0; q < k; ++q) nd[uint64_t{i} * k + q] = static_cast<uint8_t>(a_val(i, q));
            return nd_to_zz(nd.data(), m, k, DType::INT8);
        }();
        std::memcpy(mem.of(Pos::L0A).data(), a.data(), a.size());
        for (uint32_t d = 0; d < k / 2; ++d)
            for (uint32_t j = 0; j < n; ++j) {
                const uint64_t o = zn_offset(d, j, n1() * 16, 32, 1);
                mem.of(Pos::L1)[0x8000 + o] = static_cast<uint8_t>(d_val(d, j));
                const Pick& p = pick(d / 2, j);
                const uint32_t v = d % 2 ? p.i1 : p.i0;
                mem.of(Pos::L1)[0xc000 + o / 4] |= static_cast<uint8_t>(v << (2 * (o % 4)));
            }
    }
    int32_t want(uint32_t i, uint32_t j) const {
        int32_t s = 0;
        for (uint32_t g = 0; g < k / 4; ++g) {
            const Pick& p = pick(g, j);
            s += a_val(i, 4 * g + p.x) * d_val(2 * g, j) + a_val(i, 4 * g + p.y) * d_val(2 * g + 1, j);
        }
        return s;
    }
};

Instr sparse_load(uint64_t dst, uint16_t start, uint16_t repeat) {
    Instr in = make_instr(Opcode::LOAD2D);
    in.dtype = DType::INT8;
    in.dst = at(Pos::L0B, dst), in.src0 = at(Pos::L1, 0x8000), in.src1 = at(Pos::L1, 0xc000);
    in.l2d.start_index = start, in.l2d.repeat = repeat, in.l2d.sparse = 1;
    return in;
}
Instr sparse_mad(const Case& c, uint64_t b) {
    Instr in = make_instr(Opcode::MAD);
    in.dtype = DType::INT8;
    in.src1 = at(Pos::L0B, b);
    in.mad.m = static_cast<uint16_t>(c.m), in.mad.k = static_cast<uint16_t>(c.k), in.mad.n = static_cast<uint16_t>(c.n);
    in.mad.sparse = 1;
    return in;
}

}  // namespace

TEST_CASE("isa sparse: load2d sparse and mad sparse compute the reference's 4:2 selection") {
    const Case c{20, 136, 40};  // k/2 = 68: three dense k fractals, the last partial; m, n partial too
    TestMem mem;
    c.fill(mem);
    const uint32_t fr = c.kb() * c.n1();  // 9 fractals, loaded in two parts (start index, index at dst / 4)
    const uint64_t b = 0x1000;
    for (const Instr& ld : {sparse_load(b, 0, 4), sparse_load(b + 4 * 512, 4, static_cast<uint16_t>(fr - 4))}) {
        REQUIRE(validate(ld).empty());
        Extent ex[kMaxExtents];
        REQUIRE(footprint(ld, ex) == 4);
        CHECK(ex[3].pos == Pos::SPIDX);
        CHECK(ex[3].write);
        CHECK(ex[3].lo == ld.dst.addr / 4);
        CHECK(ex[3].hi - ex[3].lo == ld.l2d.repeat * 128ull);
        CHECK(moved_bytes(ld) == ld.l2d.repeat * (512ull + 128));
        execute(ld, mem);
    }
    CHECK(std::memcmp(mem.of(Pos::L0B).data() + b, mem.of(Pos::L1).data() + 0x8000, fr * 512) == 0);
    CHECK(std::memcmp(mem.of(Pos::SPIDX).data() + b / 4, mem.of(Pos::L1).data() + 0xc000, fr * 128) == 0);
    Instr mad = sparse_mad(c, b);
    REQUIRE(validate(mad).empty());
    execute(mad, mem);
    mad.mad.accumulate = 1;  // C += the same product
    execute(mad, mem);
    const uint32_t mp = round_up16(c.m);
    int bad = 0;
    for (uint32_t i = 0; i < c.m; ++i)
        for (uint32_t j = 0; j < c.n; ++j) {
            const int32_t got = mem.get<int32_t>(Pos::L0C, nz_offset(i, j, mp, 16, 4));
            if (got != 2 * c.want(i, j) && ++bad < 5) FAIL_CHECK("C(" << i << ", " << j << ") " << got << " != " << 2 * c.want(i, j));
        }
    CHECK(bad == 0);
    // The mad reads the index buffer at a quarter of B's address, B's fractals for half of k.
    Extent ex[kMaxExtents];
    const int n = footprint(mad, ex);
    bool idx = false;
    for (int e = 0; e < n; ++e)
        if (ex[e].pos == Pos::SPIDX) {
            idx = true;
            CHECK(ex[e].lo == b / 4);
            CHECK(ex[e].hi == b / 4 + fr * 128ull);
            CHECK_FALSE(ex[e].write);
        } else if (ex[e].pos == Pos::L0B) {
            CHECK(ex[e].hi - ex[e].lo == fr * 512ull);
        }
    CHECK(idx);
}

TEST_CASE("isa sparse: bad sparse forms are named, and the text form round-trips") {
    const Case c{16, 64, 16};
    Instr ld = sparse_load(0, 0, 2);
    CHECK(assemble(disassemble(ld)).at(0) == ld);
    CHECK_THAT(disassemble(ld), Catch::Contains("sparse=1"));
    Instr mad = sparse_mad(c, 0);
    CHECK(assemble(disassemble(mad)).at(0) == mad);
    Instr bad = ld;
    bad.dtype = DType::FP16;
    CHECK_THAT(validate(bad), Catch::Contains("int8 only"));
    bad = ld;
    bad.l2d.src_stride = 2;
    CHECK_THAT(validate(bad), Catch::Contains("consecutive fractals"));
    bad = ld;
    bad.src1.pos = Pos::UB;
    CHECK_THAT(validate(bad), Catch::Contains("sparse index"));
    bad = ld;
    bad.dst.pos = Pos::L0A;
    CHECK_THAT(validate(bad), Catch::Contains("dst"));
    bad = mad;
    bad.mad.k = 66;
    CHECK_THAT(validate(bad), Catch::Contains("multiple of 4"));
    bad = mad;
    bad.dtype = DType::FP16;
    CHECK_THAT(validate(bad), Catch::Contains("int8 only"));
    bad = mad;
    bad.mad.m = 1, bad.mad.gemv = 1;
    CHECK_THAT(validate(bad), Catch::Contains("GEMV"));
    CHECK(std::string(pos_name(Pos::SPIDX)) == "SPIDX");
}
