// Backward planning of a training step (train.h): the operators of transformers (the zoo's
// bert_base and gpt2_small as the training forward compiles them: LayerNormalization fused with
// its statistics as outputs, GELU alone, attention as MatMul / Div / Where / Softmax / MatMul
// between Transposes and views), each as library kernels:
//   - Add / Sub / Mul / Div with numpy broadcasting: the operand's gradient (dy, -dy, dy b, dy / b,
//     -dy y / b) summed over the axes it was broadcast along (ReduceSum); a weight's (position
//     embeddings, biases) written to its gradient block;
//   - LayerNormalization: dbeta = sum dy, dgamma = sum dy xhat over the rows; dx = invstd (g -
//     mean(g) - xhat mean(g xhat)) with g = dy gamma, from the forward's Mean and InvStdDev;
//   - Softmax (any axis): dx = y (dy - sum(dy y)); LogSoftmax: dx = dy - exp(y) sum(dy); a mask
//     by Where passes dy where the condition holds (the masked positions take none);
//   - Gelu (erf or tanh form): GeluGrad(x, dy) (vector);
//   - MatMul of batches (attention): dA = dY B^T, dB = A^T dY as MatMuls whose transposed
//     operand is a strided view (the cube reads it in place); [.., K] x [K, N] as Gemms on the
//     rows;
//   - Gather of plan-time indices along any axis (x[:, 0]): dY padded back at the indices;
//   - Gather of an embedding table (axis 0): dTable = onehot(ids)^T dY, a Gemm of the one-hot
//     rows (Equal of the ids with 0..V-1, Cast) with dY: a scatter-add whose sums run in a fixed
//     order on the cube (deterministic; BERT's reference code computes TPU embeddings this way);
//   - Transpose (the inverse permutation), Split (Concat of the parts' gradients, zeros for an
//     unused part), Cast (back to the input's type), Slice (dY padded back; steps above 1: spread
//     first by a Pad of a view with a unit axis after each strided one), Pad (a Pad by the
//     negated pads), Expand (the sum over the broadcast axes).
#include "runtime/ref/broadcast.h"
#include "runtime/graph/train_builder.h"

