// `sfumato run`, `sfumato onnx-test` and `sfumato zoo` through the CLI, on
// models written with the zoo's protobuf builder: outputs, checks, memory and
// stream reports, mode equivalence, load-once-run-many, bad input (exit 2
// naming the culprit, nothing written).
#include <H5Cpp.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "runtime/graph/tensor_io.h"
#include "runtime/graph/zoo/builder.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

constexpr int kF = onnx::TensorProto::FLOAT;

void save(graph::zoo::Builder& b, const std::string& path) {
    std::ofstream(path, std::ios::binary) << b.model().SerializeAsString();
}

// x[1, n] -> Copy -> Copy -> y, plus a second branch x -> Copy -> z (two
// outputs).
std::string copy_model(const std::string& dir, int64_t n) {
    graph::zoo::Builder b("copies", 13, 1);
    const std::string x = b.input("x", kF, {-1, n}, {"N"});
    std::string y = b.op("Copy", {b.op("Copy", {x}, {}, "a0")}, {}, "a1");
    std::string z = b.op("Copy", {x}, {}, "b0");
    b.output(y, kF);
    b.output(z, kF);
    const std::string path = dir + "/copies.onnx";
    save(b, path);
    return path;
}

void write_tensor(const std::string& path, const ref::HostTensor& t) {
    std::ofstream(path, std::ios::binary) << graph::npy_bytes(t);
}

ref::HostTensor ramp(int64_t rows, int64_t n) {
    ref::HostTensor t(ref::ElemType::Float, {rows, n});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<double>(i % 97) * 0.25 - 3.0;
    return t;
}

bool dir_empty(const std::string& d) { return !fs::exists(d) || fs::is_empty(d); }

}  // namespace

TEST_CASE(
    "run: a model runs with --input/--expect, reports ops, memory, "
    "passes and writes its plan") {
    const std::string dir = temp_dir("graph_run");
    const std::string model = copy_model(dir, 4096);
    write_tensor(dir + "/x.npy", ramp(1, 4096));
    write_tensor(dir + "/y.npy", ramp(1, 4096));
    const std::string out = dir + "/out";
    const CliResult r = run_cli("run " + model + " --config " + config("tiny") + " --input x=" + dir +
                                "/x.npy --expect " + graph::safe_file_name("a1_out") + "=" + dir +
                                "/y.npy --out " + out + " --precision fp32 --streams 1");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("a1") != std::string::npos);  // per-op table
    const auto s = read_json(out + "/summary.json");
    CHECK(s["check"]["checked"] == true);
    CHECK(s["check"]["passed"] == true);
    REQUIRE(s["ops"].size() == 3);  // three Copy kernels, named after their nodes
    std::set<std::string> names;
    for (const auto& o : s["ops"]) names.insert(o["node"].get<std::string>());
    CHECK(names == std::set<std::string>{"a0", "a1", "b0"});
    CHECK(s["memory"]["peak_bytes"].get<uint64_t>() < s["memory"]["peak_bytes_no_reuse"].get<uint64_t>());
    CHECK(s["passes"].size() >= 8);
    CHECK(s["inference"]["iterations"] == 1);
    CHECK(s["load"]["time_us"].get<double>() >= 0);
    // Outputs and the memory plan.
    CHECK(fs::exists(out + "/outputs/a1_out.npy"));
    H5::H5File f(out + "/stats.h5", H5F_ACC_RDONLY);
    CHECK(f.nameExists("/graph/memory_plan"));
    H5::DataSet off = f.openDataSet("/graph/memory_plan/offset");
    CHECK(off.getSpace().getSimpleExtentNpoints() >= 4);
}

TEST_CASE("run: a wrong expectation fails with exit 1 and says which output") {
    const std::string dir = temp_dir("graph_run_bad_expect");
    const std::string model = copy_model(dir, 256);
    write_tensor(dir + "/x.npy", ramp(1, 256));
    ref::HostTensor wrong = ramp(1, 256);
    wrong.data[5] += 1.0;
    write_tensor(dir + "/y.npy", wrong);
    const CliResult r = run_cli("run " + model + " --config " + config("tiny") + " --input x=" + dir +
                                "/x.npy --expect a1_out=" + dir + "/y.npy --precision fp32");
    INFO(r.output);
    CHECK(r.code == 1);
    CHECK(r.output.find("a1_out") != std::string::npos);
    CHECK(r.output.find("FAILED") != std::string::npos);
}

TEST_CASE(
    "run: functional and timing modes give identical cycles, iterations "
    "reuse the load") {
    const std::string dir = temp_dir("graph_modes");
    const std::string model = copy_model(dir, 8192);
    std::vector<uint64_t> cycles;
    for (const char* mode : {"functional", "timing"}) {
        const std::string out = dir + "/" + mode;
        const CliResult r = run_cli("run " + model + " --config " + config("tiny") + " --mode " + mode +
                                    " --iterations 3 --out " + out);
        INFO(r.output);
        REQUIRE(r.code == 0);
        const auto s = read_json(out + "/summary.json");
        cycles.push_back(s["total_cycles"].get<uint64_t>());
        const auto& lat = s["inference"]["latency_us"];
        REQUIRE(lat.size() == 3);
        // Later inferences repeat the first's work: no weight upload, no plan.
        CHECK(lat[1].get<double>() == Approx(lat[2].get<double>()).epsilon(0.05));
        CHECK(s["ops"].size() == 3);  // the last inference's kernels only
    }
    CHECK(cycles[0] == cycles[1]);
}

