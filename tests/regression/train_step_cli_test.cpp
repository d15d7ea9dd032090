// `sfumato train-step` on 2 tiny chips: the reduced gradients and updated weights of an MLP and
// of a small ResNet-18 (conv, pooling, residual adds, fused ReLU) match the host reference in
// functional mode; timing mode takes the cycles functional mode takes; bucket and parameter
// counts follow from the model's shapes; overlapping the all-reduce with the backward hides
// communication that running it afterwards exposes; unsupported models and bad arguments exit 2.
// (--reuse-timing is measured in timing_reuse_cli_test.cpp.)
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

const std::string kMlp = "\"zoo:mlp?in=16&hidden=32&layers=2&classes=8\"";
const std::string kResNet = "\"zoo:resnet18?image=32&width=8&classes=10\"";

std::string two_chips() { return "--system " + config("system-tiny") + " --set system.chips_per_server=2"; }

nlohmann::json train(const std::string& model, const std::string& extra, const std::string& out, int want_code = 0) {
    const CliResult r = run_cli("train-step " + model + " " + two_chips() + " --trace off --out " + out + " " + extra);
    INFO(r.output);
    REQUIRE(r.code == want_code);
    return want_code == 0 ? read_json(out + "/summary.json") : nlohmann::json();
}

uint64_t align512(uint64_t b) { return (b + 511) / 512 * 512; }

}  // namespace

TEST_CASE("train-step: MLP gradients and updated weights match the host reference on every rank", "[train]") {
    const std::string out = temp_dir("train_mlp");
    const auto s = train(kMlp, "--batch 4 --precision fp32 --lr 0.5", out);
    CHECK(s["check"]["checked"] == true);
    CHECK(s["check"]["passed"] == true);
    // Two ranks, each: every gradient and every updated weight.
    const uint64_t params = 32 * 16 + 32 + 8 * 32 + 8;
    CHECK(s["train"]["parameters"] == params);
    CHECK(s["check"]["compared"] == 2 * 2 * params);
    // fp32 gradients, each weight's at a 512-byte boundary in one bucket.
    CHECK(s["train"]["gradient_bytes"] == align512(32 * 16 * 4) + align512(32 * 4) + align512(8 * 32 * 4) + align512(8 * 4));
    CHECK(s["train"]["buckets"] == 1);
    CHECK(s["train"]["global_batch"] == 8);
    CHECK(s["train"]["loss"] == "softmax cross-entropy");
}

TEST_CASE("train-step: a small ResNet-18 (conv, max pool, residuals) matches the host reference", "[train]") {
    const std::string out = temp_dir("train_resnet");
    const auto s = train(kResNet, "--batch 1 --precision fp32 --bucket-mb 0.1", out);
    CHECK(s["check"]["passed"] == true);
    CHECK(s["train"]["buckets"].get<uint64_t>() > 1);
    CHECK(s["check"]["compared"] == 2 * 2 * s["train"]["parameters"].get<uint64_t>());
}

TEST_CASE("train-step: timing mode takes the cycles of functional mode", "[train]") {
    const std::string f = temp_dir("train_f"), t = temp_dir("train_t");
    const auto sf = train(kMlp, "--batch 4 --precision fp16 --bucket-mb 0.001", f);
    const auto st = train(kMlp, "--batch 4 --precision fp16 --bucket-mb 0.001 --mode timing --simulate all", t);
    CHECK(sf["check"]["passed"] == true);
    CHECK(st["check"]["checked"] == false);
    CHECK(sf["step_cycles"].get<uint64_t>() > 0);
    CHECK(sf["step_cycles"] == st["step_cycles"]);
    // (total_cycles differ: functional mode reads the results back after the step)
    CHECK(sf["comm_us"] == st["comm_us"]);
    // Buckets close at 1048 bytes (0.001 MiB); gradients in backward order at 512-byte
    // boundaries: fc2.weight (512 B) and fc2.bias (16 B) at 0 and 512, fc1.weight (1024 B) at
    // 1024 closes the first (2048 B); fc1.bias (64 B) is the second.
    CHECK(st["train"]["buckets"] == 2);
}

TEST_CASE("train-step: overlapping the all-reduce with the backward hides communication", "[train]") {
    const std::string on = temp_dir("train_on"), off = temp_dir("train_off"), one = temp_dir("train_one");
    const std::string args = "--batch 1 --precision fp16 --mode timing --bucket-mb 0.05";
    const auto a = train(kResNet, args + " --overlap on", on);
    const auto b = train(kResNet, args + " --overlap off", off);
    CHECK(a["train"]["buckets"] == b["train"]["buckets"]);
    CHECK(a["step_us"].get<double>() < b["step_us"].get<double>());
    CHECK(a["overlap_us"].get<double>() > b["overlap_us"].get<double>());
    for (const auto& s : {a, b}) {
        CHECK(s["exposed_comm_us"].get<double>() == Approx(s["comm_us"].get<double>() - s["overlap_us"].get<double>()));
        CHECK(s["exposed_comm_share"].get<double>() == Approx(s["exposed_comm_us"].get<double>() / s["step_us"].get<double>()));
        CHECK(s["compute_us"].get<double>() <= s["step_us"].get<double>());
    }
    // One bucket reduced after the whole backward, the update after it: no compute runs while it
    // communicates, so all of it is exposed.
    const auto c = train(kResNet, "--batch 1 --precision fp16 --mode timing --bucket-mb 100 --overlap off", one);
    CHECK(c["train"]["buckets"] == 1);
    CHECK(c["overlap_us"].get<double>() == 0);
    CHECK(c["exposed_comm_us"].get<double>() == c["comm_us"].get<double>());
}

TEST_CASE("train-step: unsupported models and bad arguments exit 2 naming the culprit", "[train]") {
    const std::string out = temp_dir("train_bad");
    CliResult r = run_cli("train-step \"zoo:mobilenet_v2?image=32&width_pct=25\" " + two_chips() + " --mode timing --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("no backward") != std::string::npos);
    r = run_cli("train-step " + kMlp + " --batch 2 --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--system") != std::string::npos);
    r = run_cli("train-step " + kMlp + " " + two_chips() + " --overlap maybe --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--overlap") != std::string::npos);
    r = run_cli("train-step " + kMlp + " " + two_chips() + " --ranks 3 --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--ranks 3") != std::string::npos);
    r = run_cli("train-step " + kMlp + " " + two_chips() + " --precision mixed --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--precision") != std::string::npos);
}

TEST_CASE("train-step: simulating rank 0's compute for identical ranks matches simulating every rank", "[train]") {
    const std::string all = temp_dir("train_all"), one = temp_dir("train_one_rank");
    const std::string args = "--batch 2 --precision fp16 --mode timing --bucket-mb 0.1 --set system.chips_per_server=4";
    const auto a = train(kResNet, args + " --simulate all", all);
    const auto b = train(kResNet, args + " --simulate one", one);
    CHECK(a["ranks_simulated"] == 4);
    CHECK(b["ranks_simulated"] == 1);
    // The followers start each all-reduce a notify's link latency after rank 0 marks the bucket.
    CHECK(b["step_us"].get<double>() == Approx(a["step_us"].get<double>()).epsilon(0.01));
    CHECK(b["compute_us"].get<double>() == Approx(a["compute_us"].get<double>()).epsilon(0.01));
    // Functional mode checks every rank's values, so it simulates them all.
    const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " --simulate one --out " + one);
    CHECK(r.code == 2);
    CHECK(r.output.find("--simulate one needs timing mode") != std::string::npos);
}

