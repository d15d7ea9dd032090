// Numerics diagnostics of a functional graph run, as the vendor's overflow detection and
// precision comparison give them on hardware: for every step's output tensor, how many values
// overflowed to inf, became NaN, or were flushed to zero by the narrower type the tensor is
// stored in, and the first step (in plan order) where each happened. The device's tensors come
// from Executor::watch_steps; "flushed" needs the host reference's value of the same tensor
// (RefOptions::on_value, with --reference): 0 on the device where the reference is nonzero and
// below the storage type's smallest normal. Overflow likewise needs the reference (inf where it is
// finite); without it an inf or NaN is counted where it first appears. Simplified: tensors in
// fractal formats or with strides are not read, and a fused step is judged by its final outputs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/graph/plan.h"

namespace sfumato::graph {

struct TensorNumerics {
    size_t step = 0;  // plan step; a graph input has node "graph input 'NAME'" and op "upload"
    std::string node, op_type, tensor, dtype;  // dtype: the device storage type
    uint64_t values = 0;
    uint64_t inf = 0, nan = 0;   // on the device
    uint64_t overflow = 0;       // inf on the device where the reference is finite
    uint64_t flushed = 0;        // 0 on the device, nonzero below the type's smallest normal in the reference
    bool compared = false;       // a reference of this tensor was available
};

class NumericsWatch {
public:
    explicit NumericsWatch(const Plan& plan);
    // The host reference's value of a graph tensor (only those the plan computes are kept, as
    // floats).
    void add_reference(const std::string& name, const ref::HostTensor& t);
    // A step's outputs as the device holds them (Executor::watch_steps).
    void observe(size_t step, const std::vector<ref::HostTensor>& outs);
    // The graph inputs as given, before the upload stores them in their device types (a value
    // too small for the storage type is flushed there, before any step).
    void observe_inputs(const std::vector<ref::HostTensor>& inputs);

    // Tensors with any inf, NaN, overflow or flush, in plan order.
    std::vector<TensorNumerics> findings() const;
    size_t tensors_checked() const { return m_seen.size() + m_inputs.size(); }
    // The first tensor (plan order) with each kind of event; null when none.
    const TensorNumerics* first_overflow() const;
    const TensorNumerics* first_nan() const;
    const TensorNumerics* first_flush() const;
    // The first tensor with at least 1 % of its values flushed: a few values of a tensor that
    // the reference has just above 0 (a near-cancellation) are flushed in any fp16 run; an
    // underflow that explains a failed check flushes a good part of a tensor.
    const TensorNumerics* first_underflow() const;
    // One sentence: the likely cause of a failed check under `precision` and the --precision
    // that avoids it.
    std::string likely_cause(const std::string& precision) const;

private:
    const Plan& m_plan;
    std::map<std::string, std::vector<float>> m_ref;   // by tensor name
    std::map<size_t, std::vector<TensorNumerics>> m_seen;  // by step
    std::vector<TensorNumerics> m_inputs;                  // before every step
    const TensorNumerics* first(uint64_t TensorNumerics::*field) const;
};

}  // namespace sfumato::graph