namespace sfumato::graph::detail {

std::shared_ptr<const ref::HostTensor> Builder::scalar_value(int pt) const {
    if (pt < 0) return nullptr;
    const PlanTensor& t = m_p.tensors[static_cast<size_t>(pt)];
    if (t.kind != PlanTensor::Kind::Weight || !t.weight || t.ref.numel() != 1) return nullptr;
    auto h = std::make_shared<ref::HostTensor>(*t.weight->host());
    h->type = t.ref.elem;
    return h;
}

int Builder::reduce_to(const std::string& name, int g, const Shape& to, int dest) {
    const Shape gs = m_tp.tensors[static_cast<size_t>(g)].ref.shape;
    if (to.size() > gs.size())
        throw InputError("train-step: " + name + ": gradient of rank below its operand's");
    const size_t lead = gs.size() - to.size();
    Shape axes;
    for (size_t d = 0; d < gs.size(); ++d)
        if (d < lead || (to[d - lead] == 1 && gs[d] != 1)) axes.push_back(static_cast<int64_t>(d));
    if (axes.empty()) {
        if (dest < 0) return gs == to ? g : alias(g, to);
        const ops::TensorRef& d = m_tp.tensors[static_cast<size_t>(dest)].ref;
        const ref::Attrs c = attrs_of({{"to", ref::Attr::of_int(static_cast<int64_t>(d.elem))}});
        return emit(name + "/copy", "Cast", 13, c, {g}, dest);
    }
    const ref::Attrs a = attrs_of({{"axes", ref::Attr::of_ints(axes)}, {"keepdims", ref::Attr::of_int(1)}});
    const int r = emit(name + "/reduce", "ReduceSum", 11, a, {g}, dest);
    return dest >= 0 ? r : alias(r, to);
}

void Builder::give(int t, int g, const std::string& name) {
    if (!needs(t)) return;
    const Shape& ts = pref(t).shape;
    if (is_weight(t)) {
        const int wg = weight_grad(t);
        reduce_to(name, g, ts, wg);
        weight_done(t);
        return;
    }
    accumulate(t, reduce_to(name, g, ts), name);
}

int Builder::transposed(int t) {
    const TrainTensor& src = m_tp.tensors[static_cast<size_t>(t)];
    Shape shape = src.ref.shape;
    Shape strides = src.ref.strides.empty() ? ref::contiguous_strides(shape) : src.ref.strides;
    const size_t r = shape.size();
    std::swap(shape[r - 1], shape[r - 2]);
    std::swap(strides[r - 1], strides[r - 2]);
    const int v = alias(t, shape);
    m_tp.tensors[static_cast<size_t>(v)].ref.strides = strides;
    return v;
}

void Builder::binary(const PlanStep& st, int gy) {
    const std::string& op = st.op_type;
    const int a = st.in[0], b = st.in[1];
    const std::string& nm = st.name;
    auto ew = [&](const std::string& what, const std::string& type, int other) {
        const auto c = scalar_value(other);
        if (c) return emit(nm + "/" + what, type, 14, {}, {gy, constant(*c)});
        return emit(nm + "/" + what, type, 14, {}, {gy, fwd(other)});
    };
    if (op == "Add") {
        give(a, gy, nm + "/dA");
        give(b, gy, nm + "/dB");
    } else if (op == "Sub") {
        give(a, gy, nm + "/dA");
        if (needs(b)) give(b, emit(nm + "/neg", "Neg", 13, {}, {gy}), nm + "/dB");
    } else if (op == "Mul") {
        if (needs(a)) give(a, ew("dA_mul", "Mul", b), nm + "/dA");
        if (needs(b)) give(b, ew("dB_mul", "Mul", a), nm + "/dB");
    } else {  // Div: dA = dy / b, dB = -dy y / b
        if (needs(a)) give(a, ew("dA_div", "Div", b), nm + "/dA");
        if (needs(b))
            give(b,
                 emit(nm + "/dB_chain", "ElementwiseChain", 1, Builder::fp32_chain({"Mul", "Div", "Neg"}),
                      {gy, fwd(st.out[0]), fwd(b)}),
                 nm + "/dB");
    }
}

// LayerNormalization over the last axis with its statistics (outputs 1 and 2, fp32).
void Builder::layer_norm(const PlanStep& st, int gy) {
    const int x = st.in[0], gamma = st.in[1], beta = st.in.size() > 2 ? st.in[2] : -1;
    const Shape& xs = pref(x).shape;
    if (st.desc.attrs.get_int("axis", -1) != -1 &&
        st.desc.attrs.get_int("axis", -1) != static_cast<int64_t>(xs.size()) - 1)
        refuse(st, "normalisation over the last axis only");
    if (st.out.size() < 3 || st.out[1] < 0 || st.out[2] < 0)
        refuse(st, "the Mean and InvStdDev outputs are missing");
    const std::string& nm = st.name;
    Shape rows;  // every axis but the last
    for (size_t d = 0; d + 1 < xs.size(); ++d) rows.push_back(static_cast<int64_t>(d));
    const int mean = fwd(st.out[1]), inv = fwd(st.out[2]);
    const int xhat =
        emit(nm + "/xhat", "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Mul"}), {fwd(x), mean, inv});
    if (beta >= 0 && needs(beta)) give(beta, gy, nm + "/dB");
    if (needs(gamma)) give(gamma, emit(nm + "/dy_xhat", "Mul", 14, {}, {gy, xhat}), nm + "/dscale");
    if (!needs(x)) return;
    const int g = emit(nm + "/dy_scale", "Mul", 14, {}, {gy, fwd(gamma)});
    const ref::Attrs mean_last = attrs_of({{"axes", ref::Attr::of_ints({-1})},
                                           {"keepdims", ref::Attr::of_int(1)},
                                           {"fp32_output", ref::Attr::of_int(1)}});
    const int m1 = emit(nm + "/mean_g", "ReduceMean", 11, mean_last, {g});
    const int gx = emit(nm + "/g_xhat", "Mul", 14, {}, {g, xhat});
    const int m2 = emit(nm + "/mean_g_xhat", "ReduceMean", 11, mean_last, {gx});
    // ((xhat m2) subtracted from g, - m1) invstd
    const int dx = emit(nm + "/dX", "ElementwiseChain", 1,
                        Builder::fp32_chain({"Mul", "Sub swap=1", "Sub", "Mul"}), {xhat, m2, g, m1, inv});
    accumulate(x, dx, nm);
}

