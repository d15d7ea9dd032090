// Graph-node faces of MaxPool (opsets 1-12: kernel_shape, strides, pads, dilations, ceil_mode,
// auto_pad; float and int8/uint8 inputs) and AveragePool (count_include_pad; no dilation before
// opset 19), 1 to 3 spatial dims, on the pooling kernel (runtime/ops/norm/pool_kernel.h). The
// geometry (output size, SAME padding, ceil-mode rule) is ref::pool_geometry, shared with the
// reference. MaxPool's optional Indices output (flat index, row- or column-major) is int32 on the
// device. An NC1HWC0 input (1 or 2 spatial dims, no Indices) pools its N x C1 planes over
// (spatial..., C0) with a window of 1 over C0: the output is NC1HWC0, the zero padding channels
// stay zero. A 2-D MaxPool of dilation 1 on NC1HWC0 runs pool_c0_kernel.h instead (a vmax of whole
// C0 rows per tap, no gather).
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/pool_c0_kernel.h"
#include "runtime/ops/norm/pool_kernel.h"
#include "runtime/ref/axes.h"
#include "runtime/ref/pool.h"

namespace sfumato::ops::norm {

namespace {

class PoolOp : public INodeOp {
public:
    PoolOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        const bool is_max = n.op_type == "MaxPool";
        const TensorRef& x = need_input(n, 0, "X");
        const bool int_ok = is_max && (x.dtype == isa::DType::UINT8 || x.dtype == isa::DType::INT8);
        const bool c0 = x.format == Format::NC1HWC0;
        if (c0 && x.dtype != isa::DType::FP16 && x.dtype != isa::DType::BF16 && x.dtype != isa::DType::FP32)
            throw UnsupportedError(n, "NC1HWC0 input 'X' of a type other than fp16, bf16, fp32");
        if (!int_ok && !c0) float_input(n, 0, "X");
        if ((x.format != Format::ND && !c0) || !x.contiguous()) throw UnsupportedError(n, "input 'X' layout");
        const ref::PoolGeom g = ref::pool_geometry(n.name, n.op_type, n.attrs, x.shape);
        // NC1HWC0: pooling over (spatial..., C0) of the N x C1 planes with a window of 1 over C0.
        const size_t dims = g.spatial + (c0 ? 1 : 0);
        if (g.spatial < 1 || dims > static_cast<size_t>(kMaxPoolDims))
            throw UnsupportedError(n, std::to_string(g.spatial) +
                                          " spatial dims (supported: 1 to 3, NC1HWC0 1 to 2)");
        if (c0 && n.num_outputs > 1) throw UnsupportedError(n, "Indices of an NC1HWC0 input");
        std::vector<int64_t> yshape = {x.shape[0], x.shape[1]};
        yshape.insert(yshape.end(), g.out.begin(), g.out.end());
        m_out = tensor_like(x, yshape);
        m_out.format = x.format;
        if (is_max && n.num_outputs > 1) {
            m_indices = make_tensor(yshape, ref::ElemType::Int64);
            m_plan.indices = true;
            m_plan.storage_order = g.storage_order;
            const uint64_t total = static_cast<uint64_t>(ref::dim_product(x.shape, 0, x.shape.size()));
            if (total > static_cast<uint64_t>(INT32_MAX)) throw UnsupportedError(n, "Indices beyond int32");
        }
        if (m_out.numel() == 0) return;
        PoolPlan& p = m_plan;
        p.is_max = is_max;
        p.count_include_pad = g.count_include_pad;
        p.xt = x.dtype;
        const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(x.dtype));
        p.planes = static_cast<uint64_t>(x.shape[0] * (c0 ? (x.shape[1] + cb - 1) / cb : x.shape[1]));
        p.nd = static_cast<int>(dims);
        for (size_t i = 0; i < g.spatial; ++i) {
            p.in[i] = g.in[i], p.out[i] = g.out[i], p.k[i] = g.kernel[i], p.s[i] = g.stride[i];
            p.d[i] = g.dilation[i], p.pb[i] = g.pad_begin[i], p.pe[i] = g.pad_end[i];
            if (!is_max && p.d[i] != 1) throw UnsupportedError(n, "AveragePool with dilations");
        }
        if (c0 && is_max && g.spatial == 2 && g.dilation[0] == 1 && g.dilation[1] == 1 && !m_plan.indices) {
            PoolC0Plan& q = m_c0;
            q.xt = x.dtype, q.planes = p.planes;
            q.H = g.in[0], q.W = g.in[1], q.OH = g.out[0], q.OW = g.out[1], q.kh = g.kernel[0], q.kw = g.kernel[1];
            q.sh = g.stride[0], q.sw = g.stride[1], q.pt = g.pad_begin[0], q.pl = g.pad_begin[1];
            if (plan_pool_c0(q, dev.ub_bytes, dev.vector_cores)) {
                m_c0_form = true;
                m_form = "NC1HWC0: a vmax of whole C0 rows per tap, " + std::to_string(q.ob) + " output rows per band";
                return;
            }
        }
        if (c0) p.in[g.spatial] = p.out[g.spatial] = cb;  // window 1, stride 1, no pads over C0
        if (!plan_pool(p, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, "the pooling window does not fit in UB (or padding beyond 255 elements)");
        m_form = "gather per tap: " + std::to_string(p.tp) + " planes per tile";
    }

    std::vector<TensorRef> outputs() const override {
        if (m_plan.indices) return {m_out, m_indices};
        return {m_out};
    }
    std::string describe() const override { return m_form; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_out.numel() == 0) return {};
        if (m_c0_form) {
            PoolC0Plan q = m_c0;
            q.x = in[0].addr, q.y = out[0].addr;
            const uint64_t taps = static_cast<uint64_t>(q.kh * q.kw), es = isa::dtype_size(q.xt);
            const uint64_t on = m_out.storage_bytes() / es;
            // Per tap one vmax over the output in the storage type.
            return {vector_launch(m_node.name, m_node.op_type, q.blocks, [q](isa::IInstrSink& s) { pool_c0_kernel(s, q); },
                                  static_cast<double>(on * taps), in[0].storage_bytes() + m_out.storage_bytes(),
                                  static_cast<double>(taps) * static_cast<double>(es) / 4.0, on, m_dev)};
        }
        PoolPlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr;
        if (p.indices && (out.size() < 2 || !out[1].present)) p.indices = false;
        if (p.indices) p.ind = out[1].addr;
        uint64_t taps = 1;
        for (int i = 0; i < p.nd; ++i) taps *= static_cast<uint64_t>(p.k[i]);
        const uint64_t es = isa::dtype_size(p.xt), on = m_out.storage_bytes() / es;
        // Compute bound: per tap one gather (8 cycles per repeat on the presets, counted as 8
        // passes) plus the max/add and the offset update.
        return {vector_launch(m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { pool_kernel(s, p); },
                              static_cast<double>(on * taps), in[0].storage_bytes() + on * es,
                              static_cast<double>(taps) * 10.0, on, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out, m_indices;
    PoolPlan m_plan;
    PoolC0Plan m_c0;
    bool m_c0_form = false;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_pool(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<PoolOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(max_pool, "MaxPool", make_pool);
SFUMATO_REGISTER_NODE_OP(average_pool, "AveragePool", make_pool);

}  // namespace sfumato::ops::norm
