// `sfumato train-step` of the zoo's CNNs on 2 tiny chips in functional mode: the reduced
// gradients and updated weights of every rank match the host reference (the forward plan and the
// backward items through the ONNX-semantics references; the derivation itself is checked against
// finite differences in tests/unit/graph_train_grad_test.cpp):
// - ResNet-18 with BatchNormalization trained (batch statistics, scale and B among the weights);
// - MobileNetV2 (depthwise convolutions, ReLU6 as Clip, BatchNorm, linear bottlenecks);
// - SqueezeNet (Concat of parallel branches, MaxPool over several bands of rows);
// - a model with grouped convolutions of several channels per group (written here as ONNX);
// - BERT (embeddings by Gather, LayerNorm, attention, erf GELU) and GPT-2 (causal mask by Where,
//   Split QKV, tanh GELU, LM head), small, in fp32 and fp16; PyTorch's own export of
//   nn.TransformerEncoderLayer (tests/data/torch: Slices of the packed in-projection, LayerNorm
//   spelled out by the exporter and fused here, ReLU FFN);
// - PyTorch's exports of a MobileNetV2 with hardswish (HardSigmoid x), a MobileNetV3-style head,
//   an MLP ending in LogSoftmax, a ResNet with AveragePool and a net of odd forms (tests/data/torch).
#include <catch2/catch.hpp>
#include <fstream>
#include <tuple>

#include "runtime/graph/zoo/builder.h"
#include "tests/support.h"

using namespace sfumato::test;

namespace {

nlohmann::json train_fp32(const std::string& model, const std::string& out, int batch = 2,
                          const std::string& precision = "fp32", const std::string& extra = "") {
    const CliResult r =
        run_cli("train-step \"" + model + "\" --system " + config("system-tiny") +
                " --set system.chips_per_server=2 --batch " + std::to_string(batch) +
                                " --precision " + precision + " --trace off --out " + out + extra);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["check"]["passed"] == true);
    CHECK(s["check"]["compared"] == 2 * 2 * s["train"]["parameters"].get<uint64_t>());
    return s;
}

}  // namespace

TEST_CASE("train-step: ResNet-18 trains its BatchNorms (scale and B) with batch statistics", "[train]") {
    const auto s = train_fp32("zoo:resnet18?image=64&width=8&classes=10", temp_dir("train_bn"));
    // Parameters: the convolutions (no bias), every BatchNorm's scale and B (2 C), the classifier.
    // Folding BN into the convolutions (inference) would train one bias of C per convolution.
    const uint64_t w = 8, classes = 10;
    uint64_t conv = 3 * w * 49, bn = w, cin = w;
    for (uint64_t stage = 0; stage < 4; ++stage) {
        const uint64_t c = w << stage;
        for (int block = 0; block < 2; ++block) {
            const bool down = block == 0 && stage > 0;
            conv += cin * c * 9 + c * c * 9 + (down ? cin * c : 0);
            bn += 2 * c + (down ? c : 0);
            cin = c;
        }
    }
    CHECK(s["train"]["parameters"] == conv + 2 * bn + cin * classes + classes);
}

TEST_CASE("train-step: MobileNetV2 (depthwise convolutions, ReLU6, BatchNorm) matches the host reference",
          "[train]") {
    // 96 x 96: the last stage's BatchNorms see 3 x 3 pixels per image.
    train_fp32("zoo:mobilenet_v2?image=96&width_pct=25&classes=10", temp_dir("train_mbv2"));
}

TEST_CASE("train-step: SqueezeNet (Concat of parallel branches) matches the host reference", "[train]") {
    train_fp32("zoo:squeezenet?image=48&classes=10", temp_dir("train_squeeze"));
}

TEST_CASE("train-step: grouped convolutions (2 and 4 groups of several channels) match the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("grouped", 13, 7);
    std::string x = b.input("input", kFloat, {-1, 8, 9, 9}, {"N"});
    x = b.op("Conv", {x, b.weight("g2.weight", {12, 4, 3, 3})},
             {ais("kernel_shape", {3, 3}), ais("pads", {1, 1, 1, 1}), ais("strides", {2, 2}), ai("group", 2)}, "g2");
    x = b.op("Relu", {x});
    x = b.op("Conv", {x, b.weight("g4.weight", {8, 3, 1, 1}), b.weight("g4.bias", {8})},
             {ais("kernel_shape", {1, 1}), ai("group", 4)}, "g4");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {x})}, {ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {ai("transB", 1)}, "fc");
    b.output(x, kFloat);
    const std::string dir = temp_dir("train_grouped");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/grouped.onnx", std::ios::binary) << bytes;
    const auto s = train_fp32(dir + "/grouped.onnx", dir, 3);
    CHECK(s["train"]["parameters"] == 12 * 4 * 9 + 8 * 3 + 8 + 5 * 8 + 5);
}

