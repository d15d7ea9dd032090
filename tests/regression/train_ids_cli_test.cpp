// `sfumato train-step` of a transformer whose word-embedding table is larger than tiny's UB, with
// more ids than one in-UB gather tile: the forward's Gather takes the row gather, whose row
// addresses come from the token ids. The executor plans it with the ids the host passes (the same
// in both modes: known_ids, runtime/ops/llm/embedding.h), so timing mode addresses the rows
// functional mode does and the step takes the same cycles (it read row 0 for every id before).
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("train-step: a row-gathered embedding takes the same cycles in timing and functional mode", "[train]") {
    // 2000 x 64 fp16 = 250 KiB of table against 32 KiB of UB; 4 x 32 ids of 64 values each are
    // more than one in-UB gather tile (4096 values).
    const std::string m = "\"zoo:bert_base?layers=1&hidden=64&heads=2&seq=32&vocab=2000\"";
    std::vector<nlohmann::json> runs;
    for (const char* mode : {"functional", "timing"}) {
        const std::string out = temp_dir(std::string("train_ids_") + mode);
        const CliResult r = run_cli("train-step " + m + " --system " + config("system-tiny") +
                                    " --set system.chips_per_server=2 --batch 4 --precision fp16 --trace off --simulate all "
                                    "--mode " + std::string(mode) + " --out " + out);
        INFO(r.output);
        REQUIRE(r.code == 0);
        runs.push_back(read_json(out + "/summary.json"));
    }
    CHECK(runs[0]["check"]["passed"] == true);
    CHECK(runs[0]["step_cycles"] == runs[1]["step_cycles"]);
}
