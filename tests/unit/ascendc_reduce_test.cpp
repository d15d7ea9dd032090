// The row-sum example (examples/ascendc/reduce_sum, operator-project tiling read with
// GET_TILING_DATA) executed on the kernel-API test sink: DataCopyPad of rows whose byte length is
// not a multiple of 32, ReduceSum over a count that takes two instructions and a fold,
// GetValue/SetValue of local tensors behind V -> S flags.
#include <catch2/catch.hpp>

#include "ascendc_test_support.h"
#define ASCENDC_CPU_DEBUG 1
#include "examples/ascendc/reduce_sum/reduce_sum_custom.cpp"

TEST_CASE("ascendc: the row-sum example computes its sums (DataCopyPad, two-level ReduceSum, GetValue/SetValue)") {
    sfumato::isa::test::TestMem mem(256 * 1024, 1 << 20);
    MemSink sink(sfumato::isa::CoreKind::Vector, mem);
    sink.set_buffer(Pos::UB, 64 * 1024);
    sink.set_block(1, 8);
    constexpr uint32_t rows = 16 * 8, cols = 1000;
    GmBuf x(rows * cols * 4, 0), out(rows * 4, 0x80000), work(32, 0x90000), tiling(sizeof(optiling::ReduceSumTilingData), 0xa0000);
    optiling::ReduceSumTilingData t;
    t.set_rows(rows);
    t.set_cols(cols);
    t.set_rowsPerBlock(16);
    t.SaveToBuffer(mem.of(Pos::GM).data() + 0xa0000, sizeof t);
    for (uint32_t i = 0; i < rows * cols; ++i) mem.put<float>(Pos::GM, 4 * i, (static_cast<float>(i % 7) - 3.0f) * 0.25f);
    const auto [err, code] = run(sink, [&] { reduce_sum_custom(x.ptr(), out.ptr(), work.ptr(), tiling.ptr()); });
    INFO(err);
    REQUIRE(err.empty());
    CHECK(sink.errors().empty());
    CHECK(sink.first_race() == "");
    for (uint32_t r = 16; r < 32; ++r) {  // block 1's rows
        double want = 0;
        for (uint32_t c = 0; c < cols; ++c) want += ((r * cols + c) % 7 - 3.0) * 0.25;
        CHECK(mem.get<float>(Pos::GM, 0x80000 + 4 * r) == Approx(want).margin(1e-3));
    }
    CHECK(mem.get<float>(Pos::GM, 0x80000 + 4 * 32) == 0.0f);  // block 2's rows untouched
}