namespace {

// Trained elements of the zoo's transformers: L layers of hidden size h (FFN 4 h), sequence s,
// vocabulary V.
uint64_t bert_parameters(uint64_t l, uint64_t h, uint64_t s, uint64_t v) {
    const uint64_t layer = 4 * (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * h;
    return v * h + s * h + h + 2 * h + l * layer;  // word, position, token type embeddings, LN
}
uint64_t gpt2_parameters(uint64_t l, uint64_t h, uint64_t s, uint64_t v) {
    const uint64_t layer = 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h);
    return v * h + s * h + l * layer + 2 * h + h * v;  // embeddings, layers, final LN, LM head
}

}  // namespace

TEST_CASE("train-step: BERT (embeddings, LayerNorm, attention, erf GELU) matches the host reference", "[train]") {
    const std::string m = "zoo:bert_base?layers=2&hidden=64&heads=2&seq=16&vocab=100";
    auto s = train_fp32(m, temp_dir("train_bert"));
    CHECK(s["train"]["parameters"] == bert_parameters(2, 64, 16, 100));
    // fp16 storage (the train-step default): the same gradients within fp16's tolerance.
    s = train_fp32(m, temp_dir("train_bert16"), 2, "fp16");
    CHECK(s["train"]["parameters"] == bert_parameters(2, 64, 16, 100));
}

TEST_CASE("train-step: GPT-2 (causal mask, Split QKV, tanh GELU, LM head) matches the host reference", "[train]") {
    const std::string m = "zoo:gpt2_small?layers=2&hidden=64&heads=2&seq=16&vocab=100";
    auto s = train_fp32(m, temp_dir("train_gpt2"));
    CHECK(s["train"]["parameters"] == gpt2_parameters(2, 64, 16, 100));
    s = train_fp32(m, temp_dir("train_gpt2_16"), 2, "fp16");
    CHECK(s["train"]["parameters"] == gpt2_parameters(2, 64, 16, 100));
}

TEST_CASE("train-step: an integer input that indexes no embedding exits 2 naming it", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("ints", 13, 3);
    const std::string ids = b.input("ids", kInt64, {-1, 4}, {"N"});
    std::string x = b.op("Cast", {ids}, {ai("to", kFloat)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {3, 4}), b.weight("fc.bias", {3})}, {ai("transB", 1)}, "fc");
    b.output(x, kFloat);
    const std::string dir = temp_dir("train_ints");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/ints.onnx", std::ios::binary) << bytes;
    const CliResult r = run_cli("train-step " + dir + "/ints.onnx --system " + config("system-tiny") +
                                " --set system.chips_per_server=2 --trace off --out " + dir);
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK(r.output.find("'ids'") != std::string::npos);
    CHECK(r.output.find("embedding") != std::string::npos);
}

TEST_CASE("train-step: PyTorch's nn.TransformerEncoderLayer export matches the host reference", "[train]") {
    const std::string dir = temp_dir("train_torch_enc");
    const auto s = train_fp32(source_dir() + "/tests/data/torch/torch_encoder_layer/model.onnx", dir);
    // d_model 32, 4 heads, FFN 64: packed in-projection, out-projection, two FFN layers, two LNs.
    CHECK(s["train"]["parameters"] == (3 * 32 * 32 + 96) + (32 * 32 + 32) + (32 * 64 + 64) + (64 * 32 + 32) + 4 * 32);
}

