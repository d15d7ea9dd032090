// `sfumato serve --system F --pp N` (serve.pp; runtime/serve/serve_parallel.cpp over runtime/llm's
// PpRun) on the tiny model and the tiny system (timing mode): an instance whose layers run as
// pipeline stages on several chips.
//  - every request is served; each chip holds its stage's layers (vLLM's partition), so a KV block
//    on it holds K and V of its layers only and the instance's pool (the fewest blocks any chip
//    holds) is larger than one chip's;
//  - every step's activations (hidden state and residual of its padded tokens, fp16) go from stage
//    0 to stage 1 over the link, each send at least its bytes over the link's bandwidth plus the
//    link's latency (configs/system-tiny.ini);
//  - one batch in flight (serve.pp_batches_in_flight=1): the steps' summed time is at least both
//    stages' kernel time plus the sends' (the stages of a step run one after the other), and the
//    stages' kernels never overlap;
//  - two batches in flight (the default for --pp 2): on a saturated trace the stages' kernels
//    overlap, consecutive steps overlap in the steps' own timeline, the run takes less than the
//    stages' kernels and sends one after the other would, and the throughput rises over one
//    batch in flight; the same trace twice gives identical results;
//  - stages of TP ranks (--pp 2 --tp 2): each stage's ranks all-reduce their layers' projections;
//  - preemption by swap: each stage copies its layers' KV, together the whole model's;
//  - the same trace twice gives identical results; bad plans exit 2 naming the culprit.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/regression/serve_support.h"

using namespace sfumato::test;

namespace {

const std::string kBase =
    "serve tiny --system " + config("system-tiny") + " --set serve.block_size=64 --trace off";
const std::string kLoaded = " --generate n=12,rate=20000,prompt=uniform:32:96,output=uniform:8:24,seed=5";

// A value of configs/system-tiny.ini's [section].
double ini_value(const std::string& section, const std::string& key) {
    std::ifstream in(config("system-tiny"));
    std::string line, at;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (line[0] == '[') {
            at = line.substr(1, line.find(']') - 1);
            continue;
        }
        const size_t eq = line.find('=');
        if (at != section || eq == std::string::npos) continue;
        std::string k = line.substr(0, eq);
        k.erase(k.find_last_not_of(' ') + 1);
        if (k == key) return std::stod(line.substr(eq + 1));
    }
    FAIL("configs/system-tiny.ini has no " << section << "." << key);
    return 0;
}

// Rows of a CSV without quoted fields (steps.csv), the header first.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        rows.emplace_back();
        std::istringstream f(line);
        for (std::string x; std::getline(f, x, ',');) rows.back().push_back(x);
    }
    return rows;
}

// The tiny model (configs/llm/tiny.json): 2 layers, hidden 64, 2 KV heads of 16.
constexpr int64_t kLayers = 2, kHidden = 64, kKvSize = 2 * 16;

}  // namespace

const std::string kOneInFlight = " --set serve.pp_batches_in_flight=1";