// Softmax / LogSoftmax over `axis` (opset 13 on: that axis; before: the 2-D coercion, every axis
// from `axis` on): Softmax dx = y (dy - sum(dy y)); LogSoftmax dx = dy - exp(y) sum(dy). The sums
// over the axes (ReduceSum, kept dims, fp32), one fp32 chain over the tensor.
void Builder::softmax(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    const bool log = st.op_type == "LogSoftmax";
    const Shape axes = softmax_axes(st);
    const std::string& nm = st.name;
    const int y = fwd(st.out[0]);
    const ref::Attrs a = attrs_of({{"axes", ref::Attr::of_ints(axes)},
                                   {"keepdims", ref::Attr::of_int(1)},
                                   {"fp32_output", ref::Attr::of_int(1)}});
    if (log) {
        const int s = emit(nm + "/sum", "ReduceSum", 11, a, {gy});
        accumulate(x,
                   emit(nm + "/dX", "ElementwiseChain", 1, Builder::fp32_chain({"Exp", "Mul", "Sub swap=1"}),
                        {y, s, gy}),
                   nm);
        return;
    }
    const int p = emit(nm + "/dy_y", "Mul", 14, {}, {gy, y});
    const int s = emit(nm + "/sum", "ReduceSum", 11, a, {p});
    accumulate(x, emit(nm + "/dX", "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Mul"}), {gy, s, y}),
               nm);
}

Shape Builder::softmax_axes(const PlanStep& st) const {
    const int64_t rank = static_cast<int64_t>(pref(st.in[0]).shape.size());
    int64_t axis = st.desc.attrs.get_int("axis", st.desc.opset < 13 ? 1 : -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) refuse(st, "axis out of range");
    Shape axes = {axis};
    if (st.desc.opset < 13)
        for (int64_t d = axis + 1; d < rank; ++d) axes.push_back(d);
    return axes;
}

void Builder::matmul_nd(const PlanStep& st, int gy) {
    const int a = st.in[0], b = st.in[1];
    const Shape &as = pref(a).shape, &bs = pref(b).shape;
    const std::string& nm = st.name;
    if (bs.size() == 2 && as.size() > 2) {  // [.., K] x [K, N]: Gemms on the rows
        const int64_t k = as.back(), n = bs[1], rows = pref(a).numel() / std::max<int64_t>(k, 1);
        const int g2 = alias(gy, {rows, n});
        auto tr = [&](bool ta, bool tb) {
            return attrs_of({{"transA", ref::Attr::of_int(ta)}, {"transB", ref::Attr::of_int(tb)}});
        };
        if (needs(a))
            accumulate(a, alias(emit(nm + "/dA", "Gemm", 13, tr(false, true), {g2, fwd(b)}), as), nm);
        if (needs(b)) {
            const int a2 = alias(fwd(a), {rows, k});
            const int wg = is_weight(b) ? weight_grad(b) : -1;
            const int r = emit(nm + "/dB", "Gemm", 13, tr(true, false), {a2, g2}, wg);
            if (wg >= 0)
                weight_done(b);
            else
                accumulate(b, r, nm);
        }
        return;
    }
    if (as.size() != bs.size() || as.size() < 3 ||
        !std::equal(as.begin(), as.end() - 2, bs.begin(), bs.end() - 2))
        refuse(st, "batched operands of one batch shape (or [.., K] x [K, N]) only");
    if (is_weight(a) || is_weight(b)) refuse(st, "a batched MatMul of a weight has no backward here");
    if (needs(a)) accumulate(a, emit(nm + "/dA", "MatMul", 13, {}, {gy, transposed(fwd(b))}), nm);
    if (needs(b)) accumulate(b, emit(nm + "/dB", "MatMul", 13, {}, {transposed(fwd(a)), gy}), nm);
}

