// Shape inference: data movement (Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Gather, Pad, Expand, Tile), shape queries
// (Shape, Size, ConstantOfShape, Range, evaluated at plan time) and reductions
// (Reduce*, ArgMax/ArgMin).
#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/graph/infer.h"
#include "runtime/ref/axes.h"

namespace sfumato::graph {

namespace {

// A dimension we cannot know before run time (an unknown value feeds the
// shape).
Dim unknown_dim() { return Dim::symbol(""); }

void reshape(InferCtx& c) {
    c.need_inputs(2, 2);
    const Shape& x = c.shape(0);
    std::vector<int64_t> s;
    if (!c.const_ints(1, s)) {
        const Shape& ss = c.shape(1);
        if (ss.size() != 1 || !ss[0].known()) c.fail("the shape input must be 1-D");
        c.set(0, c.elem(0), Shape(static_cast<size_t>(ss[0].v), unknown_dim()));
        return;
    }
    const bool allowzero = c.attrs().get_int("allowzero", 0) != 0;
    Shape out;
    int infer_at = -1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == -1) {
            if (infer_at >= 0) c.fail("the shape input has more than one -1");
            infer_at = static_cast<int>(i);
            out.push_back(Dim::of(1));
        } else if (s[i] == 0 && !allowzero) {
            if (i >= x.size())
                c.fail("shape[" + std::to_string(i) + "] = 0 copies a dimension the input does not have");
            out.push_back(x[i]);
        } else if (s[i] < 0) {
            c.fail("shape[" + std::to_string(i) + "] = " + std::to_string(s[i]) + " is negative");
        } else {
            out.push_back(Dim::of(s[i]));
        }
    }
    const Dim total = dim_product(x);
    if (infer_at >= 0) {
        const Dim rest = dim_product(out);
        if (total.known() && rest.known() && (rest.v == 0 || total.v % rest.v != 0))
            c.fail("cannot reshape " + shape_str(x) + " to " + ref::shape_str(s));
        out[static_cast<size_t>(infer_at)] = dim_div(total, rest);
    } else {
        const Dim p = dim_product(out);
        if (total.known() && p.known() && total.v != p.v)
            c.fail("cannot reshape " + shape_str(x) + " to " + shape_str(out));
    }
    c.set(0, c.elem(0), out);
}

void flatten(InferCtx& c) {
    c.need_inputs(1, 1);
    const Shape& x = c.shape(0);
    int64_t axis = c.attrs().get_int("axis", 1);
    const int64_t r = static_cast<int64_t>(x.size());
    if (axis < -r || axis > r)
        c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    c.set(0, c.elem(0),
          {dim_product(x, 0, static_cast<size_t>(axis)), dim_product(x, static_cast<size_t>(axis))});
}

std::vector<int64_t> axes_of(InferCtx& c, size_t input, bool& given) {
    std::vector<int64_t> axes;
    given = false;
    if (c.attrs().has("axes")) {
        given = true;
        return c.attrs().ints("axes");
    }
    if (c.has(input)) {
        if (!c.const_ints(input, axes)) c.fail("the axes input must be constant");
        given = true;
    }
    return axes;
}

void squeeze(InferCtx& c) {
    c.need_inputs(1, 2);
    const Shape& x = c.shape(0);
    bool given;
    std::vector<int64_t> axes = axes_of(c, 1, given);
    std::set<int64_t> drop;
    for (int64_t a : axes) {
        const int64_t n = c.axis(a, x.size(), "axes value");
        if (x[static_cast<size_t>(n)].known() && x[static_cast<size_t>(n)].v != 1)
            c.fail("cannot squeeze dimension " + std::to_string(a) + " of size " +
                   x[static_cast<size_t>(n)].str());
        drop.insert(n);
    }
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
        const bool one = x[i].known() && x[i].v == 1;
        if ((given && drop.count(static_cast<int64_t>(i))) || (!given && one)) continue;
        out.push_back(x[i]);
    }
    c.set(0, c.elem(0), out);
}

void unsqueeze(InferCtx& c) {
    c.need_inputs(1, 2);
    const Shape& x = c.shape(0);
    bool given;
    const std::vector<int64_t> axes = axes_of(c, 1, given);
    if (!given) c.fail("axes are required");
    const size_t r = x.size() + axes.size();
    std::set<int64_t> ins;
    for (int64_t a : axes)
        if (!ins.insert(c.axis(a, r, "axes value")).second) c.fail("axes has a repeated value");
    Shape out;
    size_t j = 0;
    for (size_t i = 0; i < r; ++i) out.push_back(ins.count(static_cast<int64_t>(i)) ? Dim::of(1) : x[j++]);
    c.set(0, c.elem(0), out);
}

