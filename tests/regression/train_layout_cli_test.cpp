// `sfumato train-step --layout on` on 2 tiny chips: activations and gradients kept in NC1HWC0
// (runtime/graph/train_layout.cpp) give gradients and updated weights that match the host
// reference, timing mode takes functional mode's cycles, the step is shorter than with everything
// in ND, and the conversions before and after are reported.
#include <catch2/catch.hpp>
#include <fstream>

#include "runtime/graph/zoo/builder.h"
#include "tests/support.h"

using namespace sfumato::test;

namespace {

// 64 x 64 images, widths 8 << stage: every channel count is whole fp32 C0 blocks (8).
const std::string kResNet = "\"zoo:resnet18?image=64&width=8&classes=10\"";

nlohmann::json train(const std::string& model, const std::string& extra, const std::string& out,
                     std::string* output = nullptr) {
    const CliResult r = run_cli("train-step " + model + " --system " + config("system-tiny") +
                                " --set system.chips_per_server=2 --trace off --batch 2 --precision fp32 --out " + out +
                                " " + extra);
    INFO(r.output);
    REQUIRE(r.code == 0);
    if (output) *output = r.output;
    return read_json(out + "/summary.json");
}

}  // namespace

TEST_CASE("train-step --layout on: a ResNet-18 in NC1HWC0 matches the host reference and converts less", "[train]") {
    std::string printed;
    const auto on = train(kResNet, "--layout on", temp_dir("train_layout_on"), &printed);
    const auto off = train(kResNet, "--layout off", temp_dir("train_layout_off"));
    CHECK(on["check"]["passed"] == true);
    CHECK(on["check"]["compared"] == 2 * 2 * on["train"]["parameters"].get<uint64_t>());
    const nlohmann::json& l = on["train"]["layout"];
    // 20 Convs: without the pass each converts its X; with it the image's one TransData is left
    // (the pooled [N, 64, 1, 1] of whole C0 blocks goes back to ND as a view).
    CHECK(l["forward"]["before"] == 20);
    CHECK(l["forward"]["after"] == 1);
    CHECK(l["forward"]["saved"] == 19);
    // The backward: 19 data gradients (not the stem's) and 20 weight gradients convert inside
    // their kernels without the layout; with it fewer conversions remain, and its reductions,
    // ReLU gradients and residual sums run on NC1HWC0 operands.
    CHECK(l["backward"]["before"] == 39);
    CHECK(l["backward"]["after"].get<int>() == l["backward"]["transdata"].get<int>() + l["backward"]["in_kernel"].get<int>());
    CHECK(l["backward"]["saved"].get<int>() > 0);
    CHECK(l["backward"]["items_in_nc1hwc0"].get<int>() > 0);
    CHECK(off["train"]["layout"]["backward"]["saved"] == 0);
    CHECK(on["step_us"].get<double>() < off["step_us"].get<double>());
    CHECK(printed.find("layout: NC1HWC0 kept across forward and backward chains; conversions forward 20 -> 1 (19 saved)") !=
          std::string::npos);
}

TEST_CASE("train-step --layout on: timing mode takes functional mode's cycles", "[train]") {
    const auto f = train(kResNet, "--layout on", temp_dir("train_layout_f"));
    const auto t = train(kResNet, "--layout on --mode timing --simulate all", temp_dir("train_layout_t"));
    CHECK(f["check"]["passed"] == true);
    CHECK(f["step_cycles"].get<uint64_t>() > 0);
    CHECK(f["step_cycles"] == t["step_cycles"]);
}

