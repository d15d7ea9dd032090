// `sfumato train-step` on 2 tiny chips: the reduced gradients and updated weights of an MLP and
// of a small ResNet-18 (conv, pooling, residual adds, fused ReLU) match the host reference in
// functional mode; timing mode takes the cycles functional mode takes; bucket and parameter
// counts follow from the model's shapes; overlapping the all-reduce with the backward hides
// communication that running it afterwards exposes; unsupported models and bad arguments exit 2.
// (--reuse-timing is measured in timing_reuse_cli_test.cpp.)
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "runtime/graph/zoo/builder.h"
#include "tests/support.h"

using namespace sfumato::test;

namespace {

const std::string kMlp = "\"zoo:mlp?in=16&hidden=32&layers=2&classes=8\"";
// 64 x 64 images: layer4's BatchNorms see 2 x 2 pixels per image (batch statistics of a 1 x 1
// plane at batch 1 would be one value per channel, which training refuses).
const std::string kResNet = "\"zoo:resnet18?image=64&width=8&classes=10\"";

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
    const auto s = train(kResNet, "--batch 2 --precision fp32 --bucket-mb 0.1", out);
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
        CHECK(s["comm_share"].get<double>() == Approx(s["comm_us"].get<double>() / s["step_us"].get<double>()));
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
    // A ReduceProd over the features has no backward here.
    {
        using namespace sfumato::graph::zoo;
        Builder b("rprod", 13, 3);
        std::string x = b.input("input", kFloat, {-1, 8}, {"N"});
        x = b.op("Gemm", {x, b.weight("fc.weight", {6, 8}), b.weight("fc.bias", {6})}, {ai("transB", 1)}, "fc");
        b.output(b.op("ReduceProd", {x}, {ais("axes", {1}), ai("keepdims", 1)}, "rprod"), kFloat);
        std::string bytes;
        REQUIRE(b.model().SerializeToString(&bytes));
        std::ofstream(out + "/rprod.onnx", std::ios::binary) << bytes;
    }
    CliResult r = run_cli("train-step " + out + "/rprod.onnx " + two_chips() + " --mode timing --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("'rprod' (ReduceProd): no backward") != std::string::npos);
    // Batch statistics of one value per channel (batch 1, layer4's 1 x 1 planes at 32 x 32).
    r = run_cli("train-step \"zoo:resnet18?image=32&width=8&classes=10\" " + two_chips() + " --batch 1 --mode timing --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("more than one value per channel") != std::string::npos);
    r = run_cli("train-step " + kMlp + " --batch 2 --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--system") != std::string::npos);
    r = run_cli("train-step " + kMlp + " " + two_chips() + " --overlap maybe --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--overlap") != std::string::npos);
    r = run_cli("train-step " + kMlp + " " + two_chips() + " --ranks 3 --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--ranks 3") != std::string::npos);
    r = run_cli("train-step " + kMlp + " " + two_chips() + " --precision fp8 --out " + out);
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


TEST_CASE("train-step: the memory plan reuses the arena, its totals add up and the values still match", "[train]") {
    const std::string out = temp_dir("train_mem");
    const auto s = train(kResNet, "--batch 2 --precision fp32", out);
    CHECK(s["check"]["passed"] == true);
    const auto& m = s["memory_plan"];
    // One arena for the forward and the backward: smaller than every tensor apart, gradients
    // written over the inputs their items read last.
    CHECK(m["arena_bytes"].get<uint64_t>() < m["arena_no_reuse_bytes"].get<uint64_t>());
    CHECK(m["arena_live_peak_bytes"].get<uint64_t>() <= m["arena_bytes"].get<uint64_t>());
    CHECK(m["in_place_gradients"].get<int>() > 0);
    CHECK(m["peak_bytes"] == m["weight_bytes"].get<uint64_t>() + m["gradient_bytes"].get<uint64_t>() +
                                 m["workspace_bytes"].get<uint64_t>() + m["comm_buffer_bytes"].get<uint64_t>() +
                                 m["arena_bytes"].get<uint64_t>());
    CHECK(m["gradient_bytes"] == s["train"]["gradient_bytes"]);
    CHECK(m["headroom_bytes"].get<int64_t>() ==
          m["capacity_bytes"].get<int64_t>() - m["peak_bytes"].get<int64_t>());
    // fp32: no activation in a 2-byte type.
    CHECK(m["kept_activation_2byte_bytes"] == 0);
    // The device allocator held the planned blocks (weights, arena, gradients, workspace, the
    // collective library's buffers) at once, each rounded up to 512 bytes.
    CHECK(m["device_peak_in_use_bytes"].get<uint64_t>() >= m["peak_bytes"].get<uint64_t>());
    CHECK(m["device_peak_in_use_bytes"].get<uint64_t>() <= m["peak_bytes"].get<uint64_t>() + 8 * 512);
}

