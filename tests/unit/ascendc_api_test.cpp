// The Ascend C layer (runtime/ascendc) on the kernel-API test sink: the add example issues what
// `sfumato kernel add` issues for the same tiling, calls map onto the kernel API's instructions
// (and compute the right values when executed), and misuse stops a block with an error naming
// the block and the call.
#include <catch2/catch.hpp>
#include <cstring>

#include "ascendc_test_support.h"
#include "runtime/ops/i_op.h"
// The add example's kernel, in its CPU-debug form.
#define ASCENDC_CPU_DEBUG 1
#include "examples/ascendc/add/add_custom.cpp"

TEST_CASE("ascendc: the add example issues the instructions `sfumato kernel add` issues for its tiling") {
    // 8 x 2048 half on 8 blocks in tiles of 128, two buffers per queue: the example's tiling.
    auto op = sfumato::ops::make_op("add", {{"n", "16384"}, {"dtype", "fp16"}, {"block_dim", "8"}, {"tile", "128"}},
                                    vector_device());
    const auto kernels = op->kernels();
    REQUIRE(kernels.size() == 1);
    // Without prepare() the op's buffers are all at device address 0: give the example's the same.
    GmBuf x(16384 * 2, 0), y(16384 * 2, 0), z(16384 * 2, 0);
    for (uint32_t block = 0; block < 8; ++block) {
        KapiSink ref(sfumato::isa::CoreKind::Vector), got(sfumato::isa::CoreKind::Vector);
        ref.set_block(block, 8);
        got.set_block(block, 8);
        kernels[0].body(ref);
        const auto [err, code] = run(got, [&] { add_custom(x.ptr(), y.ptr(), z.ptr()); });
        INFO("block " << block << ": " << err);
        REQUIRE(err.empty());
        CHECK(got.errors().empty());
        REQUIRE(got.instrs().size() == ref.instrs().size());
        CHECK(got.instrs() == ref.instrs());
        CHECK(got.count(Opcode::VADD) == 16);
    }
}

namespace {
template <class F>
std::pair<std::string, int> run_misuse(F&& body) {
    KapiSink sink(sfumato::isa::CoreKind::Vector);
    sink.set_block(3, 8);
    return run(sink, body);
}
}  // namespace

TEST_CASE("ascendc: misuse stops the block with an error naming the block and the call (exit 2)") {
    GmBuf x(1024, 0x1000);
    SECTION("more AllocTensor than the queue has buffers") {
        const auto [err, code] = run_misuse([&] {
            AscendC::TPipe pipe;
            AscendC::TQue<AscendC::QuePosition::VECIN, 2> q;
            pipe.InitBuffer(q, 2, 256);
            q.AllocTensor<half>();
            q.AllocTensor<half>();
            q.AllocTensor<half>();
        });
        CHECK(code == 2);
        CHECK_THAT(err, Catch::StartsWith("block 3 (AIV): AscendC::TQue::AllocTensor: all 2 buffers"));
    }
    SECTION("DeQue of an empty queue") {
        const auto [err, code] = run_misuse([&] {
            AscendC::TPipe pipe;
            AscendC::TQue<AscendC::QuePosition::VECOUT, 1> q;
            pipe.InitBuffer(q, 1, 256);
            q.DeQue<float>();
        });
        CHECK(code == 2);
        CHECK_THAT(err, Catch::StartsWith("block 3 (AIV): AscendC::TQue::DeQue: DeQue of an empty queue"));
    }
    SECTION("UB overflow in InitBuffer") {
        const auto [err, code] = run_misuse([&] {
            AscendC::TPipe pipe;
            AscendC::TQue<AscendC::QuePosition::VECIN, 2> q;
            pipe.InitBuffer(q, 2, 20 * 1024);  // 40 KiB of the test core's 32
        });
        CHECK(code == 2);
        CHECK_THAT(err, Catch::StartsWith("block 3 (AIV): AscendC::TPipe::InitBuffer:") && Catch::Contains("does not fit in UB"));
    }
    SECTION("a copy past the end of its GM buffer") {
        const auto [err, code] = run_misuse([&] {
            AscendC::TPipe pipe;
            AscendC::TBuf<AscendC::QuePosition::VECCALC> b;
            pipe.InitBuffer(b, 2048);
            AscendC::GlobalTensor<half> g;
            g.SetGlobalBuffer((__gm__ half*)x.ptr() + 256, 512);
            AscendC::DataCopy(b.Get<half>(), g, 512);  // bytes 512..1536 of a 1024-byte buffer
        });
        CHECK(code == 2);
        CHECK_THAT(err, Catch::StartsWith("block 3 (AIV): AscendC::DataCopy: GM bytes [512, 1536) of a buffer of 1024"));
    }
    SECTION("a GM pointer outside every buffer") {
        const auto [err, code] = run_misuse([&] {
            AscendC::GlobalTensor<float> g;
            static float stray[8];
            g.SetGlobalBuffer(stray, 8);  // the chip only stores the pointer: no error yet
            AscendC::TPipe pipe;
            AscendC::TBuf<AscendC::QuePosition::VECCALC> b;
            pipe.InitBuffer(b, 32);
            AscendC::DataCopy(b.Get<float>(), g, 8);
        });
        CHECK(code == 2);
        CHECK_THAT(err, Catch::StartsWith("block 3 (AIV): AscendC::DataCopy: GM address") &&
                            Catch::Contains("lies in no GmAlloc or aclrtMalloc buffer"));
    }
    SECTION("a count form past its LocalTensor") {
        const auto [err, code] = run_misuse([&] {
            AscendC::TPipe pipe;
            AscendC::TBuf<AscendC::QuePosition::VECCALC> b;
            pipe.InitBuffer(b, 512);
            AscendC::LocalTensor<float> t = b.Get<float>();
            AscendC::Adds(t, t, 1.0f, 256);
        });
        CHECK(code == 2);
        CHECK_THAT(err, Catch::StartsWith("block 3 (AIV): AscendC::Adds: 256 elements exceed a LocalTensor of 128"));
    }
    CHECK_THROWS_WITH(AscendC::GetBlockIdx(), Catch::Contains("AscendC::GetBlockIdx called outside a running kernel"));
}

