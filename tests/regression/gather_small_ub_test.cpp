// Gather on a small UB (tiny: 32 KiB): an embedding lookup of many indices into wide rows
// (BERT's and GPT-2's word embeddings on tiny) once found no tile, because its index and offset
// buffers grow with indices x row width; the tiling now takes fewer indices per tile first.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("gather: 128 indices into 768-wide fp16 rows fit tiny's UB, match the reference, same cycles in both modes") {
    const std::string dir = temp_dir("gather_small_ub");
    std::vector<nlohmann::json> runs;
    for (const char* mode : {"functional", "timing"}) {
        const CliResult r = run_cli("kernel gather --shape 64x768 --indices 1x128 --axis 0 --dtype fp16 --config " +
                                    config("tiny") + " --trace off --mode " + mode + " --out " + dir + "/" + mode);
        INFO(mode << ": " << r.output);
        REQUIRE(r.code == 0);
        runs.push_back(read_json(dir + "/" + mode + "/summary.json"));
    }
    CHECK(runs[0]["check"]["checked"] == true);
    CHECK(runs[0]["check"]["passed"] == true);
    CHECK(runs[0]["total_cycles"] == runs[1]["total_cycles"]);
}
