#include <catch2/catch.hpp>

#include "isa/instr.h"
#include "isa/layout.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

using namespace sfumato::isa;
using namespace sfumato::isa::test;

namespace {
Instr copy(Opcode op, Pos dp, uint64_t d, Pos sp, uint64_t s, uint32_t nburst, uint32_t len) {
    Instr in = make_instr(op);
    in.dst = at(dp, d), in.src0 = at(sp, s);
    in.copy.nburst = nburst, in.copy.len_bytes = len;
    return in;
}
}  // namespace

TEST_CASE("isa move: GM->UB bursts with byte-exact length, gaps and padding") {
    TestMem m;
    for (int i = 0; i < 64; ++i) m.of(Pos::GM)[0x100 + i] = static_cast<uint8_t>(i + 1);
    for (auto& b : m.of(Pos::UB)) b = 0xee;
    Instr in = copy(Opcode::COPY_GM_TO_UB, Pos::UB, 0x0, Pos::GM, 0x100, 2, 10);
    in.copy.src_gap = 6;  // bytes at GM
    in.copy.dst_gap = 1;  // blocks at UB
    in.copy.pad_left = 2, in.copy.pad_right = 1;
    in.scalar = 7.0;
    REQUIRE(validate(in).empty());
    execute(in, m);
    for (int burst = 0; burst < 2; ++burst) {
        const uint64_t base = burst * 64;  // 32-B burst + 1 gap block
        CHECK(m.val(Pos::UB, base + 0, DType::FP16) == 7.0);
        CHECK(m.val(Pos::UB, base + 2, DType::FP16) == 7.0);
        for (int b = 0; b < 10; ++b) CHECK(m.of(Pos::UB)[base + 4 + b] == 1 + burst * 16 + b);
        CHECK(m.val(Pos::UB, base + 14, DType::FP16) == 7.0);
        for (int b = 16; b < 32; ++b) CHECK(m.of(Pos::UB)[base + b] == 0);                   // zero to 32 B
        for (int b = 32; b < 64 && burst == 0; ++b) CHECK(m.of(Pos::UB)[base + b] == 0xee);  // gap untouched
    }
    CHECK(gm_bytes(in) == 20);
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 2);
    CHECK(ex[0].lo == 0x100);
    CHECK(ex[0].hi == 0x100 + 16 + 10);
    CHECK(ex[1].hi == 64 + 32);
    in.copy.pad_left = 0, in.copy.pad_right = 0, in.op = Opcode::COPY_GM_TO_L1, in.dst.pos = Pos::L1;
    execute(in, m);
    CHECK(m.of(Pos::L1)[64] == 17);
    in.copy.pad_left = 1;
    CHECK_FALSE(validate(in).empty());
}

TEST_CASE("isa move: UB->GM plain and atomic add (fp32 rounds once, int32 wraps)") {
    TestMem m;
    for (int i = 0; i < 8; ++i) m.set(Pos::UB, i * 4, DType::FP32, i + 0.5);
    for (int i = 0; i < 8; ++i) m.set(Pos::GM, 0x40 + i * 4, DType::FP32, 100);
    Instr in = copy(Opcode::COPY_UB_TO_GM, Pos::GM, 0x40, Pos::UB, 0x0, 1, 32);
    in.dtype = DType::FP32;
    in.copy.atomic = 1;
    execute(in, m);
    for (int i = 0; i < 8; ++i) CHECK(m.val(Pos::GM, 0x40 + i * 4, DType::FP32) == 100.5 + i);
    in.copy.atomic = 0;
    execute(in, m);
    CHECK(m.val(Pos::GM, 0x44, DType::FP32) == 1.5);
    m.put<int32_t>(Pos::UB, 0x100, 1), m.put<int32_t>(Pos::GM, 0x200, 0x7fffffff);
    Instr ii = copy(Opcode::COPY_UB_TO_GM, Pos::GM, 0x200, Pos::UB, 0x100, 1, 4);
    ii.dtype = DType::INT32, ii.copy.atomic = 1;
    execute(ii, m);
    CHECK(m.get<int32_t>(Pos::GM, 0x200) == INT32_MIN);
    Instr bad = copy(Opcode::COPY_GM_TO_UB, Pos::UB, 0, Pos::GM, 0, 1, 32);
    bad.copy.atomic = 1;
    CHECK_FALSE(validate(bad).empty());
}

