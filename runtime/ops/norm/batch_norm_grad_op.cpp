// The BatchNormalization training backward on NC1HWC0 tensors as two graph nodes (sfumato-only
// op types a training step emits; host references in runtime/ref/batch_norm_grad.cpp), each on
// the fused kernels of bn_train_kernel.h:
// - BatchNormGradReduce(X, dY, batch_mean, batch_var, scale; epsilon) -> [5, C] fp32 (dscale,
//   dB, and the coefficients a, b, c of dX = a dy + b x + c): one pass reading X and dY (sum dy
//   and sum (x - mean) dy per channel, partials per work item) and a finalize kernel;
// - BatchNormGradApply(X, dY, coefficients) -> dX (NC1HWC0, dY's type): one pass.
// X and dY: NC1HWC0, the same shape and float type, channels filling whole C0 blocks (no padding
// channel enters a sum); anything else is refused naming the input.
#include "runtime/ops/norm/bn_train_kernel.h"
#include "runtime/ops/norm/common.h"

namespace sfumato::ops::norm {

namespace {

// X and dY as the fused kernels take them: [N, C1, L, C0] storage of whole C0 blocks.
BnTrainPlan bn_grad_plan(const NodeDesc& n, BnTrainPlan::Kind kind) {
    const TensorRef& x = need_input(n, 0, "X");
    const TensorRef& dy = need_input(n, 1, "dY");
    for (const TensorRef* t : {&x, &dy}) {
        const char* what = t == &x ? "X" : "dY";
        if (t->format != Format::NC1HWC0 || !t->contiguous())
            throw UnsupportedError(n, std::string(what) + " must be a contiguous NC1HWC0 tensor");
        NodeDesc probe = n;
        probe.inputs[t == &x ? 0 : 1].format = Format::ND;
        float_input(probe, t == &x ? 0 : 1, what);
    }
    if (dy.shape != x.shape || dy.dtype != x.dtype)
        throw UnsupportedError(n, "dY " + ref::shape_str(dy.shape) + " must have X's shape " + ref::shape_str(x.shape) +
                                      " and type");
    const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(x.dtype));
    if (x.shape.size() < 3 || x.shape[1] % cb != 0)
        throw UnsupportedError(n, "X needs spatial dims and whole C0 blocks of channels (C " +
                                      (x.shape.size() > 1 ? std::to_string(x.shape[1]) : std::string("none")) +
                                      ", C0 " + std::to_string(cb) + ")");
    BnTrainPlan p;
    p.kind = kind;
    p.xt = x.dtype;
    p.N = static_cast<uint64_t>(x.shape[0]), p.C1 = static_cast<uint64_t>(x.shape[1] / cb);
    p.C0 = static_cast<uint64_t>(cb);
    p.L = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) p.L *= static_cast<uint64_t>(x.shape[d]);
    if (p.N * p.L == 0) throw UnsupportedError(n, "X has no element");
    return p;
}

void channel_input(const NodeDesc& n, size_t i, const char* what, uint64_t count, bool fp32) {
    const TensorRef& t = need_input(n, i, what);
    const isa::DType dt = float_input(n, i, what);
    if (t.numel() != count)
        throw UnsupportedError(n, std::string("input '") + what + "' has " + std::to_string(t.numel()) +
                                      " values, want " + std::to_string(count));
    if (fp32 && dt != isa::DType::FP32) throw UnsupportedError(n, std::string("input '") + what + "' must be fp32");
}

uint64_t bn_grad_align512(uint64_t b) { return (b + 511) / 512 * 512; }

