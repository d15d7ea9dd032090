// `sfumato serve --system F --tp N` (serve.tp; runtime/serve/tp_lockstep.h over runtime/llm's TpRun)
// on the tiny model and the tiny system (timing mode): an instance spanning several chips.
//  - every request is served; the instance's KV pool grows with its chips (each chip holds its
//    KV heads' share of a block), and an all-reduce follows o_proj and down_proj on every rank in
//    every step, each of the step's [tokens, hidden] fp16 output (shape padding included);
//  - the step time includes the all-reduces: each takes at least its bytes over a link's
//    bandwidth plus the link's latency (configs/system-tiny.ini), and the instance's busy time is
//    at least the sum of those;
//  - only the first chip simulating kernels (--simulate one, an approximation) against every chip
//    (all, the default): busy time and mean latencies within 3 %;
//  - two TP instances behind the router; the same trace twice gives identical results;
//  - disaggregated TP instances: each rank moves its KV shard to its peer rank, layer by layer;
//  - bad plans exit 2 naming the culprit.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
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

// The rows of a CSV file (column -> value); the files here have no quoted fields.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& path) {
    std::istringstream in(read_text(path));
    auto split = [](const std::string& line) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
        if (!line.empty() && line.back() == ',') f.push_back("");
        return f;
    };
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> head = split(line);
    std::vector<std::map<std::string, std::string>> rows;
    while (std::getline(in, line)) {
        const std::vector<std::string> v = split(line);
        REQUIRE(v.size() == head.size());
        std::map<std::string, std::string> r;
        for (size_t i = 0; i < v.size(); ++i) r[head[i]] = v[i];
        rows.push_back(std::move(r));
    }
    return rows;
}

// The tiny model (configs/llm/tiny.json).
constexpr int64_t kLayers = 2, kHidden = 64;

}  // namespace

TEST_CASE(
    "serve --tp: a TP instance serves the trace, its KV pool grows with its chips, its steps carry the "
    "all-reduces",
    "[serve]") {
    const std::string d = temp_dir("serve_tp");
    const nlohmann::json one = serve_ok(kBase, "--instances 1" + kLoaded, d + "/tp1");
    const nlohmann::json two = serve_ok(kBase, "--instances 1 --tp 2" + kLoaded, d + "/tp2");
    CHECK(two["metrics"]["served"].get<int>() == 12);
    const nlohmann::json& a = one["instances"][0];
    const nlohmann::json& b = two["instances"][0];
    CHECK(b["chips"] == nlohmann::json::array({0, 1}));
    CHECK(two["setup"]["tp"] == 2);
    // Per chip a block holds half the KV heads (tiny: 2 KV heads, 1 per chip) and the weights are
    // half, so the instance holds more blocks.
    const uint64_t block1 = a["memory"]["kv"].get<uint64_t>() / a["memory"]["kv_blocks"].get<uint64_t>();
    const uint64_t block2 = b["memory"]["kv"].get<uint64_t>() / b["memory"]["kv_blocks"].get<uint64_t>();
    CHECK(block2 * 2 == block1);
    CHECK(b["kv"]["pool_blocks"].get<int64_t>() > a["kv"]["pool_blocks"].get<int64_t>());
    CHECK(b["memory"]["reserved"].get<uint64_t>() > 0);  // the collective library's buffers

    // Two all-reduces per layer and step on each rank, each of the step's tokens x hidden fp16.
    const size_t steps = b["steps"].get<size_t>();
    const int64_t tokens = b["timer"]["tokens"].get<int64_t>() + b["timer"]["padded_tokens"].get<int64_t>();
    const double gbps = ini_value("system.link", "gbps"), latency_ns = ini_value("system.link", "latency_ns");
    REQUIRE(b["communication"].size() == 2);
    for (const nlohmann::json& c : b["communication"]) {
        INFO(c.dump());
        CHECK(c["all_reduces"].get<size_t>() == 2 * kLayers * steps);
        const double bytes = c["bytes"].get<double>();
        CHECK(bytes == static_cast<double>(2 * kLayers * tokens * kHidden * 2));
        // Two chips: each all-reduce sends half its vector each way twice (reduce-scatter,
        // all-gather), its whole size over the link, and waits at least one link latency.
        const double floor_ms = (bytes / gbps + c["all_reduces"].get<double>() * latency_ns) * 1e-6;
        CHECK(c["comm_ms"].get<double>() >= floor_ms);
        CHECK(c["comm_ms"].get<double>() <= c["steps_ms"].get<double>());
        // The instance's step times (the slowest rank's) include them.
        CHECK(two["metrics"]["busy_s"].get<double>() * 1e3 >= floor_ms);
        CHECK(c["share"].get<double>() > 0);
    }
    // The links carried the all-reduces.
    double link_bytes = 0;
    const nlohmann::json summary = read_json(d + "/tp2/summary.json");
    for (const nlohmann::json& l : summary["links"]) link_bytes += l["bytes"].get<double>();
    CHECK(link_bytes >= b["communication"][0]["bytes"].get<double>());
}

