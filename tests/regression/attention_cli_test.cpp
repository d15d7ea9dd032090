// FusedAttention through the CLI: `sfumato kernel attention` on a split part with small
// buffers (tiny: 64-key steps, the fp32 softmax over an fp16 workspace), a split part with
// 910B buffers (128-key steps, the fp16 softmax, S two steps ahead) and a coupled part (UB <->
// L1, no workspace), causal and not, ragged query and key tails, several items per block, bf16;
// functional and timing cycles equal; an unfused attention block in ONNX becomes one
// FusedAttention node and matches the fp64 reference interpreter; bad arguments exit 2 naming
// the argument.
#include <catch2/catch.hpp>
#include <fstream>

#include "runtime/graph/zoo/builder.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_kernel(const std::string& args, const std::string& preset, const std::string& mode,
                          const std::string& out) {
    const CliResult r = run_cli("kernel attention " + args + " --config " + config(preset) + " --trace off --mode " + mode +
                                " --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

}  // namespace

TEST_CASE("attention: split and coupled parts, causal, ragged tails, bf16 match the reference") {
    const std::string dir = temp_dir("attention");
    struct Case {
        const char* preset;
        const char* args;
    };
    const Case cases[] = {
        {"tiny", "--heads 3 --seq 200 --head-dim 64 --causal 1"},
        {"tiny", "--batch 2 --heads 2 --seq 130 --kv-seq 70 --head-dim 32 --dtype bf16"},
        {"tiny", "--heads 2 --seq 40 --kv-seq 300 --head-dim 16 --causal 1"},
        {"ascend910b-like", "--heads 2 --seq 300 --kv-seq 520 --head-dim 128 --causal 1"},
        {"ascend910b-like", "--heads 3 --seq 130 --kv-seq 20 --head-dim 48"},
        {"ascend910b-like", "--heads 2 --seq 200 --head-dim 64 --dtype bf16 --causal 1"},
        {"ascend910-like", "--heads 3 --seq 200 --kv-seq 150 --head-dim 64 --causal 1"},
        {"ascend910-like", "--heads 2 --seq 70 --head-dim 128 --dtype bf16"},
    };
    int i = 0;
    for (const Case& c : cases) {
        INFO(c.preset << ": " << c.args);
        const nlohmann::json f = run_kernel(c.args, c.preset, "functional", dir + "/f" + std::to_string(i));
        CHECK(f["check"]["checked"] == true);
        CHECK(f["check"]["passed"] == true);
        if (i % 3 == 0) {  // a few in timing mode too: the same cycles
            const nlohmann::json t = run_kernel(c.args, c.preset, "timing", dir + "/t" + std::to_string(i));
            CHECK(f["total_cycles"] == t["total_cycles"]);
        }
        ++i;
    }
}

TEST_CASE("attention: an unfused ONNX attention block runs as one FusedAttention node") {
    const std::string dir = temp_dir("attention_graph");
    constexpr int kF = onnx::TensorProto::FLOAT;
    graph::zoo::Builder b("attention", 17, 1);
    const std::vector<int64_t> shape{1, 2, 96, 64};
    const std::string q = b.input("q", kF, shape), k = b.input("k", kF, shape), v = b.input("v", kF, shape);
    const std::string kt = b.op("Transpose", {k}, {graph::zoo::ais("perm", {0, 1, 3, 2})});
    std::string s = b.op("MatMul", {q, kt});
    s = b.op("Mul", {s, b.scalar("scale", 0.125f)});
    const std::string p = b.op("Softmax", {s}, {graph::zoo::ai("axis", -1)});
    b.output(b.op("MatMul", {p, v}), kF);
    const std::string model = dir + "/attention.onnx";
    std::ofstream(model, std::ios::binary) << b.model().SerializeAsString();
    for (const char* precision : {"fp16", "fp32"}) {
        INFO(precision);
        const CliResult r = run_cli("run " + model + " --config " + config("tiny") + " --precision " + precision +
                                    " --reference --trace off --out " + dir + "/" + precision);
        INFO(r.output);
        REQUIRE(r.code == 0);
        CHECK(r.output.find("FusedAttention x1") != std::string::npos);
        CHECK(r.output.find("vs reference: passed") != std::string::npos);
    }
}

TEST_CASE("attention: bad arguments exit 2 naming the argument") {
    const std::string tiny = " --config " + config("tiny") + " --trace off";
    struct Bad {
        const char* args;
        const char* names;
    };
    const Bad bad[] = {
        {"--seq 64 --head-dim 40", "head_dim"},
        {"--seq 64 --dtype int8", "dtype"},
        {"--seq 0", "seq"},
        {"--seq 64 --causal 2", "causal"},
        {"--seq 64 --head-dim 512", "fits"},  // no tiling on tiny's buffers
    };
    for (const Bad& c : bad) {
        INFO(c.args);
        const CliResult r = run_cli(std::string("kernel attention ") + c.args + tiny);
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(c.names) != std::string::npos);
    }
}
