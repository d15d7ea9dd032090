// BatchNormTraining (sfumato-only op type: BatchNormalization in a training step, as
// `sfumato train-step` runs every BatchNormalization of the model). Inputs X (N, C, ...), scale,
// B, input_mean, input_var (C); attributes epsilon (1e-5) and momentum (0.9); outputs Y,
// running_mean, running_var (input * momentum + batch * (1 - momentum), ONNX's training-mode
// rule), batch_mean and batch_var (fp32, over every dim but 1, population variance: what Y used,
// kept for the backward; fp32 whatever X's type, as the frameworks keep them). Composed from the operator
// library's kernels, launched in order:
//   1. batch_mean = ReduceMean(X) over every dim but 1 (the reduction kernel, fp32 sums);
//   2. D = (X - batch_mean) / sqrt(M) (an elementwise chain into the workspace, fp32;
//      M = N x spatial);
//   3. batch_var = ReduceSumSquare(D);
//   4. Y = the inference BatchNormalization kernel with batch_mean and batch_var as statistics;
//   5. running_mean, running_var: MovingAverage(input, batch) (vector, C elements each).
// The variance comes from the centred values (a second pass over X) rather than from
// E[x^2] - E[x]^2, which cancels in a 2-byte type; X is read three times, D written and read once.
// An NC1HWC0 X (a training step's layout pass keeps it so) with whole C0 blocks of channels runs
// the vendor's structure instead (bn_train_kernel.h): one statistics pass accumulating sum and
// sum of squares per channel in fp32 (the variance E[x^2] - mean^2 in fp32), a small update
// kernel (statistics, apply coefficients, running statistics), and one apply pass Y = a X + c
// (attribute relu = 1: max(Y, 0)); Y comes out in
// NC1HWC0. X is read twice, Y written once.
#include <cmath>

#include "runtime/ops/norm/bn_train_kernel.h"
#include "runtime/ops/norm/common.h"

namespace sfumato::ops::norm {

namespace {

std::shared_ptr<const ref::HostTensor> scalar(ref::ElemType t, double v) {
    auto h = std::make_shared<ref::HostTensor>(t, std::vector<int64_t>{});
    h->data[0] = v;
    ref::round_to_type(*h);
    return h;
}

uint64_t align512(uint64_t b) { return (b + 511) / 512 * 512; }

class BatchNormTrainOp : public INodeOp {
public:
    BatchNormTrainOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n) {
        const TensorRef& x = need_input(n, 0, "X");
        const bool c0 = x.format == Format::NC1HWC0;
        {
            NodeDesc probe = n;  // X's type (its format is checked below)
            probe.inputs[0].format = Format::ND;
            float_input(probe, 0, "X");
        }
        if ((x.format != Format::ND && !c0) || !x.contiguous())
            throw UnsupportedError(n, "X must be a contiguous ND or NC1HWC0 tensor");
        if (x.shape.size() < 2) throw UnsupportedError(n, "X needs rank >= 2");
        const int64_t C = x.shape[1];
        // NC1HWC0 (the layout pass keeps X so): the statistics reduce the storage [N, C1,
        // pixels, C0] over N and the pixels, each lane on its own, which gives [C1, C0] = [C] when
        // C fills whole C0 blocks (no padding channel, so none enters a statistic).
        const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(x.dtype));
        if (c0 && (x.shape.size() < 3 || C % cb != 0))
            throw UnsupportedError(n, "NC1HWC0 X needs spatial dims and whole C0 blocks of channels (C " +
                                          std::to_string(C) + ", C0 " + std::to_string(cb) + ")");
        static const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
        for (size_t i = 1; i < 5; ++i) {
            const TensorRef& p = need_input(n, i, names[i]);
            float_input(n, i, names[i]);
            if (p.shape != std::vector<int64_t>{C})
                throw UnsupportedError(n, std::string(names[i]) + " must be 1-D of size C");
        }
        const double eps = n.attrs.get_float("epsilon", 1e-5), mom = n.attrs.get_float("momentum", 0.9);
        if (!(eps > 0) || !(mom >= 0 && mom <= 1))
            throw UnsupportedError(n, "epsilon must be > 0 and momentum in [0, 1]");
        std::vector<int64_t> axes;
        uint64_t m = 1;
        for (size_t d = 0; d < x.shape.size(); ++d)
            if (d != 1) {
                axes.push_back(static_cast<int64_t>(d));
                m *= static_cast<uint64_t>(x.shape[d]);
            }
        TensorRef xs = x;  // what the statistics' kernels read: X, or its NC1HWC0 storage as ND
        if (c0) {
            const int64_t pixels = static_cast<int64_t>(m) / x.shape[0];
            xs.format = Format::ND;
            xs.shape = {x.shape[0], C / cb, pixels, cb};
            axes = {0, 2};
        }
        if (m == 0) throw UnsupportedError(n, "X has no element");
        // One value per channel: the variance is 0 and every output is B, whatever X (the
        // frameworks refuse it too).
        if (m == 1)
            throw UnsupportedError(n, "batch statistics need more than one value per channel (X is " +
                                          ref::shape_str(x.shape) + "): a larger batch or image");
        const TensorRef stat = make_tensor({C}, ref::ElemType::Float),
                        running = tensor_like(n.inputs[3], {C});
        TensorRef stat_b = stat;  // (C, 1, ...): broadcast against X
        stat_b.shape.assign(x.shape.size() - 1, 1);
        stat_b.shape[0] = C;
        m_outs = {x, running, running, stat, stat};
        ref::Attrs red;
        red.set("axes", ref::Attr::of_ints(axes));
        red.set("keepdims", ref::Attr::of_int(0));
        red.set("fp32_output", ref::Attr::of_int(1));
        const TensorRef scalar_ref = make_tensor({}, ref::ElemType::Float);
        if (c0) {
            plan_c0(n, dev, xs, eps, mom, m);
            return;
        }
        sub(dev, "mean", "ReduceMean", 13, red, {xs}, {}, Slot::Out3, {Slot::In0});
        ref::Attrs chain;
        ref::Attr prog;
        prog.kind = ref::Attr::Kind::Strings;
        prog.strings = {"Sub swap=1", "Mul"};  // (X - mean) s, in fp32: the mean leads
        chain.set("program", prog);
        chain.set("fp32", ref::Attr::of_int(1));
        TensorRef d = make_tensor(xs.shape, ref::ElemType::Float);
        m_d = align512(d.storage_bytes());
        sub(dev, "centre", "ElementwiseChain", 1, chain, {stat_b, xs, scalar_ref},
            {nullptr, nullptr, scalar(ref::ElemType::Float, 1.0 / std::sqrt(static_cast<double>(m)))},
            Slot::Ws, {Slot::Out3, Slot::In0, Slot::None});
        sub(dev, "var", "ReduceSumSquare", 13, red, {d}, {}, Slot::Out4, {Slot::Ws});
        ref::Attrs bn;
        bn.set("epsilon", ref::Attr::of_float(eps));
        sub(dev, "apply", "BatchNormalization", 15, bn, {x, n.inputs[1], n.inputs[2], stat, stat}, {},
            Slot::Out0, {Slot::In0, Slot::In1, Slot::In2, Slot::Out3, Slot::Out4});
        ref::Attrs ma;
        ma.set("momentum", ref::Attr::of_float(mom));
        sub(dev, "running_mean", "MovingAverage", 1, ma, {n.inputs[3], stat}, {}, Slot::Out1,
            {Slot::In3, Slot::Out3});
        sub(dev, "running_var", "MovingAverage", 1, ma, {n.inputs[4], stat}, {}, Slot::Out2,
            {Slot::In4, Slot::Out4});
    }