TEST_CASE("isa move: local copies L1->UB, UB->L1, UB->UB with block gaps") {
    TestMem m;
    for (int i = 0; i < 128; ++i) m.of(Pos::L1)[i] = static_cast<uint8_t>(i);
    Instr a = copy(Opcode::COPY_L1_TO_UB, Pos::UB, 0x0, Pos::L1, 0x0, 2, 32);
    a.copy.src_gap = 1;
    execute(a, m);
    CHECK(m.of(Pos::UB)[0] == 0);
    CHECK(m.of(Pos::UB)[32] == 64);
    Instr b = copy(Opcode::COPY_UB_TO_L1, Pos::L1, 0x1000, Pos::UB, 0x0, 1, 64);
    execute(b, m);
    CHECK(m.of(Pos::L1)[0x1000 + 63] == 95);
    Instr c = copy(Opcode::COPY_UB_TO_UB, Pos::UB, 0x20, Pos::UB, 0x0, 1, 64);  // overlapping
    execute(c, m);
    CHECK(m.of(Pos::UB)[0x20] == 0);
    CHECK(m.of(Pos::UB)[0x40] == 64);
    Instr w = copy(Opcode::COPY_L1_TO_UB, Pos::L1, 0, Pos::L1, 0, 1, 32);
    CHECK(validate(w).find("dst") != std::string::npos);
}

TEST_CASE("isa move: ND->NZ matches the layout helper, partial C0 groups zero-filled") {
    TestMem m;
    const uint32_t rows = 20, cols = 37;  // fp16: C0 = 16, 3 column groups, 32 padded rows
    std::vector<uint8_t> nd(rows * cols * 2);
    for (uint32_t i = 0; i < rows * cols; ++i)
        store_f64(DType::FP16, &nd[i * 2], static_cast<double>(i % 1000));
    std::copy(nd.begin(), nd.end(), m.of(Pos::GM).begin() + 0x1000);
    Instr in = make_instr(Opcode::COPY_GM_TO_L1_ND2NZ);
    in.src0 = at(Pos::GM, 0x1000), in.dst = at(Pos::L1, 0x0);
    in.nd.n = rows, in.nd.d = cols, in.nd.src_d = cols;
    in.nd.dst_c0_stride = round_up16(rows), in.nd.dst_n_stride = 1;
    REQUIRE(validate(in).empty());
    for (auto& b : m.of(Pos::L1)) b = 0;
    execute(in, m);
    std::vector<uint8_t> ref = nd_to_nz(nd.data(), rows, cols, DType::FP16);
    CHECK(std::equal(ref.begin(), ref.end(), m.of(Pos::L1).begin()));
    CHECK(nz_to_nd(m.of(Pos::L1).data(), rows, cols, DType::FP16) == nd);
    CHECK(gm_bytes(in) == rows * cols * 2);
    // Two matrices side by side (nd_num = 2) at a matrix stride.
    Instr two = in;
    two.nd.nd_num = 2, two.nd.n = 4, two.nd.src_nd_stride = 4 * cols, two.nd.dst_nd_stride = 3 * 16;
    two.nd.dst_c0_stride = 16;
    execute(two, m);
    CHECK(m.val(Pos::L1, 3 * 16 * 32, DType::FP16) == 4 * cols % 1000);
}

