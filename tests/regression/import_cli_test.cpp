// `sfumato import` through the CLI: the PyTorch profiler traces under tests/data/kineto
// (tests/data/kineto/make_traces.py writes them in the PyTorch 2.x format) and a vendor op
// summary import, list what they skip and why, and replay with a per-operator error report;
// malformed traces (truncated, unknown operators only, shapes missing, not a trace) never
// crash and exit 2 only when nothing usable remains.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

std::string data(const std::string& f) { return source_dir() + "/tests/data/" + f; }

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

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
    // What it could not map, with the reason.
    CHECK(r.output.find("aten::_foreach_add_") != std::string::npos);
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

TEST_CASE("import kineto: malformed traces list what they skip; exit 2 only when nothing is usable") {
    const std::string d = temp_dir("import_bad");
    const std::string full = slurp(data("kineto/cnn_small.json"));
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
    // Shapes missing (recorded without record_shapes): every op is skipped, saying so.
    std::string noshape = full;
    for (size_t p = 0; (p = noshape.find("\"Input Dims\"", p)) != std::string::npos; p += 5) noshape.replace(p, 12, "\"Input_Dimz\"");
    std::ofstream(d + "/noshape.json") << noshape;
    const CliResult ns = run_cli("import kineto " + d + "/noshape.json -o " + d + "/ns_w.json");
    CHECK(ns.code == 2);
    CHECK(ns.output.find("missing shapes") != std::string::npos);
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
