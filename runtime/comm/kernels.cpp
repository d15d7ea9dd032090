#include "runtime/comm/kernels.h"

#include <algorithm>
#include <memory>

#include "runtime/kernel/api.h"

namespace sfumato::comm {

namespace {

using namespace sfumato::kernel;

// Bytes a block takes at least, so that small operations do not spread over every core.
constexpr uint64_t kMinBlockBytes = 16 << 10;

struct Split {
    uint32_t blocks = 1;
    uint64_t per_block = 0;  // elements (a multiple of 32 bytes but for the last block)
};

Split split_work(const DeviceInfo& dev, uint64_t total, uint32_t es) {
    Split s;
    const uint64_t bytes = total * es;
    s.blocks = static_cast<uint32_t>(std::clamp<uint64_t>((bytes + kMinBlockBytes - 1) / kMinBlockBytes, 1,
                                                          std::max<uint32_t>(1, dev.vector_cores)));
    const uint64_t align = 32 / es;
    s.per_block = (total + s.blocks - 1) / s.blocks;
    s.per_block = (s.per_block + align - 1) / align * align;
    return s;
}

// Elements per tile when `queues` double-buffered queues share UB (whole 256 B repeats).
uint32_t tile_elems(const DeviceInfo& dev, uint32_t queues, uint32_t es) {
    const uint64_t bytes = dev.ub_bytes / (2ull * queues) / 256 * 256;
    return static_cast<uint32_t>(std::max<uint64_t>(256, bytes) / es);
}

struct CopyPlan {
    std::vector<CopyRun> runs;
    std::vector<uint64_t> first;  // element index where each run starts in the concatenation
    uint64_t total = 0;
    Split split;
    uint32_t tile = 0;
};

template <class T>
void copy_body(isa::IInstrSink& sink, const CopyPlan& p) {
    KernelContext ctx(sink);
    const uint64_t begin = ctx.block_idx() * p.split.per_block;
    if (begin >= p.total) return;
    const uint64_t end = std::min(p.total, begin + p.split.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> q;
    pipe.InitBuffer(q, 2, p.tile * sizeof(T), QueuePipes{Pipe::MTE2, Pipe::MTE3});
    size_t r = static_cast<size_t>(std::upper_bound(p.first.begin(), p.first.end(), begin) - p.first.begin()) - 1;
    for (uint64_t i = begin; i < end;) {
        while (i >= p.first[r] + p.runs[r].count) ++r;
        const CopyRun& run = p.runs[r];
        const uint64_t off = i - p.first[r];
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>({p.tile, end - i, run.count - off}));
        GlobalTensor<T> src, dst;
        src.SetGlobalBuffer(run.src + off * sizeof(T), len);
        dst.SetGlobalBuffer(run.dst + off * sizeof(T), len);
        LocalTensor<T> t = q.AllocTensor<T>();
        DataCopyPad(t, src, DataCopyExtParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0});
        q.EnQue(t);
        LocalTensor<T> u = q.DeQue<T>();
        DataCopyPad(dst, u, DataCopyExtParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0});
        q.FreeTensor(u);
        i += len;
    }
}

struct ReducePlan {
    uint64_t dst = 0;
    std::vector<uint64_t> srcs;
    uint64_t count = 0;
    RedOp op = RedOp::Sum;
    Split split;
    uint32_t tile = 0;
};

template <class T>
void combine(RedOp op, const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, uint32_t n) {
    switch (op) {
        case RedOp::Sum: Add(d, a, b, n); break;
        case RedOp::Max: Max(d, a, b, n); break;
        case RedOp::Min: Min(d, a, b, n); break;
    }
}

template <class T>
void reduce_body(isa::IInstrSink& sink, const ReducePlan& p) {
    KernelContext ctx(sink);
    const uint64_t begin = ctx.block_idx() * p.split.per_block;
    if (begin >= p.count) return;
    const uint64_t end = std::min(p.count, begin + p.split.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> acc_in, in;
    TQue<TPosition::VECOUT> out;
    const uint32_t bytes = p.tile * sizeof(T);
    pipe.InitBuffer(acc_in, 2, bytes);
    pipe.InitBuffer(in, 2, bytes);
    pipe.InitBuffer(out, 2, bytes);
    const size_t k = p.srcs.size();
    for (uint64_t i = begin; i < end; i += p.tile) {
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, end - i));
        const DataCopyExtParams cp{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0};
        auto gm = [&](uint64_t base) {
            GlobalTensor<T> g;
            g.SetGlobalBuffer(base + i * sizeof(T), len);
            return g;
        };
        LocalTensor<T> a = acc_in.AllocTensor<T>();
        DataCopyPad(a, gm(p.srcs[0]), cp);
        acc_in.EnQue(a);
        LocalTensor<T> acc = acc_in.DeQue<T>();
        LocalTensor<T> o = out.AllocTensor<T>();
        for (size_t j = 1; j < k; ++j) {
            LocalTensor<T> b = in.AllocTensor<T>();
            DataCopyPad(b, gm(p.srcs[j]), cp);
            in.EnQue(b);
            LocalTensor<T> bi = in.DeQue<T>();
            // Partial results stay in `o`; the first combines the accumulator input.
            combine(p.op, o, j == 1 ? acc : o, bi, len);
            in.FreeTensor(bi);
        }
        acc_in.FreeTensor(acc);
        out.EnQue(o);
        LocalTensor<T> oo = out.DeQue<T>();
        GlobalTensor<T> d = gm(p.dst);
        DataCopyPad(d, oo, cp);
        out.FreeTensor(oo);
    }
}

