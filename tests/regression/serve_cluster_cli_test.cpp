// `sfumato serve --system F --instances N` (runtime/serve/cluster.h) on the tiny model and the
// tiny system (timing mode): several serving instances behind a router.
//  - two instances on one chip hold one copy of the weights: the second maps the first's block
//    through the runtime's shared-memory handles, which the accounting shows three ways (the
//    instances' memory plans, the runtime's share table, and the two contexts' live bytes, which
//    differ by exactly the weights); on two chips each holds its own;
//  - the same trace twice gives identical per-request results (instance included); steps.csv
//    holds each instance's steps;
//  - least_tokens sends new requests away from an instance busy with a long one, round robin
//    alternates;
//  - instances that do not fit the system, an unknown router, several instances without a
//    system, a malformed placement exit 2 naming the culprit.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/regression/serve_support.h"

using namespace sfumato::test;

namespace {

const std::string kBase = "serve tiny --system " + config("system-tiny") + " --set serve.block_size=64 --trace off";
const std::string kLoaded = " --generate n=12,rate=20000,prompt=uniform:32:96,output=uniform:8:24,seed=5";

// The instance column of requests.csv, per request in trace order.
std::vector<int> instances_of(const std::string& csv) {
    std::vector<int> v;
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    REQUIRE(line.rfind("request_id,instance,", 0) == 0);
    while (std::getline(in, line)) {
        const size_t a = line.find(',');
        v.push_back(std::stoi(line.substr(a + 1, line.find(',', a + 1) - a - 1)));
    }
    return v;
}

}  // namespace

TEST_CASE("serve --instances: two instances on one chip hold one copy of the weights", "[serve]") {
    const std::string d = temp_dir("serve_inst");
    const nlohmann::json one = serve_ok(kBase, "--instances 2 --set serve.placement=0,0" + kLoaded, d + "/same");
    REQUIRE(one["chips"].size() == 1);
    const nlohmann::json& chip = one["chips"][0];
    const nlohmann::json& a = one["instances"][0];
    const nlohmann::json& b = one["instances"][1];
    const uint64_t w = a["memory"]["weights"].get<uint64_t>();
    CHECK(w > 0);
    CHECK(chip["instances"].get<int>() == 2);
    CHECK(chip["weight_copies"].get<int>() == 1);
    CHECK(chip["weights_bytes"].get<uint64_t>() == w);
    CHECK(chip["weights_mapped_bytes"].get<uint64_t>() == w);
    CHECK_FALSE(a["memory"]["weights_imported"].get<bool>());
    CHECK(b["memory"]["weights_imported"].get<bool>());
    // The runtime's share table counts the bytes a second copy would have taken.
    CHECK(chip["shared_saved_bytes"].get<uint64_t>() == w);
    // The instances' caches are equal, so their contexts' live bytes differ by the weights alone.
    CHECK(a["memory"]["kv"] == b["memory"]["kv"]);
    CHECK(a["context_bytes_in_use"].get<uint64_t>() - b["context_bytes_in_use"].get<uint64_t>() == w);
    // Both served.
    CHECK(a["requests"].get<int>() + b["requests"].get<int>() == 12);
    CHECK(a["requests"].get<int>() > 0);
    CHECK(b["requests"].get<int>() > 0);
    CHECK(one["metrics"]["served"].get<int>() == 12);
    // steps.csv: each instance's steps, as many as its summary says.
    std::istringstream steps(read_text(d + "/same/steps.csv"));
    std::string line;
    std::getline(steps, line);
    REQUIRE(line.rfind("instance,step,", 0) == 0);
    std::vector<size_t> per(2, 0);
    while (std::getline(steps, line)) ++per.at(std::stoul(line.substr(0, line.find(','))));
    CHECK(per[0] == a["steps"].get<size_t>());
    CHECK(per[1] == b["steps"].get<size_t>());

    // On two chips each instance holds its own copy.
    const nlohmann::json two = serve_ok(kBase, "--instances 2 --set serve.placement=0,1" + kLoaded, d + "/two");
    REQUIRE(two["chips"].size() == 2);
    for (const nlohmann::json& c : two["chips"]) {
        CHECK(c["weight_copies"].get<int>() == 1);
        CHECK(c["weights_mapped_bytes"].get<uint64_t>() == 0);
        CHECK(c["shared_saved_bytes"].get<uint64_t>() == 0);
    }

    // Same trace, same config: identical per-request results, with either router.
    serve_ok(kBase, "--instances 2 --set serve.placement=0,0" + kLoaded, d + "/same2");
    CHECK(read_text(d + "/same/requests.csv") == read_text(d + "/same2/requests.csv"));
    serve_ok(kBase, "--instances 3 --set serve.placement=0,0,1 --router least_tokens" + kLoaded, d + "/lt1");
    serve_ok(kBase, "--instances 3 --set serve.placement=0,0,1 --router least_tokens" + kLoaded, d + "/lt2");
    CHECK(read_text(d + "/lt1/requests.csv") == read_text(d + "/lt2/requests.csv"));
}