// Gather(table, ids) along axis 0: dTable[v] = sum of dY's rows whose id is v.
void Builder::gather(const PlanStep& st, int gy) {
    const int data = st.in[0], ids = st.in[1];
    if (!needs(data)) return;
    if (st.desc.constant(1) && constant_gather(st, gy)) return;
    if (st.desc.attrs.get_int("axis", 0) != 0)
        refuse(st, "a Gather of run-time indices along axis 0 (an embedding) only");
    const Shape& ds = pref(data).shape;
    if (ds.size() != 2) refuse(st, "a 2-D table only");
    const int64_t rows = pref(ids).numel(), v = ds[0], h = ds[1];
    const std::string& nm = st.name;
    ref::HostTensor range(pref(ids).elem, {1, v});
    for (int64_t i = 0; i < v; ++i) range.data[static_cast<size_t>(i)] = static_cast<double>(i);
    const int eq = emit(nm + "/onehot_eq", "Equal", 13, {}, {alias(fwd(ids), {rows, 1}), constant(range)});
    const ref::Attrs c = attrs_of({{"to", ref::Attr::of_int(static_cast<int64_t>(pref(data).elem))}});
    const int oh = emit(nm + "/onehot", "Cast", 13, c, {eq});
    const ref::Attrs ta = attrs_of({{"transA", ref::Attr::of_int(1)}, {"transB", ref::Attr::of_int(0)}});
    const int g2 = alias(gy, {rows, h});
    if (is_weight(data)) {
        const int wg = weight_grad(data);
        emit(nm + "/dTable", "Gemm", 13, ta, {oh, g2}, wg);
        weight_done(data);
    } else {
        accumulate(data, emit(nm + "/dTable", "Gemm", 13, ta, {oh, g2}), nm);
    }
}

