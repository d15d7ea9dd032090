// The kernel API's scalar side: GlobalTensor GetValue/SetValue as scalar loads and stores of GM
// (LD_GM/ST_GM), DataCacheCleanAndInvalid (DCCI), and the scalar cycles the API charges for its
// own bookkeeping (queue operations, the loop that splits a long vector call).
#include <catch2/catch.hpp>

#include "kapi_sink.h"
#include "runtime/kernel/api.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::kernel;
using isa::DType;
using isa::Opcode;
using isa::Pos;
using sfumato::kernel::test::KapiSink;

TEST_CASE("kapi scalar: SetValue and GetValue store and load single elements of GM") {
    isa::test::TestMem mem;
    KapiSink s(isa::CoreKind::Vector, &mem);
    KernelContext ctx(s);
    GlobalTensor<half> g;
    g.SetGlobalBuffer(ctx, 0x1000, 64);
    g.SetValue(3, half(1.5f));
    g[8].SetValue(1, half(-2.0f));  // operator[] keeps the binding
    CHECK(static_cast<float>(g.GetValue(3)) == 1.5f);
    CHECK(static_cast<float>(g.GetValue(9)) == -2.0f);
    GlobalTensor<int32_t> gi;
    gi.SetGlobalBuffer(ctx, 0x2000, 4);
    gi.SetValue(2, -123456);
    CHECK(gi.GetValue(2) == -123456);
    REQUIRE(s.count(Opcode::ST_GM) == 3);
    REQUIRE(s.count(Opcode::LD_GM) == 3);
    const isa::Instr& st = s.issued()[0].in;
    CHECK((st.op == Opcode::ST_GM && st.dst.addr == 0x1000 + 3 * 2 && st.dtype == DType::FP16 && st.pipe == isa::Pipe::S));
    const isa::Instr& ld = s.issued()[2].in;
    CHECK((ld.op == Opcode::LD_GM && ld.src0.addr == 0x1000 + 3 * 2 && ld.dtype == DType::FP16));
    CHECK(s.errors().empty());
}

TEST_CASE("kapi scalar: scalar access to an unbound tensor is an error naming the fix") {
    KapiSink s;
    GlobalTensor<float> g;
    g.SetGlobalBuffer(0x100, 4);
    CHECK_THROWS_WITH(g.GetValue(0), Catch::Contains("SetGlobalBuffer(ctx"));
    CHECK_THROWS_AS(g.SetValue(0, 1.0f), InputError);
    CHECK_THROWS_AS((DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE>(g)), InputError);
    CHECK(s.issued().empty());
}

TEST_CASE("kapi scalar: DataCacheCleanAndInvalid issues one DCCI for a line or the whole cache") {
    KapiSink s;
    KernelContext ctx(s);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(ctx, 0x4000, 16);
    DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g[4]);
    DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE>(g);
    REQUIRE(s.issued().size() == 2);
    CHECK((s.issued()[0].in.op == Opcode::DCCI && s.issued()[0].in.dst.addr == 0x4010 && s.issued()[0].in.sc.all == 0));
    CHECK((s.issued()[1].in.op == Opcode::DCCI && s.issued()[1].in.sc.all == 1));
}

TEST_CASE("kapi scalar: queue operations and the split loop of a vector call charge their scalar work") {
    KapiSink s(isa::CoreKind::Vector);
    KernelContext ctx(s);
    {
        TPipe pipe(ctx);
        TQue<TPosition::VECIN> q;
        pipe.InitBuffer(q, 2, 1024);
        const uint64_t before = s.scalar_cycles();
        LocalTensor<half> t = q.AllocTensor<half>();
        q.EnQue(t);
        t = q.DeQue<half>();
        q.FreeTensor(t);
        CHECK(s.scalar_cycles() - before == 4 * ApiOps::kQueueOp);
    }
    // 3 full instructions of 255 repeats and a masked tail: 4 instructions, 3 more loop
    // iterations after the first, each advancing dst, src0 and src1.
    const uint32_t lanes = 128, n = 3 * 255 * lanes + 5;
    const uint64_t before = s.scalar_cycles();
    s.set_buffer(Pos::UB, 3ull * n * 2 + 4096);
    const LocalTensor<half> a(&ctx, Pos::UB, 0, n, -1);
    const LocalTensor<half> b(&ctx, Pos::UB, (n * 2 + 31) / 32 * 32, n, -1);
    const LocalTensor<half> c(&ctx, Pos::UB, 2 * ((n * 2 + 31) / 32 * 32), n, -1);
    Add(c, a, b, n);
    CHECK(s.count(Opcode::VADD) == 4);
    CHECK(s.scalar_cycles() - before == 3 * (ApiOps::kLoopIteration + 3 * ApiOps::kAddressAdvance));
}
