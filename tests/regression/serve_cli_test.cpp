// `sfumato serve` on the tiny model and the tiny chip (timing mode), each step's batch run as the
// model's kernels by the chip's step timer: the acceptance comparisons (25), each between
// two runs of one trace that differ in one knob, so every expectation is a comparison the knob
// implies, never a stored number:
//  - continuous batching beats static batching on throughput and p99 TTFT on a loaded trace;
//  - dynamic batching beats one request at a time on throughput;
//  - chunked prefill lowers the longest inter-token gap of requests decoding while a long prompt
//    arrives (docs/serve.md: with this model a decode step is launch-bound, so the bound shows in
//    the gap, not in the mean TPOT);
//  - prefix caching lowers TTFT on a shared-prefix trace, by skipping exactly the hit tokens;
//  - a KV pool too small for the load preempts and still serves every request;
//  - the same trace twice gives identical per-request results;
//  - steps.csv agrees with the summary, and `sfumato report` draws a CDF point per served
//    request (through the summary's medians) and a time-series point per step;
//  - bad traces, unknown policies and functional mode exit 2 naming the culprit.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/regression/serve_support.h"

using namespace sfumato::test;

namespace {

// The tiny model on the tiny chip, block size 64 (the smallest the paged attention takes).
const std::string kBase = "serve tiny --config " + config("tiny") + " --set serve.block_size=64 --trace off";

double metric(const nlohmann::json& s, const std::string& k) { return s["metrics"][k].get<double>(); }
double metric(const nlohmann::json& s, const std::string& k, const std::string& p) {
    return s["metrics"][k][p].get<double>();
}

// Requests arriving faster than one request at a time could serve them.
const std::string kLoaded = "--generate n=24,rate=20000,prompt=uniform:32:96,output=uniform:8:24,seed=5";

}  // namespace

TEST_CASE("serve: continuous batching beats static on throughput and p99 TTFT", "[serve]") {
    const std::string d = temp_dir("serve_cont");
    const nlohmann::json cont = serve_ok(kBase, kLoaded + " --policy continuous", d + "/cont");
    const nlohmann::json stat = serve_ok(kBase, kLoaded + " --policy static --set serve.max_batch=8", d + "/static");
    CHECK(metric(cont, "requests_per_s") > metric(stat, "requests_per_s"));
    CHECK(metric(cont, "ttft_ms", "p99") < metric(stat, "ttft_ms", "p99"));
    // Every output token was produced.
    CHECK(cont["metrics"]["served"].get<size_t>() == 24);
    // Same trace, same config: identical per-request results.
    serve_ok(kBase, kLoaded + " --policy continuous", d + "/cont2");
    CHECK(read_text(d + "/cont/requests.csv") == read_text(d + "/cont2/requests.csv"));
    CHECK(read_text(d + "/cont/requests.csv").find("request_id,arrival_s") == 0);
}

TEST_CASE("serve: dynamic batching beats one request at a time on throughput", "[serve]") {
    const std::string d = temp_dir("serve_dyn");
    const nlohmann::json dyn = serve_ok(kBase, kLoaded + " --policy dynamic --set serve.max_batch=8", d + "/dyn");
    const nlohmann::json one = serve_ok(kBase, kLoaded + " --policy static --set serve.max_batch=1", d + "/one");
    CHECK(metric(dyn, "requests_per_s") > metric(one, "requests_per_s"));
    CHECK(metric(dyn, "mean_batch") > 1);
    CHECK(metric(one, "mean_batch") == 1);
}

TEST_CASE("serve: chunked prefill bounds the inter-token gap under a long prompt", "[serve]") {
    const std::string d = temp_dir("serve_chunk");
    // Eight short requests decode; a prompt of 448 tokens arrives while they do.
    std::ofstream(d + "/t.csv") << "arrival_s,prompt_tokens,output_tokens\n"
                                   "0,16,40\n0,16,40\n0,16,40\n0,16,40\n0,16,40\n0,16,40\n0,16,40\n0,16,40\n"
                                   "0.0002,448,4\n";
    const std::string t = "--requests " + d + "/t.csv --set serve.max_num_batched_tokens=512";
    const nlohmann::json whole = serve_ok(kBase, t, d + "/whole");
    const nlohmann::json chunk = serve_ok(kBase, t + " --set serve.long_prefill_token_threshold=64", d + "/chunk");
    CHECK(metric(chunk, "itl_ms", "max") < metric(whole, "itl_ms", "max"));
}

