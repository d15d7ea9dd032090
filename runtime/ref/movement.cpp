// Host references of the data-movement operators in ONNX semantics (opsets 1-18): Transpose,
// Concat, Split, Slice, Gather, Pad (constant/reflect/edge), Expand, Tile, and the reshape
// family (Reshape, Flatten, Squeeze, Unsqueeze, Identity). Attribute-vs-input changes follow
// the opset: Split's `split`, Squeeze/Unsqueeze's `axes` (inputs from 13), Slice's starts/ends
// (inputs from 10), Pad's pads/value (inputs from 11). Split without sizes takes its output
// count from attribute `num_outputs` (ONNX 18; importers set it for older opsets too).
#include <algorithm>
#include <limits>

#include "runtime/ref/broadcast.h"
#include "runtime/ref/movement_shapes.h"
#include "runtime/ref/node_checks.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

using In = std::vector<const HostTensor*>;

const HostTensor* opt(const In& in, size_t i) { return i < in.size() ? in[i] : nullptr; }

// Copies elements: out[i] = x[index(i)] for every output multi-index.
HostTensor gather_by(const HostTensor& x, const std::vector<int64_t>& out_shape,
                     const std::function<int64_t(const std::vector<int64_t>&)>& src) {
    HostTensor r(x.type, out_shape);
    std::vector<int64_t> idx(out_shape.size(), 0);
    for (uint64_t i = 0; i < r.data.size(); ++i) {
        const int64_t s = src(idx);
        r.data[i] = s < 0 ? 0.0 : x.data[static_cast<size_t>(s)];
        for (size_t d = out_shape.size(); d-- > 0;) {
            if (++idx[d] < out_shape[d]) break;
            idx[d] = 0;
        }
    }
    return r;
}

int64_t flat(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * strides[d];
    return o;
}

std::vector<HostTensor> transpose(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    const std::vector<int64_t> perm = transpose_perm(n.name, n.attrs, static_cast<int64_t>(x.rank()));
    std::vector<int64_t> shape;
    for (int64_t p : perm) shape.push_back(x.shape[static_cast<size_t>(p)]);
    const auto st = contiguous_strides(x.shape);
    return {gather_by(x, shape, [&](const std::vector<int64_t>& o) {
        int64_t s = 0;
        for (size_t d = 0; d < o.size(); ++d) s += o[d] * st[static_cast<size_t>(perm[d])];
        return s;
    })};
}

std::vector<HostTensor> concat(const RefNode& n, const In& in) {
    std::vector<std::vector<int64_t>> shapes;
    for (const HostTensor* t : in)
        if (t) shapes.push_back(t->shape);
    const int64_t axis = concat_axis(n.name, n.attrs, shapes);
    const std::vector<int64_t> out = concat_shape(n.name, axis, shapes);
    HostTensor r(need(n, in, 0).type, out);
    uint64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= static_cast<uint64_t>(out[static_cast<size_t>(d)]);
    size_t w = 0;
    for (uint64_t o = 0; o < outer; ++o)
        for (const HostTensor* t : in) {
            if (!t) continue;
            const uint64_t chunk = t->numel() / std::max<uint64_t>(outer, 1);
            for (uint64_t k = 0; k < chunk; ++k) r.data[w++] = t->data[o * chunk + k];
        }
    return {r};
}

std::vector<HostTensor> split(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    const int64_t axis = normalize_axis(n.name, "axis", n.attrs.get_int("axis", 0), static_cast<int64_t>(x.rank()));
    const std::vector<int64_t> sizes = split_sizes(n.name, n.opset, n.attrs, opt(in, 1), x.shape[static_cast<size_t>(axis)], n.num_outputs);
    std::vector<HostTensor> outs;
    int64_t start = 0;
    for (int64_t s : sizes) {
        std::vector<int64_t> shape = x.shape;
        shape[static_cast<size_t>(axis)] = s;
        const auto st = contiguous_strides(x.shape);
        const int64_t base = start;
        outs.push_back(gather_by(x, shape, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> i = o;
            i[static_cast<size_t>(axis)] += base;
            return flat(i, st);
        }));
        start += s;
    }
    return outs;
}

std::vector<HostTensor> slice(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    const SliceSpec s = slice_spec(n.name, n.opset, n.attrs, x.shape, opt(in, 1), opt(in, 2), opt(in, 3), opt(in, 4));
    const auto st = contiguous_strides(x.shape);
    return {gather_by(x, s.out_shape, [&](const std::vector<int64_t>& o) {
        int64_t f = 0;
        for (size_t d = 0; d < o.size(); ++d) f += (s.start[d] + o[d] * s.step[d]) * st[d];
        return f;
    })};
}

