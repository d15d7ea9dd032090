// Numerics diagnostics of `sfumato run` in functional mode: a MobileNetV2 whose activations are
// below fp16's range (BN as initialised and no classifier bias, so activations scale with the
// input, and an input of order 1e-9) fails its reference check at the default mixed precision;
// the run names fp16 underflow, the first node where values were flushed to zero, and the
// --precision that avoids it, and bf16 (fp32's exponent range) and fp32 pass. The diagnostics
// change no cycle: functional and timing runs still agree.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include "runtime/graph/tensor_io.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

const char* kModel = "\"zoo:mobilenet_v2?image=32&width_pct=25&classes=10&fresh=1\"";

std::string tiny_input(const std::string& dir) {
    ref::HostTensor t(ref::ElemType::Float, {1, 3, 32, 32});
    std::mt19937 g(7);
    std::uniform_real_distribution<double> u(-1e-9, 1e-9);  // far below fp16's smallest subnormal, 6e-8
    for (double& v : t.data) v = static_cast<float>(u(g));
    const std::string path = dir + "/x.npy";
    std::ofstream(path, std::ios::binary) << graph::npy_bytes(t);
    return path;
}

}  // namespace

TEST_CASE("numerics: an fp16 underflow is found, its node named, and the precision that avoids it given") {
    const std::string d = temp_dir("numerics_underflow");
    const std::string run = std::string("run ") + kModel + " --config " + config("tiny") + " --input input=" + tiny_input(d) +
                            " --reference --trace off";
    const CliResult mixed = run_cli(run + " --out " + d + "/mixed");
    INFO(mixed.output);
    CHECK(mixed.code == 1);  // the check fails: fp16 flushed the activations to zero
    CHECK_THAT(mixed.output, Catch::Contains("numerics: flushed to zero by the narrower type first at"));
    CHECK_THAT(mixed.output, Catch::Contains("likely cause: fp16 underflow") && Catch::Contains("--precision bf16"));
    const auto s = read_json(d + "/mixed/summary.json");
    REQUIRE(s.contains("numerics"));
    CHECK(s["numerics"]["first_flush_to_zero"].is_string());
    CHECK(s["numerics"]["first_underflow"] == s["numerics"]["first_flush_to_zero"]);
    // The first node is the first in plan order with a flush: the summary's first finding.
    REQUIRE(!s["numerics"]["tensors"].empty());
    CHECK(s["numerics"]["tensors"][0]["node"] == s["numerics"]["first_flush_to_zero"]);
    CHECK(s["numerics"]["tensors"][0]["flushed_to_zero"].get<uint64_t>() > 0);
    CHECK(s["numerics"]["tensors"][0]["dtype"] == "fp16");
    CHECK_THAT(s["check"]["likely_cause"].get<std::string>(), Catch::Contains(s["numerics"]["first_flush_to_zero"].get<std::string>()));
    for (const char* p : {"bf16", "fp32"}) {
        const CliResult r = run_cli(run + " --precision " + p);
        INFO(p << "\n" << r.output);
        CHECK(r.code == 0);
        CHECK_THAT(r.output, !Catch::Contains("flushed to zero"));
    }
}

TEST_CASE("numerics: a run without findings prints none, and the watch changes no cycle") {
    const std::string d = temp_dir("numerics_clean");
    const std::string run = "run \"zoo:resnet18?image=32&width=8&classes=10\" --config " + config("tiny") + " --trace off --out " + d;
    const CliResult f = run_cli(run + "/functional --reference");
    INFO(f.output);
    REQUIRE(f.code == 0);
    CHECK_THAT(f.output, !Catch::Contains("numerics:"));
    const auto fs = read_json(d + "/functional/summary.json");
    CHECK(fs["numerics"]["first_overflow"].is_null());
    CHECK(fs["numerics"]["first_nan"].is_null());
    CHECK(fs["numerics"]["first_underflow"].is_null());
    CHECK(fs["numerics"]["tensors_checked"].get<uint64_t>() > 0);
    REQUIRE(run_cli(run + "/timing --mode timing").code == 0);
    CHECK(fs["total_cycles"] == read_json(d + "/timing/summary.json")["total_cycles"]);
}
