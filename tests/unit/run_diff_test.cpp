// traces/run_diff.h: grouping, sorting by impact, one-run-only ops and the verdict.
#include <catch2/catch.hpp>

#include "traces/run_diff.h"

using namespace sfumato;
using nlohmann::json;

namespace {

json op(const std::string& name, const std::string& type, int stream, uint64_t cycles) {
    return {{"name", name}, {"type", type}, {"stream", stream}, {"cycles", cycles}};
}

}  // namespace

TEST_CASE("run diff: rows sorted by impact, repeated names kept apart, verdict against the tolerance") {
    const json a = {{"total_cycles", 1000},
                    {"ops", {op("mm", "MatMul", 0, 500), op("relu", "Relu", 1, 100), op("relu", "Relu", 1, 100), op("x", "Add", 0, 50)}}};
    json b = a;
    b["ops"][0]["cycles"] = 490;  // -2 %
    b["ops"][2]["cycles"] = 130;  // +30 %: the second relu
    b["total_cycles"] = 1005;
    const diff::Result r = diff::compare(a, b, diff::By::Op, 1.0);
    REQUIRE(r.rows.size() == 4);
    CHECK(r.rows[0].key == "relu#2");
    CHECK(r.rows[0].delta() == 30);
    CHECK(r.rows[1].key == "mm");
    CHECK(r.rows[1].pct() == Approx(-2.0));
    CHECK(r.beyond == 2);
    CHECK(!r.within);
    CHECK(r.total_pct == Approx(0.5));
    CHECK(diff::compare(a, b, diff::By::Op, 30.0).within);

    const diff::Result t = diff::compare(a, b, diff::By::Type, 1.0);
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].key == "Relu");
    CHECK(t.rows[0].a == 200);
    const diff::Result s = diff::compare(a, b, diff::By::Stream, 1.0);
    CHECK(s.rows.size() == 2);

    CHECK(diff::compare(a, a, diff::By::Op, 0.0).within);
}

TEST_CASE("run diff: ops in one run only fail the verdict whatever the tolerance") {
    const json a = {{"total_cycles", 100}, {"ops", {op("a", "Add", 0, 10), op("b", "Add", 0, 10)}}};
    const json b = {{"total_cycles", 100}, {"ops", {op("a", "Add", 0, 10), op("c", "Add", 0, 10)}}};
    const diff::Result r = diff::compare(a, b, diff::By::Op, 100.0);
    REQUIRE(r.only_a.size() == 1);
    CHECK(r.only_a[0].key == "b");
    REQUIRE(r.only_b.size() == 1);
    CHECK(r.only_b[0].key == "c");
    CHECK(!r.within);
}