std::vector<HostTensor> gather(const RefNode& n, const In& in) {
    const HostTensor &x = need(n, in, 0), &idx = need(n, in, 1);
    const int64_t axis = normalize_axis(n.name, "axis", n.attrs.get_int("axis", 0), static_cast<int64_t>(x.rank()));
    const int64_t dim = x.shape[static_cast<size_t>(axis)];
    std::vector<int64_t> ids = int_values(idx);
    for (int64_t& v : ids) {
        if (v < -dim || v >= dim)
            throw InputError("node '" + n.name + "' (Gather): index " + std::to_string(v) + " out of range for axis of size " + std::to_string(dim));
        if (v < 0) v += dim;
    }
    std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + axis);
    shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
    shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
    const auto st = contiguous_strides(x.shape);
    const auto ist = contiguous_strides(idx.shape);
    const size_t a = static_cast<size_t>(axis), q = idx.shape.size();
    return {gather_by(x, shape, [&](const std::vector<int64_t>& o) {
        int64_t f = 0;
        for (size_t d = 0; d < a; ++d) f += o[d] * st[d];
        int64_t k = 0;
        for (size_t d = 0; d < q; ++d) k += o[a + d] * ist[d];
        f += ids[static_cast<size_t>(k)] * st[a];
        for (size_t d = a + 1; d < x.rank(); ++d) f += o[d + q - 1] * st[d];
        return f;
    })};
}

std::vector<HostTensor> pad(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    const PadSpec p = pad_spec(n.name, n.opset, n.attrs, x.shape, opt(in, 1), opt(in, 2), opt(in, 3));
    const auto st = contiguous_strides(x.shape);
    const size_t r = x.rank();
    HostTensor out = gather_by(x, p.out_shape, [&](const std::vector<int64_t>& o) -> int64_t {
        int64_t f = 0;
        for (size_t d = 0; d < r; ++d) {
            int64_t i = o[d] - p.begin[d];
            const int64_t dim = x.shape[d];
            if (i < 0 || i >= dim) {
                if (p.mode == "constant") return -1;
                if (p.mode == "edge") i = std::clamp<int64_t>(i, 0, dim - 1);
                else if (p.mode == "wrap") i = ((i % dim) + dim) % dim;
                else {  // reflect (no edge repeat)
                    const int64_t period = 2 * (dim - 1);
                    i = period == 0 ? 0 : ((i % period) + period) % period;
                    if (i >= dim) i = period - i;
                }
            }
            f += i * st[d];
        }
        return f;
    });
    if (p.mode == "constant") {
        // gather_by wrote 0 for padding; put the pad value there.
        std::vector<int64_t> idx(r, 0);
        for (uint64_t i = 0; i < out.data.size(); ++i) {
            bool inside = true;
            for (size_t d = 0; d < r; ++d) inside = inside && idx[d] >= p.begin[d] && idx[d] - p.begin[d] < x.shape[d];
            if (!inside) out.data[i] = p.value;
            for (size_t d = r; d-- > 0;) {
                if (++idx[d] < p.out_shape[d]) break;
                idx[d] = 0;
            }
        }
        round_to_type(out);
    }
    return {out};
}

std::vector<HostTensor> expand(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    const std::vector<int64_t> shape = int_values(need(n, in, 1));
    return {broadcast_to(x, broadcast_shapes(n.name, {x.shape, shape}))};
}

std::vector<HostTensor> tile(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    const std::vector<int64_t> rep = int_values(need(n, in, 1));
    if (rep.size() != x.rank())
        throw InputError("node '" + n.name + "' (Tile): repeats has " + std::to_string(rep.size()) + " values for rank " + std::to_string(x.rank()));
    std::vector<int64_t> shape;
    for (size_t d = 0; d < x.rank(); ++d) {
        if (rep[d] < 0) throw InputError("node '" + n.name + "' (Tile): negative repeat " + std::to_string(rep[d]));
        shape.push_back(x.shape[d] * rep[d]);
    }
    const auto st = contiguous_strides(x.shape);
    return {gather_by(x, shape, [&](const std::vector<int64_t>& o) {
        int64_t f = 0;
        for (size_t d = 0; d < o.size(); ++d) f += (o[d] % x.shape[d]) * st[d];
        return f;
    })};
}

std::vector<HostTensor> reshape_like(const RefNode& n, const In& in) {
    const HostTensor& x = need(n, in, 0);
    HostTensor r = x;
    r.shape = view_shape(n.name, n.op_type, n.opset, n.attrs, x.shape, opt(in, 1));
    return {r};
}

}  // namespace

SFUMATO_REGISTER_REF(transpose, "Transpose", transpose);
SFUMATO_REGISTER_REF(concat, "Concat", concat);
SFUMATO_REGISTER_REF(split, "Split", split);
SFUMATO_REGISTER_REF(slice, "Slice", slice);
SFUMATO_REGISTER_REF(gather, "Gather", gather);
SFUMATO_REGISTER_REF(pad, "Pad", pad);
SFUMATO_REGISTER_REF(expand, "Expand", expand);
SFUMATO_REGISTER_REF(tile, "Tile", tile);
SFUMATO_REGISTER_REF(reshape, "Reshape", reshape_like);
SFUMATO_REGISTER_REF(flatten, "Flatten", reshape_like);
SFUMATO_REGISTER_REF(squeeze, "Squeeze", reshape_like);
SFUMATO_REGISTER_REF(unsqueeze, "Unsqueeze", reshape_like);

}  // namespace sfumato::ref
