// The cube operators' graph-node faces end to end through the CLI (`sfumato
// kernel gemm`, `sfumato kernel bmatmul`): the check against the host reference
// on split and coupled presets, bias forms, fused activations (FixPipe ReLU,
// vector epilogue), broadcast batches, 1-D operands, int8; identical cycles in
// functional and timing mode; bad arguments exit 2 naming the argument or the
// node.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

nlohmann::json run_ok(const std::string& op, const std::string& args, const std::string& preset,
                      const std::string& tag) {
    const std::string out = temp_dir("cube_" + tag);
    const CliResult r =
        run_cli("kernel " + op + " " + args + " --config " + config(preset) + " --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("check: passed") != std::string::npos);
    return read_json(out + "/summary.json");
}

}  // namespace

TEST_CASE(
    "gemm node: bias forms, transposes, alpha/beta and activations pass "
    "the reference check") {
    for (const char* preset : {"tiny", "ascend910-like"}) {
        INFO(preset);
        const std::string p = preset;
        run_ok("gemm", "--m 100 --n 70 --k 300 --bias row --alpha 0.5 --beta 2", p, p + "_row");
        run_ok("gemm", "--m 64 --n 48 --k 96 --trans-a 1 --bias col --dtype fp32", p, p + "_col");
        run_ok("gemm",
               "--m 33 --n 47 --k 61 --trans-b 1 --bias scalar --dtype bf16 "
               "--activation Relu",
               p, p + "_sc");
        const auto s =
            run_ok("gemm", "--m 40 --n 72 --k 50 --bias full --beta -1 --activation Gelu", p, p + "_full");
        // A full C and Gelu take the vector epilogue: a second kernel.
        REQUIRE(s["ops"].size() == 2);
        CHECK(s["ops"][1]["name"] == "gemm/epilogue");
    }
    for (const char* act : {"LeakyRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid", "HardSwish"})
        run_ok("gemm", std::string("--m 32 --n 40 --k 64 --dtype fp32 --activation ") + act, "tiny", act);
    run_ok("gemm", "--m 20 --n 30 --k 40 --alpha 0 --beta 3 --bias row", "tiny", "alpha0");
}

TEST_CASE("bmatmul node: numpy batching, broadcasting, 1-D operands, int8") {
    run_ok("bmatmul", "--a-shape 3,1,20,30 --b-shape 2,30,17", "tiny", "bcast");
    run_ok("bmatmul", "--a-shape 4,20,30 --b-shape 30,40 --dtype fp32 --activation Tanh", "tiny", "fold");
    run_ok("bmatmul", "--a-shape 30 --b-shape 5,30,17 --dtype fp32", "tiny", "a1d");
    run_ok("bmatmul", "--a-shape 2,20,30 --b-shape 30 --dtype bf16", "ascend910-like", "b1d");
    run_ok("bmatmul", "--a-shape 3,40,64 --b-shape 3,64,40 --dtype int8", "ascend910b-like", "int8");
}

TEST_CASE("conv nodes: conv2d and conv_transpose2d on the presets pass the reference check") {
    run_ok("conv2d", "--n 2 --c 40 --h 14 --w 14 --k 48 --stride 2 --activation Relu", "ascend910b-like",
           "c910b");
    run_ok("conv2d", "--c 32 --h 12 --w 12 --k 32 --groups 32 --dtype fp32", "ascend910-like", "dw910");
    run_ok("conv2d", "--c 24 --h 10 --w 9 --k 16 --r 5 --s 1 --pad 2 --dilation 2 --activation HardSwish",
           "tiny", "ctiny");
    run_ok("conv_transpose2d", "--c 16 --h 7 --w 7 --k 8 --r 4 --s 4 --stride 2 --pad 1", "ascend910b-like",
           "t910b");
    run_ok("conv_transpose2d",
           "--c 8 --h 5 --w 6 --k 12 --groups 4 --output-padding 1 --stride 2 --dtype bf16", "tiny", "ttiny");
}

TEST_CASE("cube node ops: functional and timing mode give the same cycles") {
    for (const char* op : {"gemm --m 50 --n 60 --k 70 --bias full --activation Sigmoid",
                           "bmatmul --a-shape 2,33,40 --b-shape 40,50",
                           "conv2d --c 20 --h 9 --w 9 --k 12 --stride 2 --activation Gelu",
                           "conv_transpose2d --c 8 --h 5 --w 5 --k 6 --stride 2"}) {
        INFO(op);
        const std::string a = temp_dir("cube_f"), b = temp_dir("cube_t");
        const std::string base = std::string("kernel ") + op + " --config " + config("tiny") + " --out ";
        REQUIRE(run_cli(base + a).code == 0);
        REQUIRE(run_cli(base + b + " --mode timing").code == 0);
        const auto fa = read_json(a + "/summary.json"), fb = read_json(b + "/summary.json");
        CHECK(fa["total_cycles"] == fb["total_cycles"]);
        for (size_t i = 0; i < fa["ops"].size(); ++i) CHECK(fa["ops"][i]["cycles"] == fb["ops"][i]["cycles"]);
    }
}

TEST_CASE("cube node ops: bad arguments exit 2 naming the culprit") {
    const std::string cfg = " --config " + config("tiny");
    auto r = run_cli("kernel bmatmul --a-shape 4,20,30 --b-shape 31,40" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("inner dimensions") != std::string::npos);
    r = run_cli("kernel bmatmul --a-shape 3,20,30 --b-shape 2,30,40" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("broadcast") != std::string::npos);
    r = run_cli("kernel gemm --m 8 --n 8 --k 8 --activation Swish" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("Swish") != std::string::npos);
    r = run_cli("kernel gemm --m 8 --n 8 --k 8 --bias diagonal" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("bias") != std::string::npos);
    r = run_cli("kernel gemm --m 8 --n 8 --k 8 --dtype int8" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("dtype") != std::string::npos);
    r = run_cli("kernel bmatmul --a-shape 4,x --b-shape 3" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("a_shape") != std::string::npos);
    r = run_cli("kernel conv2d --c 6 --h 8 --w 8 --k 8 --groups 4" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("groups") != std::string::npos);
    r = run_cli("kernel conv2d --c 6 --h 2 --w 8 --k 8 --r 5 --pad 0" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("kernel larger") != std::string::npos);
}
