// One plain-SGD launch over many weights (multi_sgd.h).
#include "runtime/ops/optim/multi_sgd.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/common.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct MultiSgdPlan {
    std::vector<SgdSegment> segs;
    float lr = 0;
    uint64_t total = 0, per_block = 0;
    uint32_t tile = 0;
};

template <class T>
void to_f32(const LocalTensor<float>& d, const LocalTensor<T>& s, uint32_t len) {
    if constexpr (std::is_same_v<T, float>) Adds(d, s, 0.0f, len);
    else Cast(d, s, RoundMode::RINT, len);
}

template <class T>
void multi_sgd_body(isa::IInstrSink& sink, const MultiSgdPlan& p) {
    KernelContext ctx(sink);
    const uint64_t lo = uint64_t{ctx.block_idx()} * p.per_block;
    if (lo >= p.total) return;
    const uint64_t hi = std::min(p.total, lo + p.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qw, qg;
    TQue<TPosition::VECOUT> qo;
    TBuf<TPosition::VECCALC> calc;
    pipe.InitBuffer(qw, 2, p.tile * uint32_t{sizeof(T)});
    pipe.InitBuffer(qg, 2, p.tile * uint32_t{sizeof(T)});
    pipe.InitBuffer(qo, 2, p.tile * uint32_t{sizeof(T)});
    pipe.InitBuffer(calc, 2 * p.tile * 4);
    const LocalTensor<float> wf = calc.Get<float>(), gf = wf[p.tile];
    uint64_t base = 0;
    for (const SgdSegment& s : p.segs) {
        const uint64_t s0 = std::max(lo, base), s1 = std::min(hi, base + s.n);
        for (uint64_t at = s0; at < s1; at += p.tile) {
            ctx.scalar(3);
            const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, s1 - at));
            const uint64_t e = at - base;
            GlobalTensor<T> gw, gg;
            gw.SetGlobalBuffer(s.w + e * sizeof(T), len);
            gg.SetGlobalBuffer(s.g + e * sizeof(T), len);
            LocalTensor<T> w = qw.AllocTensor<T>();
            DataCopy(w, gw, len);
            qw.EnQue(w);
            LocalTensor<T> g = qg.AllocTensor<T>();
            DataCopy(g, gg, len);
            qg.EnQue(g);
            w = qw.DeQue<T>();
            g = qg.DeQue<T>();
            to_f32(wf, w, len);
            to_f32(gf, g, len);
            qw.FreeTensor(w);
            qg.FreeTensor(g);
            Axpy(wf, gf, -p.lr, len);  // w - lr g
            LocalTensor<T> o = qo.AllocTensor<T>();
            if constexpr (std::is_same_v<T, float>) Adds(o, wf, 0.0f, len);
            else Cast(o, wf, RoundMode::RINT, len);
            qo.EnQue(o);
            o = qo.DeQue<T>();
            DataCopy(gw, o, len);
            qo.FreeTensor(o);
        }
        base += s.n;
    }
}

}  // namespace

KernelDesc multi_sgd_kernel(const std::vector<SgdSegment>& segs, isa::DType dtype, double lr, const DeviceInfo& dev,
                            const std::string& name) {
    if (dtype != isa::DType::FP16 && dtype != isa::DType::BF16 && dtype != isa::DType::FP32)
        throw InputError(name + ": multi-tensor SGD needs fp16, bf16 or fp32 weights, not " + isa::dtype_name(dtype));
    if (!std::isfinite(lr)) throw InputError(name + ": multi-tensor SGD: lr must be finite");
    MultiSgdPlan p;
    p.segs = segs;
    p.lr = static_cast<float>(lr);
    for (const SgdSegment& s : segs) p.total += s.n;
    const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
    // Shares of whole 32-byte blocks (every type), tiles of at most 4096 elements that fit UB:
    // W, G and W out double buffered in the type, two fp32 scratch tiles.
    const uint64_t es = isa::dtype_size(dtype);
    p.per_block = std::max<uint64_t>(16, ((p.total + cores - 1) / cores + 15) / 16 * 16);
    const uint64_t fit = dev.ub_bytes > 1024 ? (dev.ub_bytes - 1024) / (6 * es + 8) / 64 * 64 : 0;
    if (fit == 0) throw InputError(name + ": multi-tensor SGD: UB too small for a tile");
    p.tile = static_cast<uint32_t>(std::min<uint64_t>({fit, 4096, (p.per_block + 63) / 64 * 64}));
    const uint32_t blocks = static_cast<uint32_t>(std::max<uint64_t>(1, (p.total + p.per_block - 1) / p.per_block));
    std::function<void(isa::IInstrSink&)> body;
    switch (dtype) {
        case isa::DType::FP16: body = [p](isa::IInstrSink& s) { multi_sgd_body<half>(s, p); }; break;
        case isa::DType::BF16: body = [p](isa::IInstrSink& s) { multi_sgd_body<bfloat16>(s, p); }; break;
        default: body = [p](isa::IInstrSink& s) { multi_sgd_body<float>(s, p); }; break;
    }
    // Bytes: W and G in, W out; fp32 passes: the conversions, the axpy and the rounding.
    KernelDesc k = norm::vector_launch(name, "MultiSgdUpdate", blocks, std::move(body),
                                       2.0 * static_cast<double>(p.total), 3 * es * p.total, 4.0, p.total, dev);
    // A timing re-use candidate (KernelDesc::reuse_key): its time depends, besides the type,
    // block count and bytes, on the segments' lengths in order (the tiles each share walks) and
    // where W and G fall within a 512-byte line (the requests its rows split into); lr changes
    // no instruction. Where the data is (the L2 state) the service adds from the operands: W is
    // read and written in place, G read.
    k.reuse_key = "multi_sgd," + std::to_string(static_cast<int>(dtype)) + ',' + std::to_string(p.tile) + ',';
    for (const SgdSegment& s : segs) {
        k.reuse_key += std::to_string(s.n) + ':' + std::to_string(s.w % 512) + ',' + std::to_string(s.g % 512) + ';';
        k.operands.push_back({s.w, s.n * es, false});
        k.operands.push_back({s.g, s.n * es, false});
        k.operands.push_back({s.w, s.n * es, true});
    }
    return k;
}

}  // namespace sfumato::ops
