// `sfumato train-step` with several steps, the optimizers beside SGD and mixed precision, on 2
// tiny chips in functional mode: the check replays every step on the host (the same batch, the
// optimizer's rule over the reduced gradients, the loss-scale decisions) and compares the last
// step's gradients, the updated weights and the optimizer states and fp32 master weights the
// device wrote back. A loss scale far above fp16's range overflows: the step is skipped (weights,
// states and master untouched, the host's replay agrees), the scale backs off, the next step
// applies, and after `--loss-scale-window` good steps the scale grows. Timing mode takes the
// cycles of functional mode. Bad arguments exit 2 naming the option.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

const std::string kMlp = "\"zoo:mlp?in=16&hidden=32&layers=2&classes=8\"";
const uint64_t kParams = 32 * 16 + 32 + 8 * 32 + 8;

std::string two_chips() { return "--system " + config("system-tiny") + " --set system.chips_per_server=2"; }

nlohmann::json train(const std::string& extra, const std::string& out) {
    const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " --batch 4 --trace off --out " + out + " " + extra);
    INFO(r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

uint64_t align512(uint64_t b) { return (b + 511) / 512 * 512; }
// The fp32 bytes of one tensor per weight, each at a 512-byte boundary.
uint64_t fp32_block() { return align512(32 * 16 * 4) + align512(32 * 4) + align512(8 * 32 * 4) + align512(8 * 4); }

}  // namespace

TEST_CASE("train-step: every optimizer over two steps matches the host's replay, states read back", "[train]") {
    for (const char* opt : {"sgd", "momentum", "adamw", "lamb"})
        for (const char* precision : {"fp32", "fp16"}) {
            const std::string out = temp_dir(std::string("train_opt_") + opt + "_" + precision);
            const auto s = train(std::string("--steps 2 --lr 0.01 --optimizer ") + opt + " --precision " + precision, out);
            INFO(opt << " " << precision);
            CHECK(s["check"]["passed"] == true);
            CHECK(s["train"]["optimizer"] == opt);
            CHECK(s["train"]["steps"] == 2);
            CHECK(s["step_records"].size() == 2);
            const int states = std::string(opt) == "sgd" ? 0 : std::string(opt) == "momentum" ? 1 : 2;
            CHECK(s["memory_plan"]["optimizer_state_bytes"] == states * fp32_block());
            // Per rank: every gradient, every weight and every state value.
            CHECK(s["check"]["compared"] == 2 * (2 + states) * kParams);
        }
}

TEST_CASE("train-step: mixed precision keeps fp32 master weights and fp16 compute copies", "[train]") {
    const std::string out = temp_dir("train_mixed");
    const auto s = train("--steps 2 --lr 0.01 --optimizer momentum --precision mixed", out);
    CHECK(s["check"]["passed"] == true);
    CHECK(s["train"]["master_weights"] == true);
    CHECK(s["train"]["loss_scaling"]["init"] == 65536.0);
    CHECK(s["train"]["loss_scaling"]["growth_interval"] == 2000);
    // The compute weights and the gradients in fp16; the master copy and the momentum in fp32.
    const auto& m = s["memory_plan"];
    CHECK(m["master_weight_bytes"] == kParams * 4);
    CHECK(m["optimizer_state_bytes"] == 2 * fp32_block());
    CHECK(s["train"]["gradient_bytes"] ==
          align512(32 * 16 * 2) + align512(32 * 2) + align512(8 * 32 * 2) + align512(8 * 2));
    // Gradient, weight, momentum and master per value and rank.
    CHECK(s["check"]["compared"] == 2 * 4 * kParams);
    for (const auto& r : s["step_records"]) {
        CHECK(r["skipped"] == false);
        CHECK(r["loss_scale"] == 65536.0);
    }
    // bf16 compute: no loss scaling by default.
    const auto b = train("--lr 0.01 --optimizer adamw --precision mixed-bf16", temp_dir("train_mixed_bf16"));
    CHECK(b["check"]["passed"] == true);
    CHECK(b["train"]["loss_scaling"] == "off");
}

TEST_CASE("train-step: an overflowing loss scale skips the step, backs off, and the next step applies", "[train]") {
    // 1e9 times a loss gradient of order 1/8 is far beyond fp16's 65504: the loss gradient itself
    // is infinite. Backed off by 1e-4 the scale is 1e5; a window of 1 grows it after each good step.
    const std::string out = temp_dir("train_overflow");
    const auto s = train("--steps 3 --lr 0.01 --optimizer adamw --precision mixed --loss-scale-init 1e9 "
                         "--loss-scale-backoff 0.0001 --loss-scale-window 1",
                         out);
    const auto& st = s["step_records"];
    REQUIRE(st.size() == 3);
    CHECK(st[0]["skipped"] == true);
    CHECK(st[0]["loss_scale"] == 1e9);
    CHECK(st[1]["skipped"] == false);
    CHECK(st[1]["loss_scale"].get<double>() == Approx(1e9 * 1e-4));
    CHECK(st[2]["skipped"] == false);
    CHECK(st[2]["loss_scale"].get<double>() == Approx(1e9 * 1e-4 * 2));
    // The host's replay made the same decisions and, with step 1 skipped, two AdamW steps (bias
    // corrections of steps 1 and 2) give the weights, moments and master copy read back.
    CHECK(s["check"]["passed"] == true);
    const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " --batch 4 --trace off --steps 3 " +
                                "--precision mixed --loss-scale-init 1e9 --out " + temp_dir("train_overflow_print"));
    CHECK(r.output.find("step 1: loss scale 1e+09, skipped") != std::string::npos);
}

TEST_CASE("train-step: several mixed-precision steps take the same cycles in timing and functional mode", "[train]") {
    const std::string f = temp_dir("train_mixed_f"), t = temp_dir("train_mixed_t");
    const auto sf = train("--steps 2 --optimizer lamb --precision mixed", f);
    const auto st = train("--steps 2 --optimizer lamb --precision mixed --mode timing --simulate all", t);
    CHECK(sf["step_cycles"] == st["step_cycles"]);
    CHECK(sf["run_us"] == st["run_us"]);
}

TEST_CASE("train-step: bad precision, step and loss-scale options exit 2 naming the option", "[train]") {
    const std::string out = temp_dir("train_precision_bad");
    for (const char* bad : {"--steps 0", "--loss-scale dynamic --precision fp16", "--loss-scale sometimes",
                            "--precision mixed --loss-scale-backoff 1.5", "--precision mixed --loss-scale-init 0",
                            "--optimizer adagrad"}) {
        const CliResult r = run_cli("train-step " + kMlp + " " + two_chips() + " " + bad + " --out " + out);
        INFO(bad << ": " << r.output);
        CHECK(r.code == 2);
        const std::string opt = std::string(bad).substr(0, std::string(bad).find(' '));
        CHECK(r.output.find(opt == "--precision" ? "--loss-scale-" : opt) != std::string::npos);
    }
}