TEST_CASE("serve --tp: the first chip simulating kernels agrees with every chip simulating them", "[serve]") {
    const std::string d = temp_dir("serve_tp_sim");
    const nlohmann::json one = serve_ok(kBase, "--tp 2 --simulate one" + kLoaded, d + "/one");
    const nlohmann::json all = serve_ok(kBase, "--tp 2" + kLoaded, d + "/all");  // auto = all
    CHECK(one["parallel"]["simulate"] == "one");
    CHECK(all["parallel"]["simulate"] == "all");
    CHECK(one["instances"][0]["steps"] == all["instances"][0]["steps"]);
    // The shortcut: before each all-reduce the leader notifies the follower (a host call, a
    // notify task on its stream, the link's latency) instead of the follower reaching it by its own
    // kernels. Its error on the run's busy time and latencies is held within the 3 % (the
    // bound it sets for timing re-use, the other shortcut).
    const double busy_one = one["metrics"]["busy_s"].get<double>(),
                 busy_all = all["metrics"]["busy_s"].get<double>();
    INFO("busy one " << busy_one << " s, all " << busy_all << " s");
    CHECK(busy_one == Approx(busy_all).epsilon(0.03));
    for (const char* m : {"ttft_ms", "tpot_ms", "e2e_ms"})
        CHECK(one["metrics"][m]["mean"].get<double>() ==
              Approx(all["metrics"][m]["mean"].get<double>()).epsilon(0.03));
    const double all_reduces = all["instances"][0]["communication"][0]["all_reduces"].get<double>();
    CHECK(one["instances"][0]["communication"][0]["all_reduces"] == all_reduces);
}

TEST_CASE("serve --tp: two TP instances behind the router, and the same trace twice gives identical results",
          "[serve]") {
    const std::string d = temp_dir("serve_tp_two");
    const std::string args = "--instances 2 --tp 2 --router least_tokens" + kLoaded;
    const nlohmann::json s = serve_ok(kBase, args, d + "/a");
    serve_ok(kBase, args, d + "/b");
    REQUIRE(s["instances"].size() == 2);
    CHECK(s["instances"][0]["chips"] == nlohmann::json::array({0, 1}));
    CHECK(s["instances"][1]["chips"] == nlohmann::json::array({2, 3}));
    CHECK(s["instances"][0]["requests"].get<int>() > 0);
    CHECK(s["instances"][1]["requests"].get<int>() > 0);
    CHECK(s["metrics"]["served"].get<int>() == 12);
    CHECK(read_text(d + "/a/requests.csv") == read_text(d + "/b/requests.csv"));
    CHECK(read_text(d + "/a/steps.csv") == read_text(d + "/b/steps.csv"));
}

// A pool too small for the load preempts; with swap every rank copies its shard of the preempted
// sequences' KV to host memory over its own host link and back (the whole model's K and V across
// the ranks), and no token is computed twice.
TEST_CASE("serve --tp: preemption by swap moves every rank's KV shard", "[serve]") {
    const std::string d = temp_dir("serve_tp_swap");
    const double host_gbps = 25;
    const nlohmann::json s =
        serve_ok(kBase,
                 "--tp 2 --set serve.kv_blocks=8 --set serve.preemption=swap "
                 "--set chip.host_link.gbps=25 --generate n=12,rate=20000,prompt=96,output=40,seed=4",
                 d + "/o");
    CHECK(s["metrics"]["served"].get<int>() == 12);
    CHECK(s["metrics"]["preemptions"].get<int>() > 0);
    const nlohmann::json& in = s["instances"][0];
    CHECK(in["timer"]["tokens"].get<int64_t>() == 12 * 96 + 12 * 39);  // each token computed once
    const int64_t out = s["metrics"]["swapped_out_tokens"].get<int64_t>();
    CHECK(out > 0);
    CHECK(s["metrics"]["swapped_in_tokens"].get<int64_t>() == out);
    // tiny: 2 KV heads of 16 (hidden 64 / 4 heads), one per rank; K and V, fp16, every layer, out
    // and back.
    const int64_t bytes = 2 * out * 2 * (2 * 16) * 2 * kLayers;
    CHECK(in["timer"]["swap_bytes"].get<int64_t>() == bytes);
    // Each rank moves half of them over its own host link.
    CHECK(s["metrics"]["swap_ms"].get<double>() * 1e-3 >= static_cast<double>(bytes) / 2 / (host_gbps * 1e9));
}

