// Host references (ONNX semantics, in double) of the reductions ReduceSum, ReduceMean,
// ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp (axes as an attribute, or as an input for ReduceSum from opset 13 and for the
// others from 18; keepdims; noop_with_empty_axes) and of ArgMax/ArgMin (axis, keepdims,
// select_last_index; int64 output). A reduction over an empty range gives the identity of its
// combine (0, 1, -inf, +inf; ReduceLogSum(Exp) gives -inf). Integer inputs keep their type
// (results wrap as the type does).
#include <cmath>
#include <functional>
#include <limits>

#include "runtime/ref/axes.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Kind {
    double init;
    std::function<double(double)> pre;
    std::function<double(double, double)> combine;
    std::function<double(double, uint64_t)> post;  // (combined, count)
};

Kind kind_of(const std::string& op) {
    auto id = [](double x) { return x; };
    auto sum = [](double a, double b) { return a + b; };
    auto keep = [](double v, uint64_t) { return v; };
    if (op == "ReduceSum") return {0, id, sum, keep};
    if (op == "ReduceMean") return {0, id, sum, [](double v, uint64_t n) { return v / static_cast<double>(n); }};
    if (op == "ReduceMax") return {-kInf, id, [](double a, double b) { return std::max(a, b); }, keep};
    if (op == "ReduceMin") return {kInf, id, [](double a, double b) { return std::min(a, b); }, keep};
    if (op == "ReduceProd") return {1, id, [](double a, double b) { return a * b; }, keep};
    if (op == "ReduceSumSquare") return {0, [](double x) { return x * x; }, sum, keep};
    if (op == "ReduceL1") return {0, [](double x) { return std::fabs(x); }, sum, keep};
    if (op == "ReduceL2") return {0, [](double x) { return x * x; }, sum, [](double v, uint64_t) { return std::sqrt(v); }};
    if (op == "ReduceLogSum") return {0, id, sum, [](double v, uint64_t) { return std::log(v); }};
    // ReduceLogSumExp: computed shifted by the maximum in reduce() below.
    return {0, [](double x) { return std::exp(x); }, sum, [](double v, uint64_t) { return std::log(v); }};
}

std::vector<HostTensor> reduce(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.empty() || !in[0]) throw InputError("node '" + n.name + "' (" + n.op_type + "): missing input 'data'");
    const HostTensor& x = *in[0];
    const bool from_input = reduce_axes_from_input(n.op_type, n.opset);
    const HostTensor* axes = from_input && in.size() > 1 ? in[1] : nullptr;
    const ReduceAxes ra = reduce_axes(n.name, n.attrs, !from_input, axes, x.rank());
    if (ra.noop) return {x};
    const Kind k = kind_of(n.op_type);
    const bool lse = n.op_type == "ReduceLogSumExp";
    // Output index of every input element: the coordinates of the kept dims.
    const size_t rank = x.rank();
    std::vector<int64_t> kept_shape;
    for (size_t d = 0; d < rank; ++d)
        if (!ra.reduced[d]) kept_shape.push_back(x.shape[d]);
    const uint64_t outn = dim_product(kept_shape, 0, kept_shape.size());
    std::vector<uint64_t> out_of(x.numel());
    uint64_t count = 1;
    for (size_t d = 0; d < rank; ++d)
        if (ra.reduced[d]) count *= static_cast<uint64_t>(x.shape[d]);
    for (uint64_t f = 0; f < x.numel(); ++f) {
        uint64_t rem = f, o = 0, mul = 1;
        for (size_t d = rank; d-- > 0;) {
            const uint64_t c = rem % static_cast<uint64_t>(x.shape[d]);
            rem /= static_cast<uint64_t>(x.shape[d]);
            if (!ra.reduced[d]) {
                o += c * mul;
                mul *= static_cast<uint64_t>(x.shape[d]);
            }
        }
        out_of[f] = o;
    }
    std::vector<double> shift(outn, 0.0);
    if (lse) {
        std::vector<double> m(outn, -kInf);
        for (uint64_t f = 0; f < x.numel(); ++f) m[out_of[f]] = std::max(m[out_of[f]], x.data[f]);
        for (uint64_t o = 0; o < outn; ++o) shift[o] = std::isfinite(m[o]) ? m[o] : 0.0;
    }
    std::vector<double> acc(outn, k.init);
    for (uint64_t f = 0; f < x.numel(); ++f) acc[out_of[f]] = k.combine(acc[out_of[f]], k.pre(x.data[f] - shift[out_of[f]]));
    // fp32_output (sfumato-only, the training step's BatchNorm statistics): the result in fp32.
    const bool f32 = n.attrs.get_int("fp32_output", 0) != 0 && is_float(x.type);
    HostTensor y(f32 ? ElemType::Float : x.type, reduced_shape(x.shape, ra));
    for (uint64_t o = 0; o < outn; ++o) y.data[o] = k.post(acc[o], count) + shift[o];
    round_to_type(y);
    return {y};
}

