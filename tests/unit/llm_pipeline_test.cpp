// runtime/llm/pipeline.h without a simulation: how layers are assigned to stages (L / M each,
// the remainder one layer each on the stages before the last, from the second-to-last
// backwards) and how a batch splits into micro-batches (contiguous, the first ones one larger).
#include <catch2/catch.hpp>

#include "runtime/llm/pipeline.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::llm;

namespace {

std::vector<int64_t> sizes(const std::vector<std::pair<int64_t, int64_t>>& stages) {
    std::vector<int64_t> out;
    int64_t next = 0;
    for (const auto& st : stages) {
        CHECK(st.first == next);  // contiguous, from layer 0
        out.push_back(st.second - st.first);
        next = st.second;
    }
    return out;
}

}  // namespace

TEST_CASE("llm pp_partition: contiguous stages, the remainder before the last stage") {
    CHECK(sizes(pp_partition(80, 2)) == std::vector<int64_t>{40, 40});
    CHECK(sizes(pp_partition(80, 3)) == std::vector<int64_t>{27, 27, 26});
    CHECK(sizes(pp_partition(7, 4)) == std::vector<int64_t>{2, 2, 2, 1});
    CHECK(sizes(pp_partition(5, 3)) == std::vector<int64_t>{2, 2, 1});
    CHECK(sizes(pp_partition(32, 1)) == std::vector<int64_t>{32});
    CHECK(sizes(pp_partition(2, 2)) == std::vector<int64_t>{1, 1});
    for (int64_t l = 1; l <= 40; ++l)
        for (int64_t m = 1; m <= l; ++m) {
            const auto st = pp_partition(l, m);
            REQUIRE(st.size() == static_cast<size_t>(m));
            CHECK(st.back().second == l);
            for (const auto& s : st) CHECK(s.second - s.first >= l / m);
        }
    CHECK_THROWS_AS(pp_partition(2, 3), InputError);
    CHECK_THROWS_AS(pp_partition(2, 0), InputError);
}

TEST_CASE("llm pp_microbatches: contiguous near-equal parts") {
    const auto mb = pp_microbatches(5, 2);
    REQUIRE(mb.size() == 2);
    CHECK(mb[0] == std::vector<size_t>{0, 1, 2});
    CHECK(mb[1] == std::vector<size_t>{3, 4});
    CHECK(pp_microbatches(4, 4).size() == 4);
    CHECK_THROWS_AS(pp_microbatches(2, 3), InputError);
    CHECK_THROWS_AS(pp_microbatches(2, 0), InputError);
}
