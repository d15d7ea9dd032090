// Whole networks through `sfumato run`: the networks of tests/data/torch (exported by PyTorch's
// own exporter, tests/data/torch/generate.py) with their --input/--expect files; small
// variants of every zoo model against the host reference interpreter on every preset; what
// fusion buys against `--passes none`; SqueezeNet's fire modules overlapping on two streams in
// the trace. The full-size zoo figures are bench/graph_zoo.sh's.
#include <H5Cpp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "runtime/graph/tensor_io.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> torch_cases() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(source_dir() + "/tests/data/torch"))
        if (fs::exists(e.path() / "model.onnx")) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

double h5_scalar(const std::string& file, const std::string& path) {
    H5::H5File f(file, H5F_ACC_RDONLY);
    H5::DataSet d = f.openDataSet(path);
    double v = 0;
    d.read(&v, H5::PredType::NATIVE_DOUBLE);
    return v;
}

// Kernels of the graph-op tracks of trace.json: per stream, [start, end) intervals.
std::map<std::string, std::vector<std::pair<double, double>>> graph_op_intervals(const std::string& path) {
    const auto t = read_json(path);
    const auto& ev = t.is_object() ? t["traceEvents"] : t;
    std::map<std::pair<int, int>, std::string> track;
    for (const auto& e : ev)
        if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
            const std::string n = e["args"]["name"].get<std::string>();
            if (n.rfind("graph ops", 0) == 0) track[{e["pid"].get<int>(), e["tid"].get<int>()}] = n;
        }
    std::map<std::string, std::vector<std::pair<double, double>>> out;
    for (const auto& e : ev) {
        if (e.value("ph", "") != "X") continue;
        auto it = track.find({e["pid"].get<int>(), e["tid"].get<int>()});
        if (it == track.end()) continue;
        const double ts = e["ts"].get<double>();
        out[it->second].push_back({ts, ts + e["dur"].get<double>()});
    }
    return out;
}

}  // namespace

TEST_CASE("pytorch exports: every network of tests/data/torch matches PyTorch's output with --input/--expect") {
    const auto cases = torch_cases();
    REQUIRE(cases.size() >= 10);
    for (const fs::path& c : cases) {
        const fs::path set = c / "test_data_set_0";
        std::string args = "run " + (c / "model.onnx").string() + " --config " + config("tiny");
        for (int i = 0; fs::exists(set / ("input_" + std::to_string(i) + ".pb")); ++i) {
            const std::string f = (set / ("input_" + std::to_string(i) + ".pb")).string();
            std::string name;
            graph::read_pb(f, &name);
            args += " --input " + name + "=" + f;
        }
        std::string out_name;
        graph::read_pb((set / "output_0.pb").string(), &out_name);
        args += " --expect " + out_name + "=" + (set / "output_0.pb").string();
        // The default precision (mixed, fp16 storage) as a user runs it.
        const CliResult r = run_cli(args);
        INFO(c.filename().string() << "\n" << r.output);
        CHECK(r.code == 0);
        CHECK(r.output.find("vs expect: passed") != std::string::npos);
        // Nothing is computed on the host: the network runs as kernels.
        CHECK(r.output.find("total: 0 kernels") == std::string::npos);
    }
}

TEST_CASE("pytorch exports: onnx-test runs the same cases in fp32 and every one passes") {
    const auto cases = torch_cases();
    const CliResult r = run_cli("onnx-test " + source_dir() + "/tests/data/torch --config " + config("tiny"));
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find(std::to_string(cases.size()) + " passed, 0 failed, 0 unsupported") != std::string::npos);
}

TEST_CASE("zoo: small variants of every zoo model match the reference interpreter on every preset") {
    const std::vector<std::string> models = {
        "mlp?in=64&hidden=32",
        "resnet18?image=32&classes=10&width=16",
        "resnet50?image=32&classes=10&width=8",
        "mobilenet_v2?image=32&classes=10&width_pct=50",
        "squeezenet?image=48&classes=10",
        "bert_base?layers=2&hidden=64&heads=2&seq=16&vocab=100",
        "gpt2_small?layers=2&hidden=64&heads=2&seq=16&vocab=100"};
    for (const char* preset : {"tiny", "ascend910-like", "ascend910b-like"})
        for (const auto& m : models) {
            const std::string out = temp_dir("graph_zoo_ref") + "/out";
            const CliResult r =
                run_cli("run 'zoo:" + m + "' --config " + config(preset) + " --reference --out " + out);
            INFO(preset << " " << m << "\n" << r.output);
            REQUIRE(r.code == 0);
            const auto s = read_json(out + "/summary.json");
            CHECK(s["check"]["checked"] == true);
            CHECK(s["check"]["passed"] == true);
            CHECK(s["graph"]["kernels"].get<int>() > 0);
        }
}

