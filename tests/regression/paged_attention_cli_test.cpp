// PagedAttention through `sfumato kernel paged_attention`
// (runtime/ops/llm/paged_attention.h): ragged decode batches (GQA, MQA),
// chunked prefill continuing a cached prefix, mixed prefill + decode launches,
// on the tiny and 910B-like (split) and 910-like (coupled) presets: the
// functional run matches the host reference, timing mode takes the same cycles,
// a decode batch too small to fill the cube cores is split over its key blocks
// and combined; a decode step reads at least its whole KV (time >= KV bytes
// over the HBM peak, L2 cold) and a prefill does at least its products at the
// cube peak (both from the preset's parameters); bad arguments exit 2 naming
// them.
#include <catch2/catch.hpp>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_paged(const std::string& args, const std::string& preset, const std::string& mode,
                         const std::string& out) {
    const CliResult r = run_cli("kernel paged_attention " + args + " --config " + config(preset) +
                                " --trace off --l2 cold --mode " + mode + " --out " + out);
    INFO(args << " on " << preset << " (" << mode << "): " << r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

double all_cycles(const nlohmann::json& s) {
    double c = 0;
    for (const auto& op : s["ops"]) c += op["cycles"].get<double>();
    return c;
}

bool has_kernel(const nlohmann::json& s, const std::string& suffix) {
    for (const auto& op : s["ops"]) {
        const std::string n = op["name"].get<std::string>();
        if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
            return true;
    }
    return false;
}

}  // namespace

TEST_CASE("paged attention: ragged decode, GQA, MQA, chunked prefill and mixed batches match the reference",
          "[llm]") {
    const std::string dir = temp_dir("paged");
    struct Case {
        const char* preset;
        const char* args;
        bool split;  // a decode batch too small for the cube cores: key-split and
                     // combined
    };
    const Case cases[] = {
        {"tiny",
         "--query-lens 1,1,1 --context-lens 5,130,63 --heads 4 --kv-heads 2 --head-dim 32 --block-size 64",
         false},
        {"tiny", "--query-lens 1 --context-lens 300 --heads 4 --kv-heads 1 --head-dim 64 --block-size 64",
         true},
        {"tiny",
         "--query-lens 37,1,20 --context-lens 0,90,64 --heads 2 --kv-heads 2 --head-dim 32 --block-size 64",
         false},
        {"ascend910b-like",
         "--query-lens 1,1,1,1 --context-lens 1000,17,300,2000 --heads 32 --kv-heads 8 --head-dim 128",
         false},
        {"ascend910b-like", "--query-lens 1 --context-lens 3000 --heads 32 --kv-heads 8 --head-dim 128",
         true},
        {"ascend910b-like",
         "--query-lens 200,1 --context-lens 300,500 --heads 8 --kv-heads 2 --head-dim 128 --dtype bf16",
         true},
        {"ascend910-like", "--query-lens 1,50 --context-lens 400,100 --heads 4 --kv-heads 4 --head-dim 64",
         true},
    };
    int i = 0;
    for (const Case& c : cases) {
        INFO(c.preset << ": " << c.args);
        const nlohmann::json f = run_paged(c.args, c.preset, "functional", dir + "/f" + std::to_string(i));
        CHECK(f["check"]["checked"] == true);
        CHECK(f["check"]["passed"] == true);
        CHECK(has_kernel(f, ".combine") == c.split);
        const nlohmann::json t = run_paged(c.args, c.preset, "timing", dir + "/t" + std::to_string(i));
        CHECK(f["total_cycles"] == t["total_cycles"]);
        ++i;
    }
}

TEST_CASE(
    "paged attention: decode reads its KV at no more than the HBM peak, prefill computes at no more than the "
    "cube peak",
    "[llm]") {
    const std::string dir = temp_dir("paged_limit");
    Config cfg;
    cfg.load_ini(config("ascend910b-like"));
    const DeviceInfo d = device_info(ChipParams(cfg), false);
    // Decode: 8 sequences of 2047 cached tokens, 8 kv heads of 128
    // (Llama-3-8B-like), fp16.
    const double kv = 8.0 * 2048 * 8 * 128 * 2 * 2;
    const nlohmann::json dec = run_paged(
        "--query-lens 1,1,1,1,1,1,1,1 --context-lens 2047,2047,2047,2047,2047,2047,2047,2047 --heads 32 "
        "--kv-heads 8 --head-dim 128",
        "ascend910b-like", "timing", dir + "/decode");
    INFO("decode cycles " << all_cycles(dec) << ", KV bytes / HBM peak " << kv / d.gm_bytes_per_cycle);
    CHECK(all_cycles(dec) >= kv / d.gm_bytes_per_cycle);
    // Prefill: 1024 tokens, 32 heads of 128: causal pairs 1024 * 1025 / 2 per
    // head, two products.
    const double macs = 32.0 * 1024 * 1025 / 2 * 128 * 2;
    const nlohmann::json pre =
        run_paged("--query-lens 1024 --context-lens 0 --heads 32 --kv-heads 32 --head-dim 128",
                  "ascend910b-like", "timing", dir + "/prefill");
    INFO("prefill cycles " << all_cycles(pre) << ", MACs / cube peak "
                           << macs / (d.cube_macs_fp16 * d.cube_cores));
    CHECK(all_cycles(pre) >= macs / (d.cube_macs_fp16 * d.cube_cores));
}

TEST_CASE("paged attention: bad arguments exit 2 naming them", "[llm]") {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"--query-lens 1 --context-lens 4 --heads 6 --kv-heads 4 --head-dim 32 --block-size 64",
         "num_kv_heads"},
        {"--query-lens 1 --context-lens 4 --heads 4 --kv-heads 4 --head-dim 32 --block-size 100",
         "block_size"},
        {"--query-lens 1 --context-lens 4 --heads 4 --kv-heads 4 --head-dim 32 --dtype fp32", "'dtype'"},
        {"--query-lens 1,2 --context-lens 4 --heads 4 --kv-heads 4 --head-dim 32", "'context_lens'"},
    };
    for (const auto& [args, name] : bad) {
        INFO(args);
        const CliResult r = run_cli("kernel paged_attention " + args + " --config " + config("tiny"));
        CHECK(r.code == 2);
        CHECK(r.output.find(name) != std::string::npos);
    }
}
