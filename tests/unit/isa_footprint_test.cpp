#include <catch2/catch.hpp>

#include "isa/semantics.h"
#include "isa_samples.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
// Records every byte range execute() asks for, to hold footprint() to what semantics touch.
struct RecordingMem : TestMem {
    struct Access {
        Pos pos;
        uint64_t lo, hi;
        bool gm_write;
    };
    std::vector<Access> log;
    uint8_t* local(Pos pos, uint64_t addr, uint64_t len) override {
        log.push_back({pos, addr, addr + len, false});
        return TestMem::local(pos, addr, len);
    }
    void gm_read(uint64_t addr, void* dst, uint64_t len) override {
        log.push_back({Pos::GM, addr, addr + len, false});
        TestMem::gm_read(addr, dst, len);
    }
    void gm_write(uint64_t addr, const void* src, uint64_t len) override {
        log.push_back({Pos::GM, addr, addr + len, true});
        TestMem::gm_write(addr, src, len);
    }
};
}  // namespace

TEST_CASE("isa footprint: every opcode touches only bytes inside its footprint, and every extent is used") {
    for (int i = 0; i < static_cast<int>(Opcode::kCount); ++i) {
        const Opcode op = static_cast<Opcode>(i);
        Instr in = sample(op);
        INFO(opcode_name(op));
        RecordingMem mem;
        REQUIRE_NOTHROW(execute(in, mem));
        if (op == Opcode::LD_GM) load_scalar(in, mem);  // a load's data goes to a register
        Extent ex[kMaxExtents];
        const int n = footprint(in, ex);
        const bool scalar_mem = op == Opcode::LD_GM || op == Opcode::ST_GM;
        if (param_kind(op) == ParamKind::Flag || param_kind(op) == ParamKind::CrossFlag ||
            (param_kind(op) == ParamKind::Scalar && !scalar_mem) || op == Opcode::NOP || op == Opcode::SET_MASK) {
            CHECK(n == 0);
            CHECK(mem.log.empty());
            continue;
        }
        CHECK(n > 0);
        for (const auto& a : mem.log) {
            bool inside = false;
            for (int e = 0; e < n; ++e)
                inside |= ex[e].pos == a.pos && ex[e].lo <= a.lo && a.hi <= ex[e].hi &&
                          (!a.gm_write || ex[e].write);
            INFO("access " << pos_name(a.pos) << " [" << a.lo << ", " << a.hi << ")");
            CHECK(inside);
        }
        for (int e = 0; e < n; ++e) {
            bool used = false;
            for (const auto& a : mem.log) used |= a.pos == ex[e].pos && a.lo < ex[e].hi && ex[e].lo < a.hi;
            INFO("extent " << e << " " << pos_name(ex[e].pos) << " [" << ex[e].lo << ", " << ex[e].hi << ")");
            CHECK(used);
            CHECK(ex[e].lo < ex[e].hi);
        }
        bool touches_gm = false;
        for (int e = 0; e < n; ++e) touches_gm |= ex[e].pos == Pos::GM;
        // gm_bytes counts what the MTEs move; the scalar unit's accesses go through its data cache.
        CHECK((gm_bytes(in) > 0) == (touches_gm && !scalar_mem));
    }
}

TEST_CASE("isa footprint: the sparse load2d and mad touch only their footprints (the index buffer included)") {
    Instr ld = make_instr(Opcode::LOAD2D);
    ld.dtype = DType::INT8;
    ld.dst = A(Pos::L0B, 0x600), ld.src0 = A(Pos::L1, 0x400), ld.src1 = A(Pos::L1, 0x8000);
    ld.l2d.start_index = 2, ld.l2d.repeat = 5, ld.l2d.sparse = 1;
    Instr mad = make_instr(Opcode::MAD);
    mad.dtype = DType::INT8;
    mad.mad = {33, 72, 17, 0, 1};  // bias, m and n partial, k/2 = 36: two dense k fractals
    mad.mad.sparse = 1;
    mad.src2 = A(Pos::BT, 0x40), mad.dst.addr = 0x400, mad.src0.addr = 0x200, mad.src1.addr = 0x600;
    for (const Instr& in : {ld, mad}) {
        INFO(opcode_name(in.op));
        REQUIRE(validate(in).empty());
        RecordingMem mem;
        REQUIRE_NOTHROW(execute(in, mem));
        Extent ex[kMaxExtents];
        const int n = footprint(in, ex);
        bool idx = false;
        for (int e = 0; e < n; ++e) idx |= ex[e].pos == Pos::SPIDX;
        CHECK(idx);
        for (const auto& a : mem.log) {
            bool inside = false;
            for (int e = 0; e < n; ++e) inside |= ex[e].pos == a.pos && ex[e].lo <= a.lo && a.hi <= ex[e].hi;
            INFO("access " << pos_name(a.pos) << " [" << a.lo << ", " << a.hi << ")");
            CHECK(inside);
        }
        for (int e = 0; e < n; ++e) {
            bool used = false;
            for (const auto& a : mem.log) used |= a.pos == ex[e].pos && a.lo < ex[e].hi && ex[e].lo < a.hi;
            INFO("extent " << e << " " << pos_name(ex[e].pos));
            CHECK(used);
        }
    }
}

TEST_CASE("isa footprint: timing quantities read off an instruction") {
    Instr mad = make_instr(Opcode::MAD);
    mad.mad = {33, 70, 17, 0, 0};
    CHECK(mad_blocks(mad) == 3 * 5 * 2);  // ceil(33/16) * ceil(70/16) * ceil(17/16)
    mad.dtype = DType::INT8;
    CHECK(mad_blocks(mad) == 3 * 3 * 2);  // K0 = 32
    Instr l2 = sample(Opcode::LOAD2D);
    CHECK(moved_bytes(l2) == l2.l2d.repeat * 512ull);
    CHECK(gm_bytes(l2) == 0);
    Instr g = sample(Opcode::COPY_GM_TO_UB);
    CHECK(gm_bytes(g) == uint64_t{g.copy.nburst} * g.copy.len_bytes);
    Instr f = sample(Opcode::FIXPIPE);
    f.dst.pos = Pos::GM;
    CHECK(gm_bytes(f) == uint64_t{f.fix.nd_num} * f.fix.m * f.fix.n * 1);  // nd_num int8 matrices
    CHECK(default_pipe(Opcode::LOAD2D_GM) == Pipe::MTE2);
    CHECK(default_pipe(Opcode::LOAD3D) == Pipe::MTE1);
    CHECK(default_pipe(Opcode::FIXPIPE) == Pipe::FIX);
    CHECK(default_pipe(Opcode::COPY_UB_TO_L1) == Pipe::MTE3);
    CHECK(default_pipe(Opcode::VGATHER) == Pipe::V);
    CHECK(default_pipe(Opcode::MAD) == Pipe::M);
}
