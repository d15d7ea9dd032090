// Backward planning of a training step (train.h): BatchNormalization with batch statistics,
// Clip (ReLU6) and Concat; and the rewrite of a model's BatchNormalization into its training form.
#include <cmath>

#include "runtime/graph/train_builder.h"

namespace sfumato::graph {

int train_graph(Graph& g) {
    int n = 0;
    for (Node& node : g.nodes) {
        if (node.op_type != "BatchNormalization" || !node.domain.empty()) continue;
        node.op_type = "BatchNormTraining";
        ref::Attrs a;
        a.set_owner(node.name);
        a.set("epsilon", ref::Attr::of_float(node.attrs.get_float("epsilon", 1e-5)));
        a.set("momentum", ref::Attr::of_float(node.attrs.get_float("momentum", 0.9)));
        node.attrs = std::move(a);
        static const char* names[] = {"", "running_mean", "running_var", "batch_mean", "batch_var"};
        node.outputs.resize(5, -1);
        for (size_t k = 1; k < 5; ++k) {
            if (node.outputs[k] >= 0) continue;
            Value v;
            v.name = g.unique_name(node.name + "/" + names[k]);
            node.outputs[k] = g.add_value(std::move(v));
        }
        ++n;
    }
    if (n) g.rebuild_producers();
    return n;
}

namespace detail {

int Builder::scalar(ElemType e, double v) {
    ref::HostTensor h(e, {});
    h.data[0] = v;
    ref::round_to_type(h);
    return constant(h);
}

// BatchNormTraining (batch statistics mean and var over the M = N x spatial elements of each
// channel, xhat = (x - mean) invstd, invstd = 1 / sqrt(var + eps)):
//   dbeta = sum dy, dgamma = sum dy xhat = invstd sum (x - mean) dy,
//   dx = gamma invstd (dy - dbeta / M - xhat dgamma / M)
//      = ((x - mean) k1 + dy + k2) k3 with k1 = -dgamma invstd / M, k2 = -dbeta / M, k3 = gamma invstd,
// (the gradient through the batch statistics included). NC1HWC0 X and dY (the forward kept X
// so) of whole C0 blocks: the fused kernels (batch_norm_fused). Otherwise library kernels in ND:
// two reductions over the channel's elements, two elementwise chains over the tensor (computed
// in fp32), small vector ops on the C values, which stay in fp32 (the statistics are fp32) until
// the weight gradients are written in the weights' type. 1/M is applied as two factors 1/sqrt(M).
void Builder::batch_norm(const PlanStep& st, int gy) {
    const int x = st.in[0], gamma = st.in[1], beta = st.in[2];
    if (st.out.size() < 5 || st.out[3] < 0 || st.out[4] < 0)
        refuse(st, "the batch statistics outputs are missing");
    const Shape& xs = pref(x).shape;
    const ElemType f32 = ElemType::Float;
    Shape axes, cb(xs.size() - 1, 1);  // cb: (C, 1, ...), a channel vector broadcast against X
    cb[0] = xs[1];
    const Shape vec = {xs[1]};  // a channel vector
    double m = 1;
    for (size_t d = 0; d < xs.size(); ++d)
        if (d != 1) axes.push_back(static_cast<int64_t>(d)), m *= static_cast<double>(xs[d]);
    int xv = fwd(x);
    auto whole_c0 = [&](int t) {
        const ops::TensorRef& r = m_tp.tensors[static_cast<size_t>(t)].ref;
        return c0(t) && r.shape.size() >= 3 && r.shape[1] % (32 / static_cast<int64_t>(isa::dtype_size(r.dtype))) == 0;
    };
    if (whole_c0(xv) && whole_c0(gy)) return batch_norm_fused(st, xv, gy);
    xv = nd(xv, st.name + "/X"), gy = nd(gy, st.name + "/dY");
    const ref::Attrs red = attrs_of({{"axes", ref::Attr::of_ints(axes)},
                                     {"keepdims", ref::Attr::of_int(0)},
                                     {"fp32_output", ref::Attr::of_int(1)}});
    const std::string& nm = st.name;
    const int mean = alias(fwd(st.out[3]), cb);
    const int inv =
        emit(nm + "/invstd", "ElementwiseChain", 1, Builder::fp32_chain({"Add", "Sqrt", "Reciprocal"}),
             {alias(fwd(st.out[4]), vec), scalar(f32, st.desc.attrs.get_float("epsilon", 1e-5))});
    const bool train_g = needs(gamma) && is_weight(gamma), train_b = needs(beta) && is_weight(beta);
    const int wg_g = train_g ? weight_grad(gamma) : -1, wg_b = train_b ? weight_grad(beta) : -1;
    const int dbeta = emit(nm + "/dB", "ReduceSum", 11, red, {gy});
    const int xdy =
        emit(nm + "/xc_dy", "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Mul"}), {xv, mean, gy});
    const int s = emit(nm + "/sum_xc_dy", "ReduceSum", 11, red, {xdy});
    const int dgamma = emit(nm + "/dscale", "Mul", 14, {}, {s, inv});
    if (needs(x)) {
        const int r = scalar(f32, -1.0 / std::sqrt(m)), q = scalar(f32, 1.0 / std::sqrt(m));
        const int k1 = emit(nm + "/k1", "ElementwiseChain", 1, Builder::fp32_chain({"Mul", "Mul", "Mul"}),
                            {dgamma, inv, r, q});
        const int k2 =
            emit(nm + "/k2", "ElementwiseChain", 1, Builder::fp32_chain({"Mul", "Mul"}), {dbeta, r, q});
        const int k3 = emit(nm + "/k3", "Mul", 14, {}, {inv, alias(fwd(gamma), vec)});
        const int dx =
            emit(nm + "/dX", "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Mul", "Add", "Add", "Mul"}),
                 {xv, mean, alias(k1, cb), gy, alias(k2, cb), alias(k3, cb)});
        accumulate(x, dx, nm);
    }
    // The weight gradients in the weights' type, after their last reader (their bucket may be
    // reduced from here on).
    auto to_weight = [&](int w, int wg, int g, const std::string& what, bool may_close) {
        const ref::Attrs c = attrs_of({{"to", ref::Attr::of_int(static_cast<int64_t>(pref(w).elem))}});
        emit(nm + "/" + what, "Cast", 13, c, {g}, wg);
        weight_done(w, may_close);
    };
    if (train_g) to_weight(gamma, wg_g, dgamma, "dscale_cast", !train_b);
    if (train_b) to_weight(beta, wg_b, dbeta, "dB_cast", true);
}