TEST_CASE("serve: prefix caching lowers TTFT on a shared-prefix trace", "[serve]") {
    const std::string d = temp_dir("serve_prefix");
    const std::string t = "--generate n=12,rate=500,prompt=320,output=4,prefix_groups=1,prefix_tokens=256,seed=2";
    const nlohmann::json on = serve_ok(kBase, t, d + "/on");
    const nlohmann::json off = serve_ok(kBase, t + " --set serve.prefix_caching=false", d + "/off");
    CHECK(metric(on, "ttft_ms", "mean") < metric(off, "ttft_ms", "mean"));
    // Every request after the first finds the prefix's 256 / 64 = 4 full blocks.
    std::istringstream rows(read_text(d + "/on/requests.csv"));
    std::string line;
    std::getline(rows, line);
    int64_t hits = 0;
    while (std::getline(rows, line)) {
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
        REQUIRE(f.size() >= 13);
        hits += std::stoll(f[12]);
    }
    CHECK(hits > 0);
    CHECK(hits % 64 == 0);
    CHECK(hits <= 11 * 256);
}

TEST_CASE("serve: a KV pool too small for the load preempts and serves every request", "[serve]") {
    const std::string d = temp_dir("serve_kv");
    // Each request needs ceil((96 + 40) / 64) = 3 blocks; 12 of them at once need 36; the pool has 8.
    const std::string t = "--generate n=12,rate=20000,prompt=96,output=40,seed=4 --set serve.kv_blocks=8";
    const nlohmann::json s = serve_ok(kBase, t, d + "/kv");
    CHECK(s["metrics"]["preemptions"].get<int64_t>() > 0);
    CHECK(s["metrics"]["served"].get<size_t>() == 12);
    CHECK(s["kv"]["peak_used_blocks"].get<int64_t>() <= 8);
}

TEST_CASE("serve: priority scheduling serves the urgent class first and preempts for it", "[serve]") {
    const std::string d = temp_dir("serve_prio");
    // A quarter of the requests urgent (priority 0), a KV pool far too small for the load
    // (3 blocks a request, 8 in the pool): under fcfs the classes wait alike.
    const std::string t = "--generate n=16,rate=20000,prompt=96,output=40,seed=4,priorities=1:3 --set serve.kv_blocks=8";
    const nlohmann::json fcfs = serve_ok(kBase, t, d + "/fcfs");
    const nlohmann::json prio = serve_ok(kBase, t + " --set serve.scheduling=priority", d + "/prio");
    CHECK(prio["setup"]["scheduling"] == "priority");
    const nlohmann::json& f = fcfs["metrics"]["by_priority"];
    const nlohmann::json& p = prio["metrics"]["by_priority"];
    REQUIRE(f.size() == 2);
    REQUIRE(p.size() == 2);
    REQUIRE(p[0]["priority"] == 0);
    REQUIRE(p[0]["requests"].get<int>() > 0);
    CHECK(p[0]["served"].get<int>() + p[1]["served"].get<int>() == 16);
    auto ttft = [](const nlohmann::json& c, const char* q) { return c["ttft_ms"][q].get<double>(); };
    // Honoured: the urgent class's TTFT below the other's, and below its own under fcfs.
    CHECK(ttft(p[0], "mean") < ttft(p[1], "mean"));
    CHECK(ttft(p[0], "p99") < ttft(p[1], "p99"));
    CHECK(ttft(p[0], "mean") < ttft(f[0], "mean"));
    // Urgent arrivals found the pool full and preempted less urgent requests; fcfs never does.
    CHECK(prio["metrics"]["priority_preemptions"].get<int64_t>() > 0);
    CHECK(fcfs["metrics"]["priority_preemptions"].get<int64_t>() == 0);
    CHECK(p[1]["preemptions"].get<int64_t>() >= prio["metrics"]["priority_preemptions"].get<int64_t>());
    // requests.csv carries each request's priority.
    CHECK(read_text(d + "/prio/requests.csv").find(",prefix_hit_tokens,priority,rejected") != std::string::npos);
}