TEST_CASE("isa move: load2d copies whole fractals, with stride, gap and transpose") {
    TestMem m;
    for (int i = 0; i < 4 * 256; ++i) m.put<uint16_t>(Pos::L1, i * 2, static_cast<uint16_t>(i));
    Instr in = make_instr(Opcode::LOAD2D);
    in.src0 = at(Pos::L1, 0), in.dst = at(Pos::L0A, 0);
    in.l2d.start_index = 1, in.l2d.repeat = 2, in.l2d.src_stride = 2, in.l2d.dst_gap = 1;
    execute(in, m);
    CHECK(m.get<uint16_t>(Pos::L0A, 0) == 256);         // fractal 1
    CHECK(m.get<uint16_t>(Pos::L0A, 1024) == 3 * 256);  // fractal 3, after a 1-fractal gap
    in.l2d.transpose = 1, in.l2d.repeat = 1, in.dst.pos = Pos::L0B;
    execute(in, m);
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) CHECK(m.get<uint16_t>(Pos::L0B, (j * 16 + i) * 2) == 256 + i * 16 + j);
    Extent ex[kMaxExtents];
    footprint(in, ex);
    CHECK(ex[0].lo == 512);
    CHECK(ex[0].hi == 1024);
    Instr g = in;
    g.op = Opcode::LOAD2D_GM, g.pipe = Pipe::MTE2, g.src0 = at(Pos::GM, 0x2000), g.l2d.transpose = 0,
    g.l2d.start_index = 0;
    for (int i = 0; i < 256; ++i) m.put<uint16_t>(Pos::GM, 0x2000 + i * 2, static_cast<uint16_t>(9000 + i));
    execute(g, m);
    CHECK(m.get<uint16_t>(Pos::L0B, 510) == 9255);
    CHECK(gm_bytes(g) == 512);
    in.dtype = DType::FP32;
    CHECK(validate(in).empty());  // 4-byte: square transpose from L1
    g.dtype = DType::FP32, g.l2d.transpose = 1;
    CHECK_FALSE(validate(g).empty());  // but not from GM
    in.dtype = DType::FP16, in.l2d.frac_gap = 1;
    CHECK_FALSE(validate(in).empty());  // frac_gap belongs to square transposes
}

TEST_CASE("isa move: load2d transposes 4-byte and 1-byte squares of two fractals") {
    // 4-byte: the square is two 16 x 8 fractals side by side; the transposed 16 x 16 splits
    // into two 16 x 8 fractals, the second frac_gap fractals after the first.
    TestMem m;
    for (int f = 0; f < 4; ++f)  // two squares; element (r, c) of square q holds q*1000 + r*16 + c
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 8; ++c)
                m.put<uint32_t>(Pos::L1, (f * 128 + r * 8 + c) * 4, (f / 2) * 1000 + r * 16 + (f % 2) * 8 + c);
    Instr in = make_instr(Opcode::LOAD2D);
    in.dtype = DType::INT32, in.src0 = at(Pos::L1, 0), in.dst = at(Pos::L0B, 0);
    in.l2d.transpose = 1, in.l2d.start_index = 0, in.l2d.repeat = 2, in.l2d.src_stride = 1, in.l2d.dst_gap = 0;
    in.l2d.frac_gap = 1;
    REQUIRE(validate(in).empty());
    execute(in, m);
    // Repeat q: first fractal at q, second at q + 2 (one fractal gap after the first).
    for (int q = 0; q < 2; ++q)
        for (int half = 0; half < 2; ++half)
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < 8; ++c) {
                    const int frac = q + half * 2;
                    // Transposed element (r, c + 8 * half) = source (c + 8 * half, r).
                    CHECK(m.get<uint32_t>(Pos::L0B, (frac * 128 + r * 8 + c) * 4) ==
                          static_cast<uint32_t>(q * 1000 + (c + 8 * half) * 16 + r));
                }
    Extent ex[kMaxExtents];
    REQUIRE(footprint(in, ex) == 2);
    CHECK(ex[0].hi - ex[0].lo == 2048);
    CHECK(ex[1].hi - ex[1].lo == 4 * 512);
    CHECK(moved_bytes(in) == 2048);

    // 1-byte: two 16 x 32 fractals stacked make a 32 x 32 square.
    TestMem b;
    for (int r = 0; r < 32; ++r)
        for (int c = 0; c < 32; ++c) b.put<uint8_t>(Pos::L1, r * 32 + c, static_cast<uint8_t>(r * 7 + c));
    Instr i8 = make_instr(Opcode::LOAD2D);
    i8.dtype = DType::INT8, i8.src0 = at(Pos::L1, 0), i8.dst = at(Pos::L0A, 0);
    i8.l2d.transpose = 1, i8.l2d.repeat = 1, i8.l2d.frac_gap = 2;
    execute(i8, b);
    for (int r = 0; r < 32; ++r)
        for (int c = 0; c < 32; ++c) {
            const int frac = r < 16 ? 0 : 3;  // second fractal two fractals after the first's end
            CHECK(b.get<uint8_t>(Pos::L0A, frac * 512 + (r % 16) * 32 + c) == static_cast<uint8_t>(c * 7 + r));
        }
}

