// The kernel API's instruction generation, without the chip model: each call's opcode, pipe
// and fields, count-form splitting (checked by executing the stream on a functional memory),
// errors for calls the ISA cannot express, TQue flag protocols for every position on coupled
// and split cores, and the race checker of the test sink itself.
#include <catch2/catch.hpp>
#include <set>

#include "kapi_sink.h"
#include "runtime/kernel/api.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::kernel;
using isa::DType;
using isa::Opcode;
using isa::Pos;
using sfumato::kernel::test::KapiSink;

namespace {
template <class T>
LocalTensor<T> ub(KernelContext& ctx, uint32_t addr, uint32_t elems) {
    return LocalTensor<T>(&ctx, Pos::UB, addr, elems, -1);
}
template <class T>
GlobalTensor<T> gm(uint64_t addr, uint64_t elems) {
    GlobalTensor<T> g;
    g.SetGlobalBuffer(addr, elems);
    return g;
}
}  // namespace

TEST_CASE("kapi: DataCopy picks the opcode and pipe from the positions") {
    KapiSink s;
    KernelContext ctx(s);
    const LocalTensor<half> u = ub<half>(ctx, 0, 1024);
    const LocalTensor<half> l1(&ctx, Pos::L1, 512, 1024, -1);
    DataCopy(u, gm<half>(0x100, 1024), 100);
    DataCopy(l1, gm<half>(0x100, 1024), DataCopyParams{4, 2, 1, 3});
    DataCopy(gm<half>(0x800, 1024), u, DataCopyParams{2, 1, 5, 7});
    DataCopy(u, l1, DataCopyParams{1, 4, 0, 0});
    DataCopy(l1, u, DataCopyParams{1, 4, 0, 0});
    DataCopy(u[256], u, DataCopyParams{1, 4, 0, 0});
    const auto v = s.instrs();
    REQUIRE(v.size() == 6);
    CHECK(v[0].op == Opcode::COPY_GM_TO_UB);
    CHECK(v[0].pipe == isa::Pipe::MTE2);
    CHECK(v[0].copy.len_bytes == 200);
    CHECK(v[0].dtype == DType::FP16);
    CHECK(v[1].op == Opcode::COPY_GM_TO_L1);
    CHECK(v[1].copy == isa::CopyParams{4, 64, 32, 3});  // GM stride in bytes, local in blocks
    CHECK(v[2].op == Opcode::COPY_UB_TO_GM);
    CHECK(v[2].pipe == isa::Pipe::MTE3);
    CHECK(v[2].copy == isa::CopyParams{2, 32, 5, 7 * 32});
    CHECK(v[3].op == Opcode::COPY_L1_TO_UB);
    CHECK(v[3].pipe == isa::Pipe::MTE1);
    CHECK(v[4].op == Opcode::COPY_UB_TO_L1);
    CHECK(v[4].pipe == isa::Pipe::MTE3);
    CHECK(v[5].op == Opcode::COPY_UB_TO_UB);
    CHECK(v[5].dst.addr == 512);
    CHECK(s.errors() == std::vector<std::string>{});
    const LocalTensor<half> l0a(&ctx, Pos::L0A, 0, 256, -1);
    CHECK_THROWS_AS(DataCopy(l0a, gm<half>(0, 256), 256), InputError);
    CHECK_THROWS_AS(DataCopy(gm<half>(0, 256), l0a, 256), InputError);
    // L1 -> GM: the split parts' cube core stores L1 through its MTE3.
    DataCopy(gm<half>(0, 256), l1, 256);
    REQUIRE(s.instrs().size() == 7);
    CHECK(s.instrs()[6].op == Opcode::COPY_L1_TO_GM);
    CHECK(s.instrs()[6].pipe == isa::Pipe::MTE3);
    CHECK(s.instrs()[6].copy.len_bytes == 512);
}