// Vidur profiles one worker of T: the model columns are the whole model's, the op times rank 0's,
// and all_reduce.csv has the instance's all-reduces by size.
TEST_CASE("serve --tp --export-profile: Vidur's layouts with T workers and the all-reduces", "[serve]") {
    const std::string d = temp_dir("serve_tp_profile");
    const CliResult r = run_cli(
        kBase + " --tp 2 --generate n=4,rate=2000,prompt=48,output=6,seed=3 --export-profile " + d + "/p");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto mlp = csv_rows(d + "/p/mlp.csv");
    REQUIRE_FALSE(mlp.empty());
    for (const auto& row : mlp) {
        CHECK(row.at("num_tensor_parallel_workers") == "2");
        CHECK(row.at("n_head") == "4");
    }
    for (const auto& row : csv_rows(d + "/p/attention.csv"))
        CHECK(row.at("num_tensor_parallel_workers") == "2");
    const auto ar = csv_rows(d + "/p/all_reduce.csv");
    REQUIRE_FALSE(ar.empty());
    const double gbps = ini_value("system.link", "gbps"), latency_ns = ini_value("system.link", "latency_ns");
    for (const auto& row : ar) {
        INFO(row.at("size"));
        const double bytes = std::stod(row.at("size"));
        CHECK(std::fmod(bytes, kHidden * 2) == 0);  // tokens x hidden, fp16
        CHECK(row.at("num_workers") == "2");
        CHECK(row.at("collective") == "all_reduce");
        // Two chips: the whole vector crosses the link, after at least its latency.
        CHECK(std::stod(row.at("time_stats.all_reduce.min")) * 1e6 >= bytes / gbps + latency_ns);
    }
}

// Disaggregated prefill/decode of TP instances: rank r of the prefill instance sends its KV shard
// (its KV heads) of each layer to rank r of the decode instance, from its own chip over its own
// links; the shards add up to the prompt's whole K and V.
TEST_CASE("serve --tp with serve.prefill_instances: each rank moves its KV shard layer by layer", "[serve]") {
    const std::string d = temp_dir("serve_tp_disagg");
    const std::string split = " --instances 2 --set serve.prefill_instances=1" + kLoaded;
    const nlohmann::json one = serve_ok(kBase, split + " --set serve.placement=0,1", d + "/tp1");
    const nlohmann::json two = serve_ok(kBase, split + " --tp 2", d + "/tp2");
    CHECK(two["metrics"]["served"].get<int>() == 12);
    CHECK(two["instances"][0]["chips"] == nlohmann::json::array({0, 1}));
    CHECK(two["instances"][1]["chips"] == nlohmann::json::array({2, 3}));
    CHECK(two["instances"][0]["role"] == "prefill");
    const nlohmann::json& x1 = one["disaggregation"];
    const nlohmann::json& x2 = two["disaggregation"];
    CHECK(x2["transfers"] == 12);
    // The two ranks' shards: the whole prompt's K and V, every layer, in twice the copies (each
    // block segment once per rank).
    CHECK(x2["kv_bytes"] == x1["kv_bytes"]);
    CHECK(x2["copies"].get<size_t>() == 2 * x1["copies"].get<size_t>());
    // One batched call per layer, rank and prefill step (one decode chip of each rank).
    const size_t prefill_steps = two["instances"][0]["steps"].get<size_t>();
    CHECK(x2["copy_calls"].get<size_t>() == 2 * kLayers * prefill_steps);
    CHECK(x2["overlapped_transfers"].get<size_t>() > 0);
    // Per request: the prompt's K and V (fp16, 2 KV heads of 16, every layer); each rank's half
    // over its own link, so its copies span at least half of it over one link's bandwidth.
    const double gbps = ini_value("system.link", "gbps");
    const auto rows = csv_rows(d + "/tp2/requests.csv");
    REQUIRE(rows.size() == 12);
    for (const auto& r : rows) {
        INFO(r.at("request_id"));
        const double bytes = std::stod(r.at("kv_bytes"));
        CHECK(bytes == static_cast<double>(std::stoll(r.at("prompt_tokens")) * 2 * 16 * 2 * 2 * kLayers));
        CHECK(r.at("decode_instance") == "1");
        CHECK(std::stod(r.at("kv_copy_ms")) * 1e6 >= bytes / 2 / gbps);
        CHECK(std::stod(r.at("kv_transfer_ms")) >= 0);
    }
    // The links carried the transfers and the all-reduces.
    double link_bytes = 0;
    const nlohmann::json summary = read_json(d + "/tp2/summary.json");  // the links of a temporary would dangle
    for (const nlohmann::json& l : summary["links"]) link_bytes += l["bytes"].get<double>();
    CHECK(link_bytes >= x2["kv_bytes"].get<double>());
    // The same trace again: identical results.
    serve_ok(kBase, split + " --tp 2", d + "/tp2b");
    CHECK(read_text(d + "/tp2/requests.csv") == read_text(d + "/tp2b/requests.csv"));
}

