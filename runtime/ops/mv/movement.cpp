// Graph-node face of the data-movement operators. Each op becomes a list of copy jobs — "this
// strided view of an input (or a constant) goes to this region of an output" — and every job is
// an elementwise Identity plan (runtime/ops/ew/plan.h), so the broadcast forms, row tiling,
// ragged tails and strided gathers are shared with the elementwise kernels. All jobs of a node
// run in one kernel launch, one after the other on every core, with a pipe barrier between
// them. Transpose = one permuted view; Slice = one view with offset and (possibly negative)
// steps; Concat/Split = one job per input/output region; Expand = a broadcast view; Tile = a
// broadcast view over [r0, d0, r1, d1, ...]; Pad = the interior plus border slabs filled with
// the value (a constant, or a stride-0 view of the constant_value input) or mirrored/clamped/wrapped views (reflect, edge, wrap); Gather with
// constant indices = one job per run of consecutive indices. The reshape family (Reshape,
// Flatten, Squeeze, Unsqueeze) are views of a contiguous input: no kernel.
// Gather with run-time indices: runtime/ops/mv/gather_rt.h, or the embedding row gather
// (runtime/ops/llm/embedding.h) for an axis-0 table larger than the L2 or the UB.
// Simplified: reflect pads wider than the axis minus one are not supported (no multi-bounce).
#include <algorithm>
#include <memory>

#include "runtime/ops/ew/kernel.h"
#include "runtime/ops/llm/embedding.h"
#include "runtime/ops/mv/gather_rt.h"
#include "runtime/ops/node_op.h"
#include "runtime/ref/broadcast.h"
#include "runtime/ref/movement_shapes.h"

namespace sfumato::ops::mv {

using ew::EwIn;
using ew::Plan;

namespace {

std::vector<int64_t> strides_of(const TensorRef& t) { return t.strides.empty() ? ref::contiguous_strides(t.shape) : t.strides; }

struct Job {
    Plan plan;
    int in = -1;   // input tensor index, -1 = a constant fill
    size_t out = 0;
    uint64_t in_elems = 0;
};

class MvNodeOp : public INodeOp {
public:
    MvNodeOp(const NodeDesc& n, const DeviceInfo& dev) : m_n(n), m_dev(dev) {
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            const TensorRef& t = n.inputs[i];
            if (!t.present) continue;
            const bool c0 = t.format == Format::NC1HWC0 && n.op_type == "Concat";  // see concat()
            if (t.format != Format::ND && !c0)
                throw UnsupportedError(n, "input " + std::to_string(i) + " in format " +
                                              format_name(t.format));
        }
        if (n.inputs.empty() || !n.inputs[0].present) throw UnsupportedError(n, "needs input 0");
        const std::string& op = n.op_type;
        if (op == "Transpose") transpose();
        else if (op == "Concat") concat();
        else if (op == "Split") split();
        else if (op == "Slice") slice();
        else if (op == "Pad") pad();
        else if (op == "Expand") expand();
        else if (op == "Tile") tile();
        else if (op == "Gather") gather();
        else view();
    }

    std::vector<TensorRef> outputs() const override { return m_outs; }
    int view_of(size_t out) const override { return out == 0 && m_view ? 0 : -1; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        if (m_rt) return m_rt->launches(in, out, ws);
        if (m_jobs.empty()) return {};
        auto plans = std::make_shared<std::vector<Plan>>();
        uint32_t blocks = 1;
        uint64_t bytes = 0;
        for (const Job& j : m_jobs) {
            Plan p = j.plan;
            if (j.in >= 0) p.in_addr[0] = in.at(static_cast<size_t>(j.in)).addr;
            p.out_addr = out.at(j.out).addr;
            blocks = std::max(blocks, p.block_dim);
            bytes += j.in_elems * isa::dtype_size(p.in.empty() ? p.out_storage : p.in[0].storage) +
                     ref::numel_of(p.out_shape) * isa::dtype_size(p.out_storage);
            plans->push_back(std::move(p));
        }
        KernelDesc k;
        k.name = m_n.name + " [" + summary() + "]";
        k.type = m_n.op_type;
        k.kind = KernelKind::Vector;
        k.block_dim = blocks;
        k.bytes = bytes;
        k.flops = 0;
        k.body = [plans](isa::IInstrSink& s) {
            for (size_t j = 0; j < plans->size(); ++j) {
                if (j) {
                    kernel::KernelContext c(s);
                    c.pipe_barrier(isa::Pipe::ALL);  // the next job reuses the UB
                }
                ew::ew_kernel(s, (*plans)[j]);
            }
        };
        return {k};
    }