TEST_CASE("kapi: DataCopyPad pads on the way in and moves exact bytes out") {
    isa::test::TestMem mem;
    KapiSink s(isa::CoreKind::Coupled, &mem);
    KernelContext ctx(s);
    for (int i = 0; i < 40; ++i) mem.set(Pos::GM, 0x100 + i * 4, DType::FP32, i + 1);
    DataCopyPad(ub<float>(ctx, 0, 64), gm<float>(0x100, 40), DataCopyExtParams{2, 5 * 4, 3 * 4, 1},
                DataCopyPadExtParams<float>{true, 1, 1, -7.0f});
    const auto in = s.instrs()[0];
    CHECK(in.copy.pad_left == 1);
    CHECK(in.copy.pad_right == 1);
    CHECK(in.scalar == -7.0);
    // Burst 0: [-7, 1..5, -7, 0], then a 1-block gap, burst 1: [-7, 9..13, -7, 0].
    CHECK(mem.val(Pos::UB, 0, DType::FP32) == -7);
    CHECK(mem.val(Pos::UB, 4, DType::FP32) == 1);
    CHECK(mem.val(Pos::UB, 24, DType::FP32) == -7);
    CHECK(mem.val(Pos::UB, 64 + 4, DType::FP32) == 9);
    DataCopyPad(gm<float>(0x400, 8), ub<float>(ctx, 0, 64), DataCopyExtParams{1, 3 * 4, 0, 0});
    CHECK(mem.val(Pos::GM, 0x400 + 8, DType::FP32) == 2);
    CHECK(mem.val(Pos::GM, 0x400 + 12, DType::FP32) == 0);  // not written
}

TEST_CASE("kapi: count-form vector calls split into full repeats and a masked tail") {
    KapiSink s;
    KernelContext ctx(s);
    const auto a = ub<half>(ctx, 0, 40000), b = ub<half>(ctx, 0, 40000), d = ub<half>(ctx, 0, 40000);
    Add(d, a, b, 300);  // 128 lanes: 2 repeats + 44
    auto v = s.instrs();
    REQUIRE(v.size() == 2);
    CHECK(v[0].op == Opcode::VADD);
    CHECK(v[0].pipe == isa::Pipe::V);
    CHECK(v[0].vec.repeat == 2);
    CHECK(v[0].vec.mask_lo == ~0ull);
    CHECK(v[0].vec.mask_hi == ~0ull);
    CHECK(v[1].vec.repeat == 1);
    CHECK(v[1].vec.mask_lo == (1ull << 44) - 1);
    CHECK(v[1].vec.mask_hi == 0);
    CHECK(v[1].dst.addr == 2 * 256);
    Mul(d, a, b, 128u * 300);  // 255 + 45 repeats, no tail
    v = s.instrs();
    REQUIRE(v.size() == 4);
    CHECK(v[2].vec.repeat == 255);
    CHECK(v[3].vec.repeat == 45);
    CHECK(v[3].src0.addr == 255 * 256);
    // Mask/repeat form: one instruction with the caller's fields.
    const uint64_t mask[2] = {0xf0f0, 0x1};
    Sub(d, a, b, mask, 3, BinaryRepeatParams{1, 2, 1, 8, 16, 8});
    Max(d, a, b, 100, 2, BinaryRepeatParams{});
    v = s.instrs();
    REQUIRE(v.size() == 6);
    CHECK(v[4].op == Opcode::VSUB);
    CHECK(v[4].vec.mask_lo == 0xf0f0);
    CHECK(v[4].vec.mask_hi == 1);
    CHECK(v[4].vec.repeat == 3);
    CHECK(v[4].vec.src0_blk_stride == 2);
    CHECK(v[4].vec.src0_rep_stride == 16);
    CHECK(v[5].vec.mask_lo == ~0ull);  // a count of 100 lanes
    CHECK(v[5].vec.mask_hi == (1ull << 36) - 1);
    Add(d, a, b, 0);
    CHECK(s.instrs().size() == 6);  // nothing to do
}

