// `sfumato llm --system F --ep E` (runtime/llm/expert_parallel.h): expert
// parallelism gives the same greedy tokens as one chip in functional mode
// (experts sharded, attention data parallel, the routed rows dispatched to
// their experts' chips and combined back); the rows dispatched follow the
// routing exactly (every (token, slot) entry once, bytes = rows x hidden x 2);
// bad plans exit 2 naming the culprit.
#include <cmath>
#include <fstream>

#include "tests/cli_summary.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("llm ep: EP=2 and EP=4 give the same greedy tokens as one chip for "
          "32 steps") {
  const std::string req =
      " --mode functional --prefill 12 --decode 32 --batch 4 --seed 7";
  const nlohmann::json one =
      summary_of("llm tiny-moe --config " + config("tiny") + " --trace off" + req,
               "llm_ep1");
  const auto &tokens = one["llm"]["tokens"];
  REQUIRE(tokens.size() == 4);
  REQUIRE(tokens[0].size() == 33);
  for (int n : {2, 4}) {
    const nlohmann::json s = summary_of("llm tiny-moe " + tiny_system() +
                                          "--ep " + std::to_string(n) + req,
                                      "llm_ep" + std::to_string(n));
    INFO("ep " << n);
    CHECK(s["llm"]["tokens"] == tokens);
    // tiny-moe: 4 experts.
    CHECK(s["llm"]["parallel"]["experts_per_chip"] == 4 / n);
    uint64_t remote = 0;
    for (const auto &c : s["llm"]["communication"])
      remote += c["dispatch_rows_remote"].get<uint64_t>();
    CHECK(remote > 0); // the experts really ran on other chips
  }
}

// Functional and timing mode take the same cycles: both read the permutation's
// group sizes back once per MoE layer (timing mode pays the round trip that
// functional mode needs, and uses its host-known counts). The modes route
// differently (the device's router against a seeded draw), so the model here
// routes every token to all of its experts (top-k = E): every routing then
// gives the same group sizes, the same permuted rows and the same exchange.
// What still differs is the order of a token's experts (the router's by logit,
// the draw's at random), so the order of the combine's row reads: the steps
// agree to a device cycle per MoE layer (before the timing mode's read-back
// they differed by a host round trip per layer, about 5 us here).
TEST_CASE("llm ep: functional and timing mode take the same cycles") {
  const std::string dir = temp_dir("llm_ep_modes");
  const std::string model = dir + "/moe_all.json";
  std::ofstream(model) << R"({"architectures": ["MixtralForCausalLM"],
      "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2,
      "num_local_experts": 4, "num_experts_per_tok": 4,
      "max_position_embeddings": 512, "vocab_size": 256,
      "torch_dtype": "float16"})";
  const std::string req = "llm " + model + " " + tiny_system() +
                          "--ep 2 --prefill 12 --decode 4 --batch 4";
  const nlohmann::json f = summary_of(req + " --mode functional", "llm_ep_f");
  const nlohmann::json t =
      summary_of(req + " --mode timing --exact", "llm_ep_t");
  // tiny.ini: 1000 MHz, 2 MoE layers.
  const double tol_ms = 2 * 1e-6;
  CHECK(std::fabs(f["llm"]["ttft_ms"].get<double>() -
                  t["llm"]["ttft_ms"].get<double>()) <= tol_ms);
  const auto &fd = f["llm"]["decode_step_ms"], &td = t["llm"]["decode_step_ms"];
  REQUIRE(fd.size() == 4);
  REQUIRE(td.size() == 4);
  for (size_t i = 0; i < 4; ++i)
    CHECK(std::fabs(fd[i].get<double>() - td[i].get<double>()) <= tol_ms);
  const auto &fc = f["llm"]["communication"], &tc = t["llm"]["communication"];
  REQUIRE(fc.size() == 2);
  REQUIRE(tc.size() == 2);
  for (size_t c = 0; c < 2; ++c)
    for (const char *k : {"dispatch_rows_local", "dispatch_rows_remote"})
      CHECK(fc[c][k] == tc[c][k]);
  for (size_t c = 0; c < 2; ++c)
    for (const char *ph : {"prefill", "decode"}) {
      CHECK(fc[c][ph]["bytes"] == tc[c][ph]["bytes"]);
      CHECK(fc[c][ph]["exchanges"] == tc[c][ph]["exchanges"]);
    }
}