// NC1HWC0 X and dY of whole C0 blocks: the fused kernels (runtime/ops/norm/bn_train_kernel.h),
// the vendor's reduce-grad / update-grad structure. One BatchNormGradReduce item reads X and dY
// once (sum dy, sum (x - mean) dy per channel) and gives [5, C] fp32: dscale, dB and the
// coefficients of dX = a dy + b x + c; one BatchNormGradApply item writes dX in NC1HWC0 in one
// pass; the weight gradients are its rows 0 and 1 cast to the weights' type.
void Builder::batch_norm_fused(const PlanStep& st, int xv, int gy) {
    const int x = st.in[0], gamma = st.in[1], beta = st.in[2];
    const std::string& nm = st.name;
    const int64_t C = pref(x).shape[1];
    const bool train_g = needs(gamma) && is_weight(gamma), train_b = needs(beta) && is_weight(beta);
    const int wg_g = train_g ? weight_grad(gamma) : -1, wg_b = train_b ? weight_grad(beta) : -1;
    ++m_tp.layout.kept;
    const int k = emit(nm + "/reduce_grad", "BatchNormGradReduce", 1,
                       attrs_of({{"epsilon", ref::Attr::of_float(st.desc.attrs.get_float("epsilon", 1e-5))}}),
                       {xv, gy, fwd(st.out[3]), fwd(st.out[4]), fwd(gamma)});
    if (needs(x)) accumulate(x, emit(nm + "/dX", "BatchNormGradApply", 1, {}, {xv, gy, k}), nm);
    auto to_weight = [&](int w, int wg, int64_t row, const std::string& what, bool may_close) {
        const ref::Attrs c = attrs_of({{"to", ref::Attr::of_int(static_cast<int64_t>(pref(w).elem))}});
        emit(nm + "/" + what, "Cast", 13, c, {alias_at(k, {C}, static_cast<uint64_t>(row * C) * 4)}, wg);
        weight_done(w, may_close);
    };
    if (train_g) to_weight(gamma, wg_g, 0, "dscale_cast", !train_b);
    if (train_b) to_weight(beta, wg_b, 1, "dB_cast", true);
}

// Clip (ReLU6 = Clip(0, 6)): dx = dy where min < y < max, else 0 (from the output y).
void Builder::clip(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    double lo = -INFINITY, hi = INFINITY;
    if (st.desc.opset < 11) {
        lo = st.desc.attrs.get_float("min", lo), hi = st.desc.attrs.get_float("max", hi);
    } else {
        for (size_t i = 1; i < 3 && i < st.in.size(); ++i) {
            if (st.in[i] < 0) continue;
            const ref::HostTensor* c = st.desc.constant(i);
            if (!c || c->data.size() != 1)
                refuse(st, "bounds that are not plan-time scalars have no backward here");
            (i == 1 ? lo : hi) = c->data[0];
        }
    }
    accumulate(x, clip_grad(st.name + "/grad", fwd(st.out[0]), gy, lo, hi), st.name);
}

int Builder::clip_grad(const std::string& name, int y, int gy, double lo, double hi) {
    ref::Attrs a;
    if (std::isfinite(lo)) a.set("min", ref::Attr::of_float(lo));
    if (std::isfinite(hi)) a.set("max", ref::Attr::of_float(hi));
    return emit(name, "ClipGrad", 1, a, {y, gy});
}

// Concat: each input's gradient is its slice of dy along the axis.
void Builder::concat(const PlanStep& st, int gy) {
    const Shape& ys = pref(st.out[0]).shape;
    const int64_t rank = static_cast<int64_t>(ys.size());
    int64_t axis = st.desc.attrs.get_int("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) refuse(st, "axis out of range");
    int64_t at = 0;
    for (size_t i = 0; i < st.in.size(); ++i) {
        const int x = st.in[i];
        if (x < 0) continue;
        const int64_t len = pref(x).shape[static_cast<size_t>(axis)];
        if (needs(x) && !is_weight(x)) {
            const Shape starts = {at}, ends = {at + len}, ax = {axis};
            const int g = emit(st.name + "/grad" + std::to_string(i), "Slice", 13, {},
                               {gy, constant(*ints(starts)), constant(*ints(ends)), constant(*ints(ax))}, -1,
                               {nullptr, ints(starts), ints(ends), ints(ax)});
            accumulate(x, g, st.name);
        } else if (needs(x)) {
            refuse(st, "a Concat of a weight has no backward here");
        }
        at += len;
    }
}

}  // namespace detail

}  // namespace sfumato::graph