TEST_CASE(
    "serve --pp: two stages serve the trace, each step's activations cross the link, one batch in flight",
    "[serve]") {
    const std::string d = temp_dir("serve_pp");
    const nlohmann::json one = serve_ok(kBase, "--instances 1" + kLoaded, d + "/pp1");
    const nlohmann::json two = serve_ok(kBase, "--instances 1 --pp 2" + kOneInFlight + kLoaded, d + "/pp2");
    CHECK(two["metrics"]["served"].get<int>() == 12);
    CHECK(two["setup"]["pp"] == 2);
    const nlohmann::json& a = one["instances"][0];
    const nlohmann::json& b = two["instances"][0];
    CHECK(b["chips"] == nlohmann::json::array({0, 1}));
    const nlohmann::json& pl = b["pipeline"];
    REQUIRE(pl["chips"].size() == 2);
    CHECK(pl["batches_in_flight"] == 1);
    CHECK(pl["stages_overlap_ms"].get<double>() == 0);
    // vLLM's partition of 2 layers over 2 stages: one each; the embedding on stage 0, the head on 1.
    const nlohmann::json& c0 = pl["chips"][0];
    const nlohmann::json& c1 = pl["chips"][1];
    CHECK(c0["first_layer"] == 0);
    CHECK(c0["end_layer"] == 1);
    CHECK(c0["embedding"] == true);
    CHECK(c0["head"] == false);
    CHECK(c1["first_layer"] == 1);
    CHECK(c1["end_layer"] == kLayers);
    CHECK(c1["head"] == true);
    // A block on a chip holds K and V (fp16) of its block's tokens in its one layer: half of one
    // chip's block, so the pool (the fewer blocks of the two chips) is larger.
    const uint64_t block1 = a["memory"]["kv"].get<uint64_t>() / a["memory"]["kv_blocks"].get<uint64_t>();
    for (const nlohmann::json& c : pl["chips"])
        CHECK(c["kv_block_bytes"].get<uint64_t>() == 64 * kKvSize * 2 * 2);
    CHECK(c0["kv_block_bytes"].get<uint64_t>() * 2 == block1);
    const int64_t pool = b["kv"]["pool_blocks"].get<int64_t>();
    CHECK(pool > a["kv"]["pool_blocks"].get<int64_t>());
    CHECK(pool == std::min(c0["kv_blocks"].get<int64_t>(), c1["kv_blocks"].get<int64_t>()) - 1);
    CHECK(c1["reserved"].get<uint64_t>() >= pl["recv_bytes"].get<uint64_t>());  // the receive buffer

    // Stage 0 sends every step's hidden state and residual: 2 x padded tokens x hidden x 2 bytes.
    const size_t steps = b["steps"].get<size_t>();
    const int64_t tokens = b["timer"]["tokens"].get<int64_t>() + b["timer"]["padded_tokens"].get<int64_t>();
    CHECK(c0["sends"].get<size_t>() == steps);
    CHECK(c0["sent_bytes"].get<int64_t>() == 2 * tokens * kHidden * 2);
    CHECK(c1["sends"].get<size_t>() == 0);
    // Each send is two peer copies over the link: at least the bytes over its bandwidth and a
    // latency each.
    const double gbps = ini_value("system.link", "gbps"), latency_ns = ini_value("system.link", "latency_ns");
    const double send_floor_ms =
        (c0["sent_bytes"].get<double>() / gbps + 2.0 * static_cast<double>(steps) * latency_ns) * 1e-6;
    CHECK(c0["send_ms"].get<double>() >= send_floor_ms);
    // One batch in flight: stage 1's kernels of a step wait for stage 0's send, and the next step
    // starts once stage 1 has read its tokens back, so the steps' time holds both stages' kernels
    // and the sends one after the other.
    const double busy_ms = two["metrics"]["busy_s"].get<double>() * 1e3;
    const double serial_ms =
        c0["kernel_ms"].get<double>() + c1["kernel_ms"].get<double>() + c0["send_ms"].get<double>();
    INFO("busy " << busy_ms << " ms, stages' kernels and sends " << serial_ms << " ms");
    CHECK(c0["kernel_ms"].get<double>() > 0);
    CHECK(c1["kernel_ms"].get<double>() > 0);
    CHECK(busy_ms >= serial_ms);
    // The links carried the sends.
    double link_bytes = 0;
    const nlohmann::json summary = read_json(d + "/pp2/summary.json");  // the links of a temporary would dangle
    for (const nlohmann::json& l : summary["links"]) link_bytes += l["bytes"].get<double>();
    CHECK(link_bytes >= c0["sent_bytes"].get<double>());
    // The same trace again: identical results.
    serve_ok(kBase, "--instances 1 --pp 2" + kOneInFlight + kLoaded, d + "/pp2b");
    CHECK(read_text(d + "/pp2/requests.csv") == read_text(d + "/pp2b/requests.csv"));
    CHECK(read_text(d + "/pp2/steps.csv") == read_text(d + "/pp2b/steps.csv"));
}

