// NonFiniteCheck(G): the overflow check of dynamic loss scaling (`sfumato train-step --precision
// mixed`) as one vector kernel over a bucket of gradients, a sfumato-only node op. Each block
// reduces a contiguous range of G: every element times zero, summed in fp32 (finite values give
// 0, an infinity or a NaN gives NaN, which the sum keeps), and writes its sum to its own 32-byte
// slot of the output, fp32 [blocks * 8] (the sum, then seven zeros). The host program reads the
// slots after the all-reduce and skips the step when any is NaN, as the frameworks' scalers read
// their found-inf flag (PyTorch's GradScaler: _amp_foreach_non_finite_check_and_unscale_, then
// .item()). The vendor's chips keep a floating-point status register that their loss-scale
// cells read instead; a reduction is what a kernel can do with the vector unit alone.
#include "runtime/kernel/api.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct NonFinitePlan {
    uint64_t g = 0, out = 0, n = 0, per_block = 0;
    uint32_t blocks = 1, tile = 0;
};

template <class T>
void nonfinite_kernel(isa::IInstrSink& sink, const NonFinitePlan& p) {
    KernelContext ctx(sink);
    const uint64_t start = ctx.block_idx() * p.per_block;
    if (start >= p.n) return;
    const uint64_t count = std::min(p.per_block, p.n - start);
    GlobalTensor<T> gg;
    GlobalTensor<float> go;
    gg.SetGlobalBuffer(p.g + start * sizeof(T), count);
    go.SetGlobalBuffer(p.out + ctx.block_idx() * 32, 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> in;
    TQue<TPosition::VECOUT> slot;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(in, 2, p.tile * sizeof(T));
    pipe.InitBuffer(slot, 1, 32);
    pipe.InitBuffer(calc, 2 * p.tile * 4);
    const LocalTensor<float> acc = calc.Get<float>(), t = acc[p.tile];
    Duplicate(acc, 0.0f, p.tile);
    for (uint64_t off = 0; off < count; off += p.tile) {
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, count - off));
        LocalTensor<T> g = in.AllocTensor<T>();
        DataCopy(g, gg[off], len);
        in.EnQue(g);
        g = in.DeQue<T>();
        if constexpr (std::is_same_v<T, float>) {
            Muls(t, g, 0.0f, len);
        } else {
            Cast(t, g, RoundMode::RINT, len);
            Muls(t, t, 0.0f, len);
        }
        in.FreeTensor(g);
        Add(acc, acc, t, len);
    }
    LocalTensor<float> s = slot.AllocTensor<float>();
    Duplicate(s, 0.0f, 8);
    ReduceSum(s, acc, p.tile);
    slot.EnQue(s);
    s = slot.DeQue<float>();
    DataCopy(go, s, 8);
    slot.FreeTensor(s);
}

class NonFiniteCheckOp : public INodeOp {
public:
    NonFiniteCheckOp(const NodeDesc& n, const DeviceInfo& dev) : m_n(n), m_dev(dev) {
        if (n.inputs.size() != 1) throw UnsupportedError(n, "needs one input, the gradients");
        const TensorRef& g = n.inputs[0];
        if (g.dtype != isa::DType::FP16 && g.dtype != isa::DType::BF16 && g.dtype != isa::DType::FP32)
            throw UnsupportedError(n, "G must be fp16, bf16 or fp32");
        if (!g.contiguous()) throw UnsupportedError(n, "G must be contiguous");
        NonFinitePlan& p = m_plan;
        p.n = g.numel();
        const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
        p.per_block = std::max<uint64_t>(16, (p.n + cores - 1) / cores);
        p.per_block = (p.per_block + 15) / 16 * 16;
        p.blocks = static_cast<uint32_t>(std::max<uint64_t>(1, (p.n + p.per_block - 1) / p.per_block));
        const uint64_t per_elem = 2 * isa::dtype_size(g.dtype) + 2 * 4;
        const uint64_t fit = dev.ub_bytes > 256 ? (dev.ub_bytes - 256) / per_elem / 64 * 64 : 0;
        if (fit == 0) throw UnsupportedError(n, "UB too small for a tile");
        p.tile = static_cast<uint32_t>(
            std::min<uint64_t>({fit, 8192, std::max<uint64_t>(64, (p.per_block + 63) / 64 * 64)}));
    }
    std::vector<TensorRef> outputs() const override {
        return {make_tensor({static_cast<int64_t>(m_plan.blocks) * 8}, ref::ElemType::Float)};
    }
    std::string describe() const override {
        return "non-finite check: tiles of " + std::to_string(m_plan.tile) + " on " + std::to_string(m_plan.blocks) +
               " cores";
    }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.n == 0) return {};
        NonFinitePlan p = m_plan;
        p.g = in[0].addr, p.out = out[0].addr;
        std::function<void(isa::IInstrSink&)> body;
        switch (in[0].dtype) {
            case isa::DType::FP16: body = [p](isa::IInstrSink& s) { nonfinite_kernel<half>(s, p); }; break;
            case isa::DType::BF16: body = [p](isa::IInstrSink& s) { nonfinite_kernel<bfloat16>(s, p); }; break;
            default: body = [p](isa::IInstrSink& s) { nonfinite_kernel<float>(s, p); }; break;
        }
        return {norm::vector_launch(m_n.name, m_n.op_type, p.blocks, std::move(body), 2.0 * static_cast<double>(p.n),
                                    p.n * isa::dtype_size(in[0].dtype) + 32 * uint64_t{p.blocks}, 2, p.n, m_dev)};
    }

private:
    NodeDesc m_n;
    DeviceInfo m_dev;
    NonFinitePlan m_plan;
};

std::unique_ptr<INodeOp> make_nonfinite_check(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<NonFiniteCheckOp>(n, d);
}

// The host reference needs the device's block split for its shape: it gives every slot NaN when
// any element is not finite, zeros otherwise; a caller tests "any NaN", which does not depend on
// the split.
std::vector<ref::HostTensor> nonfinite_ref(const ref::RefNode& n, const std::vector<const ref::HostTensor*>& in) {
    if (in.size() != 1 || !in[0]) throw InputError("node '" + n.name + "' (NonFiniteCheck): needs input G");
    bool bad = false;
    for (double v : in[0]->data) bad = bad || !std::isfinite(v);
    ref::HostTensor out(ref::ElemType::Float, {8});
    out.data[0] = bad ? std::nan("") : 0.0;
    return {out};
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(nonfinite_check, "NonFiniteCheck", make_nonfinite_check);
SFUMATO_REGISTER_REF(nonfinite_check, "NonFiniteCheck", nonfinite_ref);

}  // namespace sfumato::ops