TEST_CASE("train-step: PyTorch exports with HardSwish, HardSigmoid gating, LogSoftmax, AveragePool and odd forms match the host reference", "[train]") {
    // mobilenet_v2: HardSigmoid(x) x (hardswish as exported); mobilenet_mean: ReduceMean over H, W
    // and HardSigmoid gating; mlp: a final LogSoftmax; resnet_avgpool_dyn: AveragePool (kernel =
    // stride); mlp_misc: Tanh, Sigmoid, SiLU, Softplus, Elu, Split, Slices, Pad (a crop too),
    // Expand, Where, a mask from Abs < 2 (no gradient through the comparison), a final Softmax
    // over axis 1.
    for (const char* m : {"mobilenet_v2", "mobilenet_mean", "mlp", "resnet_avgpool_dyn", "mlp_misc"})
        for (const char* precision : {"fp32", "fp16"}) {
            INFO(m << " " << precision);
            const std::string dir = temp_dir(std::string("train_torch_") + m + "_" + precision);
            train_fp32(source_dir() + "/tests/data/torch/" + m + "/model.onnx", dir, 2, precision);
        }
}

TEST_CASE("train-step --dropout on: Dropout masks per rank, the same in the forward and the backward, match the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("dropout", 13, 5);
    std::string x = b.input("input", kFloat, {-1, 3, 8, 8}, {"N"});
    x = b.op("Conv", {x, b.weight("c.weight", {8, 3, 3, 3})}, {ais("kernel_shape", {3, 3}), ais("pads", {1, 1, 1, 1})}, "c");
    x = b.op("Relu", {x});
    x = b.op("Dropout", {x, b.scalar("ratio", 0.2f)}, {}, "drop_conv");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {x})}, {ai("axis", 1)});
    x = b.op("Dropout", {x, b.scalar("ratio2", 0.5f)}, {}, "drop_fc");
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {ai("transB", 1)}, "fc");
    b.output(x, kFloat);
    const std::string dir = temp_dir("train_dropout");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/dropout.onnx", std::ios::binary) << bytes;
    for (const char* precision : {"fp32", "fp16"}) {
        const auto s = train_fp32(dir + "/dropout.onnx", dir, 3, precision, " --dropout on");
        CHECK(s["train"]["dropout_masks"] == 2);
        CHECK(s["train"]["parameters"] == 8 * 27 + 5 * 8 + 5);
    }
    // Off (the default): the Dropouts are the identity, as in inference.
    const auto s = train_fp32(dir + "/dropout.onnx", dir, 3);
    CHECK(s["train"]["dropout_masks"] == 0);
    const CliResult bad = run_cli("train-step " + dir + "/dropout.onnx --system " + config("system-tiny") +
                                  " --dropout maybe --trace off");
    CHECK(bad.code == 2);
    CHECK(bad.output.find("--dropout") != std::string::npos);
}

TEST_CASE("train-step: Pow, PRelu, Max, Min, Sum, Tile, GlobalMaxPool and the activations' kernels match the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("ew_more", 14, 43);
    const std::string x = b.input("input", kFloat, {-1, 3, 6, 6}, {"N"});
    std::string a = b.op("Conv", {x, b.weight("c1.weight", {8, 3, 3, 3})}, {ais("kernel_shape", {3, 3})}, "c1");
    a = b.op("PRelu", {a, b.weight("slope", {8, 1, 1}, 0.5)}, {}, "prelu");
    a = b.op("Pow", {a, b.scalar("two", 2.0f)}, {}, "square");
    std::string c = b.op("Conv", {x, b.weight("c2.weight", {8, 3, 3, 3})}, {ais("kernel_shape", {3, 3})}, "c2");
    c = b.op("HardSwish", {b.op("Tanh", {c})}, {}, "act");
    std::string m = b.op("Max", {a, c}, {}, "max");
    m = b.op("Tile", {b.op("GlobalMaxPool", {m}, {}, "gmp"), b.ints("repeats", {1, 1, 1, 2})}, {}, "tile");
    const std::string f = b.op("Flatten", {m}, {ai("axis", 1)});
    std::string y = b.op("Sum", {f, b.op("Min", {f, b.weight("cap", {16}, 1.0)}, {}, "min")}, {}, "sum");
    y = b.op("Sigmoid", {b.op("Gemm", {y, b.weight("fc.weight", {5, 16}), b.weight("fc.bias", {5})}, {ai("transB", 1)}, "fc")});
    b.output(y, kFloat);
    const std::string dir = temp_dir("train_ew_more");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/ew_more.onnx", std::ios::binary) << bytes;
    for (const char* precision : {"fp32", "fp16"}) {
        INFO(precision);
        const auto s = train_fp32(dir + "/ew_more.onnx", dir, 2, precision);
        CHECK(s["train"]["parameters"] == 2 * 8 * 27 + 8 + 16 + 5 * 16 + 5);
    }
}

