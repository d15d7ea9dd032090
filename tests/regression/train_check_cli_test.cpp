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
    // z = x W - x with W the identity: exactly 0 on the host (double), fp16(x) - x on the device
    // (the cube takes fp32 operands as fp16), so about half of the ReLU's and the Clip's
    // elements pass on the device and none on the host's own forward. The gradients of W1 and
    // W2 are those passed elements' (x^T dz): a host mask from its own forward would make them 0.
    using namespace sfumato::graph::zoo;
    const int64_t k = 16;
    std::vector<float> eye(static_cast<size_t>(k * k), 0.0f);
    for (int64_t i = 0; i < k; ++i) eye[static_cast<size_t>(i * k + i)] = 1.0f;
    Builder b("threshold", 13, 11);
    const std::string x = b.input("input", kFloat, {-1, k}, {"N"});
    const std::string z1 = b.op("Sub", {b.op("MatMul", {x, b.constant("w1", {k, k}, eye)}), x});
    const std::string z2 = b.op("Sub", {x, b.op("MatMul", {x, b.constant("w2", {k, k}, eye)})});
    const std::string r1 = b.op("Relu", {z1});
    const std::string r2 = b.op("Clip", {z2, b.scalar("lo", 0.0f), b.scalar("hi", 6.0f)});
    std::string y = b.op("Gemm", {b.op("Add", {r1, r2}), b.weight("fc.weight", {4, k}), b.weight("fc.bias", {4})},
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
    const auto s = read_json(dir + "/summary.json");
    INFO(s["check"].dump());
    CHECK(s["check"]["passed"] == true);
    CHECK(s["check"]["compared"] == 2 * 2 * s["train"]["parameters"].get<uint64_t>());
    // Per rank: the ReLU's and the Clip's outputs.
    CHECK(s["check"]["device_decisions"] == 2 * 2);
}