TEST_CASE("serve --router: least_tokens avoids the instance busy with a long request", "[serve]") {
    const std::string d = temp_dir("serve_router");
    // A long request, then four short ones a microsecond apart: all arrive before the first
    // step (tens of microseconds) ends, so the long one's instance still owes all its tokens.
    std::ofstream(d + "/t.csv") << "arrival_s,prompt_tokens,output_tokens\n0,400,60\n1e-6,16,4\n2e-6,16,4\n"
                                   "3e-6,16,4\n4e-6,16,4\n";
    const std::string args = "--requests " + d + "/t.csv --instances 2 --set serve.placement=0,1";
    serve_ok(kBase, args + " --router round_robin", d + "/rr");
    serve_ok(kBase, args + " --router least_tokens", d + "/lt");
    CHECK(instances_of(read_text(d + "/rr/requests.csv")) == std::vector<int>{0, 1, 0, 1, 0});
    // Instance 0 owes 459 tokens, instance 1 at most 4 x 19 for the short ones.
    CHECK(instances_of(read_text(d + "/lt/requests.csv")) == std::vector<int>{0, 1, 1, 1, 1});
}

TEST_CASE("serve --instances: bad placements and routers exit 2 naming the culprit", "[serve]") {
    const std::string d = temp_dir("serve_inst_bad");
    const std::string g = " --generate n=4,rate=20000,prompt=32,output=4 --out " + d + "/o";
    struct Case {
        std::string args, culprit;
    };
    const std::vector<Case> cases = {
        {"--instances 2 --set serve.placement=0,7", "chip 7"},
        {"--router fastest", "unknown router 'fastest'"},
        {"--instances 3 --set serve.placement=0,1", "serve.placement '0,1'"},
        {"--instances 2 --set serve.placement=0,x", "'x' is not a chip index"},
        {"--instances 2 --set serve.placement=0,0 --set serve.kv_blocks=40000", "chip 0"},
    };
    for (const Case& c : cases) {
        const CliResult r = run_cli(kBase + " " + c.args + g);
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(c.culprit) != std::string::npos);
    }
    const CliResult r = run_cli("serve tiny --config " + config("tiny") + " --instances 2" + g);
    CHECK(r.code == 2);
    CHECK(r.output.find("need --system") != std::string::npos);
}

