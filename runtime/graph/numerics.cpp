// Numerics diagnostics (see numerics.h).
#include "runtime/graph/numerics.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace sfumato::graph {

namespace {

// Smallest positive normal of a storage type: a nonzero value below it loses precision and,
// below half the smallest subnormal, becomes 0.
double min_normal(isa::DType d) {
    switch (d) {
        case isa::DType::FP16: return 0x1p-14;
        case isa::DType::BF16:
        case isa::DType::FP32: return 0x1p-126;
        default: return 0.0;
    }
}

bool is_narrow_float(isa::DType d) { return d == isa::DType::FP16 || d == isa::DType::BF16; }

}  // namespace

NumericsWatch::NumericsWatch(const Plan& plan) : m_plan(plan) {}

void NumericsWatch::add_reference(const std::string& name, const ref::HostTensor& t) {
    if (!ref::is_float(t.type)) return;
    bool used = false;
    for (const PlanTensor& p : m_plan.tensors)
        if (p.name == name && p.kind != PlanTensor::Kind::Weight) used = true;
    if (!used) return;
    std::vector<float>& v = m_ref[name];
    v.resize(t.data.size());
    for (size_t i = 0; i < t.data.size(); ++i) v[i] = static_cast<float>(t.data[i]);
}

void NumericsWatch::observe(size_t step, const std::vector<ref::HostTensor>& outs) {
    if (m_seen.count(step)) return;  // a later inference computes the same values
    const PlanStep& st = m_plan.steps.at(step);
    std::vector<TensorNumerics>& row = m_seen[step];
    for (size_t o = 0; o < outs.size() && o < st.out.size(); ++o) {
        if (st.out[o] < 0 || outs[o].data.empty() || !ref::is_float(outs[o].type)) continue;
        const PlanTensor& pt = m_plan.tensors[static_cast<size_t>(st.out[o])];
        TensorNumerics n;
        n.step = step;
        n.node = st.name;
        n.op_type = st.op_type;
        n.tensor = pt.name;
        n.dtype = isa::dtype_name(pt.ref.dtype);
        n.values = outs[o].data.size();
        // The reference of this tensor; a Cast's output holds its input's values.
        const std::vector<float>* want = nullptr;
        if (auto it = m_ref.find(pt.name); it != m_ref.end()) want = &it->second;
        if (!want && st.op_type == "Cast" && !st.in.empty() && st.in[0] >= 0)
            if (auto it = m_ref.find(m_plan.tensors[static_cast<size_t>(st.in[0])].name); it != m_ref.end()) want = &it->second;
        if (want && want->size() != n.values) want = nullptr;
        n.compared = want != nullptr;
        const double tiny = is_narrow_float(pt.ref.dtype) ? min_normal(pt.ref.dtype) : 0.0;
        for (size_t i = 0; i < n.values; ++i) {
            const double g = outs[o].data[i];
            const double w = want ? (*want)[i] : 0.0;
            if (std::isnan(g)) {
                ++n.nan;
                continue;
            }
            if (std::isinf(g)) {
                ++n.inf;
                if (!want || std::isfinite(w)) ++n.overflow;
                continue;
            }
            if (want && g == 0.0 && w != 0.0 && std::fabs(w) < tiny) ++n.flushed;
        }
        if (want)  // a NaN the reference has too is not the device's
            for (size_t i = 0; i < n.values; ++i)
                if (std::isnan(outs[o].data[i]) && std::isnan((*want)[i])) --n.nan;
        row.push_back(n);
    }
}

void NumericsWatch::observe_inputs(const std::vector<ref::HostTensor>& inputs) {
    for (size_t i = 0; i < inputs.size() && i < m_plan.inputs.size(); ++i) {
        const PlanTensor& pt = m_plan.tensors[static_cast<size_t>(m_plan.inputs[i])];
        if (!ref::is_float(inputs[i].type) || !is_narrow_float(pt.ref.dtype)) continue;
        TensorNumerics n;
        n.node = "graph input '" + pt.name + "'";
        n.op_type = "upload";
        n.tensor = pt.name;
        n.dtype = isa::dtype_name(pt.ref.dtype);
        n.values = inputs[i].data.size();
        n.compared = true;
        const double tiny = min_normal(pt.ref.dtype);
        ref::HostTensor t = inputs[i];
        const std::vector<uint8_t> b = ref::to_device_bytes(t, pt.ref.dtype);
        const ref::HostTensor stored = ref::from_device_bytes(b.data(), pt.ref.dtype, t.type, t.shape);
        for (size_t k = 0; k < n.values; ++k) {
            const double w = inputs[i].data[k], g = stored.data[k];
            if (std::isinf(g) && std::isfinite(w)) ++n.overflow, ++n.inf;
            if (g == 0.0 && w != 0.0 && std::fabs(w) < tiny) ++n.flushed;
        }
        m_inputs.push_back(n);
    }
}