TEST_CASE("kapi: count-form results equal elementwise host results (cast, compare/select, scalar ops)") {
    isa::test::TestMem mem;
    KapiSink s(isa::CoreKind::Coupled, &mem);
    KernelContext ctx(s);
    const uint32_t n = 300;  // 64 lanes a repeat (fp32, and casts from it): 4 full repeats + 44
    const auto x = ub<float>(ctx, 0, n), y = ub<float>(ctx, 2048, n), z = ub<float>(ctx, 4096, n);
    const auto h = ub<half>(ctx, 6144, n);
    const auto bits = ub<uint8_t>(ctx, 8192, 64);
    for (uint32_t i = 0; i < n; ++i) {
        mem.set(Pos::UB, i * 4, DType::FP32, i * 0.75 - 60);
        mem.set(Pos::UB, 2048 + i * 4, DType::FP32, 20.0 - i * 0.5);
    }
    Cast(h, x, RoundMode::FLOOR, n);  // every x is an fp16 value: exact
    Cast(ub<int32_t>(ctx, 10240, n), x, RoundMode::FLOOR, n);
    Compare(bits, x, y, CmpMode::GT, n);
    Select(z, bits, x, y, n);
    Muls(x, x, 2.0f, n);
    REQUIRE(s.errors().empty());
    for (uint32_t i = 0; i < n; ++i) {
        const double xi = i * 0.75 - 60, yi = 20.0 - i * 0.5;
        INFO(i);
        CHECK(mem.val(Pos::UB, 6144 + i * 2, DType::FP16) == xi);
        CHECK(mem.val(Pos::UB, 10240 + i * 4, DType::INT32) == std::floor(xi));
        CHECK(mem.val(Pos::UB, 4096 + i * 4, DType::FP32) == std::max(xi, yi));
        CHECK(mem.val(Pos::UB, i * 4, DType::FP32) == 2 * xi);
    }
    // A bitmask tail must start on 32 B: 3 full fp32 repeats leave it at byte 24.
    CHECK_THROWS_AS(Compare(bits, x, y, CmpMode::GT, 200), InputError);
    // fp16 <- fp32 walks 64 lanes a repeat: dst 128 B (4 blocks), src 256 B (8 blocks).
    const isa::Instr c = s.instrs()[0];
    CHECK(c.op == Opcode::VCONV);
    CHECK(c.vec.src_dtype == DType::FP32);
    CHECK(c.vec.round == RoundMode::FLOOR);
    CHECK(c.vec.dst_rep_stride == 4);
    CHECK(c.vec.src0_rep_stride == 8);
}

TEST_CASE("kapi: reductions, duplicate, brcb, transpose, gather, mask register") {
    isa::test::TestMem mem;
    KapiSink s(isa::CoreKind::Coupled, &mem);
    KernelContext ctx(s);
    const auto x = ub<float>(ctx, 0, 256), r = ub<float>(ctx, 2048, 64);
    for (uint32_t i = 0; i < 256; ++i) mem.set(Pos::UB, i * 4, DType::FP32, (i * 37) % 101);
    ReduceSum(r, x, 256);
    CHECK(s.instrs().back().vec.repeat == 4);
    double sum = 0, mx = 0;
    for (uint32_t i = 0; i < 256; ++i) sum += (i * 37) % 101, mx = std::max<double>(mx, (i * 37) % 101);
    CHECK(mem.val(Pos::UB, 2048, DType::FP32) == sum);
    ReduceMax(r, x, 40, true);
    CHECK(s.instrs().back().vec.with_index == 1);
    CHECK_THROWS_AS(ReduceMin(r, x, 100), InputError);  // 64 lanes: 100 is neither <= 64 nor a multiple
    WholeReduceMax(r, x, 64, 4, 1, 1, 8, false);
    CHECK(s.instrs().back().op == Opcode::VRED_MAX);
    WholeReduceSum(r, x, 64, 4, 1, 1, 8);
    CHECK(s.instrs().back().op == Opcode::VRED_SUM);
    Duplicate(x, 3.5f, 70);
    CHECK(mem.val(Pos::UB, 69 * 4, DType::FP32) == 3.5);
    CHECK(mem.val(Pos::UB, 70 * 4, DType::FP32) != 3.5);
    Brcb(ub<float>(ctx, 4096, 512), x, 1);
    CHECK(s.instrs().back().op == Opcode::VBRCB);
    Transpose(ub<half>(ctx, 8192, 256), ub<half>(ctx, 0, 256));
    CHECK(s.instrs().back().op == Opcode::VTRANSPOSE);
    Gather(ub<float>(ctx, 12288, 64), x, ub<uint32_t>(ctx, 16384, 64), 1024, 64);
    CHECK(s.instrs().back().vec.gather_span == 1024);
    SetVectorMask(ctx, VecMask(70));
    CHECK(s.instrs().back().op == Opcode::SET_MASK);
    CHECK(s.instrs().back().vec.mask_hi == (1ull << 6) - 1);
    CHECK_THROWS_AS(VecMask(129), InputError);
    CHECK(s.errors() == std::vector<std::string>{});
}

