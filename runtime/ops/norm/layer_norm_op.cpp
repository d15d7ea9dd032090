// Graph-node faces of LayerNormalization (opset 17: axis, epsilon, Scale and optional B over
// the normalised dims, optional Mean and InvStdDev outputs in fp32) and
// InstanceNormalization (statistics per (n, c) over the spatial dims, per-channel scale and
// B), both on the row kernel (runtime/ops/norm/row_kernel.h): LayerNorm over rows of the
// flattened tail with Scale/B as fp32 lane vectors held in UB for the whole kernel, and
// InstanceNorm channel-major so that each tile's scale and B are two scalars. Rows longer than
// UB take the kernel's two-pass chunked form.
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/row_kernel.h"
#include "runtime/ops/norm/row_plan.h"
#include "runtime/ref/axes.h"

namespace sfumato::ops::norm {

namespace {

class LayerNormOp : public INodeOp {
public:
    LayerNormOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        const isa::DType xt = float_input(n, 0, "X");
        const TensorRef& x = n.inputs[0];
        const size_t rank = x.shape.size();
        const size_t a = static_cast<size_t>(ref::normalize_axis_attr(n.name, "axis", n.attrs.get_int("axis", -1), rank));
        const ref::AxisView v = ref::axis_view(x.shape, a, rank);
        RowPlan& p = m_plan;
        p.kind = RowPlan::Kind::LayerNorm;
        p.xt = p.yt = xt;
        p.P = 1, p.Q = v.outer, p.sq = v.len, p.cols = v.len;
        p.eps = n.attrs.get_float("epsilon", 1e-5);
        p.affine = RowPlan::Affine::Lanes;
        p.gt = float_input(n, 1, "Scale");
        p.gamma_scalar = lane_param(n.inputs[1], v.len, "Scale");
        m_has_bias = n.has_input(2);
        if (m_has_bias) {
            p.bt = float_input(n, 2, "B");
            p.beta_scalar = lane_param(n.inputs[2], v.len, "B");
        }
        m_outs.push_back(tensor_like(x, x.shape));
        std::vector<int64_t> stat_shape = x.shape;
        for (size_t d = a; d < rank; ++d) stat_shape[d] = 1;
        const int outs = n.num_outputs > 0 ? std::min(n.num_outputs, 3) : 1;
        for (int o = 1; o < outs; ++o) m_outs.push_back(make_tensor(stat_shape, ref::ElemType::Float));
        // Plan with the statistics outputs counted (their queue takes UB).
        if (outs > 1) p.mean = 1;
        if (outs > 2) p.rstd = 1;
        if (x.numel() != 0 && !plan_rows(p, dev))
            throw UnsupportedError(n, "a normalised row of " + std::to_string(v.len) + " elements does not fit in UB");
        m_form = p.nch > 1 ? "rows: two passes over " + std::to_string(p.nch) + " chunks of " + std::to_string(p.cp)
                           : "rows: " + std::to_string(p.k) + " per tile, one pass";
    }

    std::vector<TensorRef> outputs() const override { return m_outs; }
    std::string describe() const override { return m_form; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_outs[0].numel();
        if (n == 0) return {};
        RowPlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr;
        p.gamma = in[1].addr;
        p.beta = m_has_bias ? in[2].addr : 0;
        p.mean = out.size() > 1 && out[1].present ? out[1].addr : 0;
        p.rstd = out.size() > 2 && out[2].present ? out[2].addr : 0;
        const uint64_t es = isa::dtype_size(p.xt);
        uint64_t bytes = 2 * n * es + in[1].numel() * isa::dtype_size(in[1].dtype);
        if (m_has_bias) bytes += in[2].numel() * isa::dtype_size(in[2].dtype);
        if (p.mean) bytes += p.Q * 4;
        if (p.rstd) bytes += p.Q * 4;
        const double passes = 8 + (p.xt == isa::DType::FP32 ? 0 : 2);
        return {vector_launch(m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { row_kernel(s, p); },
                              8.0 * static_cast<double>(n), bytes, passes, n, m_dev)};
    }

private:
    // true: one value for all lanes; false: one per normalised element.
    bool lane_param(const TensorRef& t, uint64_t len, const char* what) const {
        if (t.numel() == 1) return true;
        if (t.numel() == len) return false;
        throw UnsupportedError(m_node, std::string("input '") + what + "' " + ref::shape_str(t.shape) +
                                           " broadcasts within the normalised dims (only full or scalar supported)");
    }

    NodeDesc m_node;
    DeviceInfo m_dev;
    RowPlan m_plan;
    bool m_has_bias = false;
    std::vector<TensorRef> m_outs;
    std::string m_form;
};

class InstanceNormOp : public INodeOp {
public:
    InstanceNormOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        const isa::DType xt = float_input(n, 0, "input");
        const TensorRef& x = n.inputs[0];
        if (x.shape.size() < 3) throw UnsupportedError(n, "input rank " + std::to_string(x.shape.size()) + " < 3");
        const uint64_t N = static_cast<uint64_t>(x.shape[0]), C = static_cast<uint64_t>(x.shape[1]);
        const uint64_t S = ref::dim_product(x.shape, 2, x.shape.size());
        RowPlan& p = m_plan;
        p.kind = RowPlan::Kind::LayerNorm;
        p.xt = p.yt = xt;
        p.P = C, p.Q = N, p.sp = S, p.sq = C * S, p.cols = S;
        p.eps = n.attrs.get_float("epsilon", 1e-5);
        p.affine = RowPlan::Affine::PerP;
        p.gt = float_input(n, 1, "scale");
        p.bt = float_input(n, 2, "B");
        for (size_t i = 1; i <= 2; ++i)
            if (n.inputs[i].numel() != C)
                throw UnsupportedError(n, std::string("input '") + (i == 1 ? "scale" : "B") + "' has " +
                                              std::to_string(n.inputs[i].numel()) + " values for " + std::to_string(C) +
                                              " channels");
        m_out = tensor_like(x, x.shape);
        if (x.numel() != 0 && !plan_rows(p, dev))
            throw UnsupportedError(n, "a plane of " + std::to_string(S) + " elements does not fit in UB");
        m_form = "rows (channel-major): " + (p.nch > 1 ? std::to_string(p.nch) + " chunks per row, two passes"
                                                        : std::to_string(p.k) + " per tile");
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_out.numel();
        if (n == 0) return {};
        RowPlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr, p.gamma = in[1].addr, p.beta = in[2].addr;
        const uint64_t bytes = 2 * n * isa::dtype_size(p.xt) + p.P * (isa::dtype_size(p.gt) + isa::dtype_size(p.bt));
        const double passes = 7 + (p.xt == isa::DType::FP32 ? 0 : 2);
        return {vector_launch(m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { row_kernel(s, p); },
                              8.0 * static_cast<double>(n), bytes, passes, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    RowPlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_layer_norm(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<LayerNormOp>(n, d);
}
std::unique_ptr<INodeOp> make_instance_norm(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<InstanceNormOp>(n, d);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(layer_norm, "LayerNormalization", make_layer_norm);
SFUMATO_REGISTER_NODE_OP(instance_norm, "InstanceNormalization", make_instance_norm);

}  // namespace sfumato::ops::norm