TEST_CASE("isa move: fill writes the value in the dtype with gaps") {
    TestMem m;
    Instr in = make_instr(Opcode::FILL);
    in.dst = at(Pos::L0A, 0x40), in.dtype = DType::BF16, in.scalar = -3.0;
    in.fill.repeat = 2, in.fill.blk_num = 2, in.fill.dst_gap = 1;
    execute(in, m);
    CHECK(m.val(Pos::L0A, 0x40, DType::BF16) == -3.0);
    CHECK(m.val(Pos::L0A, 0x40 + 62, DType::BF16) == -3.0);
    CHECK(m.val(Pos::L0A, 0x40 + 64, DType::BF16) == 0.0);  // gap
    CHECK(m.val(Pos::L0A, 0x40 + 96, DType::BF16) == -3.0);
    CHECK(m.val(Pos::L0A, 0x40 + 160, DType::BF16) == 0.0);
    in.dst.pos = Pos::UB;
    CHECK_FALSE(validate(in).empty());
}

TEST_CASE("isa sync and scalar: validation of flags, cross-core flags, system registers") {
    Instr f = make_instr(Opcode::SET_FLAG);
    f.flag = {Pipe::MTE2, Pipe::V, 3};
    CHECK(validate(f).empty());
    CHECK(exec_pipe(f) == Pipe::MTE2);
    f.op = Opcode::WAIT_FLAG;
    CHECK(exec_pipe(f) == Pipe::V);
    f.flag.dst = Pipe::MTE2;
    CHECK_FALSE(validate(f).empty());
    Instr x = make_instr(Opcode::SET_CROSS_FLAG);
    x.xflag = {2, 10, Pipe::FIX};
    CHECK(validate(x).empty());
    CHECK(exec_pipe(x) == Pipe::FIX);
    x.xflag.flag_id = 11;
    CHECK_FALSE(validate(x).empty());
    x.xflag = {3, 0, Pipe::V};
    CHECK_FALSE(validate(x).empty());
    ScalarState st;
    st.block_idx = 5, st.block_num = 24, st.sub_block_id = 1, st.sys_cnt = 12345;
    Instr r = make_instr(Opcode::GET_SYSREG);
    const SysReg regs[] = {SysReg::BLOCK_IDX, SysReg::BLOCK_NUM, SysReg::SUB_BLOCK_ID, SysReg::SYS_CNT};
    const uint64_t want[] = {5, 24, 1, 12345};
    for (int i = 0; i < 4; ++i) {
        r.sc.reg = regs[i], r.sc.xd = static_cast<uint8_t>(i + 1);
        execute_scalar(r, st);
        CHECK(st.x[i + 1] == want[i]);
    }
    Instr mk = make_instr(Opcode::SET_MASK);
    mk.vec.mask_lo = 0xff, mk.vec.mask_hi = 1;
    execute_scalar(mk, st);
    CHECK(st.mask_lo == 0xff);
    CHECK(st.mask_hi == 1);
    TestMem m;
    CHECK_NOTHROW(execute(f.op == Opcode::WAIT_FLAG ? make_instr(Opcode::PIPE_BARRIER) : f, m));
}

TEST_CASE("isa move: a copy written into a default (vector-initialised) Instr has no padding or atomic") {
    // The skeleton's style: Instr{} then only the classic copy fields.
    Instr in;
    in.op = Opcode::COPY_GM_TO_UB, in.pipe = Pipe::MTE2;
    in.dst = at(Pos::UB, 0), in.src0 = at(Pos::GM, 0);
    in.copy.nburst = 1, in.copy.len_bytes = 64, in.copy.src_gap = 0, in.copy.dst_gap = 0;
    CHECK(in.copy.pad_left == 0);
    CHECK(in.copy.pad_right == 0);
    CHECK(in.copy.atomic == 0);
    CHECK(validate(in).empty());
    CHECK_FALSE((in == make_instr(Opcode::COPY_GM_TO_UB)));  // len differs from the default
    Instr ref = make_instr(Opcode::COPY_GM_TO_UB);
    ref.copy.len_bytes = 64;
    CHECK(in == ref);
}