TEST_CASE("kapi: every vector opcode of the ISA has an API call") {
    KapiSink s;
    KernelContext ctx(s);
    const auto a = ub<float>(ctx, 0, 64), b = ub<float>(ctx, 256, 64), d = ub<float>(ctx, 512, 64);
    const auto i = ub<int32_t>(ctx, 768, 64), j = ub<int32_t>(ctx, 1024, 64);
    const auto bits = ub<uint8_t>(ctx, 1280, 32);
    Add(d, a, b, 64), Sub(d, a, b, 64), Mul(d, a, b, 64), Div(d, a, b, 64), Max(d, a, b, 64),
        Min(d, a, b, 64);
    And(i, i, j, 64), Or(i, i, j, 64), Not(i, j, 64);
    Adds(d, a, 1.0f, 64), Muls(d, a, 1.0f, 64), Maxs(d, a, 1.0f, 64), Mins(d, a, 1.0f, 64),
        LeakyRelu(d, a, 0.1f, 64);
    Exp(d, a, 64), Ln(d, a, 64), Sqrt(d, a, 64), Rsqrt(d, a, 64), Reciprocal(d, a, 64), Abs(d, a, 64),
        Relu(d, a, 64);
    FusedMulAdd(d, a, b, 64), MulAddDst(d, a, b, 64), Axpy(d, a, 2.0f, 64), AddRelu(d, a, b, 64);
    Cast(ub<half>(ctx, 2048, 64), a, RoundMode::RINT, 64);
    Compare(bits, a, b, CmpMode::LT, 64), Compares(bits, a, 0.0f, CmpMode::GE, 64), Select(d, bits, a, b, 64);
    WholeReduceSum(d, a, 64, 1, 1, 1, 8), WholeReduceMax(d, a, 64, 1, 1, 1, 8, true),
        WholeReduceMin(d, a, 64, 1, 1, 1, 8, false);
    ReduceSum(d, a, 64), ReduceMax(d, a, 64), ReduceMin(d, a, 64);
    Duplicate(d, 1.0f, 64), Brcb(d, a, 1), Transpose(ub<half>(ctx, 4096, 256), ub<half>(ctx, 0, 256));
    Gather(d, a, ub<uint32_t>(ctx, 3072, 64), 256, 64);
    CreateVecIndex(d, 0.0f, 64), PairReduceSum(d, a, VecMask(64), 1);
    GatherMask(d, a, uint8_t{1}, 1);
    Sort32(d, a, ub<uint32_t>(ctx, 3072, 64), 1);
    const isa::Addr lists[4] = {{0, Pos::UB}, {256, Pos::UB}, {}, {}};
    MrgSort4(d, lists, isa::MrgSort4Config{{4, 4, 0, 0}, 3, false}, 1);
    Gatherb(d, a, ub<uint32_t>(ctx, 3072, 64), 1, 1, 8, 256);
    uint64_t dl[isa::kNchwList], sl[isa::kNchwList];
    for (int k = 0; k < isa::kNchwList; ++k) dl[k] = 4096 + 32u * k, sl[k] = 32u * k;
    TransDataTo5HD<half>(ctx, dl, sl, 1, 0, 0);
    std::set<Opcode> seen;
    for (const auto& in : s.instrs()) seen.insert(in.op);
    for (int op = static_cast<int>(Opcode::VADD); op < static_cast<int>(Opcode::kCount); ++op) {
        INFO(isa::opcode_name(static_cast<Opcode>(op)));
        CHECK(seen.count(static_cast<Opcode>(op)) == 1);
    }
    CHECK(s.errors() == std::vector<std::string>{});
}