TEST_CASE("fusion: against --passes none, fewer kernels, less memory traffic, less time, patterns named") {
    const std::string dir = temp_dir("graph_fusion");
    const std::string model = "'zoo:resnet18?image=32&classes=10&width=16'";
    std::map<std::string, nlohmann::json> s;
    std::map<std::string, double> gm;  // the kernels' global-memory traffic (requests into L2 / HBM)
    for (const char* passes : {"all", "none"}) {
        const std::string out = dir + "/" + passes;
        const CliResult r = run_cli("run " + model + " --config " + config("tiny") +
                                    " --mode timing --trace op --passes " + passes + " --out " + out);
        INFO(passes << "\n" << r.output);
        REQUIRE(r.code == 0);
        s[passes] = read_json(out + "/summary.json");
        // MTE2 reads, MTE3 and FixPipe writes; the weight upload (SDMA) is load, not inference.
        for (const char* port : {"mte2", "mte3", "fix"})
            gm[passes] += h5_scalar(out + "/stats.h5", std::string("/stats/chip/mem/l2/") + port + "/bytes");
        if (std::string(passes) == "all") {
            CHECK(r.output.find("Conv+BatchNormalization+Relu") != std::string::npos);
            CHECK(r.output.find("Add+Relu") != std::string::npos);
        }
    }
    CHECK(s["all"]["graph"]["kernels"].get<int>() < s["none"]["graph"]["kernels"].get<int>());
    CHECK(gm["all"] < gm["none"]);
    CHECK(s["all"]["inference"]["mean_latency_us"].get<double>() <
          s["none"]["inference"]["mean_latency_us"].get<double>());
    // summary.json names what fired.
    bool conv_bn = false;
    for (const auto& p : s["all"]["passes"])
        if (p["name"] == "fuse_conv")
            for (const auto& [k, v] : p["patterns"].items()) conv_bn = conv_bn || k == "Conv+BatchNormalization+Relu";
    CHECK(conv_bn);
}

TEST_CASE("streams: SqueezeNet's fire modules run on two streams whose kernels overlap in the trace") {
    const std::string out = temp_dir("graph_squeeze_streams") + "/out";
    const CliResult r = run_cli("run 'zoo:squeezenet?image=64&classes=10' --config " + config("tiny") +
                                " --mode timing --trace op --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["graph"]["streams"].get<int>() >= 2);
    CHECK(s["graph"]["events"].get<int>() > 0);
    const auto iv = graph_op_intervals(out + "/trace.json");
    REQUIRE(iv.size() >= 2);
    // Some kernel of one stream runs while a kernel of another does.
    double overlap = 0;
    for (auto a = iv.begin(); a != iv.end(); ++a)
        for (auto b = std::next(a); b != iv.end(); ++b)
            for (const auto& x : a->second)
                for (const auto& y : b->second) overlap += std::max(0.0, std::min(x.second, y.second) -
                                                                             std::max(x.first, y.first));
    CHECK(overlap > 0);
}

TEST_CASE("ascend910-like: ResNet-50 at 64x64 runs through (a released blocked L2 miss used to drop its MSHR: deadlock)") {
    // The smallest whole-network case seen to deadlock (exit 4) before the L2 passed a freed MSHR
    // on from a released miss that no longer needed it; the exact sequence is
    // tests/component/mem_mshr_test.cpp.
    const std::string out = temp_dir("graph_910_resnet50") + "/out";
    const CliResult r = run_cli("run 'zoo:resnet50?image=64' --config " + config("ascend910-like") +
                                " --mode timing --trace off --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["graph"]["kernels"].get<int>() > 0);
    CHECK(s["inference"]["mean_latency_us"].get<double>() > 0);
}
