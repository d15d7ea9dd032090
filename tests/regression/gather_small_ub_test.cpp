// Gather on a small UB (tiny: 32 KiB): an embedding lookup of many indices into wide rows
// (BERT's and GPT-2's word embeddings on tiny) once found no tile, because its index and offset
// buffers grow with indices x row width; the tiling now takes fewer indices per tile first.
// A table that fits the UB keeps the in-UB gather (addresses independent of the data: the same
// cycles in both modes); a larger one with several tiles of ids takes the row gather
// (runtime/ops/llm/embedding.h); the command's ids are known on the host in both modes (known_ids),
// so its timing mode addresses functional mode's rows and takes the same cycles.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("gather: 128 indices into 768-wide fp16 rows fit tiny's UB, match the reference, same cycles in both modes") {
    const std::string dir = temp_dir("gather_small_ub");
    std::vector<nlohmann::json> runs;
    for (const char* mode : {"functional", "timing"}) {
        const CliResult r = run_cli("kernel gather --shape 16x768 --indices 1x128 --axis 0 --dtype fp16 --config " +
                                    config("tiny") + " --trace off --mode " + mode + " --out " + dir + "/" + mode);
        INFO(mode << ": " << r.output);
        REQUIRE(r.code == 0);
        runs.push_back(read_json(dir + "/" + mode + "/summary.json"));
    }
    CHECK(runs[0]["check"]["checked"] == true);
    CHECK(runs[0]["check"]["passed"] == true);
    CHECK(runs[0]["total_cycles"] == runs[1]["total_cycles"]);
}

TEST_CASE("gather: a table beyond tiny's UB with several tiles of ids takes the row gather, matches the reference, same cycles in both modes") {
    const std::string dir = temp_dir("gather_beyond_ub");
    std::vector<nlohmann::json> runs;
    for (const char* mode : {"functional", "timing"}) {
        const CliResult r = run_cli("kernel gather --shape 64x768 --indices 1x128 --axis 0 --dtype fp16 --config " +
                                    config("tiny") + " --trace off --mode " + mode + " --out " + dir + "/" + mode);
        INFO(mode << ": " << r.output);
        REQUIRE(r.code == 0);
        runs.push_back(read_json(dir + "/" + mode + "/summary.json"));
    }
    const nlohmann::json& s = runs[0];
    CHECK(s["check"]["checked"] == true);
    CHECK(s["check"]["passed"] == true);
    REQUIRE(s["ops"].size() == 1);
    const std::string kernel = s["ops"][0]["name"].get<std::string>();  // the kernel the op ran
    INFO(kernel);
    CHECK(kernel.find("runtime indices") == std::string::npos);  // not the in-UB gather
    // The ids are known on the host in both modes (known_ids): timing mode's rows are functional
    // mode's, not row 0 for every id.
    CHECK(runs[0]["total_cycles"] == runs[1]["total_cycles"]);
}