TEST_CASE("kapi: cube calls build ND2NZ, load2d/3d, fill, mad and fixpipe instructions") {
    KapiSink s(isa::CoreKind::Cube);
    KernelContext ctx(s);
    const LocalTensor<half> l1(&ctx, Pos::L1, 0, 8192, -1), a2(&ctx, Pos::L0A, 0, 4096, -1),
        b2(&ctx, Pos::L0B, 0, 4096, -1);
    const LocalTensor<float> c1(&ctx, Pos::L0C, 0, 4096, -1);
    DataCopy(l1, gm<half>(0x1000, 4096), Nd2NzParams{1, 40, 50, 0, 64, 48, 1, 0});
    LoadData(a2, l1, LoadData2DParams{2, 3, 4, 1, false});
    LoadData(b2, l1, LoadData2DParams{0, 2, 1, 0, true});
    LoadData(a2, gm<half>(0x2000, 256), LoadData2DParams{});
    LoadData3DParams p3;
    p3.l1H = 4, p3.l1W = 4, p3.filterH = p3.filterW = 3,
    p3.padList[0] = p3.padList[1] = p3.padList[2] = p3.padList[3] = 1;
    LoadData(a2, l1, p3);
    InitConstValue(l1, InitConstValueParams{2, 3, 1, 1.5});
    Mmad(c1, a2, b2, MmadParams{40, 24, 50, true});
    Mmad(c1, a2, b2, MmadParams{40, 24, 50, false});
    Fixpipe(gm<half>(0x8000, 2048), c1, FixpipeParams{24, 40});
    FixpipeParams q{24, 40, 48, 48, isa::QuantMode::SCALAR, 0.5, true, false};
    Fixpipe(LocalTensor<half>(&ctx, Pos::L1, 0, 4096, -1), c1, q);
    const auto v = s.instrs();
    REQUIRE(v.size() == 10);
    CHECK(v[0].op == Opcode::COPY_GM_TO_L1_ND2NZ);
    CHECK(v[0].nd == isa::NdNzParams{1, 40, 50, 48, 1, 64, 0, 0});
    CHECK(v[1].op == Opcode::LOAD2D);
    CHECK(v[1].pipe == isa::Pipe::MTE1);
    CHECK(v[1].l2d == isa::Load2dParams{2, 3, 4, 1, 0});
    CHECK(v[2].l2d.transpose == 1);
    CHECK(v[2].dst.pos == Pos::L0B);
    CHECK(v[3].op == Opcode::LOAD2D_GM);
    CHECK(v[3].pipe == isa::Pipe::MTE2);
    CHECK(v[4].op == Opcode::LOAD3D);
    CHECK(v[4].l3d.pad_top == 1);
    CHECK(v[5].op == Opcode::FILL);
    CHECK(v[5].scalar == 1.5);
    CHECK(v[6].op == Opcode::MAD);
    CHECK(v[6].pipe == isa::Pipe::M);
    CHECK(v[6].mad == isa::MadParams{40, 50, 24, 0, 0});
    CHECK(v[7].mad.accumulate == 1);
    CHECK(v[8].op == Opcode::FIXPIPE);
    CHECK(v[8].pipe == isa::Pipe::FIX);
    CHECK(v[8].dtype == DType::FP32);
    CHECK(v[8].fix.out_dtype == DType::FP16);
    CHECK(v[8].fix.src_stride == 48);  // 40 rounded up to 16
    CHECK(v[8].fix.dst_stride == 24);  // ND: n
    CHECK(v[8].fix.nz2nd == 1);
    CHECK(v[9].fix.quant == isa::QuantMode::SCALAR);
    CHECK(v[9].scalar == 0.5);
    CHECK(v[9].fix.relu == 1);
    CHECK(v[9].fix.nz2nd == 0);
    CHECK(v[9].dst.pos == Pos::L1);
    CHECK(s.errors() == std::vector<std::string>{});
    const LocalTensor<half> ubt(&ctx, Pos::UB, 0, 256, -1);
    CHECK_THROWS_AS(DataCopy(ubt, gm<half>(0, 256), Nd2NzParams{}), InputError);
    CHECK_THROWS_AS(LoadData(ubt, l1, LoadData2DParams{}), InputError);
    CHECK_THROWS_AS(Mmad(c1, a2, b2, c1, MmadParams{16, 16, 16, false}), InputError);
}