class BatchNormGradReduceOp : public INodeOp {
public:
    BatchNormGradReduceOp(const NodeDesc& n, const DeviceInfo& dev) : m_name(n.name), m_dev(dev) {
        m_p = bn_grad_plan(n, BnTrainPlan::Kind::GradStats);
        const uint64_t C = m_p.C();
        channel_input(n, 2, "batch_mean", C, true);
        channel_input(n, 3, "batch_var", C, true);
        channel_input(n, 4, "scale", C, false);
        const double eps = n.attrs.get_float("epsilon", 1e-5);
        if (!(eps > 0)) throw UnsupportedError(n, "epsilon must be > 0");
        if (!plan_bn(m_p, dev.ub_bytes, dev.vector_cores)) throw UnsupportedError(n, "not one C0 row of X fits in UB");
        BnTrainFinalPlan& f = m_f;
        f.grad = true;
        f.C1 = m_p.C1, f.C0 = m_p.C0, f.S = m_p.S;
        f.inv_m = 1.0 / static_cast<double>(m_p.N * m_p.L), f.eps = eps;
        f.scale_t = n.inputs[4].dtype;
        if (!plan_bn_final(f, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, std::to_string(m_p.S) + " partial sums per channel block do not fit in UB");
        m_out = make_tensor({5, static_cast<int64_t>(C)}, ref::ElemType::Float);
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return bn_grad_align512(m_p.S * m_p.C() * 2 * 4); }
    std::string describe() const override {
        return "one pass over X and dY (sum dy, sum (x - mean) dy per channel; " + std::to_string(m_p.S) +
               " partials per channel block), finalize";
    }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        BnTrainPlan p = m_p;
        BnTrainFinalPlan f = m_f;
        p.x = in[0].addr, p.dy = in[1].addr, p.mean = in[2].addr, p.part = f.part = ws;
        f.mean = in[2].addr, f.var = in[3].addr, f.scale = in[4].addr, f.coef = out[0].addr;
        const uint64_t n = in[0].numel(), bytes = in[0].storage_bytes();
        const double passes = p.xt == isa::DType::FP32 ? 3 : 5;  // conversions, sum, centre, sum of products
        return {vector_launch(m_name + "/reduce", "BatchNormGradReduce", p.blocks,
                              [p](isa::IInstrSink& k) { bn_kernel(k, p); }, 4.0 * static_cast<double>(n), 2 * bytes,
                              passes, n, m_dev),
                vector_launch(m_name + "/finalize", "BatchNormGradReduce", f.blocks,
                              [f](isa::IInstrSink& k) { bn_final_kernel(k, f); }, 14.0 * static_cast<double>(p.C()),
                              (p.S * 2 + 8) * p.C() * 4, 14, p.C(), m_dev)};
    }

private:
    std::string m_name;
    DeviceInfo m_dev;
    BnTrainPlan m_p;
    BnTrainFinalPlan m_f;
    TensorRef m_out;
};

class BatchNormGradApplyOp : public INodeOp {
public:
    BatchNormGradApplyOp(const NodeDesc& n, const DeviceInfo& dev) : m_name(n.name), m_dev(dev) {
        m_p = bn_grad_plan(n, BnTrainPlan::Kind::GradApply);
        channel_input(n, 2, "coefficients", 5 * m_p.C(), true);
        if (!plan_bn(m_p, dev.ub_bytes, dev.vector_cores)) throw UnsupportedError(n, "not one C0 row of X fits in UB");
        m_out = n.inputs[1];
        m_out.addr = 0;
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return "dX = a dy + b x + c, one pass over X and dY"; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        BnTrainPlan p = m_p;
        p.x = in[0].addr, p.dy = in[1].addr, p.coef = in[2].addr, p.y = out[0].addr;
        const uint64_t n = in[0].numel(), bytes = in[0].storage_bytes();
        const double passes = p.xt == isa::DType::FP32 ? 3 : 5;  // conversions or a copy out, a dy + c, + b x
        return {vector_launch(m_name, "BatchNormGradApply", p.blocks, [p](isa::IInstrSink& k) { bn_kernel(k, p); },
                              4.0 * static_cast<double>(n), 3 * bytes, passes, n, m_dev)};
    }

private:
    std::string m_name;
    DeviceInfo m_dev;
    BnTrainPlan m_p;
    TensorRef m_out;
};

std::unique_ptr<INodeOp> make_bn_grad_reduce(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<BatchNormGradReduceOp>(n, d);
}
std::unique_ptr<INodeOp> make_bn_grad_apply(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<BatchNormGradApplyOp>(n, d);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(batch_norm_grad_reduce, "BatchNormGradReduce", make_bn_grad_reduce);
SFUMATO_REGISTER_NODE_OP(batch_norm_grad_apply, "BatchNormGradApply", make_bn_grad_apply);

}  // namespace sfumato::ops::norm