TEST_CASE("train-step: InstanceNormalization and GroupNorm as PyTorch exports it match the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("inorm", 13, 47);
    std::string x = b.input("input", kFloat, {-1, 3, 10, 10}, {"N"});
    x = b.op("Conv", {x, b.weight("c1.weight", {16, 3, 3, 3})}, {ais("kernel_shape", {3, 3})}, "c1");
    x = b.op("InstanceNormalization", {x, b.weight("in.scale", {16}, 1.0), b.weight("in.bias", {16}, 0.5)}, {}, "in");
    x = b.op("Relu", {x});
    x = b.op("Conv", {x, b.weight("c2.weight", {16, 16, 1, 1})}, {ais("kernel_shape", {1, 1})}, "c2");
    std::string g = b.op("Reshape", {x, b.ints("groups", {0, 4, -1})});
    g = b.op("InstanceNormalization", {g, b.weight("gn.scale", {4}, 1.0), b.weight("gn.bias", {4}, 0.5)}, {}, "gn");
    x = b.op("Reshape", {g, b.ints("back", {0, 16, 8, 8})});
    x = b.op("Add", {b.op("Mul", {x, b.weight("gn.gamma", {16, 1, 1}, 1.0)}), b.weight("gn.beta", {16, 1, 1}, 0.5)});
    x = b.op("Flatten", {b.op("GlobalAveragePool", {b.op("Relu", {x})})}, {ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 16}), b.weight("fc.bias", {5})}, {ai("transB", 1)}, "fc");
    b.output(x, kFloat);
    const std::string dir = temp_dir("train_inorm");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/inorm.onnx", std::ios::binary) << bytes;
    for (const char* precision : {"fp32", "fp16"}) {
        INFO(precision);
        const auto s = train_fp32(dir + "/inorm.onnx", dir, 2, precision);
        CHECK(s["train"]["parameters"] == 16 * 27 + 2 * 16 + 16 * 16 + 2 * 4 + 2 * 16 + 5 * 16 + 5);
    }
}

TEST_CASE("train-step: Gathers of plan-time indices along a middle axis (a classifier's x[:, 0]) match the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("cgather", 13, 53);
    const std::string x = b.input("input", kFloat, {-1, 8, 16}, {"N"});
    const std::string h = b.op("Gelu", {b.op("MatMul", {x, b.weight("w", {16, 16})}, {}, "proj")});
    const std::string i0 = b.ints("i0", {0});
    b.model().mutable_graph()->mutable_initializer()->rbegin()->clear_dims();  // a scalar index
    std::vector<std::string> flat;
    for (const std::string& t : {b.op("Gather", {h, i0}, {ai("axis", 1)}, "cls"),
                                 b.op("Gather", {h, b.ints("i1", {5, 2, 7})}, {ai("axis", 1)}, "pick"),
                                 b.op("Gather", {h, b.ints("i2", {4, 5, 6, 7})}, {ai("axis", 2)}, "cols")})
        flat.push_back(b.op("Flatten", {t}, {ai("axis", 1)}));
    std::string y = b.op("Concat", flat, {ai("axis", 1)});
    y = b.op("Gemm", {y, b.weight("fc.weight", {3, 16 + 48 + 32}), b.weight("fc.bias", {3})}, {ai("transB", 1)}, "fc");
    b.output(b.op("LogSoftmax", {y}, {ai("axis", 1)}), kFloat);
    const std::string dir = temp_dir("train_cgather");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/cgather.onnx", std::ios::binary) << bytes;
    for (const char* precision : {"fp32", "fp16"}) {
        INFO(precision);
        const auto s = train_fp32(dir + "/cgather.onnx", dir, 2, precision);
        CHECK(s["train"]["parameters"] == 16 * 16 + 3 * 96 + 3);
    }
}