TEST_CASE("kapi: L0C -> UB on coupled cores runs in the vector pipe") {
    KapiSink s(isa::CoreKind::Coupled);
    KernelContext ctx(s);
    const LocalTensor<float> c1(&ctx, Pos::L0C, 0, 4096, -1);
    DataCopy(ub<bfloat16>(ctx, 0, 4096), c1, FixpipeParams{20, 30, 0, 32});
    const auto in = s.instrs().at(0);
    CHECK(in.op == Opcode::COPY_L0C_TO_UB);
    CHECK(in.pipe == isa::Pipe::V);
    CHECK(in.fix.out_dtype == DType::BF16);
    CHECK(in.fix.dst_stride == 32);
    CHECK(s.errors() == std::vector<std::string>{});
}

TEST_CASE("kapi: sync, cross-core flags and block identity") {
    KapiSink s;
    s.set_block(3, 7);
    KernelContext ctx(s);
    CHECK(GetBlockIdx(ctx) == 3);
    CHECK(GetBlockNum(ctx) == 7);
    CHECK(GetSubBlockIdx(ctx) == 0);
    SetFlag<isa::Pipe::MTE2, isa::Pipe::V>(ctx, 2);
    WaitFlag<isa::Pipe::MTE2, isa::Pipe::V>(ctx, 2);
    PipeBarrier<isa::Pipe::V>(ctx);
    CrossCoreSetFlag(ctx, 2, 5, isa::Pipe::FIX);
    CrossCoreWaitFlag(ctx, 2, 5, isa::Pipe::MTE2);
    SyncAll(ctx, 1);
    const auto v = s.instrs();
    REQUIRE(v.size() == 7);
    CHECK(v[0].op == Opcode::SET_FLAG);
    CHECK(v[0].flag == isa::FlagParams{isa::Pipe::MTE2, isa::Pipe::V, 2});
    CHECK(v[1].op == Opcode::WAIT_FLAG);
    CHECK(v[2].op == Opcode::PIPE_BARRIER);
    CHECK(v[3].op == Opcode::SET_CROSS_FLAG);
    CHECK(v[3].xflag == isa::CrossFlagParams{2, 5, isa::Pipe::FIX});
    CHECK(v[4].op == Opcode::WAIT_CROSS_FLAG);
    CHECK(v[5].xflag.mode == 0);
    CHECK(v[6].xflag.pipe == isa::Pipe::S);
    CHECK_THROWS_AS(CrossCoreSetFlag(ctx, 3, 0, isa::Pipe::V), InputError);
    CHECK_THROWS_AS(CrossCoreWaitFlag(ctx, 0, 11, isa::Pipe::V), InputError);
    CHECK(s.errors() == std::vector<std::string>{});
}

namespace {
// One produce/consume round trip through a queue of position P: returns the flag pipes seen.
template <TPosition P>
std::vector<std::pair<isa::Pipe, isa::Pipe>> queue_round_trips(isa::CoreKind kind, int rounds) {
    KapiSink s(kind);
    s.set_buffer(Pos::UB, 32 * 1024);
    {
        KernelContext ctx(s);
        TPipe pipe(ctx);
        TQue<P> q;
        pipe.InitBuffer(q, 2, 512);
        for (int r = 0; r < rounds; ++r) {
            auto t = q.template AllocTensor<half>();
            q.EnQue(t);
            auto u = q.template DeQue<half>();
            q.FreeTensor(u);
        }
    }
    INFO(s.errors().size());
    CHECK(s.errors() == std::vector<std::string>{});
    CHECK(s.flags_clear());
    std::vector<std::pair<isa::Pipe, isa::Pipe>> f;
    for (const auto& in : s.instrs()) f.push_back({in.flag.src, in.flag.dst});
    return f;
}
}  // namespace

