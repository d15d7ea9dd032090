// The standalone face of a graph-node operator, as `sfumato kernel OP` runs it: the inputs are
// allocated and uploaded with random values from a fixed seed (or a per-input generator), the
// node's kernels launch on them, and in functional mode every output is compared with the host
// reference (runtime/ref) within a tolerance: |got - ref| <= atol + rtol * |ref|, ref rounded
// to the output type first, NaN matching NaN and infinities matching exactly.
#pragma once
#include <functional>
#include <memory>
#include <random>

#include "runtime/ops/i_op.h"
#include "runtime/ops/node_op.h"

namespace sfumato::ops {

struct Tolerance {
    double atol = 0.0;
    double rtol = 0.0;
};

// Fills one input's values (already sized to its shape); values are rounded to the input's
// element type afterwards.
using InputGen = std::function<void(ref::HostTensor& t, std::mt19937& rng)>;
InputGen uniform_input(double lo, double hi);
InputGen integer_input(int64_t lo, int64_t hi);  // inclusive

struct StandaloneSpec {
    NodeDesc node;                // inputs: shapes and element types (addresses are set here)
    std::vector<InputGen> gens;   // per input; missing or null = uniform(-4, 4) (floats) / [0, 8) ints
    Tolerance tol;
    uint32_t seed = 12345;
};

std::unique_ptr<IOp> make_standalone(StandaloneSpec spec, const DeviceInfo& dev);

// Compares got with ref (same shape). Returns a CheckResult with checked = true.
CheckResult compare_tensors(const ref::HostTensor& got, const ref::HostTensor& ref, const Tolerance& tol);

}  // namespace sfumato::ops