TEST_CASE("train-step: ConvTranspose (an upsampling decoder) matches the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("convt", 13, 59);
    std::string x = b.input("input", kFloat, {-1, 3, 8, 8}, {"N"});
    x = b.op("Conv", {x, b.weight("c.weight", {16, 3, 3, 3})},
             {ais("kernel_shape", {3, 3}), ais("strides", {2, 2}), ais("pads", {1, 1, 1, 1})}, "down");
    x = b.op("Relu", {x});
    x = b.op("ConvTranspose", {x, b.weight("up.weight", {16, 8, 3, 3}), b.weight("up.bias", {8})},
             {ais("kernel_shape", {3, 3}), ais("strides", {2, 2}), ais("pads", {1, 1, 1, 1}), ais("output_padding", {1, 1})},
             "up");
    x = b.op("Flatten", {b.op("GlobalAveragePool", {b.op("Relu", {x})})}, {ai("axis", 1)});
    x = b.op("Gemm", {x, b.weight("fc.weight", {5, 8}), b.weight("fc.bias", {5})}, {ai("transB", 1)}, "fc");
    b.output(x, kFloat);
    const std::string dir = temp_dir("train_convt");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/convt.onnx", std::ios::binary) << bytes;
    for (const char* precision : {"fp32", "fp16"}) {
        INFO(precision);
        const auto s = train_fp32(dir + "/convt.onnx", dir, 2, precision);
        CHECK(s["train"]["parameters"] == 16 * 27 + 16 * 8 * 9 + 8 + 5 * 8 + 5);
    }
}

TEST_CASE("train-step: ReduceMax, ReduceMin, ReduceSumSquare, ReduceL2, ReduceLogSumExp and ReduceL1 match the host reference", "[train]") {
    using namespace sfumato::graph::zoo;
    Builder b("reductions", 13, 61);
    const std::string x = b.input("input", kFloat, {-1, 8, 16}, {"N"});
    const std::string h = b.op("MatMul", {x, b.weight("w", {16, 16})}, {}, "proj");
    const std::vector<std::tuple<std::string, std::vector<int64_t>, int64_t>> reds = {
        {"ReduceMax", {2}, 0}, {"ReduceMin", {1}, 1}, {"ReduceSumSquare", {2}, 1},
        {"ReduceL2", {1}, 0},  {"ReduceLogSumExp", {1, 2}, 0}, {"ReduceL1", {2}, 0}};
    std::vector<std::string> flat;
    for (const auto& [op, axes, keep] : reds)
        flat.push_back(b.op("Flatten", {b.op(op, {h}, {ais("axes", axes), ai("keepdims", keep)}, op)}, {ai("axis", 1)}));
    std::string y = b.op("Concat", flat, {ai("axis", 1)});
    y = b.op("Gemm", {y, b.weight("fc.weight", {5, 8 + 16 + 8 + 16 + 1 + 8}), b.weight("fc.bias", {5})},
             {ai("transB", 1)}, "fc");
    b.output(y, kFloat);
    const std::string dir = temp_dir("train_reductions");
    std::string bytes;
    REQUIRE(b.model().SerializeToString(&bytes));
    std::ofstream(dir + "/reductions.onnx", std::ios::binary) << bytes;
    for (const char* precision : {"fp32", "fp16"}) {
        INFO(precision);
        const auto s = train_fp32(dir + "/reductions.onnx", dir, 2, precision);
        CHECK(s["train"]["parameters"] == 16 * 16 + 5 * 57 + 5);
    }
}

TEST_CASE("train-step --dim: PyTorch's GPT-2 block export (a symbolic sequence length) matches the host reference", "[train]") {
    // Embeddings by Gather, positions from a Range over the sequence length, causal mask by Where,
    // tanh GELU: the sequence length is symbolic, given with --dim.
    const std::string model = source_dir() + "/tests/data/torch/gpt2_block/model.onnx";
    for (const char* precision : {"fp32", "fp16"}) {
        INFO(precision);
        train_fp32(model, temp_dir(std::string("train_gpt2_block_") + precision), 2, precision, " --dim seq=12");
    }
    const std::string out = temp_dir("train_gpt2_block_bad");
    CliResult r = run_cli("train-step " + model + " --system " + config("system-tiny") + " --trace off --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("'seq'") != std::string::npos);
    CHECK(r.output.find("--dim NAME=V") != std::string::npos);
    r = run_cli("train-step " + model + " --system " + config("system-tiny") + " --dim seq --trace off --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find("--dim seq") != std::string::npos);
}