void transpose(InferCtx& c) {
    c.need_inputs(1, 1);
    const Shape& x = c.shape(0);
    std::vector<int64_t> perm(x.size());
    for (size_t i = 0; i < x.size(); ++i) perm[i] = static_cast<int64_t>(x.size() - 1 - i);
    perm = c.attrs().get_ints("perm", perm);
    if (perm.size() != x.size())
        c.fail("perm has " + std::to_string(perm.size()) + " values for rank " + std::to_string(x.size()));
    std::set<int64_t> seen;
    Shape out;
    for (int64_t p : perm) {
        const int64_t a = c.axis(p, x.size(), "perm value");
        if (!seen.insert(a).second) c.fail("perm repeats " + std::to_string(p));
        out.push_back(x[static_cast<size_t>(a)]);
    }
    c.set(0, c.elem(0), out);
}

void concat(InferCtx& c) {
    c.need_inputs(1, 1u << 20);
    Shape out = c.shape(0);
    const int64_t axis = c.axis(c.attrs().get_int("axis", 0), out.size());
    for (size_t i = 1; i < c.num_inputs(); ++i) {
        c.same_type(0, i);
        const Shape& s = c.shape(i);
        if (s.size() != out.size())
            c.fail("input " + std::to_string(i) + " has rank " + std::to_string(s.size()) + ", input 0 " +
                   std::to_string(out.size()));
        for (size_t d = 0; d < s.size(); ++d) {
            if (static_cast<int64_t>(d) == axis) {
                out[d] = dim_add(out[d], s[d]);
            } else if (s[d].known() && out[d].known() && s[d].v != out[d].v) {
                c.fail("input " + std::to_string(i) + " " + shape_str(s) + " differs from " +
                       shape_str(c.shape(0)) + " outside axis " + std::to_string(axis));
            } else if (!out[d].known()) {
                out[d] = s[d];
            }
        }
    }
    c.set(0, c.elem(0), out);
}

void split(InferCtx& c) {
    c.need_inputs(1, 2);
    const Shape& x = c.shape(0);
    const int64_t axis = c.axis(c.attrs().get_int("axis", 0), x.size());
    const Dim d = x[static_cast<size_t>(axis)];
    std::vector<int64_t> parts = c.attrs().get_ints("split", {});
    if (parts.empty() && c.has(1) && !c.const_ints(1, parts)) c.fail("the split input must be constant");
    const size_t n = c.num_outputs();
    if (parts.empty()) {
        if (d.known() && d.v % static_cast<int64_t>(n) != 0)
            c.fail("dimension " + d.str() + " does not split into " + std::to_string(n) + " equal parts");
        for (size_t o = 0; o < n; ++o) {
            Shape s = x;
            s[static_cast<size_t>(axis)] = dim_div(d, Dim::of(static_cast<int64_t>(n)));
            c.set(o, c.elem(0), s);
        }
        return;
    }
    if (parts.size() != n)
        c.fail("split has " + std::to_string(parts.size()) + " parts for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t p : parts) sum += p;
    if (d.known() && sum != d.v)
        c.fail("split sums to " + std::to_string(sum) + ", the dimension is " + d.str());
    for (size_t o = 0; o < n; ++o) {
        Shape s = x;
        s[static_cast<size_t>(axis)] = Dim::of(parts[o]);
        c.set(o, c.elem(0), s);
    }
}

void slice(InferCtx& c) {
    c.need_inputs(3, 5);
    const Shape& x = c.shape(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (!c.const_ints(1, starts) || !c.const_ints(2, ends)) {
        c.set(0, c.elem(0), Shape(x.size(), unknown_dim()));
        return;
    }
    if (c.has(3) && !c.const_ints(3, axes)) c.fail("the axes input must be constant");
    if (c.has(4) && !c.const_ints(4, steps)) c.fail("the steps input must be constant");
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        c.fail("starts, ends, axes and steps must have the same length");
    Shape out = x;
    for (size_t i = 0; i < starts.size(); ++i) {
        const size_t a = static_cast<size_t>(c.axis(axes[i], x.size(), "axes value"));
        if (steps[i] == 0) c.fail("steps must not be 0");
        if (!x[a].known()) {
            out[a] = unknown_dim();
            continue;
        }
        const int64_t dim = x[a].v;
        auto clampi = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); };
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
        // ceil(span / |step|) without overflow: a step may be as large as int64 allows.
        auto count = [](int64_t span, int64_t step) {
            const uint64_t mag = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
            return span > 0 ? static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / mag + 1) : int64_t{0};
        };
        if (steps[i] > 0) {
            s = clampi(s, 0, dim);
            e = clampi(e, 0, dim);
            out[a] = Dim::of(count(e - s, steps[i]));
        } else {
            s = clampi(s, 0, dim - 1);
            e = clampi(e, -1, dim - 1);
            out[a] = Dim::of(count(s - e, steps[i]));
        }
    }
    c.set(0, c.elem(0), out);
}

