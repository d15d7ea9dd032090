// Graph-node faces of Softmax and LogSoftmax (opsets 1-17; before 13 the input is coerced to
// 2-D at `axis`). The tiling picks the row kernel when the softmax runs over contiguous
// elements (the last axis, or the flattened tail before opset 13) and the column kernel
// (strided rows, no transpose) otherwise. A row too long for UB runs in the row kernel's
// two-pass online form; a non-last axis too long for UB is unsupported (the factory says so).
#include <algorithm>

#include "runtime/ops/norm/col_kernel.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/row_kernel.h"
#include "runtime/ops/norm/row_plan.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ref/axes.h"

namespace sfumato::ops::norm {

namespace {

class SoftmaxOp : public INodeOp {
public:
    SoftmaxOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        m_log = n.op_type == "LogSoftmax";
        const isa::DType xt = float_input(n, 0, "input");
        const TensorRef& x = n.inputs[0];
        const size_t rank = x.shape.size();
        if (n.opset >= 13) {
            const int64_t a = ref::normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", -1), rank);
            m_view = ref::axis_view(x.shape, static_cast<size_t>(a), static_cast<size_t>(a) + 1);
        } else {
            const int64_t a = ref::normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", 1), rank, true);
            m_view = ref::axis_view(x.shape, static_cast<size_t>(a), rank);
        }
        m_out = tensor_like(x, x.shape);
        if (x.numel() == 0) return;
        if (m_view.inner == 1) {
            RowPlan& p = m_row;
            p.kind = m_log ? RowPlan::Kind::LogSoftmax : RowPlan::Kind::Softmax;
            p.xt = p.yt = xt;
            p.P = 1, p.Q = m_view.outer, p.sq = m_view.len, p.cols = m_view.len;
            if (!plan_rows(p, dev))
                throw UnsupportedError(n, "a row of " + std::to_string(m_view.len) + " elements does not fit in UB");
            m_form = p.nch > 1 ? "rows: two passes over " + std::to_string(p.nch) + " chunks of " + std::to_string(p.cp)
                               : "rows: " + std::to_string(p.k) + " per tile, one pass";
        } else {
            m_col_form = true;
            ColPlan& p = m_col;
            p.log = m_log;
            p.xt = p.yt = xt;
            p.outer = m_view.outer, p.len = m_view.len, p.inner = m_view.inner;
            if (!plan_cols(p, dev))
                throw UnsupportedError(n, "axis of " + std::to_string(m_view.len) + " elements does not fit in UB");
            m_form = "columns: " + std::to_string(p.g) + " x " + std::to_string(p.len) + " x " + std::to_string(p.ic) +
                     " per tile (strided rows)";
        }
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_out.numel();
        if (n == 0) return {};
        const uint64_t es = isa::dtype_size(m_out.dtype);
        const double flops = 5.0 * static_cast<double>(n);
        const double passes = 5 + (m_out.dtype == isa::DType::FP32 ? 0 : 2);
        if (!m_col_form) {
            RowPlan p = m_row;
            p.x = in[0].addr, p.y = out[0].addr;
            return {vector_launch(m_node.name, m_node.op_type, p.blocks,
                                  [p](isa::IInstrSink& s) { row_kernel(s, p); }, flops, 2 * n * es, passes, n, m_dev)};
        }
        ColPlan p = m_col;
        p.x = in[0].addr, p.y = out[0].addr;
        const WorkSplit w = split_work(p.items(), m_dev.vector_cores);
        p.per_block = w.per_block;
        return {vector_launch(m_node.name, m_node.op_type, w.blocks, [p](isa::IInstrSink& s) { col_kernel(s, p); },
                              flops, 2 * n * es, passes, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    bool m_log = false, m_col_form = false;
    ref::AxisView m_view;
    TensorRef m_out;
    RowPlan m_row;
    ColPlan m_col;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_softmax(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<SoftmaxOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(softmax, "Softmax", make_softmax);
SFUMATO_REGISTER_NODE_OP(log_softmax, "LogSoftmax", make_softmax);

}  // namespace sfumato::ops::norm