TEST_CASE("train-step --layout on: on 910-like chips (coupled cores) the layout is kept and matches the host reference",
          "[train]") {
    // The coupled core drains a Conv's NC1HWC0 result through UB (no FixPipe to GM): the same
    // forward savings as on the split tiny chips, the check passes, timing takes the same cycles.
    const std::string sys = " --system " + config("system-8x910-like") +
                            " --set system.chips_per_server=2 --set system.group_size=2";
    auto run = [&](const std::string& extra, const std::string& tag) {
        const std::string out = temp_dir("train_layout_910_" + tag);
        const CliResult r = run_cli("train-step " + kResNet + sys + " --trace off --batch 2 --precision fp32 --out " +
                                    out + " " + extra);
        INFO(r.output);
        REQUIRE(r.code == 0);
        return read_json(out + "/summary.json");
    };
    const auto on = run("--layout on", "on");
    const auto off = run("--layout off", "off");
    const auto t = run("--layout on --mode timing --simulate all", "t");
    CHECK(on["check"]["passed"] == true);
    const nlohmann::json& l = on["train"]["layout"];
    CHECK(l["forward"]["before"] == 20);
    CHECK(l["forward"]["saved"] == 19);
    CHECK(l["backward"]["saved"].get<int>() > 0);
    CHECK(on["step_us"].get<double>() < off["step_us"].get<double>());
    CHECK(on["step_cycles"] == t["step_cycles"]);
}

TEST_CASE("train-step --layout on: SqueezeNet (Concat stays ND) matches the host reference", "[train]") {
    const auto s = train("\"zoo:squeezenet?image=48&classes=10\"", "--layout on", temp_dir("train_layout_sq"));
    CHECK(s["check"]["passed"] == true);
    CHECK(s["train"]["layout"]["forward"]["saved"].get<int>() > 0);
}

TEST_CASE("train-step --layout on: in fp16 the weight gradients read dZ in NC1HWC0 (no TransData)", "[train]") {
    // Two 3 x 3 convolutions with ReLUs (32 and 48 channels: whole C0 blocks in fp32 and fp16),
    // pooled, a classifier. fp32's C0 of 8 is half a fractal, so there each weight gradient's
    // dZ goes through a TransData to NCHW; in fp16 the kernel reads dZ as the backward keeps it.
    using namespace sfumato::graph::zoo;
    Builder b("convs", 13, 5);
    std::string x = b.input("input", kFloat, {-1, 16, 10, 10}, {"N"});
    const std::vector<A> k3 = {ais("kernel_shape", {3, 3}), ais("pads", {1, 1, 1, 1})};
    x = b.op("Relu", {b.op("Conv", {x, b.weight("c1.weight", {32, 16, 3, 3})}, k3, "c1")});
    x = b.op("Relu", {b.op("Conv", {x, b.weight("c2.weight", {48, 32, 3, 3}), b.weight("c2.bias", {48})}, k3, "c2")});
    x = b.op("Flatten", {b.op("GlobalAveragePool", {x})}, {ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 48}), b.weight("fc.bias", {5})}, {ai("transB", 1)}, "fc");
    b.output(x, kFloat);
    const std::string dir = temp_dir("train_layout_dz5");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/convs.onnx", std::ios::binary) << bytes;
    auto run = [&](const std::string& precision) {
        const std::string out = temp_dir("train_layout_dz5_" + precision);
        const CliResult r = run_cli("train-step " + dir + "/convs.onnx --system " + config("system-tiny") +
                                    " --set system.chips_per_server=2 --trace off --batch 2 --layout on --precision " +
                                    precision + " --out " + out);
        INFO(r.output);
        REQUIRE(r.code == 0);
        return read_json(out + "/summary.json");
    };
    const auto h = run("fp16"), f = run("fp32");
    CHECK(h["check"]["passed"] == true);
    CHECK(f["check"]["passed"] == true);
    const nlohmann::json &lh = h["train"]["layout"]["backward"], &lf = f["train"]["layout"]["backward"];
    CHECK(lh["transdata"].get<int>() == lf["transdata"].get<int>() - 2);
    CHECK(lh["before"] == lf["before"]);
    CHECK(lh["saved"].get<int>() == lf["saved"].get<int>() + 2);
}

TEST_CASE("train-step --layout: a value other than on or off exits 2 naming it", "[train]") {
    const CliResult r = run_cli("train-step " + kResNet + " --system " + config("system-tiny") + " --layout maybe");
    CHECK(r.code == 2);
    CHECK(r.output.find("--layout must be on or off, not 'maybe'") != std::string::npos);
}
