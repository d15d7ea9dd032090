// `sfumato import` through the CLI: the PyTorch profiler traces under tests/data/kineto
// (tests/data/kineto/make_traces.py writes them in the PyTorch 2.x format) and a vendor op
// summary import, list what they skip and why, and replay with a per-operator error report;
// malformed traces (truncated, unknown operators only, shapes missing, not a trace) never
// crash and exit 2 only when nothing usable remains.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

std::string data(const std::string& f) { return source_dir() + "/tests/data/" + f; }

std::multiset<std::string> op_types(const nlohmann::json& w) {
    std::multiset<std::string> s;
    for (const auto& t : w["tasks"]) s.insert(t["node"]["op_type"].get<std::string>());
    return s;
}

}  // namespace

TEST_CASE("import kineto: a small CNN training step maps forward and backward ops and lists the rest") {
    const std::string d = temp_dir("import_cnn");
    const CliResult r = run_cli("import kineto " + data("kineto/cnn_small.json") + " -o " + d + "/w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto w = read_json(d + "/w.json");
    const auto types = op_types(w);
    CHECK(types.count("Conv") == 2);
    CHECK(types.count("BatchNormalization") == 2);
    CHECK(types.count("Relu") == 2);
    CHECK(types.count("MaxPool") == 1);
    CHECK(types.count("Gemm") == 1);
    // convolution_backward: an input-gradient and a weight-gradient kernel, one measured op.
    CHECK(types.count("ConvTranspose") == 1);
    CHECK(types.count("MatMul") == 3);  // weight grad + the two mm of AddmmBackward0
    std::string conv_bwd_source;
    for (const auto& t : w["tasks"]) {
        CHECK(t["measured_us"].get<double>() > 0);
        if (t["node"]["op_type"] == "ConvTranspose") conv_bwd_source = t["source"];
    }
    size_t same_source = 0;
    for (const auto& t : w["tasks"]) same_source += t["source"] == conv_bwd_source;
    CHECK(same_source == 2);
    // The SGD step over the parameter list: one Add over all its elements (8 tensors).
    CHECK(types.count("Add") == 1);
    // What it could not map, with the reason.
    CHECK(r.output.find("no sfumato mapping") != std::string::npos);
    CHECK(r.output.find("aten::nll_loss_nd") != std::string::npos);

    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny") + " --mode timing --out " + d + "/out");
    INFO(p.output);
    REQUIRE(p.code == 0);
    CHECK(p.output.find("median |error|") != std::string::npos);
    const auto s = read_json(d + "/out/summary.json");
    REQUIRE(s.contains("imported"));
    CHECK(s["imported"]["compared"].get<size_t>() + s["imported"]["skipped"].size() == s["imported"]["ops"].size() + s["imported"]["skipped"].size());
    CHECK(s["imported"]["compared"].get<size_t>() >= 8);
    for (const auto& o : s["imported"]["ops"]) {
        CHECK(o["measured_us"].get<double>() > 0);
        CHECK(o["simulated_us"].get<double>() > 0);
        CHECK(o.contains("error"));
    }
    CHECK(s["imported"]["by_type"].contains("aten::conv2d"));
}

TEST_CASE("import kineto: a gzip transformer block keeps streams and replays") {
    const std::string d = temp_dir("import_tf");
    const CliResult r = run_cli("import kineto " + data("kineto/transformer_block.json.gz") + " -o " + d + "/w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto w = read_json(d + "/w.json");
    CHECK(w["streams"].size() == 2);
    const auto types = op_types(w);
    CHECK(types.count("LayerNormalization") == 2);
    CHECK(types.count("MatMul") == 6);  // four linear layers (3-D inputs) and two bmm
    CHECK(types.count("Softmax") == 1);
    CHECK(types.count("Gelu") == 1);
    CHECK(types.count("Copy") == 1);
    // The plain file imports to the same workload.
    REQUIRE(run_cli("import kineto " + data("kineto/transformer_block.json") + " -o " + d + "/plain.json").code == 0);
    CHECK(read_json(d + "/plain.json")["tasks"] == w["tasks"]);
    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny") + " --mode timing --out " + d + "/out");
    INFO(p.output);
    REQUIRE(p.code == 0);
    CHECK(read_json(d + "/out/summary.json")["imported"]["compared"].get<size_t>() >= 10);
}

TEST_CASE("import kineto: a training step laid out as real multi-GPU traces links every kernel through its launch") {
    // Kernels and launches carry their correlation as "External id" (HolisticTraceAnalysis's
    // PyTorch 2.0 traces): each kernel belongs to the operator enclosing its launch on its thread.
    const std::string d = temp_dir("import_train");
    const CliResult r = run_cli("import kineto " + data("kineto/training_step.json") + " -o " + d + "/w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("launch is not in the trace") == std::string::npos);
    CHECK(r.output.find("launched outside any recorded operator") == std::string::npos);
    // The all-reduce and the batch's host-to-device copy are listed apart, with the reason.
    CHECK(r.output.find("ncclKernel_AllReduce_RING_LL_Sum_float") != std::string::npos);
    CHECK(r.output.find("collective kernel (NCCL)") != std::string::npos);
    CHECK(r.output.find("host<->device copy") != std::string::npos);
    const auto w = read_json(d + "/w.json");
    const auto types = op_types(w);
    CHECK(types.count("Gemm") == 2);                // forward addmm
    CHECK(types.count("MatMul") == 4);              // the two mm of each AddmmBackward0
    CHECK(types.count("ReduceSum") == 2);           // their bias gradients
    // In the attribute form (opset 11): from opset 13 ReduceSum takes its axes from an input, and
    // an axes attribute there is refused (it reduced every axis, to a scalar, before).
    for (const auto& t : w["tasks"])
        if (t["node"]["op_type"] == "ReduceSum") CHECK(t["node"]["opset"] == 11);
    CHECK(types.count("LayerNormalization") == 2);  // native_layer_norm and its backward
    CHECK(types.count("Relu") == 1);
    CHECK(types.count("Sigmoid") == 1);
    // sigmoid_backward, threshold_backward, mse_loss_backward (the generic backward: two reads of
    // one shape, one write) and the optimizer's _foreach_mul_ over the parameter list.
    CHECK(types.count("Mul") == 4);
    CHECK(types.count("Sub") == 1);  // mse_loss: the difference, then the mean
    CHECK(types.count("ReduceMean") == 1);
    CHECK(types.count("ElementwiseChain") == 3);  // _fused_adam_: moments and parameter
    CHECK(types.count("Expand") == 1);            // zero_grad's zero_: one element written everywhere
    for (const auto& t : w["tasks"]) {
        CHECK(t["measured_us"].get<double>() > 0);
        CHECK(t["stream"].get<int>() == 0);  // only the NCCL kernel ran on the second stream
    }
    // The fused Adam step works on every parameter: one flat tensor of all their elements.
    const int64_t B = 256, D = 512, H = 2048, n = H * D + H + D * H + D + D + D;
    for (const auto& t : w["tasks"])
        if (t["node"]["op_type"] == "ElementwiseChain") CHECK(t["node"]["inputs"][0]["shape"][0].get<int64_t>() == n);
    (void)B;
    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny") + " --mode timing --out " + d + "/out");
    INFO(p.output);
    REQUIRE(p.code == 0);
    const auto s = read_json(d + "/out/summary.json");
    CHECK(s["imported"]["skipped"].empty());  // every mapped operator plans on the chip
    std::set<std::string> sources;
    for (const auto& t : w["tasks"]) sources.insert(t["source"].get<std::string>());
    // 6 forward operators, 10 backward (each AddmmBackward0: two mm and a sum), 3 optimizer ops.
    CHECK(sources.size() == 19);
    CHECK(s["imported"]["compared"].get<size_t>() == sources.size());
}

TEST_CASE("import kineto: a PyTorch 1.8 trace without input types or scalar arguments") {
    const std::string d = temp_dir("import_pt18");
    const CliResult r = run_cli("import kineto " + data("kineto/resnet_pt18.json") + " -o " + d + "/w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("no input types") != std::string::npos);
    CHECK(r.output.find("host<->device copy") != std::string::npos);
    const auto w = read_json(d + "/w.json");
    const auto types = op_types(w);
    CHECK(types.count("Conv") == 2);
    CHECK(types.count("ConvTranspose") == 2);  // input gradients
    CHECK(types.count("MatMul") == 2);         // weight gradients
    CHECK(types.count("Relu") == 1);
    CHECK(types.count("Mul") == 1);  // threshold_backward
    // The forward convolutions' stride and padding come from their backward ops' shapes: the 7x7
    // stem maps 64x64 to 32x32 (stride 2, padding 3), the 1x1 downsample 32x32 to 16x16.
    std::vector<std::vector<int64_t>> strides, pads;
    for (const auto& t : w["tasks"]) {
        const auto& n = t["node"];
        if (n["op_type"] != "Conv" && n["op_type"] != "ConvTranspose") continue;
        strides.push_back(n["attrs"]["strides"]["ints"].get<std::vector<int64_t>>());
        pads.push_back(n["attrs"]["pads"]["ints"].get<std::vector<int64_t>>());
        const int64_t k = n["inputs"][1]["shape"][2].get<int64_t>();
        CHECK(strides.back() == std::vector<int64_t>{2, 2});
        CHECK(pads.back() == std::vector<int64_t>(4, (k - 1) / 2));
    }
    CHECK(strides.size() == 4);
    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny") + " --mode timing --out " + d + "/out");
    INFO(p.output);
    REQUIRE(p.code == 0);
    const auto s = read_json(d + "/out/summary.json");
    CHECK(s["imported"]["skipped"].empty());
    CHECK(s["imported"]["compared"].get<size_t>() == 6);
    // Without the backward, a forward convolution's geometry is unknown: skipped, saying why.
    const std::string full = read_text(data("kineto/resnet_pt18.json"));
    std::string fwd = full;
    const std::string bwd = "\"aten::cudnn_convolution_backward\"";
    for (size_t q = 0; (q = fwd.find(bwd, q)) != std::string::npos;) fwd.replace(q, bwd.size(), "\"aten::gone\"");
    std::ofstream(d + "/fwd.json") << fwd;
    const CliResult f = run_cli("import kineto " + d + "/fwd.json -o " + d + "/fwd_w.json");
    INFO(f.output);
    CHECK(f.code == 0);
    CHECK(f.output.find("stride and padding unknown") != std::string::npos);
}

TEST_CASE("import kineto: --steps keeps the first profiler steps, on every thread") {
    // Three steps of 100 us; in each, a relu on the main thread and a threshold_backward on the
    // autograd thread, each launching one kernel.
    const std::string d = temp_dir("import_steps");
    {
        std::ofstream f(d + "/t.json");
        f << "{\"traceEvents\": [\n";
        int ext = 1, corr = 100;
        for (int s = 0; s < 3; ++s) {
            const int t0 = 1000 + 100 * s;
            f << "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" << s << "\",\"pid\":1,\"tid\":1,\"ts\":" << t0
              << ",\"dur\":90,\"args\":{}},\n";
            for (int th = 1; th <= 2; ++th) {
                const char* name = th == 1 ? "aten::relu" : "aten::threshold_backward";
                const int ts = t0 + 10 * th;
                f << "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" << name << "\",\"pid\":1,\"tid\":" << th << ",\"ts\":" << ts
                  << ",\"dur\":8,\"args\":{\"External id\":" << ext << ",\"Input Dims\":[[64,64],[64,64],[]],\"Input type\":[\"float\",\"float\",\"Scalar\"]}},\n";
                f << "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":" << th << ",\"ts\":" << ts + 2
                  << ",\"dur\":3,\"args\":{\"External id\":" << corr << ",\"correlation\":" << corr << "}},\n";
                f << "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":" << ts + 20
                  << ",\"dur\":4,\"args\":{\"External id\":" << corr << ",\"correlation\":" << corr << ",\"stream\":7}},\n";
                ++ext, ++corr;
            }
        }
        f << "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":2000}\n]}\n";
    }
    const CliResult all = run_cli("import kineto " + d + "/t.json -o " + d + "/all.json");
    INFO(all.output);
    REQUIRE(all.code == 0);
    CHECK(read_json(d + "/all.json")["tasks"].size() == 6);
    CHECK(all.output.find("holds 3 profiler steps") != std::string::npos);
    for (int steps = 1; steps <= 2; ++steps) {
        const CliResult r = run_cli("import kineto " + d + "/t.json -o " + d + "/s.json --steps " + std::to_string(steps));
        INFO(r.output);
        REQUIRE(r.code == 0);
        const auto w = read_json(d + "/s.json");
        CHECK(w["tasks"].size() == static_cast<size_t>(2 * steps));
        CHECK(op_types(w).count("Relu") == static_cast<size_t>(steps));
        // Only the kept steps' kernels are measured: 2 x 4 us each.
        char measured[64];
        std::snprintf(measured, sizeof measured, "%.1f us in the trace", 8.0 * steps);
        CHECK(r.output.find(measured) != std::string::npos);
    }
    CHECK(run_cli("import kineto " + d + "/t.json -o " + d + "/s.json --steps 0").code == 2);
    CHECK(run_cli("import kineto " + d + "/t.json -o " + d + "/s.json --steps x").code == 2);
}

TEST_CASE("import kineto: malformed traces list what they skip, exit 2 only when nothing is usable") {
    const std::string d = temp_dir("import_bad");
    const std::string full = read_text(data("kineto/cnn_small.json"));
    // Truncated: the events before the cut still import.
    std::ofstream(d + "/cut.json") << full.substr(0, full.size() * 2 / 3);
    const CliResult cut = run_cli("import kineto " + d + "/cut.json -o " + d + "/cut_w.json");
    INFO(cut.output);
    CHECK(cut.code == 0);
    CHECK(cut.output.find("truncated") != std::string::npos);
    // Cut before any kernel: nothing usable.
    std::ofstream(d + "/stub.json") << full.substr(0, full.find("traceEvents") + 20);
    const CliResult stub = run_cli("import kineto " + d + "/stub.json -o " + d + "/stub_w.json");
    CHECK(stub.code == 2);
    CHECK(stub.output.find("nothing usable") != std::string::npos);
    // Unknown operators only.
    std::ofstream(d + "/unknown.json") << R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::frobnicate", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
       "args": {"External id": 7, "Input Dims": [[4, 4]], "Input type": ["float"]}},
      {"ph": "X", "cat": "kernel", "name": "frob_kernel", "pid": 0, "tid": 7, "ts": 12, "dur": 3,
       "args": {"External id": 7, "correlation": 99, "stream": 7}}]})";
    const CliResult unk = run_cli("import kineto " + d + "/unknown.json -o " + d + "/unk_w.json");
    CHECK(unk.code == 2);
    CHECK(unk.output.find("aten::frobnicate") != std::string::npos);
    CHECK(unk.output.find("no sfumato mapping") != std::string::npos);
    // An operator on an empty tensor has no work: listed, not simulated.
    std::ofstream(d + "/empty.json") << R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::sum", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
       "args": {"External id": 7, "Input Dims": [[0, 4], [], [], []], "Input type": ["float", "ScalarList", "Scalar", ""]}},
      {"ph": "X", "cat": "kernel", "name": "reduce_kernel", "pid": 0, "tid": 7, "ts": 12, "dur": 3,
       "args": {"External id": 7, "correlation": 99, "stream": 7}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
       "args": {"External id": 8, "Input Dims": [[4, 4]], "Input type": ["float"]}},
      {"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 22, "dur": 2,
       "args": {"External id": 8, "correlation": 100, "stream": 7}}]})";
    const CliResult em = run_cli("import kineto " + d + "/empty.json -o " + d + "/em_w.json");
    INFO(em.output);
    CHECK(em.code == 0);
    CHECK(em.output.find("no work to simulate") != std::string::npos);
    CHECK(read_json(d + "/em_w.json")["tasks"].size() == 1);
    // Shapes missing (recorded without record_shapes): every op is skipped, saying so.
    std::string noshape = full;
    for (size_t p = 0; (p = noshape.find("\"Input Dims\"", p)) != std::string::npos; p += 5) noshape.replace(p, 12, "\"Input_Dimz\"");
    std::ofstream(d + "/noshape.json") << noshape;
    const CliResult ns = run_cli("import kineto " + d + "/noshape.json -o " + d + "/ns_w.json");
    CHECK(ns.code == 2);
    CHECK(ns.output.find("no input shapes in the trace") != std::string::npos);
    // Not a trace at all.
    std::ofstream(d + "/junk.json") << "hello";
    CHECK(run_cli("import kineto " + d + "/junk.json -o " + d + "/j.json").code == 2);
    CHECK(run_cli("import kineto " + d + "/absent.json -o " + d + "/j.json").code == 2);
}