TEST_CASE("kapi: TQue inserts producer->consumer and consumer->producer flags per position and core kind") {
    using isa::Pipe;
    using F = std::pair<Pipe, Pipe>;
    const isa::CoreKind cub = isa::CoreKind::Cube, cpl = isa::CoreKind::Coupled;
    // 3 rounds on 2 buffers: set fwd, wait fwd, set back (x3); the 3rd alloc waits for buffer 0's
    // back flag, and the queue's end drains the 2 back flags still pending.
    auto expect = [](Pipe p, Pipe c) {
        const F fw{p, c}, bk{c, p};
        return std::vector<F>{fw, fw, bk, fw, fw, bk, bk, fw, fw, bk, bk, bk};
    };
    CHECK(queue_round_trips<TPosition::VECIN>(cpl, 3) == expect(Pipe::MTE2, Pipe::V));
    CHECK(queue_round_trips<TPosition::VECOUT>(cpl, 3) == expect(Pipe::V, Pipe::MTE3));
    CHECK(queue_round_trips<TPosition::A1>(cub, 3) == expect(Pipe::MTE2, Pipe::MTE1));
    CHECK(queue_round_trips<TPosition::B1>(cub, 3) == expect(Pipe::MTE2, Pipe::MTE1));
    CHECK(queue_round_trips<TPosition::A2>(cub, 3) == expect(Pipe::MTE1, Pipe::M));
    CHECK(queue_round_trips<TPosition::B2>(cub, 3) == expect(Pipe::MTE1, Pipe::M));
    CHECK(queue_round_trips<TPosition::CO1>(cub, 3) == expect(Pipe::M, Pipe::FIX));
    CHECK(queue_round_trips<TPosition::CO1>(cpl, 3) == expect(Pipe::M, Pipe::V));
    CHECK(queue_round_trips<TPosition::CO2>(cpl, 3) == expect(Pipe::V, Pipe::MTE3));
}

TEST_CASE("kapi: TQue and TPipe errors name the problem") {
    KapiSink s(isa::CoreKind::Cube);
    s.set_event_ids(2);
    KernelContext ctx(s);
    TPipe pipe(ctx);
    TQue<TPosition::A1> a, b;
    pipe.InitBuffer(a, 2, 1024);
    CHECK_THROWS_WITH(pipe.InitBuffer(b, 1, 1024), Catch::Contains("no event id left"));
    TQue<TPosition::A2> big;
    CHECK_THROWS_WITH(pipe.InitBuffer(big, 1, 64 * 1024), Catch::Contains("does not fit in L0A"));
    CHECK_THROWS_WITH(a.DeQue<half>(), Catch::Contains("DeQue on an empty queue"));
}

TEST_CASE("kapi: the test sink's race check sees a missing flag") {
    KapiSink s;
    KernelContext ctx(s);
    const auto x = ub<half>(ctx, 0, 256), y = ub<half>(ctx, 512, 256);
    DataCopy(x, gm<half>(0, 256), 256);
    Add(y, x, x, 256);  // V reads what MTE2 writes, unsynchronised
    CHECK(s.first_race() != "");
    KapiSink ok;
    KernelContext c2(ok);
    const auto x2 = ub<half>(c2, 0, 256), y2 = ub<half>(c2, 512, 256);
    DataCopy(x2, gm<half>(0, 256), 256);
    SetFlag<isa::Pipe::MTE2, isa::Pipe::V>(c2, 0);
    WaitFlag<isa::Pipe::MTE2, isa::Pipe::V>(c2, 0);
    Add(y2, x2, x2, 256);
    CHECK(ok.first_race() == "");
    CHECK(ok.errors().empty());
    WaitFlag<isa::Pipe::MTE2, isa::Pipe::V>(c2, 0);
    CHECK(ok.errors().size() == 1);  // waits on a flag nobody set
}

TEST_CASE("kapi: TBuf hands out a scratch range after the queues and inserts no flags") {
    KapiSink s;
    KernelContext ctx(s);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> q;
    TBuf<TPosition::VECCALC> tmp;
    pipe.InitBuffer(q, 2, 1000);  // rounded up to 1024 per buffer
    pipe.InitBuffer(tmp, 96);
    const LocalTensor<float> t = tmp.Get<float>();
    CHECK(t.address() == 2048);
    CHECK(t.GetSize() == 24);
    CHECK(t.pos() == Pos::UB);
    Duplicate(t, 1.0f, 24);
    CHECK(s.instrs().size() == 1);
    CHECK_THROWS_WITH(pipe.InitBuffer(tmp, 64 * 1024), Catch::Contains("does not fit in UB"));
}