// Every (token, slot) entry is dispatched once (to its expert's chip, or to the
// chip's own), the dispatch and the combine move remote rows x hidden x 2 bytes
// each, and with uniform routing a share (N - 1) / N of the entries leaves the
// chip.
TEST_CASE("llm ep: dispatched rows and bytes follow the routing and the hidden "
          "size") {
  const int64_t batch = 4, prefill = 16, decode = 3, layers = 2, top_k = 2,
                hidden = 64, n = 4;
  const nlohmann::json s = summary_of(
      "llm tiny-moe " + tiny_system() + "--ep " + std::to_string(n) +
          " --mode timing --prefill " + std::to_string(prefill) + " --decode " +
          std::to_string(decode) + " --batch " + std::to_string(batch),
      "llm_ep_bytes");
  const auto &comm = s["llm"]["communication"];
  REQUIRE(comm.size() == static_cast<size_t>(n));
  uint64_t remote = 0, local = 0, bytes = 0;
  for (const auto &c : comm) {
    INFO(c.dump());
    CHECK(c["row_bytes"] == hidden * 2);
    remote += c["dispatch_rows_remote"].get<uint64_t>();
    local += c["dispatch_rows_local"].get<uint64_t>();
    bytes += c["prefill"]["bytes"].get<uint64_t>() +
             c["decode"]["bytes"].get<uint64_t>();
    // A dispatch and a combine per layer and step.
    CHECK(c["decode"]["exchanges"] == 2 * layers * decode);
    CHECK(c["decode"]["share"].get<double>() > 0);
    CHECK(c["decode"]["share"].get<double>() < 1);
  }
  const uint64_t entries = static_cast<uint64_t>(
      (batch * prefill + batch * decode) * top_k * layers);
  CHECK(remote + local == entries);
  CHECK(bytes == 2 * remote * static_cast<uint64_t>(hidden * 2));
  // Binomial: the remote share within five standard deviations of (n - 1) / n.
  const double p = static_cast<double>(n - 1) / n,
               sd = std::sqrt(p * (1 - p) / static_cast<double>(entries));
  CHECK(std::abs(static_cast<double>(remote) / static_cast<double>(entries) -
                 p) < 5 * sd);
  // Each chip holds the receive window.
  CHECK(s["llm"]["memory"][0]["collective_buffers"].get<uint64_t>() > 0);
}

TEST_CASE("llm ep: bad plans exit 2 naming the culprit") {
  struct Case {
    std::string args, says;
  } cases[] = {
      {"tiny-moe " + tiny_system() + "--ep 3",
       "4 experts (num_local_experts), which 3 chips do not divide"},
      {"tiny " + tiny_system() + "--ep 2", "dense model"},
      {"tiny-moe " + tiny_system() + "--ep 8", "has 4 chips"},
      {"tiny-moe " + tiny_system() + "--ep 4 --batch 2", "multiple of 4"},
      {"tiny-moe --config " + config("tiny") + " --ep 2", "needs --system"},
      {"tiny-moe " + tiny_system() + "--ep 2 --tp 2", "--ep with --tp"},
      {"tiny-moe " + tiny_system() + "--ep 2 --graph-mode on --batch 2",
       "--graph-mode"},
      // Mixtral's expert shard does not fit a tiny chip: the message names the
      // chip.
      {"mixtral-8x7b " + tiny_system() + "--ep 4 --batch 4", "chip 0"},
  };
  for (const Case &c : cases) {
    const CliResult r = run_cli("llm " + c.args + " --mode timing");
    INFO(c.args << "\n" << r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains(c.says));
  }
}
