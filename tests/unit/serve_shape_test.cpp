// runtime/serve/chip_timer.h: the shape buckets a step is padded to (vLLM's CUDA-graph batch
// sizes: 1, 2, 4, 8, then a bounded number per doubling) and the engine's batch built from the
// scheduler's items: ragged rows from each sequence's own KV blocks, padding sequences in the
// scratch block, no request's block touched by the padding.
#include <catch2/catch.hpp>
#include <set>

#include "runtime/serve/chip_timer.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::serve;

TEST_CASE("serve: shape buckets bound the padding and the number of shapes", "[serve]") {
    std::set<int64_t> buckets;
    for (int64_t n = 1; n <= 8192; ++n) {
        const int64_t b = shape_bucket(n);
        REQUIRE(b >= n);
        REQUIRE(shape_bucket(b) == b);  // a bucket is its own bucket
        if (n > 8) REQUIRE(static_cast<double>(b) <= static_cast<double>(n) * 1.125 + 8);
        buckets.insert(b);
    }
    // 1, 2, 4, 8, then at most 8 per doubling up to 8192 (10 doublings past 8).
    CHECK(buckets.size() <= 4 + 8 * 10);
    CHECK(shape_bucket(1) == 1);
    CHECK(shape_bucket(3) == 4);
    CHECK(shape_bucket(9) == 16);
    CHECK(shape_bucket(300) == 320);  // multiples of 32 between 256 and 511
}

TEST_CASE("serve: a step's batch has each sequence's blocks and padding in the scratch block", "[serve]") {
    const int64_t bs = 64, scratch = 99;
    std::vector<StepItem> items;
    items.push_back({0, 100, 0, true, {5, 6}});      // a prefill chunk of 100 tokens
    items.push_back({1, 1, 130, false, {7, 8, 9}});  // decodes
    items.push_back({2, 1, 63, false, {10}});
    items.push_back({3, 1, 64, false, {11, 12}});
    SECTION("exact") {
        const llm::StepBatch b = step_shape(items, bs, scratch, false);
        CHECK(b.query_lens == std::vector<int64_t>{100, 1, 1, 1});
        CHECK(b.context_lens == std::vector<int64_t>{0, 130, 63, 64});
        REQUIRE(b.max_blocks == 3);
        CHECK(b.block_table == std::vector<int64_t>{5, 6, -1, 7, 8, 9, 10, -1, -1, 11, 12, -1});
    }
    SECTION("padded") {
        const llm::StepBatch b = step_shape(items, bs, scratch, true);
        // 100 prefill tokens -> 112 (multiples of 8 between 64 and 127); 3 decodes -> 4.
        REQUIRE(b.sequences() == 6);
        CHECK(b.tokens() == shape_bucket(100) + shape_bucket(3));
        CHECK(b.query_lens[4] == shape_bucket(100) - 100);
        CHECK(b.query_lens[5] == 1);
        for (size_t s = 4; s < 6; ++s) {
            CHECK(b.context_lens[s] == 0);
            CHECK(b.block_table[s * 3] == scratch);
        }
        // The requests' rows are untouched.
        CHECK(std::vector<int64_t>(b.block_table.begin(), b.block_table.begin() + 12) ==
              std::vector<int64_t>{5, 6, -1, 7, 8, 9, 10, -1, -1, 11, 12, -1});
    }
    SECTION("a sequence short of blocks is a failure, not a silent write elsewhere") {
        items[1].blocks = {7, 8};
        CHECK_THROWS_AS(step_shape(items, bs, scratch, false), SimError);
    }
}