void gather(InferCtx& c) {
    c.need_inputs(2, 2);
    const Shape& x = c.shape(0);
    if (c.elem(1) != ref::ElemType::Int64 && c.elem(1) != ref::ElemType::Int32)
        c.fail("indices must be int32 or int64");
    const size_t axis = static_cast<size_t>(c.axis(c.attrs().get_int("axis", 0), x.size()));
    Shape out(x.begin(), x.begin() + static_cast<long>(axis));
    for (const Dim& d : c.shape(1)) out.push_back(d);
    for (size_t i = axis + 1; i < x.size(); ++i) out.push_back(x[i]);
    c.set(0, c.elem(0), out);
}

void pad(InferCtx& c) {
    c.need_inputs(1, 4);
    const Shape& x = c.shape(0);
    std::vector<int64_t> pads;
    if (c.attrs().has("pads"))
        pads = c.attrs().ints("pads");
    else if (!c.const_ints(1, pads)) {
        c.set(0, c.elem(0), Shape(x.size(), unknown_dim()));
        return;
    }
    if (c.has(2)) c.same_type(0, 2);
    std::vector<int64_t> axes;
    if (c.has(3) && !c.const_ints(3, axes)) c.fail("the axes input must be constant");
    if (axes.empty())
        for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (pads.size() != 2 * axes.size())
        c.fail("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(axes.size()) +
               " axes");
    Shape out = x;
    for (size_t i = 0; i < axes.size(); ++i) {
        const size_t a = static_cast<size_t>(c.axis(axes[i], x.size(), "axes value"));
        const int64_t both = dim_checked(pads[i], pads[i + axes.size()], '+');
        out[a] = x[a].known() ? Dim::of(dim_checked(x[a].v, both, '+')) : dim_add(x[a], Dim::of(both));
    }
    c.set(0, c.elem(0), out);
}

void expand(InferCtx& c) {
    c.need_inputs(2, 2);
    std::vector<int64_t> s;
    if (!c.const_ints(1, s)) c.fail("the shape input must be constant");
    c.set(0, c.elem(0), broadcast_shapes(c, c.shape(0), make_shape(s)));
}

void tile(InferCtx& c) {
    c.need_inputs(2, 2);
    const Shape& x = c.shape(0);
    std::vector<int64_t> r;
    if (!c.const_ints(1, r)) c.fail("the repeats input must be constant");
    if (r.size() != x.size())
        c.fail("repeats has " + std::to_string(r.size()) + " values for rank " + std::to_string(x.size()));
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) out.push_back(dim_mul(x[i], Dim::of(r[i])));
    c.set(0, c.elem(0), out);
}

void set_const(InferCtx& c, ref::HostTensor t) {
    c.set(0, t.type, make_shape(t.shape));
    c.graph().val(c.node().outputs[0]).constant = std::make_shared<const ConstValue>(std::move(t));
}

void shape_op(InferCtx& c) {
    c.need_inputs(1, 1);
    const Shape& x = c.shape(0);
    const int64_t r = static_cast<int64_t>(x.size());
    int64_t b = c.attrs().get_int("start", 0), e = c.attrs().get_int("end", r);
    b = std::clamp(b < 0 ? b + r : b, int64_t{0}, r);
    e = std::clamp(e < 0 ? e + r : e, int64_t{0}, r);
    const Shape part(x.begin() + b, x.begin() + std::max(b, e));
    if (!all_known(part)) {
        c.set(0, ref::ElemType::Int64, {Dim::of(static_cast<int64_t>(part.size()))});
        return;
    }
    ref::HostTensor t(ref::ElemType::Int64, {static_cast<int64_t>(part.size())});
    for (size_t i = 0; i < part.size(); ++i) t.data[i] = static_cast<double>(part[i].v);
    set_const(c, std::move(t));
}

void size_op(InferCtx& c) {
    c.need_inputs(1, 1);
    const Dim n = dim_product(c.shape(0));
    if (!n.known()) {
        c.set(0, ref::ElemType::Int64, {});
        return;
    }
    ref::HostTensor t(ref::ElemType::Int64, {});
    t.data[0] = static_cast<double>(n.v);
    set_const(c, std::move(t));
}

