// Embedding row gather (runtime/ops/llm/embedding.h).
#include "runtime/ops/llm/embedding.h"

#include <algorithm>
#include <vector>

#include "runtime/kernel/api.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/mv/gather_rt.h"
#include "runtime/ops/norm/common.h"

namespace sfumato::ops::llm {

using isa::Pos;
using namespace sfumato::kernel;

namespace {

struct EmbPlan {
    isa::DType t = isa::DType::FP16;
    uint64_t table = 0, ids = 0, out = 0;
    uint64_t V = 0, T = 0, row_bytes = 0;
    uint32_t k = 1;      // rows per tile (whole rows), or 1 with chunks
    uint64_t chunk = 0;  // bytes per copy of a row (row_bytes unless a row exceeds the tile)
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    std::vector<int64_t> host_ids;  // empty: ids read from GM
};

void embedding_kernel(isa::IInstrSink& sink, const EmbPlan& p) {
    KernelContext ctx(sink);
    const uint64_t t0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (t0 >= p.T) return;
    const uint64_t t1 = std::min(p.T, t0 + p.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> q;  // MTE2 -> MTE3 directly: no vector work
    const uint64_t tile = p.chunk < p.row_bytes ? p.chunk : uint64_t{p.k} * ((p.row_bytes + 31) / 32 * 32);
    pipe.InitBuffer(q, 2, u32(tile), QueuePipes{Pipe::MTE2, Pipe::MTE3});
    GlobalTensor<int32_t> ids;
    ids.SetGlobalBuffer(ctx, p.ids, p.T);
    const int64_t V = static_cast<int64_t>(p.V);
    auto row_of = [&](uint64_t t) {
        int64_t id = ids.GetValue(t);
        ctx.scalar(3);  // wrap and clamp
        if (!p.host_ids.empty()) id = p.host_ids[t];
        if (id < 0) id += V;
        return static_cast<uint64_t>(std::clamp<int64_t>(id, 0, V - 1));
    };
    const uint32_t rowpad = u32((p.row_bytes + 31) / 32 * 32);
    if (p.chunk < p.row_bytes) {
        for (uint64_t t = t0; t < t1; ++t) {
            const uint64_t src = p.table + row_of(t) * p.row_bytes;
            for (uint64_t off = 0; off < p.row_bytes; off += p.chunk) {
                const uint32_t len = u32(std::min(p.chunk, p.row_bytes - off));
                LocalTensor<uint8_t> b = q.AllocTensor<uint8_t>();
                kernel::detail::copy_in(ctx, p.t, Pos::UB, b.address(), src + off,
                                        isa::CopyParams{1, len, 0, 0}, 0);
                q.EnQue(b);
                LocalTensor<uint8_t> d = q.DeQue<uint8_t>();
                kernel::detail::copy_out(ctx, p.t, p.out + t * p.row_bytes + off, Pos::UB, d.address(),
                                         isa::CopyParams{1, len, 0, 0});
                q.FreeTensor(d);
            }
        }
    } else {
        for (uint64_t t = t0; t < t1;) {
            const uint32_t len = u32(std::min<uint64_t>(p.k, t1 - t));
            LocalTensor<uint8_t> b = q.AllocTensor<uint8_t>();
            for (uint32_t j = 0; j < len; ++j)
                kernel::detail::copy_in(ctx, p.t, Pos::UB, b.address() + j * rowpad,
                                        p.table + row_of(t + j) * p.row_bytes,
                                        isa::CopyParams{1, u32(p.row_bytes), 0, 0}, 0);
            q.EnQue(b);
            LocalTensor<uint8_t> d = q.DeQue<uint8_t>();
            kernel::detail::copy_out(ctx, p.t, p.out + t * p.row_bytes, Pos::UB, d.address(),
                                     isa::CopyParams{len, u32(p.row_bytes), 0, 0});
            q.FreeTensor(d);
            t += len;
        }
    }
    q.drain();
}

class EmbeddingOp : public INodeOp {
public:
    EmbeddingOp(const NodeDesc& n, const DeviceInfo& dev, const TensorRef& out)
        : m_node(n), m_dev(dev), m_out(out) {
        const TensorRef& table = n.inputs[0];
        if (!table.contiguous() || table.format != Format::ND)
            throw UnsupportedError(n, "a strided or non-ND table");
        index_input(n, 1, "indices");
        EmbPlan& p = m_plan;
        p.t = table.dtype;
        p.V = static_cast<uint64_t>(table.shape[0]);
        p.T = n.inputs[1].numel();
        p.row_bytes = (p.V ? table.numel() / p.V : 0) * isa::dtype_size(table.dtype);
        if (p.V == 0 || p.row_bytes == 0) throw UnsupportedError(n, "an empty table");
        for (const char* key : {"host_ids", "known_ids"}) {
            if (!n.attrs.has(key)) continue;
            p.host_ids = n.attrs.get_ints(key, {});
            if (p.host_ids.size() != p.T)
                throw UnsupportedError(n, std::string("attribute '") + key + "' has " +
                                              std::to_string(p.host_ids.size()) + " entries for " +
                                              std::to_string(p.T) + " indices");
            const int64_t V = static_cast<int64_t>(p.V);
            for (size_t i = 0; i < p.host_ids.size(); ++i)
                if (p.host_ids[i] < -V || p.host_ids[i] >= V)
                    throw UnsupportedError(n, std::string("attribute '") + key + "': index " + std::to_string(i) +
                                                  " = " + std::to_string(p.host_ids[i]) + " is out of range for " +
                                                  std::to_string(V) + " rows");
            break;
        }
        const norm::WorkSplit w = norm::split_work(p.T, dev.vector_cores);
        p.per_block = w.per_block;
        p.blocks = w.blocks;
        // Two tiles in UB; whole rows when one fits in half of it, else chunks of a
        // row.
        const uint64_t half = (dev.ub_bytes - 1024) / 2 / 32 * 32;
        const uint64_t rowpad = (p.row_bytes + 31) / 32 * 32;
        p.chunk = rowpad <= half ? p.row_bytes : half;
        p.k = rowpad <= half
                  ? u32(std::min<uint64_t>({half / rowpad, std::max<uint64_t>(1, p.per_block / 2), 64}))
                  : 1;
        m_form = "row gather: " +
                 (p.chunk < p.row_bytes ? "rows in chunks of " + std::to_string(p.chunk) + " B"
                                        : std::to_string(p.k) + " rows per tile") +
                 (p.host_ids.empty() ? ", ids read from GM" : ", host-known ids");
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.T == 0) return {};
        EmbPlan p = m_plan;
        p.table = in[0].addr, p.ids = in[1].addr, p.out = out[0].addr;
        KernelDesc k = norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { embedding_kernel(s, p); }, 0,
            2 * p.T * p.row_bytes + 4 * p.T, 0, 0, m_dev);
        return {k};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    EmbPlan m_plan;
    std::string m_form;
};

}  // namespace

bool embedding_gather_applies(const NodeDesc& n, const DeviceInfo& dev, int64_t axis) {
    if (axis != 0 || n.inputs.size() < 2 || n.inputs[0].shape.empty()) return false;
    if (n.attrs.has("host_ids")) return true;
    // The in-UB gather streams a table larger than the UB through it once per tile of ids: with
    // more ids than one tile holds, the row gather, which reads only the rows the ids name (BERT's
    // 47 MB table for the 4096 ids of a training batch: 10 ms in the in-UB gather).
    const TensorRef& t = n.inputs[0];
    if (t.storage_bytes() > dev.l2_bytes && dev.l2_bytes > 0) return true;
    const uint64_t row = t.numel() / static_cast<uint64_t>(std::max<int64_t>(1, t.shape[0]));
    return t.storage_bytes() > dev.ub_bytes && dev.ub_bytes > 0 &&
           n.inputs[1].numel() * row > mv::kGatherTileElems;
}

std::unique_ptr<INodeOp> make_embedding_gather(const NodeDesc& n, const DeviceInfo& dev,
                                               const TensorRef& out) {
    return std::make_unique<EmbeddingOp>(n, dev, out);
}

}  // namespace sfumato::ops::llm
