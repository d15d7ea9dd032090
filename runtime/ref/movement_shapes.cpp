#include "runtime/ref/movement_shapes.h"

#include <algorithm>
#include <limits>

#include "runtime/ref/broadcast.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {
[[noreturn]] void bad(const std::string& node, const std::string& op, const std::string& what) {
    throw InputError("node '" + node + "' (" + op + "): " + what);
}
}  // namespace

std::vector<int64_t> transpose_perm(const std::string& node, const Attrs& a, int64_t rank) {
    std::vector<int64_t> perm;
    if (a.has("perm")) perm = a.ints("perm");
    else
        for (int64_t d = rank; d-- > 0;) perm.push_back(d);
    if (static_cast<int64_t>(perm.size()) != rank)
        bad(node, "Transpose", "attribute 'perm' has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t& p : perm) {
        p = normalize_axis(node, "attribute 'perm' entry", p, rank);
        if (seen[static_cast<size_t>(p)]) bad(node, "Transpose", "attribute 'perm' repeats axis " + std::to_string(p));
        seen[static_cast<size_t>(p)] = true;
    }
    return perm;
}

int64_t concat_axis(const std::string& node, const Attrs& a, const std::vector<std::vector<int64_t>>& shapes) {
    if (shapes.empty()) bad(node, "Concat", "needs at least one input");
    if (!a.has("axis")) bad(node, "Concat", "missing attribute 'axis'");
    return normalize_axis(node, "attribute 'axis'", a.int_("axis"), static_cast<int64_t>(shapes[0].size()));
}

std::vector<int64_t> concat_shape(const std::string& node, int64_t axis, const std::vector<std::vector<int64_t>>& shapes) {
    std::vector<int64_t> out = shapes[0];
    const size_t ax = static_cast<size_t>(axis);
    for (size_t i = 1; i < shapes.size(); ++i) {
        const auto& s = shapes[i];
        if (s.size() != out.size()) bad(node, "Concat", "input " + std::to_string(i) + " has rank " + std::to_string(s.size()) + ", input 0 " + std::to_string(out.size()));
        for (size_t d = 0; d < s.size(); ++d)
            if (d != ax && s[d] != out[d])
                bad(node, "Concat", "input " + std::to_string(i) + " " + shape_str(s) + " differs from input 0 " + shape_str(shapes[0]) + " off the axis");
        out[ax] += s[ax];
    }
    return out;
}

std::vector<int64_t> split_sizes(const std::string& node, int opset, const Attrs& a, const HostTensor* split, int64_t dim,
                                 int num_outputs) {
    std::vector<int64_t> s;
    if (split) s = int_values(*split);
    else if (opset < 13 && a.has("split")) s = a.ints("split");
    if (!s.empty() || split) {
        int64_t sum = 0;
        for (int64_t v : s) {
            if (v < 0) bad(node, "Split", "negative split size " + std::to_string(v));
            sum += v;
        }
        if (sum != dim) bad(node, "Split", "split sizes sum to " + std::to_string(sum) + ", the axis has " + std::to_string(dim));
        return s;
    }
    // Opset 18: attribute num_outputs (the last part may be smaller); before, equal parts, one
    // per output the node lists.
    const int64_t n = a.get_int("num_outputs", num_outputs);
    if (n <= 0) bad(node, "Split", "no split sizes and no attribute 'num_outputs' (the number of outputs)");
    if (!a.has("num_outputs") && dim % n != 0)
        bad(node, "Split", "the axis of " + std::to_string(dim) + " does not split into " + std::to_string(n) + " equal parts");
    const int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) s.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    return s;
}

