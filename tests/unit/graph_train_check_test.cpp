// The functional check's backward takes its decisions from the device's forward
// (graph::host_gradients with device_forward; runtime/graph/train_step.h), on the host: a ReLU
// whose input is exactly 0 in the host's double forward stops every gradient; given device values
// that are slightly positive in some elements (as a device's own rounding can make them), the
// host's backward passes the gradient in exactly those elements, while every value it multiplies
// (here the ReLU's output in the classifier's weight gradient) stays the host's.
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime/graph/onnx_import.h"
#include "runtime/graph/train_step.h"
#include "runtime/graph/zoo/builder.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

DeviceInfo check_test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024, d.l1_bytes = 512 * 1024;
    d.l0a_bytes = d.l0b_bytes = 64 * 1024, d.l0c_bytes = 128 * 1024;
    d.gm_bytes = 1ull << 30;
    d.functional = true;
    return d;
}

}  // namespace

TEST_CASE("train check: a ReLU's mask follows the device's forward values and every value stays the host's") {
    // y = fc(Relu(x w - x)), w = 1: the ReLU's input is exactly 0 on the host.
    const int64_t k = 8, batch = 2;
    zoo::Builder b("mask", 13, 3);
    const std::string x = b.input("input", zoo::kFloat, {-1, k}, {"N"});
    const std::string w = b.constant("w", {k}, std::vector<float>(static_cast<size_t>(k), 1.0f));
    const std::string r = b.op("Relu", {b.op("Sub", {b.op("Mul", {x, w}), x})});
    b.output(b.op("Gemm", {r, b.weight("fc.weight", {3, k}), b.weight("fc.bias", {3})}, {zoo::ai("transB", 1)}, "fc"),
             zoo::kFloat);
    TrainSetup ts;
    ts.copt.precision = Precision::FP32;
    ts.compile(import_model(b.model(), "mask"), batch, check_test_device());
    ts.make_data(1);
    int relu = -1;
    for (const PlanStep& st : ts.plan->steps)
        if (st.op_type == "Relu") relu = st.out[0];
    REQUIRE(relu >= 0);
    // The check reads the ReLU's output from the device for its mask.
    CHECK(decision_sources(*ts.plan, ts.tp) == std::set<int>{relu});
    // Device values: 1e-6 in the even columns (passed), 0 in the odd ones.
    ref::HostTensor dev(ref::ElemType::Float, {batch, k});
    for (int64_t n = 0; n < batch; ++n)
        for (int64_t j = 0; j < k; j += 2) dev.data[static_cast<size_t>(n * k + j)] = 1e-6;
    const std::map<int, ref::HostTensor> device = {{relu, dev}};
    const auto own = host_gradients(ts, 0), seen = host_gradients(ts, 0, nullptr, 1, &device);
    auto grad_of = [&](const std::map<int, ref::HostTensor>& g, const std::string& name) {
        for (const auto& [id, t] : g)
            if (ts.plan->tensors[static_cast<size_t>(ts.tp.tensors[static_cast<size_t>(id)].plan)].name == name)
                return t.data;
        FAIL("no gradient of " << name);
        return std::vector<double>{};
    };
    const std::vector<double> w_own = grad_of(own, "w"), w_seen = grad_of(seen, "w");
    REQUIRE(w_seen.size() == static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
        INFO("column " << j);
        CHECK(w_own[static_cast<size_t>(j)] == 0.0);               // the host's own mask stops all
        CHECK((w_seen[static_cast<size_t>(j)] != 0.0) == (j % 2 == 0));  // the device's passes the even columns
    }
    // The classifier's weight gradient multiplies the ReLU's output: the host's (0), not 1e-6.
    for (double v : grad_of(seen, "fc.weight")) CHECK(v == 0.0);
    CHECK(grad_of(seen, "fc.bias") == grad_of(own, "fc.bias"));
}