TEST_CASE("import op-summary: the vendor CSV maps ND operators and skips fractal formats with the reason") {
    const std::string d = temp_dir("import_csv");
    const CliResult r = run_cli("import op-summary " + data("op_summary_small.csv") + " -o " + d + "/w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto w = read_json(d + "/w.json");
    const auto types = op_types(w);
    CHECK(types.count("MatMul") == 1);
    CHECK(types.count("Add") == 1);
    CHECK(types.count("Softmax") == 1);
    CHECK(types.count("Relu") == 1);
    CHECK(types.count("Cast") == 1);
    CHECK(w["streams"].size() == 2);
    CHECK(r.output.find("TransData") != std::string::npos);
    CHECK(r.output.find("NC1HWC0") != std::string::npos);
    const CliResult p = run_cli("replay " + d + "/w.json --config " + config("tiny") + " --mode timing --out " + d + "/out");
    INFO(p.output);
    REQUIRE(p.code == 0);
    CHECK(read_json(d + "/out/summary.json")["imported"]["compared"].get<size_t>() == 5);
    std::ofstream(d + "/bad.csv") << "a,b,c\n1,2,3\n";
    CHECK(run_cli("import op-summary " + d + "/bad.csv -o " + d + "/b.json").code == 2);
}

TEST_CASE("trace summarize: per-track busy time of sfumato's own trace and of a profiler trace") {
    const std::string d = temp_dir("trace_summarize");
    REQUIRE(run_cli("kernel add --n 65536 --config " + config("tiny") + " --mode timing --trace task --out " + d + "/run").code == 0);
    const CliResult s = run_cli("trace summarize " + d + "/run/trace.json");
    INFO(s.output);
    CHECK(s.code == 0);
    CHECK(s.output.find("stream 0") != std::string::npos);
    CHECK(s.output.find("busy") != std::string::npos);
    const CliResult k = run_cli("trace summarize " + data("kineto/transformer_block.json.gz"));
    INFO(k.output);
    CHECK(k.code == 0);
    CHECK(k.output.find("tid 13") != std::string::npos);  // the second CUDA stream
    CHECK(run_cli("trace summarize " + d + "/nothing.json").code == 2);
}

TEST_CASE("trace summarize: busy time streams over many slices, overlaps counted once") {
    // Track 1: n slices of 2 us every 3 us (more than the summarizer's window), each one
    // overlapped by a 1 us slice inside it written 40 slices later (out of order within the
    // window): busy 2n. Track 2: 100 slices of 10 us end to end, one inside them, one apart:
    // busy 1000 + 5 us.
    const std::string d = temp_dir("trace_summarize_many");
    const int n = 20000;
    {
        std::ofstream f(d + "/t.json");
        f << "{\"traceEvents\": [\n";
        for (int i = 0; i < n; ++i) {
            f << "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":" << 3 * i << ",\"dur\":2},\n";
            if (i >= 40) f << "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":" << 3 * (i - 40) << ".5,\"dur\":1},\n";
        }
        for (int i = 0; i < 100; ++i) f << "{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":2,\"ts\":" << 10 * i << ",\"dur\":10},\n";
        f << "{\"ph\":\"X\",\"name\":\"in\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":500},\n";
        f << "{\"ph\":\"X\",\"name\":\"apart\",\"pid\":1,\"tid\":2,\"ts\":2000,\"dur\":5}\n]}\n";
    }
    const CliResult s = run_cli("trace summarize " + d + "/t.json");
    INFO(s.output);
    REQUIRE(s.code == 0);
    char busy1[64], busy2[64];
    std::snprintf(busy1, sizeof busy1, "%.3f", 2.0 * n);
    std::snprintf(busy2, sizeof busy2, "%.3f", 1005.0);
    CHECK(s.output.find(busy1) != std::string::npos);
    CHECK(s.output.find(busy2) != std::string::npos);
    CHECK(s.output.find("note:") == std::string::npos);  // nothing arrived too late
}