    uint64_t workspace_bytes() const override { return m_rt ? m_rt->workspace_bytes() : 0; }

    std::string describe() const override {
        if (m_rt) return m_rt->describe();
        if (m_view) return "view of input 0 (no kernel)";
        std::string s = std::to_string(m_jobs.size()) + " copy job(s): " + summary();
        if (!m_jobs.empty()) s += " | first: " + m_jobs[0].plan.describe({"input"});
        return s;
    }

private:
    std::string summary() const {
        std::string s;
        for (const Job& j : m_jobs) {
            const std::string f = j.in < 0 ? "fill" : j.plan.short_form();
            if (s.find(f) == std::string::npos) s += (s.empty() ? "" : ", ") + f;
        }
        return s;
    }

    const TensorRef& x() const { return m_n.inputs[0]; }

    TensorRef out_like(const std::vector<int64_t>& shape, const TensorRef& t) const {
        TensorRef o = t;
        o.shape = shape;
        o.strides.clear();
        o.format = Format::ND;
        o.addr = 0;
        return o;
    }

    // out[region] = view of input `in` (shape = the region's shape).
    void copy_job(int in, size_t out, const std::vector<int64_t>& shape, const std::vector<int64_t>& in_strides, int64_t in_base,
                  const std::vector<int64_t>& out_strides = {}, int64_t out_base = 0) {
        if (ref::numel_of(shape) == 0) return;
        const TensorRef& t = m_n.inputs.at(static_cast<size_t>(in));
        EwIn e;
        e.shape = shape;
        e.strides = in_strides;
        for (size_t d = 0; d < shape.size(); ++d)
            if (shape[d] == 1) e.strides[d] = 0;
        e.base = in_base;
        e.storage = t.dtype;
        e.elem = t.elem;
        Job j;
        j.in = in;
        j.out = out;
        j.in_elems = ref::numel_of(shape);
        j.plan = ew::make_ew_plan({m_n.name, "Identity", m_n.opset, {}}, {e}, shape, m_outs[out].dtype, m_outs[out].elem, m_dev,
                                  out_strides, out_base);
        m_jobs.push_back(std::move(j));
    }

    void fill_job(size_t out, const std::vector<int64_t>& shape, double value, const std::vector<int64_t>& out_strides,
                  int64_t out_base) {
        if (ref::numel_of(shape) == 0) return;
        ref::HostTensor v(m_outs[out].elem, {});
        v.data[0] = value;
        ref::round_to_type(v);
        EwIn e;
        e.storage = m_outs[out].dtype;
        e.elem = m_outs[out].elem;
        e.constant = &v;
        Job j;
        j.out = out;
        j.plan = ew::make_ew_plan({m_n.name, "Identity", m_n.opset, {}}, {e}, shape, m_outs[out].dtype, m_outs[out].elem, m_dev,
                                  out_strides, out_base);
        m_jobs.push_back(std::move(j));
    }

    const ref::HostTensor* need_const(size_t i, const char* what) const {
        if (!m_n.has_input(i)) return nullptr;
        const ref::HostTensor* c = m_n.constant(i);
        if (!c) throw UnsupportedError(m_n, std::string("input ") + std::to_string(i) + " (" + what + ") must be a constant to plan");
        return c;
    }

    void transpose() {
        const auto perm = ref::transpose_perm(m_n.name, m_n.attrs, static_cast<int64_t>(x().shape.size()));
        const auto st = strides_of(x());
        std::vector<int64_t> shape, s;
        for (int64_t p : perm) shape.push_back(x().shape[static_cast<size_t>(p)]), s.push_back(st[static_cast<size_t>(p)]);
        m_outs = {out_like(shape, x())};
        copy_job(0, 0, shape, s, 0);
    }

    void concat() {
        std::vector<std::vector<int64_t>> shapes;
        std::vector<int> idx;
        for (size_t i = 0; i < m_n.inputs.size(); ++i)
            if (m_n.inputs[i].present) shapes.push_back(m_n.inputs[i].shape), idx.push_back(static_cast<int>(i));
        const int64_t axis = ref::concat_axis(m_n.name, m_n.attrs, shapes);
        m_outs = {out_like(ref::concat_shape(m_n.name, axis, shapes), x())};
        for (size_t i = 0; i < idx.size(); ++i)
            if (m_n.inputs[static_cast<size_t>(idx[i])].dtype != x().dtype) throw UnsupportedError(m_n, "inputs differ in type");
        if (x().format == Format::NC1HWC0) return concat_c0(idx, axis);
        const auto ost = ref::contiguous_strides(m_outs[0].shape);
        int64_t off = 0;
        for (size_t i = 0; i < idx.size(); ++i) {
            const TensorRef& t = m_n.inputs[static_cast<size_t>(idx[i])];
            copy_job(idx[i], 0, t.shape, strides_of(t), 0, ost, off * ost[static_cast<size_t>(axis)]);
            off += t.shape[static_cast<size_t>(axis)];
        }
    }