    std::vector<TensorRef> outputs() const override { return m_outs; }
    uint64_t workspace_bytes() const override { return m_d + m_part + m_k + m_sub_ws; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        if (m_fused) return fused_launches(in, out, ws);
        std::vector<KernelDesc> ks;
        for (const Sub& s : m_subs) {
            std::vector<TensorRef> ins = s.in;
            for (size_t i = 0; i < ins.size(); ++i) ins[i].addr = addr(s.from[i], in, out, ws);
            TensorRef o = s.out;
            o.addr = addr(s.to, in, out, ws);
            for (KernelDesc& k : s.op->launches(ins, {o}, ws + m_d)) ks.push_back(std::move(k));
        }
        return ks;
    }

    std::string describe() const override {
        if (m_fused)
            return "NC1HWC0: one statistics pass (sum, sum of squares), update, one apply pass (" +
                   std::to_string(m_stats.S) + " partials per channel block)";
        return "batch statistics (ReduceMean, centred ReduceSumSquare), the inference kernel, running "
               "statistics";
    }

private:
    // Where a sub-kernel's operand lives: an input or output of the node, the workspace's D, or
    // nowhere (a folded constant).
    enum class Slot : uint8_t { None, In0, In1, In2, In3, In4, Out0, Out1, Out2, Out3, Out4, Ws };
    struct Sub {
        std::unique_ptr<INodeOp> op;
        std::vector<TensorRef> in;
        std::vector<Slot> from;
        TensorRef out;
        Slot to = Slot::None;
    };

    uint64_t addr(Slot s, const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                  uint64_t ws) const {
        const int k = static_cast<int>(s);
        if (s == Slot::None) return 0;
        if (s == Slot::Ws) return ws;
        if (s <= Slot::In4) return in.at(static_cast<size_t>(k - static_cast<int>(Slot::In0))).addr;
        return out.at(static_cast<size_t>(k - static_cast<int>(Slot::Out0))).addr;
    }