void constant_of_shape(InferCtx& c) {
    c.need_inputs(1, 1);
    std::vector<int64_t> s;
    if (!c.const_ints(0, s)) c.fail("the shape input must be constant");
    // The constant is built on the host (8 bytes per element): bounded, like any host tensor.
    constexpr uint64_t kMaxElements = uint64_t{1} << 26;
    uint64_t count = 1;
    for (int64_t d : s) {
        if (d < 0) c.fail("the shape has a negative dimension");
        if (d != 0 && count > kMaxElements / static_cast<uint64_t>(d))
            c.fail("the constant is larger than " + std::to_string(kMaxElements) + " elements");
        count *= static_cast<uint64_t>(d);
    }
    ref::HostTensor t(ref::ElemType::Float, s);
    if (const ref::Attr* v = c.attrs().find("value"); v && v->t) {
        t.type = v->t->type;
        if (v->t->data.size() != 1) c.fail("value must hold one element");
        std::fill(t.data.begin(), t.data.end(), v->t->data[0]);
    }
    set_const(c, std::move(t));
}

void range(InferCtx& c) {
    c.need_inputs(3, 3);
    const ref::HostTensor* s = c.constant(0);
    const ref::HostTensor* l = c.constant(1);
    const ref::HostTensor* d = c.constant(2);
    if (!s || !l || !d) c.fail("start, limit and delta must be constant");
    if (s->data.size() != 1 || l->data.size() != 1 || d->data.size() != 1)
        c.fail("start, limit and delta must be scalars");
    if (d->data[0] == 0) c.fail("delta must not be 0");
    const double n = std::max(0.0, std::ceil((l->data[0] - s->data[0]) / d->data[0]));
    ref::HostTensor t(c.elem(0), {static_cast<int64_t>(n)});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = s->data[0] + static_cast<double>(i) * d->data[0];
    ref::round_to_type(t);
    set_const(c, std::move(t));
}

void reduce(InferCtx& c) {
    c.need_inputs(1, 2);
    if (ref::reduce_axes_from_input(c.node().op_type, c.opset()) && c.attrs().has("axes"))
        c.fail("attribute 'axes' is not part of " + c.node().op_type + " at opset " + std::to_string(c.opset()) +
               " (the axes are input 1 from opset " + (c.node().op_type == "ReduceSum" ? "13" : "18") +
               "); give them as an input or declare an older opset");
    const Shape& x = c.shape(0);
    bool given;
    const std::vector<int64_t> axes = axes_of(c, 1, given);
    const bool keep = c.attrs().get_int("keepdims", 1) != 0;
    const bool noop = c.attrs().get_int("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && noop) {
        c.set(0, c.elem(0), x);
        return;
    }
    std::set<int64_t> red;
    for (int64_t a : axes) red.insert(c.axis(a, x.size(), "axes value"));
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
        const bool r = axes.empty() || red.count(static_cast<int64_t>(i));
        if (!r)
            out.push_back(x[i]);
        else if (keep)
            out.push_back(Dim::of(1));
    }
    c.set(0, c.elem(0), out);
}

void arg_reduce(InferCtx& c) {
    c.need_inputs(1, 1);
    const Shape& x = c.shape(0);
    const int64_t axis = c.axis(c.attrs().get_int("axis", 0), x.size());
    const bool keep = c.attrs().get_int("keepdims", 1) != 0;
    Shape out;
    for (size_t i = 0; i < x.size(); ++i) {
        if (static_cast<int64_t>(i) != axis)
            out.push_back(x[i]);
        else if (keep)
            out.push_back(Dim::of(1));
    }
    c.set(0, ref::ElemType::Int64, out);
}

}  // namespace

SFUMATO_REGISTER_INFER(reshape, reshape, "Reshape");
SFUMATO_REGISTER_INFER(flatten, flatten, "Flatten");
SFUMATO_REGISTER_INFER(squeeze, squeeze, "Squeeze");
SFUMATO_REGISTER_INFER(unsqueeze, unsqueeze, "Unsqueeze");
SFUMATO_REGISTER_INFER(transpose, transpose, "Transpose");
SFUMATO_REGISTER_INFER(concat, concat, "Concat");
SFUMATO_REGISTER_INFER(split, split, "Split");
SFUMATO_REGISTER_INFER(slice, slice, "Slice");
SFUMATO_REGISTER_INFER(gather, gather, "Gather");
SFUMATO_REGISTER_INFER(pad, pad, "Pad");
SFUMATO_REGISTER_INFER(expand, expand, "Expand");
SFUMATO_REGISTER_INFER(tile, tile, "Tile");
SFUMATO_REGISTER_INFER(shape, shape_op, "Shape");
SFUMATO_REGISTER_INFER(size, size_op, "Size");
SFUMATO_REGISTER_INFER(constant_of_shape, constant_of_shape, "ConstantOfShape");
SFUMATO_REGISTER_INFER(range, range, "Range");
SFUMATO_REGISTER_INFER(reduce, reduce, "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare");
SFUMATO_REGISTER_INFER(arg_reduce, arg_reduce, "ArgMax", "ArgMin");

}  // namespace sfumato::graph