    // NC1HWC0 inputs joined along the channels (the layout pass keeps them so): whole C1 blocks
    // of [N, C1, pixels x C0] side by side, so every input but the last has whole blocks (the
    // last one's zero padding is the output's).
    void concat_c0(const std::vector<int>& idx, int64_t axis) {
        const TensorRef& out = m_outs[0];
        const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(out.dtype));
        if (axis != 1 || out.shape.size() < 3)
            throw UnsupportedError(m_n, "NC1HWC0 inputs joined other than along the channels (axis 1)");
        int64_t l = cb;
        for (size_t d = 2; d < out.shape.size(); ++d) l *= out.shape[d];
        const int64_t n = out.shape[0], c1_out = (out.shape[1] + cb - 1) / cb;
        const std::vector<int64_t> ost = {c1_out * l, l, 1};
        int64_t off = 0;
        for (size_t i = 0; i < idx.size(); ++i) {
            const TensorRef& t = m_n.inputs[static_cast<size_t>(idx[i])];
            if (t.format != Format::NC1HWC0 || !t.contiguous())
                throw UnsupportedError(m_n, "NC1HWC0 and ND inputs mixed");
            if (i + 1 < idx.size() && t.shape[1] % cb != 0)
                throw UnsupportedError(m_n, "NC1HWC0 input " + std::to_string(idx[i]) + " of " +
                                                std::to_string(t.shape[1]) +
                                                " channels: not whole C0 blocks");
            const int64_t c1 = (t.shape[1] + cb - 1) / cb;
            copy_job(idx[i], 0, {n, c1, l}, {c1 * l, l, 1}, 0, ost, off * l);
            off += c1;
        }
        m_outs[0].format = Format::NC1HWC0;
    }

    void split() {
        const int64_t axis = ref::normalize_axis(m_n.name, "attribute 'axis'", m_n.attrs.get_int("axis", 0),
                                                 static_cast<int64_t>(x().shape.size()));
        const auto sizes = ref::split_sizes(m_n.name, m_n.opset, m_n.attrs, need_const(1, "split"), x().shape[static_cast<size_t>(axis)],
                                           m_n.num_outputs);
        const auto st = strides_of(x());
        int64_t start = 0;
        for (int64_t sz : sizes) {
            std::vector<int64_t> shape = x().shape;
            shape[static_cast<size_t>(axis)] = sz;
            m_outs.push_back(out_like(shape, x()));
            copy_job(0, m_outs.size() - 1, shape, st, start * st[static_cast<size_t>(axis)]);
            start += sz;
        }
    }

    void slice() {
        const auto s = ref::slice_spec(m_n.name, m_n.opset, m_n.attrs, x().shape, need_const(1, "starts"), need_const(2, "ends"),
                                       need_const(3, "axes"), need_const(4, "steps"));
        const auto st = strides_of(x());
        std::vector<int64_t> vs(st.size());
        int64_t base = 0;
        // An axis the output keeps one element of is never stepped: its step may be anything up to
        // INT64_MAX (ONNX clamps only starts and ends), and its stride in elements would overflow.
        // Where the output has two or more, |step| < the axis's length, so the product fits.
        for (size_t d = 0; d < st.size(); ++d)
            vs[d] = s.out_shape[d] > 1 ? st[d] * s.step[d] : 0, base += st[d] * s.start[d];
        m_outs = {out_like(s.out_shape, x())};
        copy_job(0, 0, s.out_shape, vs, base);
    }

    void expand() {
        const ref::HostTensor* shape = need_const(1, "shape");
        if (!shape) throw UnsupportedError(m_n, "input 1 (shape) is required");
        const auto out = ref::broadcast_shapes(m_n.name, {x().shape, ref::int_values(*shape)});
        m_outs = {out_like(out, x())};
        // Strides of the input over the output's dims: 0 where it broadcasts.
        const auto st = strides_of(x());
        std::vector<int64_t> s(out.size(), 0);
        for (size_t k = 0; k < x().shape.size(); ++k) {
            const size_t d = out.size() - x().shape.size() + k;
            s[d] = x().shape[k] == 1 ? 0 : st[k];
        }
        copy_job(0, 0, out, s, 0);
    }