SliceSpec slice_spec(const std::string& node, int opset, const Attrs& a, const std::vector<int64_t>& shape,
                     const HostTensor* starts_t, const HostTensor* ends_t, const HostTensor* axes_t, const HostTensor* steps_t) {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset < 10) {
        starts = a.ints("starts");
        ends = a.ints("ends");
        axes = a.get_ints("axes", {});
    } else {
        if (!starts_t || !ends_t) bad(node, "Slice", "inputs 'starts' and 'ends' are required");
        starts = int_values(*starts_t);
        ends = int_values(*ends_t);
        if (axes_t) axes = int_values(*axes_t);
        if (steps_t) steps = int_values(*steps_t);
    }
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axes.empty())
        for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i) axes.push_back(i);
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        bad(node, "Slice", "starts, ends, axes and steps differ in length");
    SliceSpec s;
    s.start.assign(shape.size(), 0);
    s.step.assign(shape.size(), 1);
    s.out_shape = shape;
    std::vector<bool> seen(shape.size(), false);
    for (size_t i = 0; i < starts.size(); ++i) {
        const size_t ax = static_cast<size_t>(normalize_axis(node, "axes entry", axes[i], rank));
        if (seen[ax]) bad(node, "Slice", "axis " + std::to_string(ax) + " sliced twice");
        seen[ax] = true;
        const int64_t dim = shape[ax], step = steps[i];
        if (step == 0) bad(node, "Slice", "step 0 on axis " + std::to_string(ax));
        int64_t st = starts[i], en = ends[i];
        if (st < 0) st += dim;  // no overflow: dim >= 0
        if (en < 0) en += dim;
        if (step > 0) {
            st = std::clamp<int64_t>(st, 0, dim);
            en = std::clamp<int64_t>(en, 0, dim);
        } else {
            st = std::clamp<int64_t>(st, 0, dim - 1);
            en = std::clamp<int64_t>(en, -1, dim - 1);
        }
        // ceil(span / |step|) without overflow: a step may be as large as int64 allows.
        const int64_t span = step > 0 ? en - st : st - en;
        const uint64_t mag = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
        const int64_t len = span > 0 ? static_cast<int64_t>((static_cast<uint64_t>(span) - 1) / mag + 1) : 0;
        s.start[ax] = st;
        s.step[ax] = step;
        s.out_shape[ax] = std::max<int64_t>(0, len);
    }
    return s;
}

