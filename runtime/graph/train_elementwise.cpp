// Backward planning of a training step (train.h): more elementwise and pooling operators, each
// from library kernels:
//   - Pow(x, p), p a plan-time scalar: dx = p x^(p - 1) dy, one elementwise chain;
//   - PRelu(x, slope): dx = x < 0 ? slope dy : dy, dslope = x < 0 ? x dy : 0 summed over the axes
//     the slope was broadcast along (a trained slope: its gradient block);
//   - Max / Min of two inputs: dy to the larger (smaller) one, to the first on a tie; Sum: dy to
//     every input (summed over broadcast axes);
//   - Tile: dY seen as [r0, x0, r1, x1, ...], summed over the repeats;
//   - GlobalMaxPool: dy to every input pixel equal to its channel's maximum (ties: to each, as
//     MaxPoolGrad);
//   - InstanceNormalization (GroupNorm as PyTorch exports it): the statistics of each (n, c) over
//     the spatial axes recomputed (two row means, fp32), then LayerNorm's backward per (n, c) row:
//     dB = sum dy, dscale = sum dy xhat over N and the spatial axes, dx = invstd (g - mean(g) -
//     xhat mean(g xhat)) with g = dy scale.
#include "runtime/graph/train_builder.h"

namespace sfumato::graph::detail {

// Where(cond, v, 0) (zero: a scalar of gy's type).
int Builder::where_zero(const std::string& name, int cond, int v, bool v_first) {
    const int zero = scalar(m_tp.tensors[static_cast<size_t>(v)].ref.elem, 0.0);
    const auto zv = m_tp.tensors[static_cast<size_t>(zero)].value;
    std::vector<std::shared_ptr<const ref::HostTensor>> cs(3);
    cs[v_first ? 2 : 1] = zv;
    return emit(name, "Where", 16, {}, v_first ? std::vector<int>{cond, v, zero} : std::vector<int>{cond, zero, v},
                -1, cs);
}

void Builder::pow(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (needs(st.in[1])) refuse(st, "a trained exponent has no backward here");
    if (!needs(x)) return;
    const auto p = scalar_value(st.in[1]);
    if (!p) refuse(st, "an exponent that is not a plan-time scalar has no backward here");
    const double e = p->data.at(0);
    const ElemType t = pref(x).elem;
    ref::HostTensor em1(t, {}), k(t, {});
    em1.data[0] = e - 1, k.data[0] = e;
    ref::round_to_type(em1);
    ref::round_to_type(k);
    give(x,
         emit(st.name + "/grad", "ElementwiseChain", 1, Builder::fp32_chain({"Pow", "Mul", "Mul"}),
              {fwd(x), constant(em1), constant(k), gy}),
         st.name);
}

void Builder::prelu(const PlanStep& st, int gy) {
    if (st.desc.opset < 7) refuse(st, "PRelu before opset 7 (a per-channel slope) has no backward here");
    const int x = st.in[0], slope = st.in[1];
    const std::string& nm = st.name;
    const int zero = scalar(pref(x).elem, 0.0);
    const int neg = emit(nm + "/neg", "Less", 13, {}, {fwd(x), zero});
    if (needs(x)) {
        const int scaled = emit(nm + "/dy_slope", "Mul", 14, {}, {gy, fwd(slope)});
        give(x, emit(nm + "/dX", "Where", 16, {}, {neg, scaled, gy}), nm + "/dX");
    }
    if (needs(slope)) give(slope, where_zero(nm + "/dslope", neg, emit(nm + "/dy_x", "Mul", 14, {}, {gy, fwd(x)}), true),
                           nm + "/dslope");
}

void Builder::max_min(const PlanStep& st, int gy) {
    if (st.op_type == "Sum") {
        for (size_t i = 0; i < st.in.size(); ++i) give(st.in[i], gy, st.name + "/d" + std::to_string(i));
        return;
    }
    if (st.in.size() == 1) return give(st.in[0], gy, st.name);
    if (st.in.size() != 2) refuse(st, "more than two inputs have no backward here");
    const int a = st.in[0], b = st.in[1];
    // The first input takes dy where it is the result (a >= b for Max, a <= b for Min).
    const int first = emit(st.name + "/first", st.op_type == "Max" ? "GreaterOrEqual" : "LessOrEqual", 16, {},
                           {fwd(a), fwd(b)});
    if (needs(a)) give(a, where_zero(st.name + "/dA", first, gy, true), st.name + "/dA");
    if (needs(b)) give(b, where_zero(st.name + "/dB", first, gy, false), st.name + "/dB");
}

void Builder::tile(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    const ref::HostTensor* r = st.desc.constant(1);
    if (!r) refuse(st, "repeats that are not plan-time constants have no backward here");
    const Shape& xs = pref(x).shape;
    if (r->data.size() != xs.size()) refuse(st, "repeats of another rank");
    Shape split, axes;
    for (size_t d = 0; d < xs.size(); ++d) {
        const int64_t rep = static_cast<int64_t>(r->data[d]);
        if (rep > 1) {
            axes.push_back(static_cast<int64_t>(split.size()));
            split.push_back(rep);
        }
        split.push_back(xs[d]);
    }
    if (axes.empty()) return accumulate(x, alias(gy, xs), st.name);
    const ref::Attrs a = attrs_of({{"axes", ref::Attr::of_ints(axes)}, {"keepdims", ref::Attr::of_int(0)}});
    accumulate(x, alias(emit(st.name + "/grad", "ReduceSum", 11, a, {alias(gy, split)}), xs), st.name);
}

void Builder::global_max_pool(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    const int xn = nd(fwd(x), st.name + "/X"), yn = nd(fwd(st.out[0]), st.name + "/Y");
    const int eq = emit(st.name + "/argmax", "Equal", 13, {}, {xn, yn});
    accumulate(x, where_zero(st.name + "/grad", eq, nd(gy, st.name + "/dY"), true), st.name);
}

void Builder::instance_norm(const PlanStep& st, int gy) {
    const int x = st.in[0], scale = st.in[1], bias = st.in[2];
    const Shape& xs = pref(x).shape;
    if (xs.size() < 3) refuse(st, "an input of rank 3 or more only");
    const std::string& nm = st.name;
    const ElemType f32 = ElemType::Float;
    Shape spatial, per_channel = {0}, cb(xs.size() - 1, 1);  // cb: (C, 1, ...) against X
    for (size_t d = 2; d < xs.size(); ++d) spatial.push_back(static_cast<int64_t>(d)), per_channel.push_back(static_cast<int64_t>(d));
    cb[0] = xs[1];
    const ref::Attrs mean_sp = attrs_of({{"axes", ref::Attr::of_ints(spatial)},
                                         {"keepdims", ref::Attr::of_int(1)},
                                         {"fp32_output", ref::Attr::of_int(1)}});
    const int xv = fwd(x);
    const int mean = emit(nm + "/mean", "ReduceMean", 11, mean_sp, {xv});
    ref::HostTensor two(f32, {}), eps(f32, {});
    two.data[0] = 2, eps.data[0] = st.desc.attrs.get_float("epsilon", 1e-5);
    ref::round_to_type(eps);
    const int sq = emit(nm + "/sq", "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Pow"}), {xv, mean, constant(two)});
    const int var = emit(nm + "/var", "ReduceMean", 11, mean_sp, {sq});
    const int inv = emit(nm + "/invstd", "ElementwiseChain", 1, Builder::fp32_chain({"Add", "Sqrt", "Reciprocal"}),
                         {var, constant(eps)});
    const int xhat = emit(nm + "/xhat", "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Mul"}), {xv, mean, inv});
    const ref::Attrs sum_c = attrs_of({{"axes", ref::Attr::of_ints(per_channel)}, {"keepdims", ref::Attr::of_int(0)}});
    auto channel_grad = [&](int w, int g, const std::string& what) {
        if (!needs(w)) return;
        if (!is_weight(w)) refuse(st, "a scale or B that is not a weight has no backward here");
        const int wg = weight_grad(w);
        emit(nm + what, "ReduceSum", 11, sum_c, {g}, wg);
        weight_done(w);
    };
    channel_grad(bias, gy, "/dB");
    if (needs(scale)) channel_grad(scale, emit(nm + "/dy_xhat", "Mul", 14, {}, {gy, xhat}), "/dscale");
    if (!needs(x)) return;
    const int g = emit(nm + "/dy_scale", "Mul", 14, {}, {gy, alias(fwd(scale), cb)});
    const int m1 = emit(nm + "/mean_g", "ReduceMean", 11, mean_sp, {g});
    const int gx = emit(nm + "/g_xhat", "Mul", 14, {}, {g, xhat});
    const int m2 = emit(nm + "/mean_g_xhat", "ReduceMean", 11, mean_sp, {gx});
    accumulate(x,
               emit(nm + "/dX", "ElementwiseChain", 1, Builder::fp32_chain({"Mul", "Sub swap=1", "Sub", "Mul"}),
                    {xhat, m2, g, m1, inv}),
               nm);
}

}  // namespace sfumato::graph::detail
