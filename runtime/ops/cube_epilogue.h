// The vector epilogue of cube operators, for what the FixPipe cannot do on the
// way out of L0C: a full (M x N) Gemm addend beta * C and the fused activations
// other than ReLU (LeakyRelu, Sigmoid, Tanh, Gelu, Clip, HardSigmoid,
// HardSwish). It runs as a second kernel on the vector cores over the cube
// kernel's fp32 result: y = act(x [+ beta * c]) in fp32, cast once to the
// output type. (On split parts the AIC cannot reach UB, so a fused epilogue
// would pass through GM anyway; the result it reads is still in L2.) Functions
// are composed from vector instructions: sigmoid = 1 / (1 + exp(-x)); tanh = 1
// - 2 / (1 + exp(2x)); gelu = (x + |x| * erf(|x| / sqrt 2)) / 2 with erf(z) = 1
// - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-z^2), t = 1 / (1 + p z)
// (Abramowitz & Stegun 7.1.26, |error| <= 1.5e-7). It also reduces the partial
// sums of a two-pass split-K matmul (parts), in a fixed order.
#pragma once
#include <string>

#include "runtime/ref/activation.h"
#include "sim/device_if.h"

namespace sfumato::ops {

struct EpiloguePlan {
    uint64_t x = 0;  // fp32 input (the cube's result), n elements
    uint64_t y = 0;  // output, n elements of y_dtype (may equal x for fp32)
    isa::DType y_dtype = isa::DType::FP32;
    uint64_t n = 0;
    uint64_t c = 0;  // optional addend, n elements of c_dtype
    isa::DType c_dtype = isa::DType::FP32;
    bool has_c = false;
    double beta = 1.0;
    ref::Activation act;
    // Two-pass split-K: x holds `parts` fp32 slices part_stride elements apart; the epilogue adds
    // them in part order ((x0 + x1) + x2 ...) before the rest, so the sum has the same bits
    // whichever cores computed the slices and in whatever order.
    uint32_t parts = 1;
    uint64_t part_stride = 0;
};

// The epilogue as a vector kernel over all vector cores (tiles sized to the
// device's UB).
KernelDesc epilogue_kernel(const EpiloguePlan& p, const DeviceInfo& dev, const std::string& name,
                           const std::string& type);
// Whether the FixPipe alone serves the activation (none or ReLU).
inline bool fixpipe_activation(const ref::Activation& a) { return a.none() || a.kind == "Relu"; }

}  // namespace sfumato::ops
