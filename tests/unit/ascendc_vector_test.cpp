// Vector, synchronisation and buffer calls of the Ascend C layer executed on the kernel-API test
// sink: the values follow the ISA's semantics (compare/select, casts in each rounding mode,
// per-block and per-repeat reductions with indices, Brcb, padding copies), bound queues sync
// their producer's pipe with their consumer's, event ids come from the pool, static allocation
// stops at the buffer's end.
#include <catch2/catch.hpp>

#include "ascendc_test_support.h"
#include "kernel_operator.h"
#include "opdev/fp16_t.h"

namespace {
sfumato::isa::test::TestMem g_mem;

// Runs `body` on a fresh vector core sink over g_mem; fails the test on an error.
void run_vec(const std::function<void(MemSink&)>& body) {
    g_mem = sfumato::isa::test::TestMem();
    MemSink sink(sfumato::isa::CoreKind::Vector, g_mem);
    const auto [err, code] = run(sink, [&] { body(sink); });
    INFO(err);
    REQUIRE(err.empty());
    CHECK(sink.errors().empty());
}
}  // namespace

TEST_CASE("ascendc vector: Compare and Select pick the smaller of two tensors") {
    run_vec([](MemSink&) {
        AscendC::TPipe pipe;
        AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        AscendC::LocalTensor<float> a = buf.Get<float>(), b = a[128], d = a[256];
        AscendC::LocalTensor<uint8_t> m = a[512].ReinterpretCast<uint8_t>();
        for (int i = 0; i < 128; ++i) a.SetValue(i, static_cast<float>(i));
        AscendC::Duplicate(b, 64.0f, 128);
        AscendC::Compare(m, a, b, AscendC::CMPMODE::LT, 128);
        AscendC::Select(d, m, a, b, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
        for (int i = 0; i < 128; ++i) CHECK(d.GetValue(i) == static_cast<float>(std::min(i, 64)));
    });
}

TEST_CASE("ascendc vector: Cast rounds as its RoundMode says") {
    run_vec([](MemSink&) {
        AscendC::TPipe pipe;
        AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        AscendC::LocalTensor<float> f = buf.Get<float>();
        AscendC::LocalTensor<int32_t> n = f[256].ReinterpretCast<int32_t>();
        f.SetValue(0, 2.5f);
        f.SetValue(1, -2.5f);
        using AscendC::RoundMode;
        const std::pair<RoundMode, std::array<int32_t, 2>> cases[] = {
            {RoundMode::CAST_RINT, {2, -2}},  {RoundMode::CAST_ROUND, {3, -3}}, {RoundMode::CAST_FLOOR, {2, -3}},
            {RoundMode::CAST_CEIL, {3, -2}},  {RoundMode::CAST_TRUNC, {2, -2}}};
        for (const auto& [mode, want] : cases) {
            AscendC::Cast(n, f, mode, 64);
            INFO("mode " << static_cast<int>(mode));
            CHECK(n.GetValue(0) == want[0]);
            CHECK(n.GetValue(1) == want[1]);
        }
    });
}

TEST_CASE("ascendc vector: BlockReduceSum, WholeReduceMax with its index, Brcb") {
    run_vec([](MemSink& sink) {
        AscendC::TPipe pipe;
        AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 8192);
        AscendC::LocalTensor<half> x = buf.Get<half>(), s = x[256], w = x[512];
        AscendC::LocalTensor<float> b = x[1024].ReinterpretCast<float>(), r = x[2048].ReinterpretCast<float>();
        for (int i = 0; i < 128; ++i) x.SetValue(i, static_cast<float>(i % 16));  // every block: 0..15
        x.SetValue(77, 100.0f);
        const size_t before = sink.count(Opcode::VRED_SUM);
        AscendC::BlockReduceSum(s, x, 1, 128, 1, 1, 8);
        CHECK(sink.count(Opcode::VRED_SUM) - before == 8);  // one per block (a simplification)
        for (int blk = 0; blk < 8; ++blk) CHECK(static_cast<float>(s.GetValue(blk)) == (blk == 4 ? 120.0f - 13 + 100 : 120.0f));
        AscendC::WholeReduceMax(w, x, 128, 1, 1, 1, 8);
        CHECK(static_cast<float>(w.GetValue(0)) == 100.0f);
        CHECK(w.ReinterpretCast<uint16_t>().GetValue(1) == 77);  // the index after the value
        for (int i = 0; i < 8; ++i) b.SetValue(i, static_cast<float>(i) + 0.5f);
        AscendC::Brcb(r, b, 1, AscendC::BrcbRepeatParams{1, 8});
        for (int i = 0; i < 64; ++i) CHECK(r.GetValue(i) == static_cast<float>(i / 8) + 0.5f);
    });
}