TEST_CASE("kapi: each instruction of a count-form call equals one built from scratch") {
    // vec_count builds its instruction once and changes only the operands, repeat and mask per
    // instruction: nothing of one instruction may leak into the next (the template's fields, the
    // scalar and the tail's mask included), nor of one call into the next (every call writes the
    // context's one scratch instruction).
    KapiSink s, ref;
    s.set_buffer(Pos::UB, 256 * 1024);
    ref.set_buffer(Pos::UB, 256 * 1024);
    KernelContext ctx(s), rctx(ref);
    const uint32_t lanes32 = 256 / 4, lanes16 = 256 / 2;
    const auto d16 = ub<half>(ctx, 0, 40000);
    const auto a32 = ub<float>(ctx, 81920, 40000);
    Cast(d16, a32, RoundMode::FLOOR, lanes32 * 300 + 10);  // 255 and 45 repeats, then 10 lanes
    const auto bits = ub<uint8_t>(ctx, 240 * 1024, 8192);
    const auto a16 = ub<half>(ctx, 0, 40000);
    Compares(bits, a16, half(1.5f), CmpMode::GE, lanes16 * 300);  // 255 and 45 repeats
    Add(d16, a16, a16, lanes16 * 2);  // defaults again: no compare mode, conversion or scalar
    // An unused src1 advances by its natural step too (as it always has): `src1` bytes here.
    auto build = [&](Opcode op, DType dt, const isa::Addr& dst, const isa::Addr& src0, uint64_t src1,
                     uint16_t repeat, uint64_t mask_lo, uint64_t mask_hi, uint16_t dst_rep, uint16_t src_rep,
                     double scalar, auto&& extra) {
        isa::VecParams v;
        v.repeat = repeat;
        v.mask_lo = mask_lo, v.mask_hi = mask_hi;
        v.dst_blk_stride = v.src0_blk_stride = v.src1_blk_stride = 1;
        v.dst_rep_stride = dst_rep, v.src0_rep_stride = src_rep, v.src1_rep_stride = dst_rep;
        extra(v);
        sfumato::kernel::detail::vec_one(rctx, op, dt, {dst, src0, {src1, Pos::GM}, {}}, v, scalar);
    };
    auto conv = [](isa::VecParams& v) { v.src_dtype = DType::FP32, v.round = RoundMode::FLOOR; };
    const isa::Addr d{0, Pos::UB}, a{81920, Pos::UB};
    // VCONV fp32 -> fp16: 64 lanes a repeat, 128 B of destination and 256 B of source each.
    build(Opcode::VCONV, DType::FP16, d, a, 0, 255, ~0ull, ~0ull, 4, 8, 0.0, conv);
    build(Opcode::VCONV, DType::FP16, {255 * 128, Pos::UB}, {81920 + 255 * 256, Pos::UB}, 255 * 128, 45,
          ~0ull, ~0ull, 4, 8, 0.0, conv);
    build(Opcode::VCONV, DType::FP16, {300 * 128, Pos::UB}, {81920 + 300 * 256, Pos::UB}, 300 * 128, 1,
          (1ull << 10) - 1, 0, 4, 8, 0.0, conv);
    // VCMPS fp16: 128 lanes a repeat, a 16-B bitmask each; the compare mode and scalar throughout.
    auto cmp = [](isa::VecParams& v) { v.cmp = CmpMode::GE; };
    const isa::Addr b{240 * 1024, Pos::UB};
    build(Opcode::VCMPS, DType::FP16, b, d, 0, 255, ~0ull, ~0ull, 8, 8, 1.5, cmp);
    build(Opcode::VCMPS, DType::FP16, {240 * 1024 + 255 * 16, Pos::UB}, {255 * 256, Pos::UB}, 255 * 256, 45,
          ~0ull, ~0ull, 8, 8, 1.5, cmp);
    isa::VecParams add;
    add.repeat = 2;
    sfumato::kernel::detail::vec_one(rctx, Opcode::VADD, DType::FP16, {d, d, d, {}}, add, 0.0);
    const auto got = s.instrs(), want = ref.instrs();
    REQUIRE(got.size() == 6);
    REQUIRE(want.size() == 6);
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("instruction " << i);
        CHECK(got[i] == want[i]);
        CHECK(got[i].pipe == want[i].pipe);
    }
}