// Prefill and decode instances of different TP sizes (serve.prefill_tp): a prefill rank sends each
// decode rank the KV heads both hold, a row segment per token (tiny: 2 KV heads of 16).
TEST_CASE("serve --tp with serve.prefill_tp: the KV heads go to the decode ranks that hold them", "[serve]") {
    const std::string d = temp_dir("serve_tp_hetero");
    const std::string split = " --instances 2 --set serve.prefill_instances=1" + kLoaded;
    const nlohmann::json same = serve_ok(kBase, split + " --set serve.placement=0,1", d + "/tp1");
    struct Shape {
        std::string args, dir;
        int prefill_tp, decode_tp;
        nlohmann::json decode_chips;
    } shapes[] = {{"--set serve.prefill_tp=1 --tp 2", "/p1d2", 1, 2, nlohmann::json::array({1, 2})},
                  {"--set serve.prefill_tp=2", "/p2d1", 2, 1, nlohmann::json::array({2})}};
    for (const Shape& sh : shapes) {
        INFO(sh.args);
        const std::string out = d + sh.dir;
        const nlohmann::json s = serve_ok(kBase, split + " " + sh.args, out);
        CHECK(s["metrics"]["served"].get<int>() == 12);
        CHECK(s["instances"][0]["tp"] == sh.prefill_tp);
        CHECK(s["instances"][1]["tp"] == sh.decode_tp);
        CHECK(s["instances"][1]["chips"] == sh.decode_chips);
        const nlohmann::json& x = s["disaggregation"];
        // The whole prompt's K and V, as between two single chips.
        CHECK(x["kv_bytes"] == same["disaggregation"]["kv_bytes"]);
        // One head's row per token, kind, layer and (prefill rank, decode rank) pair sharing it:
        // the two heads each cross once.
        int64_t prompts = 0;
        for (const auto& r : csv_rows(out + "/requests.csv"))
            prompts += std::stoll(r.at("prompt_tokens"));
        CHECK(x["copies"].get<int64_t>() == prompts * 2 * 2 * kLayers);
        // One call per layer, prefill step and (prefill rank, decode rank) pair.
        CHECK(x["copy_calls"].get<size_t>() == 2 * kLayers * s["instances"][0]["steps"].get<size_t>());
    }
}

TEST_CASE("serve --tp: bad plans exit 2 naming the culprit", "[serve]") {
    struct Case {
        std::string args, says;
    } cases[] = {
        {kBase + " --tp 3", "4 attention heads"},
        {kBase + " --instances 3 --tp 2", "needs 6 chips, the system has 4"},
        {"serve tiny --config " + config("tiny") + " --tp 2 --trace off", "--system"},
        {kBase + " --instances 2 --tp 2 --set serve.placement=0,1", "both use chip 1"},
        {kBase + " --instances 1 --tp 2 --set serve.placement=3", "chip 3"},
        {kBase + " --tp 2 --simulate some", "--simulate"},
        {kBase + " --instances 2 --tp 2 --set serve.prefill_instances=2", "leaves no decode instance"},
        {kBase + " --instances 2 --tp 2 --set serve.prefill_instances=1 --policy static",
         "continuous policy"},
        {kBase + " --tp 0", "--tp 0"},
    };
    for (const Case& c : cases) {
        const CliResult r = run_cli(c.args + " --generate n=2,rate=100,prompt=16,output=2");
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.says));
    }
}