TEST_CASE("ascendc data copy: DataCopyPad pads each burst with the padding value") {
    GmBuf g(64, 0x100);
    run_vec([&](MemSink&) {
        for (int i = 0; i < 16; ++i) g_mem.put<float>(Pos::GM, 0x100 + 4 * i, static_cast<float>(i + 1));
        AscendC::TPipe pipe;
        AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        AscendC::GlobalTensor<float> gt;
        gt.SetGlobalBuffer((__gm__ float*)g.ptr(), 16);
        AscendC::LocalTensor<float> t = q.AllocTensor<float>();
        // 2 bursts of 5 floats, 3 floats apart in GM; 1 pad before and 2 after each, value -1.
        AscendC::DataCopyPad(t, gt, AscendC::DataCopyExtParams{2, 20, 12, 0, 0},
                             AscendC::DataCopyPadExtParams<float>{true, 1, 2, -1.0f});
        q.EnQue(t);
        t = q.DeQue<float>();
        AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        const float want[16] = {-1, 1, 2, 3, 4, 5, -1, -1, -1, 9, 10, 11, 12, 13, -1, -1};
        for (int i = 0; i < 16; ++i) CHECK(t.GetValue(i) == want[i]);
        q.FreeTensor(t);
    });
}

TEST_CASE("ascendc pipes: a VECIN -> VECOUT bound queue syncs MTE2 with MTE3, event ids come from the pool") {
    g_mem = sfumato::isa::test::TestMem();
    MemSink sink(sfumato::isa::CoreKind::Vector, g_mem);
    const auto [err, code] = run(sink, [&] {
        AscendC::TPipe pipe;
        AscendC::TQueBind<AscendC::TPosition::VECIN, AscendC::TPosition::VECOUT, 1> q;
        pipe.InitBuffer(q, 1, 256);
        AscendC::LocalTensor<half> t = q.AllocTensor<half>();
        q.EnQue(t);
        t = q.DeQue<half>();
        q.FreeTensor(t);
        const AscendC::TEventID a = GetTPipePtr()->AllocEventID<AscendC::HardEvent::V_S>();
        const AscendC::TEventID b = GetTPipePtr()->AllocEventID<AscendC::HardEvent::V_S>();
        CHECK(a != b);
        GetTPipePtr()->ReleaseEventID<AscendC::HardEvent::V_S>(a);
        CHECK(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S) == a);
        CHECK(GetTPipePtr()->AllocEventID<AscendC::HardEvent::V_S>() == a);
    });
    INFO(err);
    REQUIRE(err.empty());
    std::vector<std::pair<sfumato::isa::Pipe, sfumato::isa::Pipe>> flags;
    for (const auto& in : sink.instrs()) flags.push_back({in.flag.src, in.flag.dst});
    using P = sfumato::isa::Pipe;
    REQUIRE(flags.size() >= 2);
    CHECK(flags[0] == std::make_pair(P::MTE2, P::MTE3));  // EnQue
    CHECK(flags[1] == std::make_pair(P::MTE2, P::MTE3));  // DeQue
}

