// The graph's pass-through node ops. Identity and inference-mode Dropout are
// views of their input (no kernel, no memory). `Copy` (sfumato-only) copies a
// tensor's bytes into its own memory: the graph uses it for a reshape when the
// `views` pass is off. The copy kernel streams tiles GM -> UB (MTE2) -> GM
// (MTE3) on the vector cores, two UB buffers so the load of one tile overlaps
// the store of the previous one; byte-exact bursts, so any size and dtype.
#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/node_op.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

class PassThroughOp : public INodeOp {
public:
    PassThroughOp(const NodeDesc& n, bool dropout) : m_n(n) {
        if (!n.has_input(0)) throw UnsupportedError(n, "needs input 0");
        if (dropout && n.inputs.size() > 2 && n.has_input(2)) {
            const ref::HostTensor* tm = n.constant(2);
            if (!tm || tm->data.empty() || tm->data[0] != 0)
                throw UnsupportedError(n, "training mode is not supported");
        }
    }
    std::vector<TensorRef> outputs() const override {
        TensorRef o = m_n.inputs[0];
        o.addr = 0;
        return {o};
    }
    int view_of(size_t out) const override { return out == 0 ? 0 : -1; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>&, const std::vector<TensorRef>&,
                                     uint64_t) const override {
        return {};
    }
    std::string describe() const override { return "view"; }

private:
    NodeDesc m_n;
};

struct CopyPlan {
    uint64_t src = 0, dst = 0, bytes = 0;
    uint64_t per_block = 0;
    uint32_t tile = 0;
};

void copy_kernel(isa::IInstrSink& sink, const CopyPlan& p) {
    KernelContext ctx(sink);
    const uint64_t start = ctx.block_idx() * p.per_block;
    if (start >= p.bytes) return;
    const uint64_t count = std::min(p.per_block, p.bytes - start);
    GlobalTensor<int8_t> src, dst;
    src.SetGlobalBuffer(p.src + start, count);
    dst.SetGlobalBuffer(p.dst + start, count);
    TPipe pipe(ctx);
    TBuf<TPosition::VECCALC> buf[2];
    pipe.InitBuffer(buf[0], p.tile);
    pipe.InitBuffer(buf[1], p.tile);
    bool pending[2] = {false, false};
    uint64_t i = 0;
    for (uint64_t off = 0; off < count; off += p.tile, ++i) {
        const int b = static_cast<int>(i % 2);
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, count - off));
        ctx.scalar(2);
        if (pending[b]) ctx.wait_flag(Pipe::MTE3, Pipe::MTE2, static_cast<uint8_t>(b));
        LocalTensor<int8_t> t = buf[b].Get<int8_t>();
        DataCopyPad(t, src[off], DataCopyExtParams{1, len, 0, 0});
        ctx.set_flag(Pipe::MTE2, Pipe::MTE3, static_cast<uint8_t>(b));
        ctx.wait_flag(Pipe::MTE2, Pipe::MTE3, static_cast<uint8_t>(b));
        DataCopyPad(dst[off], t, DataCopyExtParams{1, len, 0, 0});
        ctx.set_flag(Pipe::MTE3, Pipe::MTE2, static_cast<uint8_t>(b));
        pending[b] = true;
    }
    for (int b = 0; b < 2; ++b)
        if (pending[b]) ctx.wait_flag(Pipe::MTE3, Pipe::MTE2, static_cast<uint8_t>(b));
}

class CopyOp : public INodeOp {
public:
    CopyOp(const NodeDesc& n, const DeviceInfo& dev) : m_n(n), m_dev(dev) {
        if (n.inputs.size() != 1 || !n.has_input(0)) throw UnsupportedError(n, "Copy takes one input");
        if (!n.inputs[0].contiguous()) throw UnsupportedError(n, "Copy of a strided view is not supported");
    }
    std::vector<TensorRef> outputs() const override {
        TensorRef o = m_n.inputs[0];
        o.addr = 0;
        return {o};
    }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        CopyPlan p;
        p.src = in.at(0).addr;
        p.dst = out.at(0).addr;
        p.bytes = in[0].storage_bytes();
        // Enough blocks to use every vector core on large tensors, none smaller
        // than 16 KiB.
        const uint64_t cores = std::max<uint32_t>(1, m_dev.vector_cores);
        const uint64_t blocks = std::clamp<uint64_t>((p.bytes + 16383) / 16384, 1, cores);
        p.per_block = (p.bytes + blocks - 1) / blocks;
        p.per_block = (p.per_block + 31) / 32 * 32;
        p.tile = static_cast<uint32_t>(std::min<uint64_t>(m_dev.ub_bytes / 2 / 32 * 32, 32768));
        KernelDesc k;
        k.name = m_n.name;
        k.type = "Copy";
        k.kind = KernelKind::Vector;
        k.block_dim = static_cast<uint32_t>((p.bytes + p.per_block - 1) / p.per_block);
        k.body = [p](isa::IInstrSink& s) { copy_kernel(s, p); };
        k.bytes = 2 * p.bytes;
        k.flops = 0;
        return {k};
    }
    std::string describe() const override { return "copy"; }

private:
    NodeDesc m_n;
    DeviceInfo m_dev;
};

}  // namespace

SFUMATO_REGISTER_NODE_OP(identity, "Identity", [](const NodeDesc& n, const DeviceInfo&) {
    return std::make_unique<PassThroughOp>(n, false);
});
SFUMATO_REGISTER_NODE_OP(dropout, "Dropout", [](const NodeDesc& n, const DeviceInfo&) {
    return std::make_unique<PassThroughOp>(n, true);
});
SFUMATO_REGISTER_NODE_OP(copy, "Copy", [](const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<CopyOp>(n, d);
});

}  // namespace sfumato::ops
