// The functional check of `sfumato train-step` takes the backward's decisions (which elements a
// ReLU's or a Clip's gradient passes, MaxPool's maxima) from the device's forward values
// (graph::host_gradients, device_forward): an activation that sits on a threshold within the
// device's rounding passes its gradient on the host exactly where it did on the device.
#include <catch2/catch.hpp>
#include <fstream>

#include "runtime/graph/zoo/builder.h"
#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("train-step check: masks on a threshold follow the device's forward (ReLU and Clip at 0)", "[train]") {
    // s = ReduceSum over [x w, C, -C] (w = 1, C = 1024) and z = s - x are 0 in exact arithmetic
    // (the host's double forward); the device's fp32 sums may leave a last-bit residue of either
    // sign, depending on their order. Whatever the device computed, the check takes the ReLU's
    // and the Clip's masks from its forward (2 tensors per rank, read when their step completed)
    // and passes; tests/unit/graph_train_check_test.cpp gives host_gradients device values that
    // differ from the host's and checks that the masks follow them.
    using namespace sfumato::graph::zoo;
    const int64_t k = 16;
    Builder b("threshold", 13, 11);
    const std::string x = b.input("input", kFloat, {-1, k}, {"N"});
    const std::string axis2 = b.ints("axis2", {2});
    const std::string xu = b.op("Unsqueeze", {x, axis2});
    const std::string zero = b.scalar("zero", 0.0f);
    auto column = [&](float c) { return b.op("Add", {b.op("Mul", {xu, zero}), b.scalar("c", c)}); };
    const std::string xw = b.op("Mul", {x, b.constant("w", {k}, std::vector<float>(static_cast<size_t>(k), 1.0f))});
    const std::string cat = b.op("Concat", {b.op("Unsqueeze", {xw, axis2}), column(1024.0f), column(-1024.0f)},
                                 {ai("axis", 2)});
    const std::string s = b.op("ReduceSum", {cat, axis2}, {ai("keepdims", 0)});
    const std::string r1 = b.op("Relu", {b.op("Sub", {s, x})});
    const std::string r2 = b.op("Clip", {b.op("Sub", {x, s}), zero, b.scalar("hi", 6.0f)});
    const std::string y = b.op("Gemm", {b.op("Add", {r1, r2}), b.weight("fc.weight", {4, k}), b.weight("fc.bias", {4})},
                               {ai("transB", 1)}, "fc");
    b.output(y, kFloat);
    const std::string dir = temp_dir("train_check_threshold");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/threshold.onnx", std::ios::binary) << bytes;
    const CliResult r = run_cli("train-step " + dir + "/threshold.onnx --system " + config("system-tiny") +
                                " --set system.chips_per_server=2 --batch 4 --precision fp32 --trace off --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto sum = read_json(dir + "/summary.json");
    INFO(sum["check"].dump());
    CHECK(sum["check"]["passed"] == true);
    CHECK(sum["check"]["compared"] == 2 * 2 * sum["train"]["parameters"].get<uint64_t>());
    // Per rank: the ReLU's and the Clip's outputs.
    CHECK(sum["check"]["device_decisions"] == 2 * 2);
}