    void tile() {
        const ref::HostTensor* rt = need_const(1, "repeats");
        if (!rt) throw UnsupportedError(m_n, "input 1 (repeats) is required");
        const auto rep = ref::int_values(*rt);
        const size_t r = x().shape.size();
        if (rep.size() != r) throw UnsupportedError(m_n, "repeats has " + std::to_string(rep.size()) + " values for rank " + std::to_string(r));
        const auto st = strides_of(x());
        std::vector<int64_t> out, view, vs;
        for (size_t d = 0; d < r; ++d) {
            if (rep[d] < 0) throw UnsupportedError(m_n, "negative repeat");
            out.push_back(x().shape[d] * rep[d]);
            view.push_back(rep[d]), vs.push_back(0);
            view.push_back(x().shape[d]), vs.push_back(st[d]);
        }
        m_outs = {out_like(out, x())};
        copy_job(0, 0, view, vs, 0);  // [r0, d0, r1, d1, ...] is the output's own layout
    }

    void pad() {
        // A constant_value known only at run time fills from its device copy (a stride-0 view).
        const bool value_input = m_n.has_input(2) && !m_n.constant(2) && m_n.inputs[2].numel() > 0;
        const auto p = ref::pad_spec(m_n.name, m_n.opset, m_n.attrs, x().shape, need_const(1, "pads"),
                                     value_input ? nullptr : need_const(2, "constant_value"), need_const(3, "axes"));
        m_outs = {out_like(p.out_shape, x())};
        const size_t r = x().shape.size();
        const auto st = strides_of(x());
        const auto ost = ref::contiguous_strides(p.out_shape);
        // Per dim: segments (out start, width, input base index, input step); segment 1 is the interior.
        struct Seg {
            int64_t o0, w, i0, step;
            bool pad;
        };
        std::vector<std::vector<Seg>> segs(r);
        for (size_t d = 0; d < r; ++d) {
            const int64_t n = x().shape[d], b = p.begin[d], e = p.end[d];
            // (-b is not formed for b below -n: INT64_MIN has no negation.)
            const int64_t crop_l = b >= 0 ? 0 : b < -n ? n + 1 : -b, crop_r = e >= 0 ? 0 : e < -n ? n + 1 : -e;
            // A negative pad crops; cropping more than the axis holds (which a larger pad on the
            // other side can hide from the output's size) is no valid Pad.
            if (crop_l > n || crop_r > n - crop_l)
                throw UnsupportedError(m_n, "pads " + std::to_string(b) + " and " + std::to_string(e) + " on axis " +
                                                std::to_string(d) + " of size " + std::to_string(n) +
                                                " crop more than the axis holds");
            const int64_t lw = std::max<int64_t>(0, b), rw = std::max<int64_t>(0, e), mid = n - crop_l - crop_r;
            auto side = [&](int64_t o0, int64_t w, bool left) -> Seg {
                if (p.mode == "constant") return {o0, w, 0, 0, true};
                if (p.mode == "edge") return {o0, w, left ? 0 : n - 1, 0, false};
                if (p.mode == "wrap") {
                    if (w > n) throw UnsupportedError(m_n, "wrap pad wider than the axis");
                    return {o0, w, left ? n - w : 0, 1, false};
                }
                if (w > n - 1) throw UnsupportedError(m_n, "reflect pad of " + std::to_string(w) + " on an axis of " + std::to_string(n));
                return {o0, w, left ? w : n - 2, -1, false};
            };
            if (lw) segs[d].push_back(side(0, lw, true));
            segs[d].push_back({lw, mid, crop_l, 1, false});
            if (rw) segs[d].push_back(side(lw + mid, rw, false));
        }
        // Every combination of segments is one region (constant mode: any padded segment fills).
        std::vector<size_t> pick(r, 0);
        while (true) {
            std::vector<int64_t> shape, is;
            int64_t ibase = 0, obase = 0;
            bool fill = false;
            for (size_t d = 0; d < r; ++d) {
                const Seg& s = segs[d][pick[d]];
                shape.push_back(s.w);
                is.push_back(s.step * st[d]);
                ibase += s.i0 * st[d];
                obase += s.o0 * ost[d];
                fill = fill || s.pad;
            }
            if (fill && value_input)
                copy_job(2, 0, shape, std::vector<int64_t>(r, 0), 0, ost, obase);
            else if (fill)
                fill_job(0, shape, p.value, ost, obase);
            else copy_job(0, 0, shape, is, ibase, ost, obase);
            size_t d = r;
            while (d-- > 0) {
                if (++pick[d] < segs[d].size()) break;
                pick[d] = 0;
            }
            if (d == static_cast<size_t>(-1) || r == 0) break;
        }
    }

