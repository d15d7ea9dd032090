// `sfumato serve --export-profile DIR` (runtime/serve/vidur_profile.h): the per-op times the
// chip's step timer measured, in Vidur's profiling CSV layouts. The columns are Vidur's (the
// layouts are the format, so the test holds them); the times are checked against the same
// kernels' spans as the run's trace.json op track shows them (an independent path from the same
// tasks), and the KV transfers' copies against the link bandwidth.
#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
    if (!line.empty() && line.back() == ',') f.push_back("");
    return f;
}

// A CSV file as its header and rows (column -> value).
struct Csv {
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
};
Csv read_csv(const std::string& path) {
    std::ifstream f(path);
    REQUIRE(f.good());
    Csv c;
    std::string line;
    std::getline(f, line);
    c.header = split(line);
    while (std::getline(f, line)) {
        const std::vector<std::string> v = split(line);
        REQUIRE(v.size() == c.header.size());
        std::map<std::string, std::string> r;
        for (size_t i = 0; i < v.size(); ++i) r[c.header[i]] = v[i];
        c.rows.push_back(r);
    }
    return c;
}

std::vector<std::string> with_stats(const std::vector<std::string>& ops, std::vector<std::string> tail) {
    std::vector<std::string> h;
    for (const std::string& op : ops)
        for (const char* s : {"min", "max", "mean", "median", "std"}) h.push_back("time_stats." + op + "." + s);
    h.insert(h.end(), tail.begin(), tail.end());
    return h;
}

// Durations (ms) of the trace's op slices whose name ends with `suffix` (e.g. ".down_proj (MatMul)").
std::vector<double> slices(const nlohmann::json& trace, const std::string& suffix) {
    std::vector<double> v;
    const nlohmann::json& ev = trace.is_object() ? trace["traceEvents"] : trace;
    for (const nlohmann::json& e : ev) {
        if (!e.contains("name") || !e.contains("dur")) continue;
        const std::string n = e["name"].get<std::string>();
        if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
            v.push_back(e["dur"].get<double>() * 1e-3);
    }
    return v;
}

}  // namespace

TEST_CASE("serve --export-profile: Vidur's layouts with the times the chip measured", "[serve]") {
    const std::string d = temp_dir("serve_profile");
    const CliResult r = run_cli("serve tiny --config " + config("tiny") +
                                " --set serve.block_size=64 --generate n=4,rate=2000,prompt=48,output=6,seed=3 "
                                "--trace op --out " + d + "/o --export-profile " + d + "/p");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const Csv mlp = read_csv(d + "/p/mlp.csv");
    CHECK(mlp.header == with_stats({"emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
                                    "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"},
                                   {"n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp",
                                    "num_tokens", "num_tensor_parallel_workers"}));
    const Csv attn = read_csv(d + "/p/attention.csv");
    CHECK(attn.header == with_stats({"attn_input_reshape", "attn_decode", "attn_output_reshape", "attn_prefill"},
                                    {"n_embd", "n_q_head", "n_kv_head", "block_size", "num_tensor_parallel_workers",
                                     "max_model_len", "batch_size", "prefill_chunk_size", "kv_cache_size", "is_prefill",
                                     "attention_backend", "profile_method"}));
    const std::vector<std::string> net = {"",     "time_stats.send_recv.min", "time_stats.send_recv.max",
                                          "time_stats.send_recv.mean", "time_stats.send_recv.median",
                                          "time_stats.send_recv.std", "rank", "num_workers", "size", "collective",
                                          "devices_per_node", "max_devices_per_node"};
    CHECK(read_csv(d + "/p/send_recv.csv").header == net);
    CHECK(read_csv(d + "/p/send_recv.csv").rows.empty());  // one chip: no transfer
    const Csv ar = read_csv(d + "/p/all_reduce.csv");
    CHECK(ar.rows.empty());  // TP 1: no all-reduce
    REQUIRE_FALSE(mlp.rows.empty());
    REQUIRE_FALSE(attn.rows.empty());

    // Per op, the smallest and largest time over every row are the shortest and longest of the
    // op's spans in the trace (ns resolution there).
    const nlohmann::json trace = read_json(d + "/o/trace.json");
    const std::vector<std::pair<std::string, std::string>> ops = {{"mlp_down_proj", ".down_proj (MatMul)"},
                                                                  {"mlp_up_proj", ".gate_up_proj (MatMul)"},
                                                                  {"attn_post_proj", ".o_proj (MatMul)"},
                                                                  {"input_layernorm", ".input_norm (RmsNorm)"},
                                                                  {"emb", "embedding (Gather)"}};
    for (const auto& [op, suffix] : ops) {
        INFO(op);
        const std::vector<double> s = slices(trace, suffix);
        REQUIRE_FALSE(s.empty());
        double lo = 1e300, hi = 0;
        for (const auto& row : mlp.rows) {
            lo = std::min(lo, std::stod(row.at("time_stats." + op + ".min")));
            hi = std::max(hi, std::stod(row.at("time_stats." + op + ".max")));
            CHECK(std::stod(row.at("time_stats." + op + ".min")) <= std::stod(row.at("time_stats." + op + ".mean")));
            CHECK(std::stod(row.at("time_stats." + op + ".mean")) <= std::stod(row.at("time_stats." + op + ".max")));
        }
        CHECK(lo == Approx(*std::min_element(s.begin(), s.end())).margin(1e-6));
        CHECK(hi == Approx(*std::max_element(s.begin(), s.end())).margin(1e-6));
    }
    // Attention rows: the prompts (one per step at this rate) and steps of decodes only; their
    // kernel times lie among the trace's attention spans.
    const std::vector<double> a = slices(trace, ".attention (PagedAttention)");
    REQUIRE_FALSE(a.empty());
    const double amin = *std::min_element(a.begin(), a.end()), amax = *std::max_element(a.begin(), a.end());
    bool prefill = false, decode = false;
    for (const auto& row : attn.rows) {
        const bool p = row.at("is_prefill") == "True";
        (p ? prefill : decode) = true;
        const std::string k = p ? "attn_prefill" : "attn_decode";
        CHECK(std::stod(row.at("time_stats." + k + ".min")) >= amin - 1e-6);
        CHECK(std::stod(row.at("time_stats." + k + ".max")) <= amax + 1e-6);
        CHECK(row.at("time_stats." + std::string(p ? "attn_decode" : "attn_prefill") + ".min").empty());
        if (p) CHECK(row.at("prefill_chunk_size") == "48");
    }
    CHECK(prefill);
    CHECK(decode);
}

