// `sfumato llm` with the runtime's timing re-use (default auto) against `--exact` on a 2-layer
// model: the decode steps repeat the matmuls' and norms' identities, so auto re-uses many
// launches. A stand-in leaves the memory system as its kernel would have (its template's GM
// footprint replayed into the L2, runtime/reuse/footprint.h): without that, the kernels
// simulated in full after it (paged attention, whose lengths change every step) found in the L2
// what the re-used matmuls' weight streaming would have evicted, and TPOT came out 4.4 % below
// exact on this model and chip. The bound is the issue's (24, item 7: a 2-layer model with
// --exact within 3 % of re-use), on TTFT, TPOT and the HBM bytes the run moves (timed traffic
// plus the stand-ins' counted traffic). The same inputs give the same cycles twice.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

nlohmann::json run_ok(const std::string& args, const std::string& out) {
    const CliResult r = run_cli(args + " --trace off --out " + out);
    INFO(args << "\n" << r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

// A stat of a run's stats.h5 by the end of its path (`sfumato stats` prints "path value ...").
double stat(const std::string& out, const std::string& suffix) {
    const CliResult r = run_cli("stats " + out + "/stats.h5 " + suffix);
    INFO(r.output);
    REQUIRE(r.code == 0);
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream w(line);
        std::string path;
        double v = 0;
        if (w >> path >> v && path.size() >= suffix.size() &&
            path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
            return v;
    }
    FAIL("no stat " << suffix);
    return 0;
}

// HBM bytes moved: the channels' (timed) plus the stand-ins' (counted).
double hbm_bytes(const std::string& out) {
    return stat(out, "hbm/bytes_read") + stat(out, "hbm/bytes_written") + stat(out, "hbm/standin_bytes_read") +
           stat(out, "hbm/standin_bytes_written");
}

}  // namespace

TEST_CASE("llm: timing re-use against --exact on a 2-layer model", "[llm][reuse]") {
    const std::string dir = temp_dir("llm_reuse");
    const std::string model = dir + "/two_layers.json";
    std::ofstream(model) << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512,
        "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
        "vocab_size": 2048, "max_position_embeddings": 1024, "torch_dtype": "float16"})";
    const std::string base = "llm " + model + " --config " + config("tiny") +
                             " --mode timing --prefill 128 --decode 8 --batch 2 --block-size 64";
    const auto exact = run_ok(base + " --exact", dir + "/exact");
    const auto reused = run_ok(base, dir + "/auto");
    const auto again = run_ok(base, dir + "/again");
    const auto& ej = exact["llm"];
    const auto& rj = reused["llm"];
    const auto& rc = reused["reuse_timing"];
    INFO(rc.dump());
    CHECK(exact["reuse_timing"]["reused"] == 0);
    CHECK(rc["reused"].get<uint64_t>() > 0);
    CHECK(rc["replayed_bytes"].get<uint64_t>() > 0);
    // Every re-used launch is charged its template's dynamic energy: the run's energy is complete.
    CHECK(exact["reuse_timing"]["energy_complete"] == true);
    CHECK(rc["energy_charged"] == rc["reused"]);
    CHECK(rc["energy_complete"] == true);
    // Issue 24, item 7: re-use within 3 % of --exact on a 2-layer model.
    const double bound = 0.03;
    const double ttft = rj["ttft_ms"].get<double>() / ej["ttft_ms"].get<double>() - 1.0;
    const double tpot = rj["tpot_ms"].get<double>() / ej["tpot_ms"].get<double>() - 1.0;
    const double hbm = hbm_bytes(dir + "/auto") / hbm_bytes(dir + "/exact") - 1.0;
    INFO("re-use vs exact: TTFT " << 100 * ttft << " %, TPOT " << 100 * tpot << " %, HBM bytes " << 100 * hbm << " %");
    CHECK(std::fabs(ttft) <= bound);
    CHECK(std::fabs(tpot) <= bound);
    CHECK(std::fabs(hbm) <= bound);
    CHECK(stat(dir + "/exact", "hbm/standin_bytes_read") == 0);
    // Bit-identical cycles from the same inputs.
    CHECK(again["llm"]["decode_step_ms"] == rj["decode_step_ms"]);
    CHECK(again["llm"]["ttft_ms"] == rj["ttft_ms"]);
}