TEST_CASE("ascendc: vector calls issue the kernel API's instructions and compute in the ISA's semantics") {
    sfumato::isa::test::TestMem mem;
    MemSink sink(sfumato::isa::CoreKind::Vector, mem);
    const auto [err, code] = run(sink, [&] {
        AscendC::TPipe pipe;
        AscendC::TBuf<AscendC::QuePosition::VECCALC> buf;
        pipe.InitBuffer(buf, 8192);
        AscendC::LocalTensor<half> a = buf.Get<half>(), b = a[256], c = a[512];
        AscendC::LocalTensor<float> f = a[1024].ReinterpretCast<float>();
        AscendC::Duplicate(a, (half)-2.0, 256);
        AscendC::LeakyRelu(b, a, (half)0.5, 256);                            // -1
        AscendC::Adds(c, b, 3.0f, 128);                                       // 2 (scalar of another type)
        AscendC::Cast(f, c, AscendC::RoundMode::CAST_NONE, 128);             // 2.0f
        AscendC::Muls(f, f, 1.5f, 64, 1, AscendC::UnaryRepeatParams{});      // mask form: 3.0f on 64 lanes
        uint64_t mask[2] = {0xff, 0};
        AscendC::Adds(f[64], f[64], 10.0f, mask, 1, AscendC::UnaryRepeatParams{});  // 12.0f on 8 lanes
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID1);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID1);
        CHECK(static_cast<float>(b.GetValue(7)) == -1.0f);
        CHECK(static_cast<float>(c.GetValue(0)) == 2.0f);
        CHECK(f.GetValue(0) == 3.0f);
        CHECK(f.GetValue(64) == 12.0f);
        CHECK(f.GetValue(72) == 2.0f);
        f.SetValue(1, 5);
        CHECK(f.GetValue(1) == 5.0f);
    });
    INFO(err);
    CHECK(err.empty());
    CHECK(sink.errors().empty());
    std::vector<Opcode> ops;
    for (const auto& in : sink.instrs()) ops.push_back(in.op);
    // Then one barrier of every pipe before each of the 7 scalar accesses of UB (GetValue/SetValue: the
    // vendor compiler's automatic synchronisation).
    std::vector<Opcode> want{Opcode::VDUP,  Opcode::VLRELU,       Opcode::VADDS,    Opcode::VCONV,    Opcode::VMULS,
                             Opcode::VADDS, Opcode::PIPE_BARRIER, Opcode::SET_FLAG, Opcode::WAIT_FLAG};
    want.insert(want.end(), 7, Opcode::PIPE_BARRIER);
    CHECK(ops == want);
    CHECK(sink.instrs()[0].vec.repeat == 2);  // 256 half lanes: one instruction of 2 repeats
}