std::vector<TensorNumerics> NumericsWatch::findings() const {
    std::vector<TensorNumerics> f;
    for (const TensorNumerics& n : m_inputs)
        if (n.inf || n.nan || n.overflow || n.flushed) f.push_back(n);
    for (const auto& [step, row] : m_seen)
        for (const TensorNumerics& n : row)
            if (n.inf || n.nan || n.overflow || n.flushed) f.push_back(n);
    return f;
}

const TensorNumerics* NumericsWatch::first(uint64_t TensorNumerics::*field) const {
    for (const TensorNumerics& n : m_inputs)
        if (n.*field) return &n;
    for (const auto& [step, row] : m_seen)  // std::map: plan order
        for (const TensorNumerics& n : row)
            if (n.*field) return &n;
    return nullptr;
}

const TensorNumerics* NumericsWatch::first_overflow() const { return first(&TensorNumerics::overflow); }
const TensorNumerics* NumericsWatch::first_nan() const { return first(&TensorNumerics::nan); }
const TensorNumerics* NumericsWatch::first_flush() const { return first(&TensorNumerics::flushed); }

const TensorNumerics* NumericsWatch::first_underflow() const {
    auto big = [](const TensorNumerics& n) { return n.flushed > 0 && n.flushed * 100 >= n.values; };
    for (const TensorNumerics& n : m_inputs)
        if (big(n)) return &n;
    for (const auto& [step, row] : m_seen)
        for (const TensorNumerics& n : row)
            if (big(n)) return &n;
    return nullptr;
}

std::string NumericsWatch::likely_cause(const std::string& precision) const {
    char buf[512];
    auto where = [](const TensorNumerics& n, uint64_t count) {
        char w[256];
        std::snprintf(w, sizeof w, "%s%s (%s), tensor %s in %s: %llu of %llu values", n.op_type == "upload" ? "" : "node ",
                      n.node.c_str(), n.op_type.c_str(), n.tensor.c_str(), n.dtype.c_str(), static_cast<unsigned long long>(count),
                      static_cast<unsigned long long>(n.values));
        return std::string(w);
    };
    auto avoid = [](const std::string& dtype) {
        return dtype == "fp16" ? std::string("--precision bf16 (fp32's exponent range) or --precision fp32 avoids it")
                               : std::string("--precision fp32 avoids it");
    };
    if (const TensorNumerics* n = first_underflow()) {
        std::snprintf(buf, sizeof buf, "%s underflow: values below %s's smallest normal (%.3g) were flushed to 0, first at %s; %s",
                      n->dtype.c_str(), n->dtype.c_str(), min_normal(n->dtype == "fp16" ? isa::DType::FP16 : isa::DType::BF16),
                      where(*n, n->flushed).c_str(), avoid(n->dtype).c_str());
        return buf;
    }
    if (const TensorNumerics* n = first_overflow()) {
        std::snprintf(buf, sizeof buf, "%s overflow: values beyond its range became inf, first at %s; %s", n->dtype.c_str(),
                      where(*n, n->overflow).c_str(), avoid(n->dtype).c_str());
        return buf;
    }
    if (const TensorNumerics* n = first_nan()) {
        std::snprintf(buf, sizeof buf, "NaN first at %s (an inf minus an inf, 0 x inf, or an invalid input upstream)",
                      where(*n, n->nan).c_str());
        return buf;
    }
    if (precision == "fp32")
        return "no overflow, NaN or underflow found in " + std::to_string(tensors_checked()) +
               " steps' outputs: the difference is not a storage-precision effect";
    return "no overflow, NaN or underflow found in " + std::to_string(tensors_checked()) + " steps' outputs: the rounding of " +
           precision + " storage accumulated beyond the check's budget; --precision fp32 keeps every tensor in fp32";
}

}  // namespace sfumato::graph