// Tensor parallelism: the all-reduces' copy and reduce kernels (runtime/comm/kernels.cpp) are
// re-use candidates too, keyed on their element counts, address alignments and dtype, plus the
// L2 state of their operands. Their time also depends on what the other chips do meanwhile (link
// transfers into this chip's memory): the key does not hold that, auto's agreement check does (an
// all-reduce whose runs disagree keeps being simulated). Measured here against --exact on TP=2.
TEST_CASE("llm tp: the collectives' kernels are re-used, within 3 % of --exact", "[llm][reuse]") {
    const std::string dir = temp_dir("llm_reuse_tp");
    const std::string model = dir + "/two_layers.json";
    std::ofstream(model) << R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512,
        "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
        "vocab_size": 2048, "max_position_embeddings": 1024, "torch_dtype": "float16"})";
    const std::string base = "llm " + model + " --system " + config("system-tiny") +
                             " --tp 2 --mode timing --prefill 64 --decode 8 --batch 2 --block-size 64";
    const auto exact = run_ok(base + " --exact", dir + "/exact");
    const auto reused = run_ok(base, dir + "/auto");
    const auto& rc = reused["reuse_timing"];
    INFO(rc.dump());
    CHECK(exact["reuse_timing"]["reused"] == 0);
    // Every launch has an identity, the all-reduces' copies and reductions included.
    CHECK(rc["candidates"] == rc["launches"]);
    CHECK(rc["reused"].get<uint64_t>() > 0);
    const double bound = 0.03;
    const double ttft = reused["llm"]["ttft_ms"].get<double>() / exact["llm"]["ttft_ms"].get<double>() - 1.0;
    const double tpot = reused["llm"]["tpot_ms"].get<double>() / exact["llm"]["tpot_ms"].get<double>() - 1.0;
    INFO("re-use vs exact: TTFT " << 100 * ttft << " %, TPOT " << 100 * tpot << " %");
    CHECK(std::fabs(ttft) <= bound);
    CHECK(std::fabs(tpot) <= bound);
    // Within the bounds stated on TTFT and TPOT along the critical path (the all-reduces are where
    // the chips meet; their own kernels add up over the chips).
    REQUIRE(rc["ttft_error_bound_fraction"].is_number());
    REQUIRE(rc["tpot_error_bound_fraction"].is_number());
    CHECK(std::fabs(ttft) <= rc["ttft_error_bound_fraction"].get<double>());
    CHECK(std::fabs(tpot) <= rc["tpot_error_bound_fraction"].get<double>());
}

// Expert parallelism: the chips of one configuration share one table of re-use identities
// (ReuseOptions::table), so a chip takes the time of another chip's full run of the same identity
// (its own L2 state included): the replicated attention, norms and router on four chips are
// simulated about once, not once per chip. Another chip's run serves only once it completed
// before the deciding tick, and full runs are ordered by (tick, chip, launch), so the result does
// not depend on which chip's process reaches the table first: the same inputs give the same
// cycles, and the run stays within the issue's 3 % of --exact. Two chips' first runs of an
// identity (lockstep: the same cold code and operands) do not confirm each other: before that
// rule the LM head and the sampler took their prefill (cold) time in every decode step on every
// chip, TPOT +0.84 % against a stated 0.13 %. TTFT and TPOT are critical paths across the chips,
// so their stated bounds are the per-launch bounds propagated along one (runtime/llm/path_bound.h),
// and the run must fall within them.
TEST_CASE("llm ep: chips share one re-use table, deterministically, within 3 % of --exact", "[llm][reuse]") {
    const std::string dir = temp_dir("llm_reuse_ep");
    const std::string base = "llm tiny-moe --system " + config("system-tiny") +
                             " --ep 4 --batch 8 --mode timing --prefill 64 --decode 16";
    const auto exact = run_ok(base + " --exact", dir + "/exact");
    const auto reused = run_ok(base, dir + "/auto");
    const auto again = run_ok(base, dir + "/again");
    const auto& rc = reused["reuse_timing"];
    INFO(rc.dump());
    CHECK(exact["reuse_timing"]["reused"] == 0);
    CHECK(rc["reused"].get<uint64_t>() > 0);
    // Summed over the chips, each identity counts once and every full run after an identity's
    // first is a check.
    CHECK(rc["candidates"].get<uint64_t>() - rc["reused"].get<uint64_t>() ==
          rc["unique"].get<uint64_t>() + rc["checks"].get<uint64_t>());
    const double bound = 0.03;
    const double ttft = reused["llm"]["ttft_ms"].get<double>() / exact["llm"]["ttft_ms"].get<double>() - 1.0;
    const double tpot = reused["llm"]["tpot_ms"].get<double>() / exact["llm"]["tpot_ms"].get<double>() - 1.0;
    INFO("re-use vs exact: TTFT " << 100 * ttft << " %, TPOT " << 100 * tpot << " %");
    CHECK(std::fabs(ttft) <= bound);
    CHECK(std::fabs(tpot) <= bound);
    // Within the bounds the run states on what it reports.
    REQUIRE(rc["ttft_error_bound_fraction"].is_number());
    REQUIRE(rc["tpot_error_bound_fraction"].is_number());
    CHECK(std::fabs(ttft) <= rc["ttft_error_bound_fraction"].get<double>());
    CHECK(std::fabs(tpot) <= rc["tpot_error_bound_fraction"].get<double>());
    CHECK(again["llm"]["decode_step_ms"] == reused["llm"]["decode_step_ms"]);
    CHECK(again["llm"]["ttft_ms"] == reused["llm"]["ttft_ms"]);
    CHECK(again["reuse_timing"] == rc);
}