TEST_CASE("serve: report draws the latency CDFs and the queue, batch and KV time series", "[serve][report]") {
    const std::string d = temp_dir("serve_report");
    const nlohmann::json s = serve_ok(kBase, kLoaded, d + "/run");
    const size_t steps = s["metrics"]["steps"].get<size_t>(), served = s["metrics"]["served"].get<size_t>();
    // steps.csv: one row per step, consistent with the summary's figures.
    std::istringstream csv(read_text(d + "/run/steps.csv"));
    std::string line;
    std::getline(csv, line);
    REQUIRE(line.rfind("instance,step,begin_s,seconds,sequences,prefill_tokens,decode_tokens,waiting,kv_used_blocks,"
                       "kv_pool_blocks,",
                       0) == 0);
    size_t rows = 0;
    double seqs = 0, end = 0;
    int64_t kv_peak = 0, waiting_peak = 0;
    while (std::getline(csv, line)) {
        std::vector<double> f;
        std::istringstream in(line);
        for (std::string x; std::getline(in, x, ',');) f.push_back(std::stod(x));
        REQUIRE(f.size() == 13);
        CHECK(f[1] == static_cast<double>(rows));
        CHECK(f[2] >= end - 1e-8);  // one instance: steps do not overlap (9-digit seconds)
        end = f[2] + f[3];
        seqs += f[4];
        waiting_peak = std::max(waiting_peak, static_cast<int64_t>(f[7]));
        kv_peak = std::max(kv_peak, static_cast<int64_t>(f[8]));
        CHECK(f[9] == s["kv"]["pool_blocks"].get<double>());
        ++rows;
    }
    CHECK(rows == steps);
    CHECK(seqs / static_cast<double>(rows) == Approx(s["metrics"]["mean_batch"].get<double>()));
    CHECK(kv_peak == s["kv"]["peak_used_blocks"].get<int64_t>());
    CHECK(waiting_peak == s["metrics"]["waiting_peak"].get<int64_t>());
    CHECK(end == Approx(s["metrics"]["duration_s"].get<double>()));

    const CliResult r = run_cli("report " + d + "/run -o " + d + "/report.html");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const std::string html = read_text(d + "/report.html");
    const auto plots = report_plots(html);
    // A CDF point per served request (every output here is longer than one token: TPOT for all),
    // a time-series point per step.
    for (const char* id : {"serve-cdf-ttft", "serve-cdf-tpot", "serve-cdf-e2e"}) {
        REQUIRE(plots.count(id));
        CHECK(plots.at(id) == std::pair<size_t, size_t>{served, served});
    }
    for (const char* id : {"serve-waiting", "serve-batch", "serve-kv"}) {
        REQUIRE(plots.count(id));
        CHECK(plots.at(id) == std::pair<size_t, size_t>{steps, steps});
    }
    // The CDFs pass through the summary's medians (nearest rank: the 12th of 24 requests).
    REQUIRE(served == 24);
    char tip[64];
    for (const char* k : {"ttft_ms", "e2e_ms"}) {
        std::snprintf(tip, sizeof tip, "%.3f ms: 50.0 %%", metric(s, k, "p50"));
        CHECK(html.find(tip) != std::string::npos);
    }
}

TEST_CASE("serve: bad traces, unknown policies and functional mode exit 2 naming the culprit", "[serve]") {
    const std::string d = temp_dir("serve_bad");
    std::ofstream(d + "/bad.csv") << "arrival_s,prompt_tokens,output_tokens\n0,16,4\n0.1,x,4\n";
    CliResult r = run_cli(kBase + " --requests " + d + "/bad.csv --out " + d + "/o1");
    CHECK(r.code == 2);
    CHECK(r.output.find("bad.csv:3:") != std::string::npos);
    CHECK(!std::filesystem::exists(d + "/o1/summary.json"));
    r = run_cli(kBase + " --generate n=2,prompt=16,output=2 --policy fifo");
    CHECK(r.code == 2);
    CHECK(r.output.find("fifo") != std::string::npos);
    r = run_cli(kBase + " --generate n=2,prompt=16,output=2 --set serve.policy=fifo");
    CHECK(r.code == 2);
    CHECK(r.output.find("serve.policy") != std::string::npos);
    r = run_cli(kBase + " --generate n=2,prompt=16,output=2 --mode functional");
    CHECK(r.code == 2);
    CHECK(r.output.find("timing") != std::string::npos);
    r = run_cli(kBase + " --generate n=2,prompt=16,output=2 --requests " + d + "/bad.csv");
    CHECK(r.code == 2);
    r = run_cli(kBase + " --generate n=2,prompt=16,output=2 --set serve.block_size=96");
    CHECK(r.code == 2);
    CHECK(r.output.find("serve.block_size") != std::string::npos);
}

TEST_CASE("serve: timing re-use against --exact on a loaded trace", "[serve][reuse]") {
    const std::string d = temp_dir("serve_reuse");
    const nlohmann::json reused = serve_ok(kBase, kLoaded, d + "/auto");
    const nlohmann::json exact = serve_ok(kBase, kLoaded + " --exact", d + "/exact");
    CHECK(read_json(d + "/auto/summary.json")["reuse_timing"]["reused"].get<uint64_t>() > 0);
    CHECK(read_json(d + "/exact/summary.json")["reuse_timing"]["reused"].get<uint64_t>() == 0);
    // The bound for re-use (3 %), on the serving figures.
    for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms"})
        CHECK(std::abs(metric(reused, k, "mean") / metric(exact, k, "mean") - 1) <= 0.03);
    CHECK(std::abs(metric(reused, "duration_s") / metric(exact, "duration_s") - 1) <= 0.03);
}
