// The whole-network check's rounding budget (graph::plan_error_sigma, docs/graph.md "Checking
// results"): every rounding on an output's path adds u^2 / 3 to its variance (u of the type it
// rounds to), results that are one of their inputs add nothing, and the Cube's fp32
// accumulator adds ceil(K / 16) fp32 roundings. Expectations from those terms, not fitted.
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/graph/onnx_import.h"
#include "runtime/graph/plan.h"
#include "runtime/graph/tolerance.h"
#include "runtime/graph/zoo/builder.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

constexpr int kF = onnx::TensorProto::FLOAT;

DeviceInfo test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2;
    d.vector_cores = 4;
    d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024;
    d.l1_bytes = 512 * 1024;
    d.l0a_bytes = d.l0b_bytes = 64 * 1024;
    d.l0c_bytes = 128 * 1024;
    d.functional = true;
    return d;
}

// x -> n x (op) -> output, unfused (no passes but precision), the output's sigma.
double chain_sigma(const std::string& op, int n, Precision prec) {
    zoo::Builder b("chain", 13, 1);
    std::string x = b.input("x", kF, {64, 64});
    const std::string c = b.scalar("c", 0.5f);
    for (int i = 0; i < n; ++i) x = op == "Relu" ? b.op("Relu", {x}) : b.op(op, {x, c});
    b.output(x, kF);
    const Graph g = import_onnx_bytes(b.model().SerializeAsString(), "chain");
    CompileOptions opt;
    opt.passes.clear();
    opt.precision = prec;
    opt.streams = 1;
    auto p = compile(g, {{64, 64}}, test_device(), opt);
    return plan_error_sigma(*p).at(static_cast<size_t>(p->outputs.at(0)));
}

double var_of(double sigma) { return sigma * sigma * 3.0; }

}  // namespace

TEST_CASE("rounding budget: each stored result adds u^2/3, in the u of the type it is stored in") {
    const double u16 = unit_roundoff(isa::DType::FP16), u32 = unit_roundoff(isa::DType::FP32);
    CHECK(u16 == std::ldexp(1.0, -11));
    CHECK(u32 == std::ldexp(1.0, -24));
    // Four more Adds: four more results rounded (whatever casts the precision pass put at the
    // ends); in fp16 each also reads the constant held in fp16 (a rounding, counted per use).
    CHECK(var_of(chain_sigma("Add", 8, Precision::FP16)) - var_of(chain_sigma("Add", 4, Precision::FP16)) ==
          Approx(8 * u16 * u16).epsilon(1e-9));
    CHECK(var_of(chain_sigma("Mul", 8, Precision::FP32)) - var_of(chain_sigma("Mul", 4, Precision::FP32)) ==
          Approx(4 * u32 * u32).epsilon(1e-9));
    // A random walk: 16 roundings are 2x the error of 4, not 4x.
    const double s4 = chain_sigma("Add", 4, Precision::FP32), s16 = chain_sigma("Add", 16, Precision::FP32);
    CHECK(s16 / s4 == Approx(2.0).epsilon(1e-9));
}

TEST_CASE("rounding budget: Relu moves values and rounds nothing") {
    CHECK(chain_sigma("Relu", 6, Precision::FP32) == 0.0);
    CHECK(chain_sigma("Relu", 6, Precision::FP16) == chain_sigma("Relu", 1, Precision::FP16));
}

TEST_CASE("rounding budget: a MatMul adds its fp16 operand roundings and ceil(K/16) fp32 accumulations") {
    const double u16 = unit_roundoff(isa::DType::FP16), u32 = unit_roundoff(isa::DType::FP32);
    for (int64_t k : {16, 100, 4096}) {
        zoo::Builder b("mm", 13, 1);
        const std::string x = b.input("x", kF, {32, k});
        const std::string w = b.weight("w", {k, 48});
        b.output(b.op("MatMul", {x, w}), kF);
        const Graph g = import_onnx_bytes(b.model().SerializeAsString(), "mm");
        CompileOptions opt;
        opt.passes.clear();
        opt.precision = Precision::FP32;
        opt.streams = 1;
        auto p = compile(g, {{32, k}}, test_device(), opt);
        REQUIRE(p->steps.size() == 1);
        const double v = var_of(plan_error_sigma(*p).at(static_cast<size_t>(p->outputs.at(0))));
        // fp32 graph: both operands rounded to fp16 for the Cube, ceil(k/16) accumulator
        // roundings and the fp32 result.
        INFO("k " << k);
        CHECK(v == Approx(2 * u16 * u16 + (std::ceil(k / 16.0) + 1) * u32 * u32).epsilon(1e-9));
    }
}

TEST_CASE("network tolerance: 6 sigma of the output's rms, and the output type's u relative") {
    const Tol t = network_tolerance(1e-3, 2.0, isa::DType::FP16);
    CHECK(t.atol == Approx(kNetworkSigmas * 1e-3 * 2.0));
    CHECK(t.rtol == std::ldexp(1.0, -11));
}