std::vector<HostTensor> arg_reduce(const RefNode& n, const std::vector<const HostTensor*>& in, bool is_max) {
    if (in.empty() || !in[0]) throw InputError("node '" + n.name + "' (" + n.op_type + "): missing input 'data'");
    const HostTensor& x = *in[0];
    const size_t a = static_cast<size_t>(normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", 0), x.rank()));
    const bool keep = n.attrs.get_int("keepdims", 1) != 0;
    const bool last = n.attrs.get_int("select_last_index", 0) != 0;
    const AxisView v = axis_view(x.shape, a, a + 1);
    std::vector<int64_t> shape;
    for (size_t d = 0; d < x.rank(); ++d) {
        if (d != a) shape.push_back(x.shape[d]);
        else if (keep) shape.push_back(1);
    }
    HostTensor y(ElemType::Int64, shape);
    for (uint64_t o = 0; o < v.outer; ++o)
        for (uint64_t i = 0; i < v.inner; ++i) {
            uint64_t best = 0;
            double bv = x.data.empty() ? 0 : x.data[o * v.len * v.inner + i];
            for (uint64_t k = 1; k < v.len; ++k) {
                const double e = x.data[(o * v.len + k) * v.inner + i];
                const bool better = is_max ? (last ? e >= bv : e > bv) : (last ? e <= bv : e < bv);
                if (better) best = k, bv = e;
            }
            y.data[o * v.inner + i] = static_cast<double>(best);
        }
    return {y};
}

}  // namespace

SFUMATO_REGISTER_REF(reduce_sum, "ReduceSum", reduce);
SFUMATO_REGISTER_REF(reduce_mean, "ReduceMean", reduce);
SFUMATO_REGISTER_REF(reduce_max, "ReduceMax", reduce);
SFUMATO_REGISTER_REF(reduce_min, "ReduceMin", reduce);
SFUMATO_REGISTER_REF(reduce_prod, "ReduceProd", reduce);
SFUMATO_REGISTER_REF(reduce_sum_square, "ReduceSumSquare", reduce);
SFUMATO_REGISTER_REF(reduce_l1, "ReduceL1", reduce);
SFUMATO_REGISTER_REF(reduce_l2, "ReduceL2", reduce);
SFUMATO_REGISTER_REF(reduce_log_sum, "ReduceLogSum", reduce);
SFUMATO_REGISTER_REF(reduce_log_sum_exp, "ReduceLogSumExp", reduce);
SFUMATO_REGISTER_REF(arg_max, "ArgMax",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return arg_reduce(n, in, true); });
SFUMATO_REGISTER_REF(arg_min, "ArgMin",
                     [](const RefNode& n, const std::vector<const HostTensor*>& in) { return arg_reduce(n, in, false); });

}  // namespace sfumato::ref
