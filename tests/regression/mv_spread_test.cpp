// Data movement into a strided output (Concat on the last axis, Pad of narrow rows) spreads each
// element over its own 32-byte block with vbrcb. A spread of more than 2040 fp16 values needs
// several vbrcb instructions, and each one's source must stay 32-byte aligned: a split after 255
// repeats (8 values each) left the next source 16 bytes off, which the vector unit refuses.
// On tiny the per-core chunks are too short to need a split; on 910B-like they are not.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("movement: a Concat on the last axis with long fp16 spreads runs on 910B-like and matches the reference") {
    const std::string dir = temp_dir("mv_spread");
    const CliResult r = run_cli("kernel concat --shapes 131072x1,131072x1 --axis -1 --dtype fp16 --config " +
                                config("ascend910b-like") + " --trace off --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const nlohmann::json s = read_json(dir + "/summary.json");
    CHECK(s["check"]["checked"] == true);
    CHECK(s["check"]["passed"] == true);
}