TEST_CASE("serve --pp: two batches in flight overlap the stages and raise a saturated trace's throughput",
          "[serve]") {
    const std::string d = temp_dir("serve_pp_flight");
    // Long prompts arriving at once: a step's time grows with its tokens, so the stages working on
    // two batches at once get through the prompts sooner than one batch through both in turn.
    const std::string load = " --generate n=24,rate=20000,prompt=uniform:256:480,output=uniform:8:24,seed=5";
    const nlohmann::json one = serve_ok(kBase, "--pp 2" + kOneInFlight + load, d + "/k1");
    const nlohmann::json two = serve_ok(kBase, "--pp 2" + load, d + "/k2");
    for (const nlohmann::json* s : {&one, &two}) {
        CHECK((*s)["metrics"]["served"].get<int>() == 24);
        CHECK((*s)["metrics"]["rejected"].get<int>() == 0);
    }
    const nlohmann::json& p1 = one["instances"][0]["pipeline"];
    const nlohmann::json& p2 = two["instances"][0]["pipeline"];
    CHECK(p1["batches_in_flight"] == 1);
    CHECK(p2["batches_in_flight"] == 2);  // the default: serve.pp
    CHECK(p1["stages_overlap_ms"].get<double>() == 0);
    // Stage 0 computes a step while stage 1 computes the one before.
    CHECK(p2["stages_overlap_ms"].get<double>() > 0);
    // The run is shorter than the stages' kernels and sends one after the other.
    const nlohmann::json& c0 = p2["chips"][0];
    const double serial_ms = c0["kernel_ms"].get<double>() + p2["chips"][1]["kernel_ms"].get<double>() +
                             c0["send_ms"].get<double>();
    const double run_ms = two["metrics"]["duration_s"].get<double>() * 1e3;
    INFO("two in flight: run " << run_ms << " ms, stages one after the other " << serial_ms << " ms, overlap "
                               << p2["stages_overlap_ms"].get<double>() << " ms");
    CHECK(run_ms < serial_ms);
    // Consecutive steps overlap in the steps' own timeline (a step spans its submission to its
    // exit from the last stage).
    const std::vector<std::vector<std::string>> steps = csv_rows(read_text(d + "/k2/steps.csv"));
    REQUIRE(steps.size() > 2);
    size_t overlapping = 0;
    for (size_t k = 2; k < steps.size(); ++k)
        if (std::stod(steps[k][2]) < std::stod(steps[k - 1][2]) + std::stod(steps[k - 1][3])) ++overlapping;
    CHECK(overlapping > 0);
    const double r1 = one["metrics"]["requests_per_s"].get<double>(), r2 = two["metrics"]["requests_per_s"].get<double>();
    INFO("requests/s: one in flight " << r1 << ", two " << r2);
    CHECK(r2 > r1);
    CHECK(two["metrics"]["output_tokens_per_s"].get<double>() > one["metrics"]["output_tokens_per_s"].get<double>());
    // The same trace again: identical results.
    serve_ok(kBase, "--pp 2" + load, d + "/k2b");
    CHECK(read_text(d + "/k2/requests.csv") == read_text(d + "/k2b/requests.csv"));
    CHECK(read_text(d + "/k2/steps.csv") == read_text(d + "/k2b/steps.csv"));
}