    void gather() {
        const TensorRef& idx = m_n.inputs.at(1);
        const int64_t axis = ref::normalize_axis(m_n.name, "attribute 'axis'", m_n.attrs.get_int("axis", 0),
                                                 static_cast<int64_t>(x().shape.size()));
        std::vector<int64_t> out(x().shape.begin(), x().shape.begin() + axis);
        out.insert(out.end(), idx.shape.begin(), idx.shape.end());
        out.insert(out.end(), x().shape.begin() + axis + 1, x().shape.end());
        m_outs = {out_like(out, x())};
        const ref::HostTensor* c = m_n.constant(1);
        if (!c) {
            m_rt = llm::embedding_gather_applies(m_n, m_dev, axis) ? llm::make_embedding_gather(m_n, m_dev, m_outs[0])
                                                                    : make_gather_rt(m_n, m_dev, axis, m_outs[0]);
            return;
        }
        const int64_t dim = x().shape[static_cast<size_t>(axis)];
        std::vector<int64_t> ids = ref::int_values(*c);
        for (int64_t& v : ids) {
            if (v < -dim || v >= dim) throw InputError("node '" + m_n.name + "' (Gather): index " + std::to_string(v) + " out of range for an axis of " + std::to_string(dim));
            if (v < 0) v += dim;
        }
        int64_t pre = 1, post = 1;
        for (int64_t d = 0; d < axis; ++d) pre *= x().shape[static_cast<size_t>(d)];
        for (size_t d = static_cast<size_t>(axis) + 1; d < x().shape.size(); ++d) post *= x().shape[d];
        const int64_t nidx = static_cast<int64_t>(ids.size());
        if (!x().contiguous()) throw UnsupportedError(m_n, "a strided data input");
        for (int64_t k = 0; k < nidx;) {
            int64_t run = 1;
            while (k + run < nidx && ids[static_cast<size_t>(k + run)] == ids[static_cast<size_t>(k)] + run) ++run;
            copy_job(0, 0, {pre, run, post}, {dim * post, post, 1}, ids[static_cast<size_t>(k)] * post, {nidx * post, post, 1},
                     k * post);
            k += run;
        }
    }

    void view() {
        const ref::HostTensor* in1 = nullptr;
        if (m_n.op_type != "Identity" && m_n.op_type != "Flatten") {
            const bool attr_form = (m_n.op_type == "Reshape" && m_n.opset < 5) ||
                                   ((m_n.op_type == "Squeeze" || m_n.op_type == "Unsqueeze") && m_n.opset < 13);
            if (!attr_form) in1 = need_const(1, m_n.op_type == "Reshape" ? "shape" : "axes");
        }
        const auto shape = ref::view_shape(m_n.name, m_n.op_type, m_n.opset, m_n.attrs, x().shape, in1);
        m_outs = {out_like(shape, x())};
        if (x().contiguous()) {
            m_view = true;
            return;
        }
        // A strided input: materialise it contiguously in the input's shape order.
        copy_job(0, 0, x().shape, strides_of(x()), 0);
    }

    NodeDesc m_n;
    DeviceInfo m_dev;
    std::vector<TensorRef> m_outs;
    std::vector<Job> m_jobs;
    bool m_view = false;
    std::unique_ptr<INodeOp> m_rt;  // Gather with indices known only at run time
};

std::unique_ptr<INodeOp> make(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<MvNodeOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(transpose, "Transpose", make);
SFUMATO_REGISTER_NODE_OP(concat, "Concat", make);
SFUMATO_REGISTER_NODE_OP(split, "Split", make);
SFUMATO_REGISTER_NODE_OP(slice, "Slice", make);
SFUMATO_REGISTER_NODE_OP(pad, "Pad", make);
SFUMATO_REGISTER_NODE_OP(expand, "Expand", make);
SFUMATO_REGISTER_NODE_OP(tile, "Tile", make);
SFUMATO_REGISTER_NODE_OP(gather, "Gather", make);
SFUMATO_REGISTER_NODE_OP(reshape, "Reshape", make);
SFUMATO_REGISTER_NODE_OP(flatten, "Flatten", make);
SFUMATO_REGISTER_NODE_OP(squeeze, "Squeeze", make);
SFUMATO_REGISTER_NODE_OP(unsqueeze, "Unsqueeze", make);

}  // namespace sfumato::ops::mv