TEST_CASE("serve --export-profile: disaggregated KV copies fill send_recv.csv", "[serve]") {
    const std::string d = temp_dir("serve_profile_pd");
    const CliResult r = run_cli("serve tiny --system " + config("system-tiny") +
                                " --set serve.block_size=64 --instances 2 --set serve.prefill_instances=1 "
                                "--generate n=4,rate=2000,prompt=48,output=6,seed=3 --trace off --out " + d +
                                "/o --export-profile " + d + "/p");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const Csv sr = read_csv(d + "/p/send_recv.csv");
    REQUIRE_FALSE(sr.rows.empty());
    double gbps = 0;
    const nlohmann::json summary = read_json(d + "/o/summary.json");
    for (const nlohmann::json& l : summary["links"]) gbps = std::max(gbps, l["gbps"].get<double>());
    REQUIRE(gbps > 0);
    for (const auto& row : sr.rows) {
        const double bytes = std::stod(row.at("size"));
        CHECK(bytes > 0);
        CHECK(row.at("collective") == "send_recv");
        // No copy beats the fastest link's bandwidth.
        CHECK(std::stod(row.at("time_stats.send_recv.min")) * 1e-3 >= bytes / (gbps * 1e9));
    }
}

TEST_CASE("serve --export-profile --pp: the stages' sends fill send_recv.csv, a stage's all-reduces all_reduce.csv",
          "[serve]") {
    const std::string d = temp_dir("serve_profile_pp");
    for (const std::string plan : {"--pp 2", "--pp 2 --tp 2"}) {
        INFO(plan);
        const std::string out = d + (plan == "--pp 2" ? "/pp" : "/pptp");
        const CliResult r = run_cli("serve tiny --system " + config("system-tiny") + " " + plan +
                                    " --set serve.block_size=64 --generate n=4,rate=2000,prompt=48,output=6,seed=3 "
                                    "--trace off --out " + out + "/o --export-profile " + out + "/p");
        INFO(r.output);
        REQUIRE(r.code == 0);
        const nlohmann::json summary = read_json(out + "/o/summary.json");
        double gbps = 0;
        for (const nlohmann::json& l : summary["links"]) gbps = std::max(gbps, l["gbps"].get<double>());
        REQUIRE(gbps > 0);
        // Stage 0's sends: a peer copy of the hidden state and one of the residual per step, each
        // [padded tokens, hidden 64] fp16, none faster than the link.
        const Csv sr = read_csv(out + "/p/send_recv.csv");
        REQUIRE_FALSE(sr.rows.empty());
        size_t copies = 0;
        for (const auto& row : sr.rows) {
            const double bytes = std::stod(row.at("size"));
            CHECK(std::fmod(bytes, 64 * 2) == 0);
            CHECK(row.at("num_workers") == "2");
            CHECK(std::stod(row.at("time_stats.send_recv.min")) * 1e-3 >= bytes / (gbps * 1e9));
        }
        for (const nlohmann::json& c : summary["serve"]["instances"][0]["pipeline"]["chips"])
            if (c["chip"] == 0) copies = 2 * c["sends"].get<size_t>();
        CHECK(copies > 0);
        // The per-op rows are stage 0's (its layer and the embedding).
        const Csv mlp = read_csv(out + "/p/mlp.csv");
        REQUIRE_FALSE(mlp.rows.empty());
        for (const auto& row : mlp.rows) CHECK(std::stod(row.at("time_stats.emb.max")) > 0);
        const Csv ar = read_csv(out + "/p/all_reduce.csv");
        if (plan == "--pp 2") {
            CHECK(ar.rows.empty());
            CHECK(mlp.rows[0].at("num_tensor_parallel_workers") == "1");
        } else {
            REQUIRE_FALSE(ar.rows.empty());
            for (const auto& row : ar.rows) CHECK(row.at("num_workers") == "2");
            CHECK(mlp.rows[0].at("num_tensor_parallel_workers") == "2");
        }
    }
}
