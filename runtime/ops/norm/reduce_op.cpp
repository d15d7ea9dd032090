// Graph-node faces of ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp (axes as an attribute, or
// as an input for ReduceSum from opset 13 and the others from 18, which must then be a plan-time
// constant; keepdims; noop_with_empty_axes) and of GlobalAveragePool / GlobalMaxPool. The
// reduced dims are canonicalised (size-1 dims dropped, neighbours with the same role merged);
// each remaining group of reduced dims is one pass of the reduction kernel
// (runtime/ops/norm/reduce_kernel.h), innermost first, intermediates in fp32 (int32 for
// integer tensors) in the op's workspace. ArgMax/ArgMin are one pass of the same kernel. Pre-ops (square,
// abs) apply in the first pass, post-ops (1/count, sqrt, ln) in the last; LogSumExp passes compose.
// A sfumato-only attribute `fp32_output` (int) writes a float reduction's result in fp32 whatever
// the input's type (the training step's BatchNorm statistics).
// GlobalAveragePool / GlobalMaxPool also take an NC1HWC0 input (fp16, bf16, fp32; the graph's
// layout pass keeps a ResNet's last block in it): one pass over [N x C1][spatial][C0], each C0
// lane reduced over the pixels on its own, the output NC1HWC0 [N, C, 1, ...]. The padding
// channels hold zeros and stay zero (the sum, the mean and the maximum of zeros), so the valid
// values are those of the ND reduction, in the same order.
#include <algorithm>

#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/reduce_kernel.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ref/axes.h"

namespace sfumato::ops::norm {

namespace {

using Op = ReducePlan::Op;
using Pre = ReducePlan::Pre;
using Post = ReducePlan::Post;

struct KindSpec {
    Op op = Op::Sum, later = Op::Sum;
    Pre pre = Pre::None;
    Post post = Post::None;
    bool int_ok = false;
};

KindSpec kind_of(const NodeDesc& n, bool global) {
    const std::string& t = n.op_type;
    if (global) return t == "GlobalMaxPool" ? KindSpec{Op::Max, Op::Max, Pre::None, Post::None, true}
                                            : KindSpec{Op::Sum, Op::Sum, Pre::None, Post::Scale, false};
    if (t == "ReduceSum") return {Op::Sum, Op::Sum, Pre::None, Post::None, true};
    if (t == "ReduceMean") return {Op::Sum, Op::Sum, Pre::None, Post::Scale, false};
    if (t == "ReduceMax") return {Op::Max, Op::Max, Pre::None, Post::None, true};
    if (t == "ReduceMin") return {Op::Min, Op::Min, Pre::None, Post::None, true};
    if (t == "ReduceProd") return {Op::Prod, Op::Prod, Pre::None, Post::None, true};
    if (t == "ReduceSumSquare") return {Op::Sum, Op::Sum, Pre::Square, Post::None, false};
    if (t == "ReduceL1") return {Op::Sum, Op::Sum, Pre::Abs, Post::None, false};
    if (t == "ReduceL2") return {Op::Sum, Op::Sum, Pre::Square, Post::Sqrt, false};
    if (t == "ReduceLogSum") return {Op::Sum, Op::Sum, Pre::None, Post::Ln, false};
    return {Op::LogSumExp, Op::LogSumExp, Pre::None, Post::None, false};
}

class ReduceOp : public INodeOp {
public:
    ReduceOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        const bool global = n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool";
        const TensorRef& x = need_input(n, 0, global ? "X" : "data");
        KindSpec ks = kind_of(n, global);
        if (x.format == Format::NC1HWC0) {
            if (!global) throw UnsupportedError(n, "NC1HWC0 input: only GlobalAveragePool / GlobalMaxPool");
            plan_global_c0(n, x, ks, dev);
            return;
        }
        isa::DType ct = isa::DType::FP32;
        if (x.dtype == isa::DType::INT32 && ks.int_ok) {
            if (x.format != Format::ND || !x.contiguous()) throw UnsupportedError(n, "input 'data' layout");
            ct = isa::DType::INT32;
        } else {
            float_input(n, 0, global ? "X" : "data");
        }
        const size_t rank = x.shape.size();
        ref::ReduceAxes ra;
        if (global) {
            if (rank < 3) throw UnsupportedError(n, "input rank " + std::to_string(rank) + " < 3");
            ra.reduced.assign(rank, true);
            ra.reduced[0] = ra.reduced[1] = false;
        } else {
            const bool from_input = ref::reduce_axes_from_input(n.op_type, n.opset);
            const ref::HostTensor* axes = nullptr;
            if (from_input && n.has_input(1)) {
                axes = n.constant(1);
                if (!axes) throw UnsupportedError(n, "input 'axes' is not a plan-time constant");
            }
            ra = ref::reduce_axes(n.name, n.attrs, !from_input, axes, rank);
        }
        if (ra.noop) ks = {Op::Sum, Op::Sum, Pre::None, Post::None, true};  // the output is the input
        m_out = tensor_like(x, ref::reduced_shape(x.shape, ra));
        if (n.attrs.get_int("fp32_output", 0) != 0 && ct == isa::DType::FP32)
            m_out.elem = ref::ElemType::Float, m_out.dtype = isa::DType::FP32;
        if (x.numel() == 0) {
            if (m_out.numel() != 0) throw UnsupportedError(n, "reduction of an empty tensor");
            return;
        }
        // Canonical dims: size-1 dims dropped, neighbours with the same role merged.
        std::vector<uint64_t> dims;
        std::vector<bool> red;
        uint64_t count = 1;
        for (size_t d = 0; d < rank; ++d) {
            const uint64_t s = static_cast<uint64_t>(x.shape[d]);
            const bool r = !ra.noop && ra.reduced[d];
            if (r) count *= s;
            if (s == 1) continue;
            if (!dims.empty() && red.back() == r) dims.back() *= s;
            else dims.push_back(s), red.push_back(r);
        }
        // Passes, innermost reduced group first.
        std::vector<ReducePlan> passes;
        for (size_t j = dims.size(); j-- > 0;) {
            if (!red[j]) continue;
            ReducePlan p;
            p.outer = 1, p.inner = 1;
            for (size_t d = 0; d < j; ++d) p.outer *= dims[d];
            for (size_t d = j + 1; d < dims.size(); ++d) p.inner *= dims[d];
            p.len = dims[j];
            passes.push_back(p);
            dims.erase(dims.begin() + static_cast<long>(j));
            red.erase(red.begin() + static_cast<long>(j));
        }
        if (passes.empty()) {  // nothing to reduce: a copy
            ReducePlan p;
            p.outer = 1, p.len = 1, p.inner = x.numel();
            passes.push_back(p);
        }
        for (size_t i = 0; i < passes.size(); ++i) {
            ReducePlan& p = passes[i];
            const bool first = i == 0, last = i + 1 == passes.size();
            p.op = first ? ks.op : ks.later;
            p.pre = first ? ks.pre : Pre::None;
            if (last) p.post = ks.post, p.scale = 1.0 / static_cast<double>(count);
            p.ct = ct;
            p.xt = first ? x.dtype : ct;
            p.yt = last ? m_out.dtype : ct;
            if (!plan_reduce(p, dev.ub_bytes, dev.vector_cores))
                throw UnsupportedError(n, "a reduction of " + std::to_string(p.len) + " x " + std::to_string(p.inner) +
                                              " does not fit in UB");
            if (!last) m_ws = std::max(m_ws, up(p.outer * p.inner * 4, 512));
            m_form += (m_form.empty() ? "" : "; ") + std::string(p.rows ? "rows" : "columns") + " " +
                      std::to_string(p.outer) + "x" + std::to_string(p.len) + "x" + std::to_string(p.inner);
        }
        m_passes = passes;
    }