TEST_CASE("serve --pp --tp: two stages of two TP ranks, each stage's ranks all-reduce its layer", "[serve]") {
    const std::string d = temp_dir("serve_pp_tp");
    const nlohmann::json s = serve_ok(kBase, "--pp 2 --tp 2" + kLoaded, d + "/o");
    CHECK(s["metrics"]["served"].get<int>() == 12);
    const nlohmann::json& in = s["instances"][0];
    CHECK(in["chips"] == nlohmann::json::array({0, 1, 2, 3}));
    const nlohmann::json& pl = in["pipeline"];
    REQUIRE(pl["chips"].size() == 4);
    const size_t steps = in["steps"].get<size_t>();
    const int64_t tokens = in["timer"]["tokens"].get<int64_t>() + in["timer"]["padded_tokens"].get<int64_t>();
    for (const nlohmann::json& c : pl["chips"]) {
        INFO(c.dump());
        // One layer per stage, two row-parallel projections in it.
        CHECK(c["all_reduces"].get<size_t>() == 2 * steps);
        // Rank r of stage 0 sends to rank r of stage 1: each rank the whole activations.
        if (c["stage"] == 0)
            CHECK(c["sent_bytes"].get<int64_t>() == 2 * tokens * kHidden * 2);
        else
            CHECK(c["sends"].get<size_t>() == 0);
    }
    // Every rank simulates its kernels (--simulate auto = all).
    for (const nlohmann::json& c : pl["chips"]) CHECK(c["kernel_ms"].get<double>() > 0);
}

TEST_CASE("serve --pp: preemption by swap copies each stage's layers' KV, together the whole model's",
          "[serve]") {
    const std::string d = temp_dir("serve_pp_swap");
    const std::string tight = " --set serve.kv_blocks=8 --set serve.preemption=swap --generate "
                              "n=12,rate=20000,prompt=96,output=40,seed=4";
    // Two batches in flight: a request that would have to preempt itself while the other batch
    // is in flight waits for it instead; everything is served, each token computed once.
    const nlohmann::json k2 = serve_ok(kBase, "--pp 2" + tight, d + "/k2");
    CHECK(k2["metrics"]["served"].get<int>() == 12);
    CHECK(k2["instances"][0]["timer"]["tokens"].get<int64_t>() == 12 * 96 + 12 * 39);
    CHECK(k2["metrics"]["swapped_in_tokens"] == k2["metrics"]["swapped_out_tokens"]);
    // One batch in flight: the tail is preempted (swapped out) when the pool runs dry.
    const nlohmann::json s = serve_ok(kBase, "--pp 2" + kOneInFlight + tight, d + "/o");
    CHECK(s["metrics"]["served"].get<int>() == 12);
    CHECK(s["metrics"]["preemptions"].get<int>() > 0);
    const nlohmann::json& in = s["instances"][0];
    CHECK(in["timer"]["tokens"].get<int64_t>() == 12 * 96 + 12 * 39);  // each token computed once
    const int64_t out = s["metrics"]["swapped_out_tokens"].get<int64_t>();
    CHECK(out > 0);
    CHECK(s["metrics"]["swapped_in_tokens"].get<int64_t>() == out);
    // K and V (fp16) of every layer, out and back: stage 0 its layer's, stage 1 its.
    CHECK(in["timer"]["swap_bytes"].get<int64_t>() == 2 * out * kKvSize * 2 * 2 * kLayers);
}

TEST_CASE("serve --pp: bad plans exit 2 naming the culprit", "[serve]") {
    struct Case {
        std::string args, says;
    } cases[] = {
        {kBase + " --pp 3", "2 layers"},
        {kBase + " --instances 2 --pp 2 --tp 2", "needs 8 chips, the system has 4"},
        {"serve tiny --config " + config("tiny") + " --pp 2 --trace off", "--system"},
        {kBase + " --instances 2 --pp 2 --set serve.placement=0,1", "both use chip 1"},
        {kBase + " --instances 2 --pp 2 --set serve.prefill_instances=1",
         "serve.pp 2 with serve.prefill_instances"},
        {kBase + " --pp 0", "--pp 0"},
        {kBase + " --set serve.pp=65", "serve.pp"},
        {kBase + " --pp 2 --set serve.pp_batches_in_flight=3", "serve.pp_batches_in_flight 3 exceeds serve.pp 2"},
    };
    for (const Case& c : cases) {
        const CliResult r = run_cli(c.args + " --generate n=2,rate=100,prompt=16,output=2");
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.says));
    }
}