template <class F>
std::function<void(isa::IInstrSink&)> typed(isa::DType t, F f) {
    switch (t) {
        case isa::DType::FP16: return [f](isa::IInstrSink& s) { f.template operator()<half>(s); };
        case isa::DType::BF16: return [f](isa::IInstrSink& s) { f.template operator()<bfloat16>(s); };
        default: return [f](isa::IInstrSink& s) { f.template operator()<float>(s); };
    }
}

// Timing re-use's key of a copy or reduce kernel: what its time depends on besides its block
// count, dtype and bytes (KernelDesc::reuse_key): per run its element count and where its
// addresses fall within a 512-byte line (the requests its rows split into), and whether a source
// is its destination. Where the data is (the L2 state) the re-use service adds from the operands.
std::string align_key(uint64_t addr) { return std::to_string(addr % 512) + ','; }

}  // namespace

KernelDesc copy_kernel(const DeviceInfo& dev, isa::DType t, std::vector<CopyRun> runs, const std::string& name) {
    const uint32_t es = isa::dtype_size(t);
    auto p = std::make_shared<CopyPlan>();
    for (const CopyRun& r : runs) {
        if (r.count == 0) continue;
        p->first.push_back(p->total);
        p->runs.push_back(r);
        p->total += r.count;
    }
    p->split = split_work(dev, p->total, es);
    p->tile = tile_elems(dev, 1, es);
    KernelDesc k;
    k.name = name;
    k.type = "CommCopy";
    k.kind = KernelKind::Vector;
    k.block_dim = p->split.blocks;
    k.body = typed(t, [p]<class T>(isa::IInstrSink& s) { copy_body<T>(s, *p); });
    k.bytes = 2 * p->total * es;
    k.reuse_key = "copy," + std::to_string(static_cast<int>(t)) + ',';
    for (const CopyRun& r : p->runs) {
        k.reuse_key += std::to_string(r.count) + ':' + align_key(r.src) + align_key(r.dst) + (r.src == r.dst ? "=;" : ";");
        k.operands.push_back({r.src, r.count * es, false});
        k.operands.push_back({r.dst, r.count * es, true});
    }
    return k;
}

KernelDesc reduce_kernel(const DeviceInfo& dev, isa::DType t, RedOp op, uint64_t dst, std::vector<uint64_t> srcs,
                         uint64_t count, const std::string& name) {
    const uint32_t es = isa::dtype_size(t);
    auto p = std::make_shared<ReducePlan>();
    p->dst = dst;
    p->srcs = std::move(srcs);
    p->count = count;
    p->op = op;
    p->split = split_work(dev, count, es);
    p->tile = tile_elems(dev, 3, es);
    KernelDesc k;
    k.name = name;
    k.type = "CommReduce";
    k.kind = KernelKind::Vector;
    k.block_dim = p->split.blocks;
    k.body = typed(t, [p]<class T>(isa::IInstrSink& s) { reduce_body<T>(s, *p); });
    k.flops = static_cast<double>(count) * static_cast<double>(p->srcs.size() - 1);
    k.bytes = (p->srcs.size() + 1) * count * es;
    k.min_compute_cycles = static_cast<double>(count * es * (p->srcs.size() - 1)) /
                           (dev.vector_bytes_per_cycle * std::min<double>(p->split.blocks, dev.vector_cores));
    k.reuse_key = "reduce," + std::to_string(static_cast<int>(t)) + ',' + std::to_string(static_cast<int>(op)) + ',' +
                  std::to_string(count) + ':' + align_key(dst);
    for (const uint64_t src : p->srcs) {
        k.reuse_key += align_key(src) + (src == dst ? "=;" : ";");
        k.operands.push_back({src, count * es, false});
    }
    k.operands.push_back({dst, count * es, true});
    return k;
}

}  // namespace sfumato::comm