// Gather of plan-time indices along any axis (a classifier's x[:, 0], a last token's logits): dY
// padded back to the axis' size at the index (one Pad); a list of indices: one Pad when they are
// consecutive, else per index a Slice of dY padded to its position, the pieces summed. Along axis
// 0, indices of rank 2 or more than 16 scattered ones go to the embedding path instead (false).
bool Builder::constant_gather(const PlanStep& st, int gy) {
    const int data = st.in[0];
    const ref::HostTensor& c = *st.desc.constant(1);
    const Shape& ds = pref(data).shape;
    const int64_t rank = static_cast<int64_t>(ds.size());
    int64_t axis = st.desc.attrs.get_int("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) refuse(st, "axis out of range");
    if (c.shape.size() > 1) {
        if (axis == 0) return false;
        refuse(st, "plan-time indices of rank 2 or more have no backward here");
    }
    const int64_t dim = ds[static_cast<size_t>(axis)];
    Shape idx;
    for (double v : c.data) {
        int64_t i = static_cast<int64_t>(v);
        if (i < 0) i += dim;
        if (i < 0 || i >= dim) refuse(st, "an index out of range");
        idx.push_back(i);
    }
    const size_t n = idx.size();
    Shape one = ds;  // dY with the gathered axis as 1 (a scalar index) or n
    one[static_cast<size_t>(axis)] = static_cast<int64_t>(n);
    const int g = alias(gy, one);
    const int zero = scalar(pref(data).elem, 0.0);
    const auto zv = m_tp.tensors[static_cast<size_t>(zero)].value;
    auto pad_at = [&](int t, int64_t at, int64_t len, const std::string& nm) {
        Shape pads(2 * static_cast<size_t>(rank), 0);
        pads[static_cast<size_t>(axis)] = at;
        pads[static_cast<size_t>(axis + rank)] = dim - at - len;
        return emit(nm, "Pad", 13, {}, {t, constant(*ints(pads)), zero}, -1, {nullptr, ints(pads), zv});
    };
    bool consecutive = true;
    for (size_t k = 1; k < n; ++k) consecutive = consecutive && idx[k] == idx[k - 1] + 1;
    if (!consecutive && n > 16 && axis == 0) return false;
    int sum = -1;
    if (consecutive && n > 0) {
        sum = pad_at(g, idx[0], static_cast<int64_t>(n), st.name + "/grad");
    } else {
        if (n > 16) refuse(st, "more than 16 plan-time indices that are not consecutive have no backward here");
        for (size_t k = 0; k < n; ++k) {
            const std::string nm = st.name + "/grad" + std::to_string(k);
            const Shape b = {static_cast<int64_t>(k)}, e = {static_cast<int64_t>(k) + 1}, ax = {axis};
            const int part = emit(nm + "/slice", "Slice", 13, {},
                                  {g, constant(*ints(b)), constant(*ints(e)), constant(*ints(ax))}, -1,
                                  {nullptr, ints(b), ints(e), ints(ax)});
            const int p = pad_at(part, idx[k], 1, nm);
            sum = sum < 0 ? p : emit(nm + "/sum", "Add", 14, {}, {sum, p});
        }
    }
    if (sum >= 0) give(data, sum, st.name);
    return true;
}

// Where(cond, a, b): a takes dy where cond holds, b elsewhere.
void Builder::where(const PlanStep& st, int gy) {
    const int c = st.in[0];
    const int zero = scalar(m_tp.tensors[static_cast<size_t>(gy)].ref.elem, 0.0);
    const auto zv = m_tp.tensors[static_cast<size_t>(zero)].value;
    for (int k = 1; k <= 2; ++k) {
        const int t = st.in[static_cast<size_t>(k)];
        if (!needs(t)) continue;
        const std::vector<int> in =
            k == 1 ? std::vector<int>{fwd(c), gy, zero} : std::vector<int>{fwd(c), zero, gy};
        std::vector<std::shared_ptr<const ref::HostTensor>> cs(3);
        cs[k == 1 ? 2 : 1] = zv;
        give(t, emit(st.name + "/d" + std::to_string(k), "Where", 16, {}, in, -1, cs),
             st.name + "/d" + std::to_string(k));
    }
}

void Builder::transpose(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    const size_t r = pref(x).shape.size();
    Shape perm = st.desc.attrs.get_ints("perm", {});
    if (perm.empty())
        for (size_t i = r; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    Shape inv(r);
    for (size_t i = 0; i < r; ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    accumulate(x,
               emit(st.name + "/grad", "Transpose", 13, attrs_of({{"perm", ref::Attr::of_ints(inv)}}), {gy}),
               st.name);
}

// Split: the parts' gradients concatenated (zeros for a part nothing reads).
void Builder::split(const PlanStep& st) {
    const int x = st.in[0];
    if (!needs(x)) return;
    std::vector<int> parts;
    bool any = false;
    for (int o : st.out) {
        auto it = o >= 0 ? m_grad.find(o) : m_grad.end();
        if (it != m_grad.end()) {
            parts.push_back(it->second);
            any = true;
            continue;
        }
        if (o < 0) refuse(st, "an omitted output");
        ref::HostTensor z(pref(o).elem, pref(o).shape);
        parts.push_back(constant(z));
    }
    if (!any) return;
    const int64_t rank = static_cast<int64_t>(pref(x).shape.size());
    int64_t axis = st.desc.attrs.get_int("axis", 0);
    if (axis < 0) axis += rank;
    accumulate(x, emit(st.name + "/grad", "Concat", 13, attrs_of({{"axis", ref::Attr::of_int(axis)}}), parts),
               st.name);
}

// Slice with plan-time starts, ends, axes and positive steps: dX is dY spread back to the
// positions it was read from, zeros elsewhere. Unit steps: one Pad (b zeros before, the rest
// after). Steps s > 1: dY viewed with a unit axis after each strided axis, one Pad appending s - 1
// zeros along those (each value followed by the s - 1 positions the slice skipped), viewed back
// (m s along the axis), then the Pad of the offsets (b before; after: dim - b - m s, negative
// where the last value's skipped positions run past the axis: a crop).
void Builder::slice(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    const Shape& xs = pref(x).shape;
    const Shape& ys = pref(st.out[0]).shape;
    const int64_t rank = static_cast<int64_t>(xs.size());
    auto values = [&](size_t i) -> Shape {
        if (i >= st.in.size() || st.in[i] < 0) return {};
        const ref::HostTensor* c = st.desc.constant(i);
        if (!c) refuse(st, "bounds that are not plan-time constants have no backward here");
        return Shape(ref::int_values(*c));  // saturating: INT64_MAX "to the end" is no UB
    };
    const Shape starts = values(1), ends = values(2);
    Shape axes = values(3), steps = values(4);
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    Shape step(static_cast<size_t>(rank), 1);
    Shape pads(2 * static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < axes.size() && i < starts.size(); ++i) {
        const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank) refuse(st, "axis out of range");
        const int64_t s = i < steps.size() ? steps[i] : 1;
        if (s < 1) refuse(st, "a Slice with negative steps (a reversal) has no backward here");
        step[static_cast<size_t>(a)] = s;
        const int64_t dim = xs[static_cast<size_t>(a)];
        int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
        b = std::clamp<int64_t>(b, 0, dim);
        pads[static_cast<size_t>(a)] = b;
        pads[static_cast<size_t>(a + rank)] = dim - b - ys[static_cast<size_t>(a)] * s;
    }
    const int zero = scalar(pref(x).elem, 0.0);
    const auto zv = m_tp.tensors[static_cast<size_t>(zero)].value;
    int g = gy;
    bool strided = false;
    for (int64_t s : step) strided = strided || s > 1;
    if (strided) {
        Shape split, ip, spread;  // dY with a unit axis after each strided one; its pads; after
        for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
            split.push_back(ys[d]);
            spread.push_back(ys[d] * step[d]);
            if (step[d] > 1) split.push_back(1);
        }
        ip.assign(2 * split.size(), 0);
        for (size_t d = 0, k = 0; d < static_cast<size_t>(rank); ++d, ++k)
            if (step[d] > 1) ip[split.size() + ++k] = step[d] - 1;
        const int sp = emit(st.name + "/spread", "Pad", 13, {}, {alias(gy, split), constant(*ints(ip)), zero}, -1,
                            {nullptr, ints(ip), zv});
        g = alias(sp, spread);
    }
    bool any = false;
    for (int64_t p : pads) any = any || p != 0;
    if (!any) return accumulate(x, g == gy ? alias(gy, xs) : g, st.name);
    accumulate(x,
               emit(st.name + "/grad", "Pad", 13, {}, {g, constant(*ints(pads)), zero}, -1, {nullptr, ints(pads), zv}),
               st.name);
}

// Pad (constant mode): dX = Pad(dY, -pads), the added border cropped away and the cropped one
// (negative pads) given back as zeros: one Pad kernel.
void Builder::pad(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    if (st.desc.attrs.get_string("mode", "constant") != "constant") refuse(st, "a Pad in a mode other than constant");
    const int64_t rank = static_cast<int64_t>(pref(x).shape.size());
    Shape pads = st.desc.attrs.get_ints("pads", {});
    if (pads.empty() && st.in.size() > 1 && st.in[1] >= 0) {
        const ref::HostTensor* c = st.desc.constant(1);
        if (!c) refuse(st, "pads that are not plan-time constants have no backward here");
        pads = ref::int_values(*c);
    }
    Shape full(2 * static_cast<size_t>(rank), 0);
    if (st.in.size() > 3 && st.in[3] >= 0) {  // opset 18: pads of the listed axes only
        const ref::HostTensor* c = st.desc.constant(3);
        if (!c) refuse(st, "axes that are not plan-time constants have no backward here");
        const size_t n = c->data.size();
        if (pads.size() != 2 * n) refuse(st, "pads and axes disagree");
        const Shape listed = ref::int_values(*c);
        for (size_t i = 0; i < n; ++i) {
            int64_t a = listed[i];
            if (a < 0) a += rank;
            if (a < 0 || a >= rank) refuse(st, "axis out of range");
            full[static_cast<size_t>(a)] = pads[i], full[static_cast<size_t>(a + rank)] = pads[n + i];
        }
    } else {
        if (pads.size() != full.size()) refuse(st, "pads of another rank");
        full = pads;
    }
    for (int64_t& p : full) p = -p;
    const int zero = scalar(pref(x).elem, 0.0);
    const auto zv = m_tp.tensors[static_cast<size_t>(zero)].value;
    accumulate(x,
               emit(st.name + "/grad", "Pad", 13, {}, {gy, constant(*ints(full)), zero}, -1, {nullptr, ints(full), zv}),
               st.name);
}

// ReduceSum / ReduceMean: dY (with the reduced axes kept) times 1 (or 1/n) broadcast over them;
// ReduceMax / ReduceMin: dY where x equals the result (ties: to each); ReduceSumSquare: 2 x dY;
// ReduceL2: x / y dY; ReduceLogSumExp: exp(x - y) dY; ReduceL1: sign(x) dY.
void Builder::reduce(const PlanStep& st, int gy) {
    const int x = st.in[0];
    if (!needs(x)) return;
    const Shape& xs = pref(x).shape;
    const size_t rank = xs.size();
    const ref::HostTensor* axes_in = st.in.size() > 1 && st.in[1] >= 0 ? st.desc.constant(1) : nullptr;
    if (st.in.size() > 1 && st.in[1] >= 0 && !axes_in) refuse(st, "axes that are not plan-time constants");
    Shape axes = st.desc.attrs.get_ints("axes", {});
    if (axes_in)
        for (int64_t a : ref::int_values(*axes_in)) axes.push_back(a);
    if (axes.empty() && st.desc.attrs.get_int("noop_with_empty_axes", 0) != 0)
        return accumulate(x, gy, st.name);
    Shape kept = xs, spread(rank, 1);
    double n = 1;
    for (size_t d = 0; d < rank; ++d) {
        bool reduced = axes.empty();
        for (int64_t a : axes)
            reduced = reduced || (a < 0 ? a + static_cast<int64_t>(rank) : a) == static_cast<int64_t>(d);
        if (!reduced) continue;
        kept[d] = 1, spread[d] = xs[d];
        n *= static_cast<double>(xs[d]);
    }
    const std::string& op = st.op_type;
    if (op == "ReduceSum" || op == "ReduceMean") {
        ref::HostTensor k(pref(x).elem, spread);
        for (double& v : k.data) v = op == "ReduceMean" ? 1.0 / n : 1.0;
        ref::round_to_type(k);
        accumulate(x, emit(st.name + "/grad", "Mul", 14, {}, {alias(gy, kept), constant(k)}), st.name);
        return;
    }
    // The others from y and dy with the reduced axes kept (broadcast back over them).
    const int xv = fwd(x), dyk = alias(gy, kept);
    const std::string nm = st.name + "/grad";
    int dx = -1;
    if (op == "ReduceMax" || op == "ReduceMin") {  // dy to every element equal to the result
        const int eq = emit(st.name + "/argmax", "Equal", 13, {}, {xv, alias(fwd(st.out[0]), kept)});
        dx = where_zero(nm, eq, dyk, true);
    } else if (op == "ReduceSumSquare") {  // 2 x dy
        ref::HostTensor two(pref(x).elem, {});
        two.data[0] = 2;
        dx = emit(nm, "ElementwiseChain", 1, Builder::fp32_chain({"Mul", "Mul"}), {xv, dyk, constant(two)});
    } else if (op == "ReduceL2") {  // x / y dy
        dx = emit(nm, "ElementwiseChain", 1, Builder::fp32_chain({"Div", "Mul"}),
                  {xv, alias(fwd(st.out[0]), kept), dyk});
    } else if (op == "ReduceLogSumExp") {  // exp(x - y) dy
        dx = emit(nm, "ElementwiseChain", 1, Builder::fp32_chain({"Sub", "Exp", "Mul"}),
                  {xv, alias(fwd(st.out[0]), kept), dyk});
    } else if (op == "ReduceL1") {  // sign(x) dy
        dx = emit(nm, "ActivationGrad", 1, attrs_of({{"activation", ref::Attr::of_string("Abs")}}), {xv, dyk});
    } else {
        refuse(st, "no backward for this op in train-step");
    }
    accumulate(x, dx, st.name);
}

}  // namespace sfumato::graph::detail