TEST_CASE(
    "run: --batch sets the symbolic batch dimension, --streams 2 puts "
    "the branches on two streams") {
    const std::string dir = temp_dir("graph_streams");
    const std::string model = copy_model(dir, 1 << 16);
    const std::string out = dir + "/out";
    const CliResult r = run_cli("run " + model + " --config " + config("tiny") +
                                " --mode timing --batch 2 --streams 2 --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto s = read_json(out + "/summary.json");
    CHECK(s["graph"]["streams"] == 2);
    CHECK(s["graph"]["input_shapes"] == "[2,65536]");
    std::set<uint32_t> streams;
    for (const auto& o : s["ops"]) streams.insert(o["stream"].get<uint32_t>());
    CHECK(streams.size() == 2);
}

TEST_CASE("run: bad input exits 2 naming the culprit and writes nothing") {
    const std::string dir = temp_dir("graph_bad");
    const std::string model = copy_model(dir, 64);
    const std::string out = dir + "/out";
    auto expect_bad = [&](const std::string& args, const std::string& culprit) {
        const CliResult r = run_cli(args + " --config " + config("tiny") + " --out " + out);
        INFO(args << "\n" << r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(culprit) != std::string::npos);
        CHECK(dir_empty(out));
    };
    SECTION("truncated model") {
        std::ifstream in(model, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(dir + "/cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 3);
        expect_bad("run " + dir + "/cut.onnx", "cut.onnx");
    }
    SECTION("unknown operator") {
        graph::zoo::Builder b("u", 13, 1);
        b.output(b.op("Frobnicate", {b.input("x", kF, {4})}, {}, "frob_node"), kF);
        save(b, dir + "/u.onnx");
        expect_bad("run " + dir + "/u.onnx", "frob_node");
    }
    SECTION("missing initializer") {
        graph::zoo::Builder b("m", 13, 1);
        b.output(b.op("Add", {b.input("x", kF, {4}), "bias_missing"}, {}, "add_node"), kF);
        save(b, dir + "/m.onnx");
        expect_bad("run " + dir + "/m.onnx", "bias_missing");
    }
    SECTION("wrong input shape") {
        write_tensor(dir + "/x.npy", ramp(1, 63));
        expect_bad("run " + model + " --input x=" + dir + "/x.npy", "'x'");
    }
    SECTION("wrong input dtype") {
        ref::HostTensor t(ref::ElemType::Int32, {1, 64});
        write_tensor(dir + "/x.npy", t);
        expect_bad("run " + model + " --input x=" + dir + "/x.npy", "int32");
    }
    SECTION("unknown input name") { expect_bad("run " + model + " --input nope=" + dir + "/x.npy", "nope"); }
    SECTION("unknown pass") { expect_bad("run " + model + " --passes fold,fuse_all", "fuse_all"); }
}

TEST_CASE("onnx-test: PASS, FAIL and UNSUPPORTED lines and the totals") {
    const std::string dir = temp_dir("graph_onnx_test");
    auto make_case = [&](const std::string& name, const std::string& op, double delta) {
        const fs::path c = fs::path(dir) / name;
        fs::create_directories(c / "test_data_set_0");
        graph::zoo::Builder b(name, 13, 1);
        b.output(b.op(op, {b.input("x", kF, {2, 8})}), kF);
        save(b, (c / "model.onnx").string());
        ref::HostTensor x = ramp(2, 8);
        std::ofstream(c / "test_data_set_0/input_0.pb", std::ios::binary) << graph::pb_bytes(x, "x");
        x.data[3] += delta;
        std::ofstream(c / "test_data_set_0/output_0.pb", std::ios::binary) << graph::pb_bytes(x, "y");
    };
    make_case("test_copy_ok", "Copy", 0.0);
    make_case("test_copy_wrong", "Copy", 0.5);
    make_case("test_mystery", "Mystery", 0.0);
    const CliResult r = run_cli("onnx-test " + dir + " --config " + config("tiny"));
    INFO(r.output);
    CHECK(r.code == 1);
    CHECK(r.output.find("PASS test_copy_ok max_abs_err=0") != std::string::npos);
    CHECK(r.output.find("FAIL test_copy_wrong") != std::string::npos);
    CHECK(r.output.find("UNSUPPORTED test_mystery Mystery") != std::string::npos);
    CHECK(r.output.find("1 passed, 1 failed, 1 unsupported") != std::string::npos);
}

TEST_CASE("zoo: list and export") {
    const CliResult l = run_cli("zoo list");
    REQUIRE(l.code == 0);
    for (const char* m :
         {"mlp", "resnet18", "resnet50", "mobilenet_v2", "bert_base", "bert_large", "gpt2_small", "squeezenet"})
        CHECK(l.output.find(m) != std::string::npos);
    const std::string dir = temp_dir("graph_zoo");
    const CliResult e = run_cli("zoo export 'mlp?in=32&hidden=16' -o " + dir + "/mlp.onnx");
    INFO(e.output);
    CHECK(e.code == 0);
    CHECK(fs::file_size(dir + "/mlp.onnx") > 32 * 16 * 4);
    CHECK(run_cli("zoo export nosuchnet -o " + dir + "/x.onnx").code == 2);
}