    // GlobalAveragePool / GlobalMaxPool of an NC1HWC0 X: [N x C1][pixels][C0] -> [N x C1][C0].
    void plan_global_c0(const NodeDesc& n, const TensorRef& x, const KindSpec& ks, const DeviceInfo& dev) {
        if (x.dtype != isa::DType::FP16 && x.dtype != isa::DType::BF16 && x.dtype != isa::DType::FP32)
            throw UnsupportedError(n, "NC1HWC0 input 'X' of a type other than fp16, bf16, fp32");
        if (x.shape.size() < 3 || !x.contiguous())
            throw UnsupportedError(n, "NC1HWC0 input 'X' of rank " + std::to_string(x.shape.size()) +
                                          " (needs N, C and spatial dims, contiguous)");
        std::vector<int64_t> yshape(x.shape.size(), 1);
        yshape[0] = x.shape[0], yshape[1] = x.shape[1];
        m_out = tensor_like(x, yshape);
        m_out.format = Format::NC1HWC0;
        if (x.numel() == 0) throw UnsupportedError(n, "global pooling of an empty tensor");
        const uint64_t c0 = 32 / isa::dtype_size(x.dtype);
        const uint64_t c1 = (static_cast<uint64_t>(x.shape[1]) + c0 - 1) / c0;
        ReducePlan p;
        p.outer = static_cast<uint64_t>(x.shape[0]) * c1;
        p.len = 1;
        for (size_t d = 2; d < x.shape.size(); ++d) p.len *= static_cast<uint64_t>(x.shape[d]);
        p.inner = c0;
        p.op = ks.op;
        p.pre = ks.pre, p.post = ks.post;
        p.scale = 1.0 / static_cast<double>(p.len);
        p.ct = isa::DType::FP32;
        p.xt = p.yt = x.dtype;
        if (!plan_reduce(p, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, "a reduction of " + std::to_string(p.len) + " x " +
                                          std::to_string(p.inner) + " does not fit in UB");
        m_form = std::string(p.rows ? "rows" : "columns") + " " + std::to_string(p.outer) + "x" +
                 std::to_string(p.len) + "x" + std::to_string(p.inner) + " (NC1HWC0: C0 lanes)";
        m_passes = {p};
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_passes.size() > 2 ? 2 * m_ws : m_ws; }
    std::string describe() const override { return m_form; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        std::vector<KernelDesc> ks;
        uint64_t src = in[0].addr;
        for (size_t i = 0; i < m_passes.size(); ++i) {
            ReducePlan p = m_passes[i];
            const bool last = i + 1 == m_passes.size();
            p.x = src;
            p.y = last ? out[0].addr : ws + (i % 2) * m_ws;
            const uint64_t n = p.outer * p.len * p.inner;
            const uint64_t bytes = n * isa::dtype_size(p.xt) + p.outer * p.inner * isa::dtype_size(p.yt);
            ks.push_back(vector_launch(m_node.name, m_node.op_type, p.blocks,
                                       [p](isa::IInstrSink& s) { reduce_kernel(s, p); }, static_cast<double>(n), bytes,
                                       1 + (p.xt == p.ct ? 0 : 1), n, m_dev));
            src = p.y;
        }
        return ks;
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    std::vector<ReducePlan> m_passes;
    uint64_t m_ws = 0;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_reduce(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<ReduceOp>(n, d); }

// ArgMax / ArgMin: one pass over [outer][axis][inner], int64 indices stored as int32.
class ArgOp : public INodeOp {
public:
    ArgOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        const TensorRef& x = need_input(n, 0, "data");
        if (x.dtype != isa::DType::INT32) float_input(n, 0, "data");
        if (x.format != Format::ND || !x.contiguous()) throw UnsupportedError(n, "input 'data' layout");
        const size_t rank = x.shape.size();
        const size_t ax = static_cast<size_t>(ref::normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", 0), rank));
        const bool keep = n.attrs.get_int("keepdims", 1) != 0;
        std::vector<int64_t> shape;
        for (size_t d = 0; d < rank; ++d) {
            if (d != ax) shape.push_back(x.shape[d]);
            else if (keep) shape.push_back(1);
        }
        m_out = make_tensor(shape, ref::ElemType::Int64);
        if (x.numel() == 0) return;
        const ref::AxisView v = ref::axis_view(x.shape, ax, ax + 1);
        ReducePlan& p = m_plan;
        p.op = n.op_type == "ArgMax" ? Op::ArgMax : Op::ArgMin;
        p.select_last = n.attrs.get_int("select_last_index", 0) != 0;
        p.xt = x.dtype, p.ct = isa::DType::FP32, p.yt = isa::DType::INT32;
        p.outer = v.outer, p.len = v.len, p.inner = v.inner;
        if (!plan_reduce(p, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, "an axis of " + std::to_string(v.len) + " x " + std::to_string(v.inner) +
                                          " does not fit in UB");
        m_form = std::string(p.rows ? "rows" : "columns") + ", compare + select against positions";
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_out.numel() == 0) return {};
        ReducePlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr;
        const uint64_t n = p.outer * p.len * p.inner;
        return {vector_launch(m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { reduce_kernel(s, p); },
                              static_cast<double>(n), n * isa::dtype_size(p.xt) + m_out.numel() * 4, 4, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    ReducePlan m_plan;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_arg(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<ArgOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(reduce_sum, "ReduceSum", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_mean, "ReduceMean", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_max, "ReduceMax", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_min, "ReduceMin", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_prod, "ReduceProd", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_sum_square, "ReduceSumSquare", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_l1, "ReduceL1", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_l2, "ReduceL2", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_log_sum, "ReduceLogSum", make_reduce);
SFUMATO_REGISTER_NODE_OP(reduce_log_sum_exp, "ReduceLogSumExp", make_reduce);
SFUMATO_REGISTER_NODE_OP(global_average_pool, "GlobalAveragePool", make_reduce);
SFUMATO_REGISTER_NODE_OP(global_max_pool, "GlobalMaxPool", make_reduce);
SFUMATO_REGISTER_NODE_OP(arg_max, "ArgMax", make_arg);
SFUMATO_REGISTER_NODE_OP(arg_min, "ArgMin", make_arg);

}  // namespace sfumato::ops::norm
