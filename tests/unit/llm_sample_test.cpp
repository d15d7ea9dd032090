// Sample (runtime/ops/llm/sample.h) as a graph-node operator on the checking sink (tests/unit/
// norm_rig.h) against the host reference, which must agree id for id: greedy and top-k with
// temperature, logits with many ties (integers in a small range: the lowest index must win),
// rows longer than one chunk (the tiny UB), every float type; and the draw really samples: with
// a high temperature over the top 8, rows of identical logits do not all pick the argmax.
#include <catch2/catch.hpp>
#include <set>

#include "norm_rig.h"
#include "runtime/ref/host_tensor.h"

using namespace sfumato;
using namespace sfumato::ops;
using namespace sfumato::ops::normtest;
using ref::ElemType;

namespace {

NodeDesc sample_node(int64_t B, int64_t V, ElemType t, int64_t k, double temp, int64_t seed) {
    NodeDesc n;
    n.name = "sample";
    n.op_type = "Sample";
    n.attrs.set_owner("sample");
    n.attrs.set("top_k", ref::Attr::of_int(k));
    n.attrs.set("temperature", ref::Attr::of_float(temp));
    n.attrs.set("seed", ref::Attr::of_int(seed));
    n.inputs = {make_tensor({B, V}, t)};
    return n;
}

std::string sample_case(int64_t B, int64_t V, ElemType t, int64_t k, double temp, const DeviceInfo& dev,
                        bool ties) {
    std::mt19937 rng(static_cast<uint32_t>(B * 31 + V + k));
    const ref::HostTensor x =
        ties ? random_tensor({B, V}, t, rng, -3, 3) : random_tensor({B, V}, t, rng, -8, 8);
    ref::HostTensor xi = x;
    if (ties)
        for (double& v : xi.data) v = std::round(v);  // few distinct values: ties everywhere
    return check_op(sample_node(B, V, t, k, temp, 7), {xi}, dev, {0, 0});
}

}  // namespace

TEST_CASE("Sample: greedy and top-k draws equal the reference id for id", "[llm][sample]") {
    const DeviceInfo tiny = device(4, 32 << 10), big = device(48, 192 << 10);
    for (ElemType t : {ElemType::Float16, ElemType::Bfloat16, ElemType::Float}) {
        for (int64_t k : {1, 5, 40}) {
            INFO(ref::elem_type_name(t) << " top_k " << k);
            CHECK(sample_case(6, 1000, t, k, 0.8, tiny, false) == "");
            CHECK(sample_case(5, 3000, t, k, 1.5, tiny, true) == "");
        }
    }
    CHECK(sample_case(4, 40000, ElemType::Float16, 1, 1.0, big, true) == "");
    CHECK(sample_case(3, 32000, ElemType::Bfloat16, 50, 0.7, big, false) == "");
    CHECK(sample_case(2, 7, ElemType::Float16, 20, 1.0, tiny, false) == "");  // top_k > V
}

TEST_CASE("Sample: top-k with a high temperature spreads the draws over the candidates", "[llm][sample]") {
    const DeviceInfo tiny = device(4, 32 << 10);
    const int64_t B = 64, V = 200;
    ref::HostTensor x(ElemType::Float16, {B, V});
    for (int64_t b = 0; b < B; ++b)
        for (int64_t v = 0; v < V; ++v)
            x.data[static_cast<size_t>(b * V + v)] = v % 17 == 3 ? 2.0 : (v % 7) * 0.125;
    RunResult r = run_op(sample_node(B, V, ElemType::Float16, 8, 4.0, 11), {x}, tiny);
    REQUIRE(r.error == "");
    std::set<int64_t> ids;
    for (double v : r.out[0].data) ids.insert(static_cast<int64_t>(v));
    CHECK(ids.size() >= 4);  // 64 draws over 8 near-equal candidates
    r = run_op(sample_node(B, V, ElemType::Float16, 1, 4.0, 11), {x}, tiny);
    REQUIRE(r.error == "");
    for (double v : r.out[0].data) CHECK(v == 3.0);  // greedy: the first of the tied maxima
}