TEST_CASE("serve: disaggregated prefill/decode on two chips reports the KV transfer time", "[serve]") {
    const std::string d = temp_dir("serve_disagg");
    const nlohmann::json s =
        serve_ok(kBase, "--instances 3 --set serve.prefill_instances=1 --set serve.placement=0,1,2 --router least_tokens" +
                     kLoaded,
                 d + "/pd");
    const nlohmann::json all = read_json(d + "/pd/summary.json");
    CHECK(s["metrics"]["served"].get<int>() == 12);
    const nlohmann::json& x = s["disaggregation"];
    // Every request has more than one output token, so every one moved.
    CHECK(x["transfers"].get<int>() == 12);
    CHECK(x["kv_transfer_total_ms"].get<double>() > 0);
    CHECK(s["instances"][0]["role"] == "prefill");
    CHECK(s["instances"][1]["role"] == "decode");
    // The bytes a prompt's K and V take in every layer, from the model's config; a request's
    // copies take at least those bytes over the fastest link's bandwidth (the system's link
    // parameters, GB/s), from the first one's start to the last one's end.
    const nlohmann::json m = read_json(source_dir() + "/configs/llm/tiny.json");
    double gbps = 0;
    for (const nlohmann::json& l : all["links"]) gbps = std::max(gbps, l["gbps"].get<double>());
    REQUIRE(gbps > 0);
    const int64_t kv = m["num_key_value_heads"].get<int64_t>() * m["hidden_size"].get<int64_t>() /
                       m["num_attention_heads"].get<int64_t>();
    const uint64_t per_token = static_cast<uint64_t>(2 * kv * 2 * m["num_hidden_layers"].get<int64_t>());
    std::istringstream csv(read_text(d + "/pd/requests.csv"));
    std::string line;
    std::getline(csv, line);
    REQUIRE(line.find(",decode_instance,kv_bytes,kv_transfer_ms,kv_copy_ms") != std::string::npos);
    uint64_t moved = 0;
    int rows = 0, hidden = 0;
    while (std::getline(csv, line)) {
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string c; std::getline(ls, c, ',');) f.push_back(c);
        REQUIRE(f.size() == 20);
        const uint64_t prompt = std::stoull(f[10]), bytes = std::stoull(f[17]);
        const int decode = std::stoi(f[16]);
        CHECK((decode == 1 || decode == 2));
        CHECK(bytes == prompt * per_token);
        const double exposed_ms = std::stod(f[18]), copy_ms = std::stod(f[19]);
        CHECK(copy_ms * 1e-3 >= static_cast<double>(bytes) / (gbps * 1e9));
        // Sent layer by layer during the prompt's steps: part of the copying hidden behind them.
        hidden += exposed_ms < copy_ms;
        CHECK(f[15].empty());  // not rejected
        moved += bytes;
        ++rows;
    }
    CHECK(rows == 12);
    CHECK(hidden > 0);
    CHECK(x["overlapped_transfers"].get<int>() > 0);
    CHECK(x["kv_bytes"].get<uint64_t>() == moved);
    // One batched call per layer and decode chip in a prefill step, not one per block: a whole
    // number of layers' calls, at most layers x prefill steps x decode chips, fewer than copies.
    const int64_t layers = m["num_hidden_layers"].get<int64_t>();
    const int64_t calls = x["copy_calls"].get<int64_t>(), copies = x["copies"].get<int64_t>();
    CHECK(calls > 0);
    CHECK(calls % layers == 0);
    CHECK(calls <= layers * s["instances"][0]["steps"].get<int64_t>() * 2);
    CHECK(calls < copies);
    // The bytes crossed the links (the links' payload counters hold at least them).
    uint64_t link_bytes = 0;
    for (const nlohmann::json& l : all["links"]) link_bytes += l["bytes"].get<uint64_t>();
    CHECK(link_bytes >= moved);
    // The same trace twice: identical per-request results.
    serve_ok(kBase, "--instances 3 --set serve.prefill_instances=1 --set serve.placement=0,1,2 --router least_tokens" + kLoaded,
             d + "/pd2");
    CHECK(read_text(d + "/pd/requests.csv") == read_text(d + "/pd2/requests.csv"));
}

TEST_CASE("serve: disaggregation on one chip, without a decode instance or off the continuous policy exits 2",
          "[serve]") {
    const std::string d = temp_dir("serve_disagg_bad");
    const std::string g = " --generate n=4,rate=20000,prompt=32,output=4 --out " + d + "/o";
    struct Case {
        std::string args, culprit;
    };
    const std::vector<Case> cases = {
        {"--instances 2 --set serve.placement=0,0 --set serve.prefill_instances=1", "both on chip 0"},
        {"--instances 2 --set serve.prefill_instances=2", "leaves no decode instance"},
        {"--instances 2 --set serve.prefill_instances=1 --policy static", "serve.policy static"},
    };
    for (const Case& c : cases) {
        const CliResult r = run_cli(kBase + " " + c.args + g);
        INFO(c.args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(c.culprit) != std::string::npos);
    }
}