TEST_CASE("ascendc sync: an event id beyond the core's range names the event its low bits do, as the chip's field") {
    g_mem = sfumato::isa::test::TestMem();
    MemSink sink(sfumato::isa::CoreKind::Vector, g_mem);
    const uint32_t n = sink.event_ids();
    REQUIRE(n >= 2);
    REQUIRE((n & (n - 1)) == 0);
    // catlass's BlockMmadTla (unit flag) sets and waits on an id it never initialises: any int32_t.
    const int32_t ids[] = {static_cast<int32_t>(n) + 1, -217547360, static_cast<int32_t>(n) * 5 + 2};
    const auto [err, code] = run(sink, [&] {
        for (int32_t id : ids) {
            AscendC::SetFlag<AscendC::HardEvent::V_S>(id);
            AscendC::WaitFlag<AscendC::HardEvent::V_S>(id);
        }
    });
    INFO(err);
    REQUIRE(err.empty());
    CHECK(sink.errors().empty());  // each set met by its wait: no flag left set, none waited on twice
    std::vector<uint32_t> got;
    for (const auto& in : sink.instrs()) got.push_back(in.flag.event_id);
    REQUIRE(got.size() == 2 * std::size(ids));
    for (size_t i = 0; i < std::size(ids); ++i) {
        const uint32_t want = static_cast<uint32_t>(ids[i]) & (n - 1);
        CHECK(got[2 * i] == want);
        CHECK(got[2 * i + 1] == want);
    }
}

TEST_CASE("ascendc sync: an event id out of range on a core whose id count is no power of two is an error") {
    g_mem = sfumato::isa::test::TestMem();
    MemSink sink(sfumato::isa::CoreKind::Vector, g_mem);
    sink.set_event_ids(6);
    const auto [err, code] = run(sink, [&] { AscendC::SetFlag<AscendC::HardEvent::V_S>(7); });
    CHECK(code == sfumato::kExitBadInput);
    CHECK_THAT(err, Catch::Contains("SetFlag") && Catch::Contains("event id 7") && Catch::Contains("6 per pipe pair"));
}

namespace {
// catlass's Arch::Resource: a TPipe and buffers set up through it; PrologueTraits<void> takes its arguments by value.
struct Resource {
    AscendC::TPipe pipe;
    AscendC::LocalTensor<float> ub;
    Resource() {
        AscendC::TBuf<AscendC::TPosition::VECCALC> b;
        GetTPipePtr()->InitBuffer(b, 1024);
        ub = b.Get<float>();
    }
};
template <class... Args>
size_t ignore_by_value(Args... args) {
    return sizeof...(args);
}
}  // namespace

TEST_CASE("ascendc pipes: a copied TPipe holds nothing, the original keeps its buffers and stays the core's pipe") {
    g_mem = sfumato::isa::test::TestMem();
    MemSink sink(sfumato::isa::CoreKind::Vector, g_mem);
    const auto [err, code] = run(sink, [&] {
        Resource r;
        CHECK(ignore_by_value(r) == 1);  // copies r (its TPipe) and destroys the copy
        CHECK(GetTPipePtr() == &r.pipe);
        AscendC::Duplicate(r.ub, 2.5f, 256);  // the original's buffer is still there
        CHECK(r.ub.GetValue(255) == 2.5f);
        AscendC::TPipe copy(r.pipe);
        AscendC::TBuf<AscendC::TPosition::VECCALC> b;
        copy.InitBuffer(b, 64);  // stops the run
    });
    CHECK(code == 2);
    CHECK_THAT(err, Catch::Contains("TPipe::InitBuffer: InitBuffer on a copy of a TPipe"));
}

TEST_CASE("ascendc buffers: LocalMemAllocator hands out aligned ranges and stops at the end of the buffer") {
    KapiSink sink(sfumato::isa::CoreKind::Cube);
    const auto [err, code] = run(sink, [] {
        AscendC::LocalMemAllocator<AscendC::Hardware::L0A> l0a;
        const AscendC::LocalTensor<half> a = l0a.Alloc<half>(100);  // 200 bytes
        const AscendC::LocalTensor<half> b = l0a.Alloc<half, 256>();
        CHECK(a.GetPhyAddr() == 0);
        CHECK(b.GetPhyAddr() == 512);  // L0A ranges start on 512-byte fractals
        CHECK(b.GetPosition() == AscendC::TPosition::A2);
        l0a.Alloc<half>(16 * 1024);  // beyond the test core's 16 KiB
    });
    CHECK(code == 2);
    CHECK_THAT(err, Catch::StartsWith("block 0 (AIC): AscendC::LocalMemAllocator::Alloc: 32768 bytes do not fit in L0A"));
}