    void sub(const DeviceInfo& dev, const std::string& suffix, const std::string& op, int opset, ref::Attrs a,
             std::vector<TensorRef> ins, std::vector<std::shared_ptr<const ref::HostTensor>> consts, Slot to,
             std::vector<Slot> from) {
        NodeDesc c;
        c.name = m_node.name + "/" + suffix, c.op_type = op, c.opset = opset;
        a.set_owner(c.name);
        c.attrs = std::move(a);
        c.inputs = std::move(ins);
        c.constants = std::move(consts);
        Sub s{make_node_op(c, dev), c.inputs, std::move(from), {}, to};
        s.out = s.op->outputs().at(0);
        m_sub_ws = std::max(m_sub_ws, s.op->workspace_bytes());
        m_subs.push_back(std::move(s));
    }

    // NC1HWC0 X of whole C0 blocks, its storage xs = [N, C1, L, C0] as ND: the fused kernels
    // (bn_train_kernel.h) -- one statistics pass (sum and sum of squares per channel), a
    // finalize kernel (mean, variance, the apply coefficients, the running statistics), one
    // apply pass Y = a X + c.
    void plan_c0(const NodeDesc& n, const DeviceInfo& dev, const TensorRef& xs, double eps, double mom, uint64_t m) {
        BnTrainPlan& s = m_stats;
        s.xt = xs.dtype;
        s.N = static_cast<uint64_t>(xs.shape[0]), s.C1 = static_cast<uint64_t>(xs.shape[1]);
        s.L = static_cast<uint64_t>(xs.shape[2]), s.C0 = static_cast<uint64_t>(xs.shape[3]);
        m_apply = s;
        m_apply.kind = BnTrainPlan::Kind::Apply;
        m_apply.relu = n.attrs.get_int("relu", 0) != 0;
        if (!plan_bn(s, dev.ub_bytes, dev.vector_cores) || !plan_bn(m_apply, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, "not one C0 row of X fits in UB");
        BnTrainFinalPlan& f = m_final;
        f.C1 = s.C1, f.C0 = s.C0, f.S = s.S;
        f.inv_m = 1.0 / static_cast<double>(m), f.eps = eps, f.mom = mom;
        f.scale_t = n.inputs[1].dtype, f.bias_t = n.inputs[2].dtype;
        f.in_mean_t = n.inputs[3].dtype, f.in_var_t = n.inputs[4].dtype;
        if (!plan_bn_final(f, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, "the statistics of " + std::to_string(s.S) + " partial sums do not fit in UB");
        m_part = align512(s.S * s.C1 * 2 * s.C0 * 4);
        m_k = align512(2 * s.C() * 4);
        m_fused = true;
        m_dev = dev;
    }

    std::vector<KernelDesc> fused_launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                           uint64_t ws) const {
        BnTrainPlan s = m_stats, a = m_apply;
        BnTrainFinalPlan f = m_final;
        s.x = a.x = in[0].addr, a.y = out[0].addr;
        s.part = f.part = ws;
        f.coef = a.coef = ws + m_part;
        f.scale = in[1].addr, f.bias = in[2].addr, f.in_mean = in[3].addr, f.in_var = in[4].addr;
        f.rm = out[1].addr, f.rv = out[2].addr, f.mean = out[3].addr, f.var = out[4].addr;
        const uint64_t n = in[0].numel(), bytes = in[0].storage_bytes();
        const std::string& nm = m_node.name;
        const double passes_in = s.xt == isa::DType::FP32 ? 2 : 3;  // conversion, sum, square-sum
        return {vector_launch(nm + "/stats", "BatchNormTraining", s.blocks, [s](isa::IInstrSink& k) { bn_kernel(k, s); },
                              3.0 * static_cast<double>(n), bytes, passes_in, n, m_dev),
                vector_launch(nm + "/update", "BatchNormTraining", f.blocks,
                              [f](isa::IInstrSink& k) { bn_final_kernel(k, f); }, 20.0 * static_cast<double>(s.C()),
                              (s.S * 2 + 10) * s.C() * 4, 20, s.C(), m_dev),
                vector_launch(nm + "/apply", "BatchNormTraining", a.blocks, [a](isa::IInstrSink& k) { bn_kernel(k, a); },
                              2.0 * static_cast<double>(n), 2 * bytes, passes_in, n, m_dev)};
    }

    NodeDesc m_node;
    DeviceInfo m_dev;
    bool m_fused = false;
    BnTrainPlan m_stats, m_apply;
    BnTrainFinalPlan m_final;
    std::vector<TensorRef> m_outs;
    std::vector<Sub> m_subs;
    uint64_t m_d = 0, m_part = 0, m_k = 0, m_sub_ws = 0;
};

std::unique_ptr<INodeOp> make_batch_norm_train(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<BatchNormTrainOp>(n, d);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(batch_norm_train, "BatchNormTraining", make_batch_norm_train);

}  // namespace sfumato::ops::norm
