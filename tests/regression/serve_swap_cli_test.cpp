// `sfumato serve --set serve.preemption=swap` (runtime/serve/scheduler.h, chip_timer.h): a KV
// pool too small for the load preempts; with swap the preempted sequences' KV goes to host
// memory over the host link and comes back, so no token is computed twice (with recompute the
// preempted tokens are), and the copies take at least their bytes over the host link's
// bandwidth (a parameter the test sets).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("serve: preemption by swap moves the KV over the host link instead of recomputing", "[serve]") {
    const std::string d = temp_dir("serve_swap");
    const double host_gbps = 25;
    const std::string base = "serve tiny --config " + config("tiny") +
                             " --set serve.block_size=64 --set serve.kv_blocks=8 --set chip.host_link.gbps=25 "
                             "--generate n=12,rate=20000,prompt=96,output=40,seed=4 --trace off --out " + d;
    nlohmann::json s[2];
    const char* modes[2] = {"recompute", "swap"};
    for (int i = 0; i < 2; ++i) {
        const CliResult r = run_cli(base + "/" + modes[i] + " --set serve.preemption=" + modes[i]);
        INFO(r.output);
        REQUIRE(r.code == 0);
        s[i] = read_json(d + "/" + modes[i] + "/summary.json")["serve"];
        CHECK(s[i]["metrics"]["served"].get<int>() == 12);
        CHECK(s[i]["metrics"]["preemptions"].get<int>() > 0);
    }
    // Every prompt token and every output token but the last is computed once with swap.
    const int64_t once = 12 * 96 + 12 * 39;
    CHECK(s[1]["timer"]["tokens"].get<int64_t>() == once);
    CHECK(s[0]["timer"]["tokens"].get<int64_t>() > once);  // recompute: the preempted tokens again
    CHECK(s[0]["metrics"]["swapped_out_tokens"].get<int64_t>() == 0);
    const int64_t out = s[1]["metrics"]["swapped_out_tokens"].get<int64_t>();
    CHECK(out > 0);
    CHECK(s[1]["metrics"]["swapped_in_tokens"].get<int64_t>() == out);  // every swapped sequence resumed
    // Bytes: K and V of every layer per token (the model's config), out and back.
    const nlohmann::json m = read_json(source_dir() + "/configs/llm/tiny.json");
    const int64_t kv = m["num_key_value_heads"].get<int64_t>() * m["hidden_size"].get<int64_t>() /
                       m["num_attention_heads"].get<int64_t>();
    const int64_t bytes = 2 * out * 2 * kv * 2 * m["num_hidden_layers"].get<int64_t>();
    CHECK(s[1]["timer"]["swap_bytes"].get<int64_t>() == bytes);
    CHECK(s[1]["metrics"]["swap_ms"].get<double>() * 1e-3 >= static_cast<double>(bytes) / (host_gbps * 1e9));
}