TEST_CASE("train-step: recomputing cheap activations keeps less and gives the same gradients", "[train]") {
    const std::string off = temp_dir("train_rc_off"), on = temp_dir("train_rc_on");
    const auto a = train(kResNet, "--batch 2 --precision fp32", off);
    const auto b = train(kResNet, "--batch 2 --precision fp32 --recompute on", on);
    CHECK(a["check"]["passed"] == true);
    CHECK(b["check"]["passed"] == true);
    // The same kernels on the same values: the same largest error against the reference.
    CHECK(a["check"]["max_abs_err"] == b["check"]["max_abs_err"]);
    CHECK(b["train"]["recompute"] == true);
    const int n = b["memory_plan"]["recomputed_steps"].get<int>();
    CHECK(n > 0);
    CHECK(b["train"]["backward_kernels"].get<int>() == a["train"]["backward_kernels"].get<int>() + n);
    CHECK(b["memory_plan"]["kept_activation_bytes"].get<uint64_t>() < a["memory_plan"]["kept_activation_bytes"].get<uint64_t>());
    CHECK(a["memory_plan"]["kept_activation_2byte_bytes"] == 0);
    const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " --recompute maybe --out " + off);
    CHECK(r.code == 2);
    CHECK(r.output.find("--recompute") != std::string::npos);
}

TEST_CASE("train-step: --plan-only prints the plan of the run without simulating it", "[train]") {
    const std::string plan = temp_dir("train_plan"), run = temp_dir("train_plan_run");
    const auto p = train(kResNet, "--batch 2 --precision fp16 --mode timing --plan-only", plan);
    const auto s = train(kResNet, "--batch 2 --precision fp16 --mode timing", run);
    CHECK(p["plan_only"] == true);
    CHECK(p.count("step_us") == 0);
    for (const char* k : {"peak_bytes", "arena_bytes", "arena_live_peak_bytes", "in_place_gradients", "kept_activation_bytes"})
        CHECK(p["memory_plan"][k] == s["memory_plan"][k]);
    CHECK(p["train"]["backward_kernels"] == s["train"]["backward_kernels"]);
    // fp16: every kept activation in 2 bytes but the BatchNorms' batch statistics (fp32).
    const auto& m = p["memory_plan"];
    CHECK(m["kept_activation_2byte_bytes"].get<uint64_t>() > 0);
    CHECK(m["kept_activation_2byte_bytes"].get<uint64_t>() < m["kept_activation_bytes"].get<uint64_t>());
}

TEST_CASE("train-step: ResNet-50 at batch 256 fits a 910-like chip's memory (plan only)", "[train]") {
    const std::string out = temp_dir("train_r50_plan");
    const CliResult r = run_cli("train-step zoo:resnet50 --system " + config("system-8x910-like") +
                                " --batch 256 --mode timing --plan-only --trace off --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto m = read_json(out + "/summary.json")["memory_plan"];
    CHECK(m["peak_bytes"].get<uint64_t>() < m["capacity_bytes"].get<uint64_t>());
    CHECK(m["headroom_bytes"].get<int64_t>() > 0);
    CHECK(m["arena_bytes"].get<uint64_t>() < m["arena_no_reuse_bytes"].get<uint64_t>());
    CHECK(r.output.find("memory plan per chip: peak") != std::string::npos);
}

TEST_CASE("train-step: plain SGD updates a bucket's weights in one multi-tensor launch", "[train]") {
    // Buckets of at most 1 KiB: the MLP's 4 gradients (2048, 128, 1024 and 32 bytes in fp32) fall
    // into several buckets, each updated by one launch over its weights (segments split across
    // the vector cores mid-weight); the updated weights match the host reference.
    const std::string out = temp_dir("train_multi_sgd");
    const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " --trace task --out " + out +
                                " --batch 4 --precision fp32 --lr 0.5 --bucket-mb 0.0009765625");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["check"]["passed"] == true);
    const size_t buckets = s["train"]["buckets"].get<size_t>();
    CHECK(buckets > 1);
    CHECK(s["train"]["update_kernels"] == buckets);
    const auto trace = read_json(out + "/trace.json");
    size_t launches = 0;
    for (const auto& e : trace["traceEvents"])
        if (e.value("ph", "") == "X" && e.value("name", "").find("/sgd") != std::string::npos) ++launches;
    CHECK(launches == 2 * buckets);  // on each of the 2 chips
}

TEST_CASE("train-step: AdamW (fused update kernel, fp32 moments) matches the host reference", "[train]") {
    for (const char* precision : {"fp32", "fp16"}) {
        const std::string out = temp_dir(std::string("train_adamw_") + precision);
        const auto s = train(kMlp, std::string("--batch 4 --lr 0.001 --optimizer adamw --precision ") + precision, out);
        CHECK(s["check"]["passed"] == true);
        CHECK(s["train"]["optimizer"] == "adamw");
        CHECK(s["train"]["update_kernels"] == 4);  // one per weight
        // m and v in fp32 per weight, each at a 512-byte boundary; counted in the peak.
        const uint64_t state = 2 * (align512(32 * 16 * 4) + align512(32 * 4) + align512(8 * 32 * 4) + align512(8 * 4));
        CHECK(s["memory_plan"]["optimizer_state_bytes"] == state);
    }
    const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " --optimizer adam --out " + temp_dir("train_adam_bad"));
    CHECK(r.code == 2);
    CHECK(r.output.find("--optimizer") != std::string::npos);
}