PadSpec pad_spec(const std::string& node, int opset, const Attrs& a, const std::vector<int64_t>& shape,
                 const HostTensor* pads_t, const HostTensor* value_t, const HostTensor* axes_t) {
    PadSpec p;
    p.mode = a.get_string("mode", "constant");
    if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge" && p.mode != "wrap")
        bad(node, "Pad", "attribute 'mode' = '" + p.mode + "' (constant, reflect, edge, wrap)");
    std::vector<int64_t> pads;
    if (opset < 11) {
        pads = a.has("pads") ? a.ints("pads") : a.get_ints("paddings", {});
        p.value = a.get_float("value", 0.0);
    } else {
        if (!pads_t) bad(node, "Pad", "input 'pads' is required");
        pads = int_values(*pads_t);
        if (value_t && value_t->numel() > 0) p.value = value_t->data[0];
    }
    const size_t r = shape.size();
    std::vector<int64_t> axes;
    if (axes_t) {
        for (int64_t ax : int_values(*axes_t)) axes.push_back(normalize_axis(node, "axes entry", ax, static_cast<int64_t>(r)));
    } else {
        for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
    }
    if (pads.size() != 2 * axes.size())
        bad(node, "Pad", "pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * axes.size()));
    p.begin.assign(r, 0);
    p.end.assign(r, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
        p.begin[static_cast<size_t>(axes[i])] = pads[i];
        p.end[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
    }
    for (size_t d = 0; d < r; ++d) {
        int64_t o = 0;
        if (__builtin_add_overflow(shape[d], p.begin[d], &o) || __builtin_add_overflow(o, p.end[d], &o))
            bad(node, "Pad", "pads on axis " + std::to_string(d) + " overflow 64 bits");
        if (o < 0) bad(node, "Pad", "pads crop axis " + std::to_string(d) + " below zero");
        if (p.mode != "constant" && shape[d] == 0 && o > 0) bad(node, "Pad", "mode '" + p.mode + "' cannot pad an empty axis");
        p.out_shape.push_back(o);
    }
    return p;
}

std::vector<int64_t> view_shape(const std::string& node, const std::string& op, int opset, const Attrs& a,
                                const std::vector<int64_t>& shape, const HostTensor* in1) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    const uint64_t n = numel_of(shape);
    if (op == "Identity") return shape;
    if (op == "Flatten") {
        int64_t axis = a.get_int("axis", 1);
        if (axis < -rank || axis > rank) bad(node, op, "attribute 'axis' = " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
        if (axis < 0) axis += rank;
        int64_t outer = 1;
        for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
        return {outer, outer ? static_cast<int64_t>(n) / outer : 0};
    }
    if (op == "Reshape") {
        std::vector<int64_t> target;
        if (opset < 5) target = a.ints("shape");
        else if (!in1) bad(node, op, "input 'shape' is required");
        else target = int_values(*in1);
        const bool allowzero = a.get_int("allowzero", 0) != 0;
        int64_t infer = -1;
        uint64_t known = 1;
        for (size_t i = 0; i < target.size(); ++i) {
            if (target[i] == 0 && !allowzero) {
                if (static_cast<int64_t>(i) >= rank) bad(node, op, "shape entry " + std::to_string(i) + " is 0 beyond the input's rank");
                target[i] = shape[i];
            }
            if (target[i] == -1) {
                if (infer >= 0) bad(node, op, "shape has more than one -1");
                infer = static_cast<int64_t>(i);
                continue;
            }
            if (target[i] < 0) bad(node, op, "shape entry " + std::to_string(target[i]) + " is negative");
            known *= static_cast<uint64_t>(target[i]);
        }
        if (infer >= 0) {
            if (known == 0 || n % known) bad(node, op, "cannot infer the -1 of shape " + shape_str(target) + " from " + shape_str(shape));
            target[static_cast<size_t>(infer)] = static_cast<int64_t>(n / known);
        }
        if (numel_of(target) != n) bad(node, op, "shape " + shape_str(target) + " does not hold the " + std::to_string(n) + " elements of " + shape_str(shape));
        return target;
    }
    std::vector<int64_t> axes;
    const bool have = opset < 13 ? a.has("axes") : in1 != nullptr;
    if (have) axes = opset < 13 ? a.ints("axes") : int_values(*in1);
    if (op == "Squeeze") {
        std::vector<bool> drop(shape.size(), false);
        if (!have) {
            for (size_t d = 0; d < shape.size(); ++d) drop[d] = shape[d] == 1;
        } else {
            for (int64_t ax : axes) {
                const size_t d = static_cast<size_t>(normalize_axis(node, "axes entry", ax, rank));
                if (shape[d] != 1) bad(node, op, "axis " + std::to_string(d) + " has size " + std::to_string(shape[d]) + ", not 1");
                drop[d] = true;
            }
        }
        std::vector<int64_t> out;
        for (size_t d = 0; d < shape.size(); ++d)
            if (!drop[d]) out.push_back(shape[d]);
        return out;
    }
    if (op == "Unsqueeze") {
        if (!have) bad(node, op, opset < 13 ? "missing attribute 'axes'" : "input 'axes' is required");
        const int64_t out_rank = rank + static_cast<int64_t>(axes.size());
        std::vector<bool> ins(static_cast<size_t>(out_rank), false);
        for (int64_t ax : axes) {
            const size_t d = static_cast<size_t>(normalize_axis(node, "axes entry", ax, out_rank));
            if (ins[d]) bad(node, op, "axis " + std::to_string(d) + " repeated");
            ins[d] = true;
        }
        std::vector<int64_t> out;
        size_t k = 0;
        for (int64_t d = 0; d < out_rank; ++d) out.push_back(ins[static_cast<size_t>(d)] ? 1 : shape[k++]);
        return out;
    }
    bad(node, op, "not a reshape-family op");
}

}  // namespace sfumato::ref