TEST_CASE("ascendc cube: InitConstValue and Fill count 512-byte fractals in L0A/L0B and 32-byte blocks in L1") {
    KapiSink sink(sfumato::isa::CoreKind::Cube);
    const auto [err, code] = run(sink, [] {
        AscendC::LocalMemAllocator<AscendC::Hardware::L0A> l0a;
        AscendC::LocalMemAllocator<AscendC::Hardware::L1> l1;
        const AscendC::LocalTensor<half> a = l0a.Alloc<AscendC::TPosition::A2, half>(1024);
        const AscendC::LocalTensor<half> b = l1.Alloc<AscendC::TPosition::B1, half>(1024);
        CHECK(b.GetPosition() == AscendC::TPosition::B1);  // the position the Alloc form names
        AscendC::InitConstValue(a, AscendC::InitConstValueParams<half>(2, 1, 1, 1));  // 2 fractals, one apart
        AscendC::Fill(b, AscendC::InitConstValueParams<half>(2, 3, 1, 1));            // 2 x 3 blocks, one apart
    });
    INFO(err);
    REQUIRE(code == 0);
    std::vector<sfumato::isa::Instr> fills;
    for (const auto& in : sink.instrs())
        if (in.op == sfumato::isa::Opcode::FILL) fills.push_back(in);
    REQUIRE(fills.size() == 2);
    // The ISA's fill counts 32-byte blocks: a 512-byte fractal is 16 of them.
    CHECK(fills[0].fill.repeat == 2);
    CHECK(fills[0].fill.blk_num == 512 / 32);
    CHECK(fills[0].fill.dst_gap == 512 / 32);
    CHECK(fills[1].fill.blk_num == 3);
    CHECK(fills[1].fill.dst_gap == 1);
}

TEST_CASE("ascendc host types: op::fp16_t arithmetic rounds each result to half, as the CANN library's does") {
    // catlass's 30_w8a16_matmul golden: (b + zeroPoint) * scale in fp16_t, rounded after the add as the device's
    // half Adds then Muls round.
    const op::fp16_t b = 5, zp = 0.1, scale = 1.5;
    const float twice = float(::half(float(::half(5.0 + double(float(zp)))) * 1.5));
    const float once = float(::half((5.0 + double(float(zp))) * 1.5));
    REQUIRE(twice != once);  // values where one rounding and two differ
    CHECK(float((b + zp) * scale) == twice);
    CHECK(float(b - zp) == float(::half(5.0 - double(float(zp)))));
    CHECK(float(b / scale) == float(::half(5.0 / 1.5)));
    const float mixed = b * 2.5f;  // with a float: float arithmetic, as before
    CHECK(mixed == 12.5f);
}

TEST_CASE("ascendc structs: the reference's constructors of InitConstValueParams and Nd2NzParams") {
    const AscendC::InitConstValueParams<half> p(1, 4, 2, 3);  // as catlass's conv blocks construct it
    CHECK(p.repeatTimes == 1);
    CHECK(p.blockNum == 4);
    CHECK(p.dstGap == 2);
    CHECK(float(p.initValue) == 3.0f);
    const AscendC::InitConstValueParams<float> q(5, 1.5f);
    CHECK(q.repeatTimes == 5);
    CHECK(q.blockNum == 0);
    CHECK(q.initValue == 1.5f);
    const AscendC::Nd2NzParams n(1, 16, 32, 0, 32, 16, 1, 0);
    CHECK(n.dValue == 32);
    CHECK(n.dstNzC0Stride == 16);
    CHECK(AscendC::Nd2NzParams().ndNum == 1);  // sfumato's default: one matrix
    // Not an aggregate: a braced list of four values converts to DataCopyParams only (catlass's conv copies).
    CHECK_FALSE(std::is_constructible_v<AscendC::Nd2NzParams, int, int, int, int>);
    CHECK(std::is_constructible_v<AscendC::DataCopyParams, int, int, int, int>);
}
