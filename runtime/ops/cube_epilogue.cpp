// The vector epilogue kernel (see cube_epilogue.h): each vector core takes a
// contiguous share of the elements and streams it in tiles through
// double-buffered VECIN/VECOUT queues; the arithmetic runs on whole fp32
// repeats (the padding lanes of a ragged tile compute garbage that is never
// stored).
#include "runtime/ops/cube_epilogue.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernel/api.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct EpiTiling {
    uint64_t per_block = 0;
    uint32_t tile = 0;  // elements, a multiple of 64 (one fp32 repeat)
    uint32_t block_dim = 1;
};

// Vector instructions per element an activation costs (for the roofline's
// compute bound).
double act_ops(const ref::Activation& a) {
    if (a.none()) return 0;
    if (a.kind == "Relu" || a.kind == "LeakyRelu") return 1;
    if (a.kind == "Clip") return 2;
    if (a.kind == "Sigmoid" || a.kind == "HardSigmoid") return 4;
    if (a.kind == "Tanh" || a.kind == "HardSwish") return 6;
    return 19;  // Gelu
}

// x = act(x) on `n` fp32 lanes, s1 and s2 scratch of the same size.
void apply(const ref::Activation& a, const LocalTensor<float>& x, const LocalTensor<float>& s1,
           const LocalTensor<float>& s2, uint32_t n) {
    const std::string& k = a.kind;
    const auto f = [](double v) { return static_cast<float>(v); };
    if (k == "Relu") {
        Relu(x, x, n);
    } else if (k == "LeakyRelu") {
        LeakyRelu(x, x, f(a.alpha), n);
    } else if (k == "Clip") {
        if (std::isfinite(a.alpha)) Maxs(x, x, f(a.alpha), n);
        if (std::isfinite(a.beta)) Mins(x, x, f(a.beta), n);
    } else if (k == "Sigmoid") {
        Muls(s1, x, -1.0f, n);
        Exp(s1, s1, n);
        Adds(s1, s1, 1.0f, n);
        Reciprocal(x, s1, n);
    } else if (k == "Tanh") {
        Muls(s1, x, 2.0f, n);
        Exp(s1, s1, n);
        Adds(s1, s1, 1.0f, n);
        Reciprocal(s1, s1, n);
        Muls(s1, s1, -2.0f, n);
        Adds(x, s1, 1.0f, n);
    } else if (k == "HardSigmoid" || k == "HardSwish") {
        const bool swish = k == "HardSwish";
        const LocalTensor<float>& h = swish ? s1 : x;
        Muls(h, x, swish ? f(1.0 / 6.0) : f(a.alpha), n);
        Adds(h, h, swish ? 0.5f : f(a.beta), n);
        Maxs(h, h, 0.0f, n);
        Mins(h, h, 1.0f, n);
        if (swish) Mul(x, x, s1, n);
    } else if (k == "Gelu") {
        // z = |x| / sqrt(2); t = 1 / (1 + p z); erf(z) = 1 - poly(t) exp(-z^2).
        constexpr double p = 0.3275911, a1 = 0.254829592, a2 = -0.284496736, a3 = 1.421413741,
                         a4 = -1.453152027, a5 = 1.061405429;
        Abs(s1, x, n);
        Muls(s1, s1, f(p / std::sqrt(2.0)), n);
        Adds(s1, s1, 1.0f, n);
        Reciprocal(s1, s1, n);  // t
        Muls(s2, s1, f(a5), n);
        for (double c : {a4, a3, a2, a1}) {
            Adds(s2, s2, f(c), n);
            Mul(s2, s2, s1, n);
        }
        Mul(s1, x, x, n);
        Muls(s1, s1, -0.5f, n);
        Exp(s1, s1, n);  // exp(-z^2)
        Mul(s2, s2, s1, n);
        Muls(s2, s2, -1.0f, n);
        Adds(s2, s2, 1.0f, n);  // erf(|x| / sqrt 2)
        Abs(s1, x, n);
        Mul(s1, s1, s2, n);
        Add(x, x, s1, n);
        Muls(x, x, 0.5f, n);
    }
}

template <class Y, class C>
void epilogue_body(isa::IInstrSink& sink, const EpiloguePlan& p, const EpiTiling& t) {
    KernelContext ctx(sink);
    const uint64_t start = ctx.block_idx() * t.per_block;
    if (start >= p.n) return;
    const uint64_t count = std::min(t.per_block, p.n - start);
    GlobalTensor<float> gx;
    GlobalTensor<Y> gy;
    GlobalTensor<C> gc;
    gx.SetGlobalBuffer(p.x + start * 4, (p.parts - 1) * p.part_stride + count);
    gy.SetGlobalBuffer(p.y + start * sizeof(Y), count);
    gc.SetGlobalBuffer(p.c + start * sizeof(C), count);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qx, qc, qp;
    TQue<TPosition::VECOUT> qy;
    TBuf<TPosition::VECCALC> b1, b2;
    pipe.InitBuffer(qx, 2, t.tile * 4);
    if (p.parts > 1) pipe.InitBuffer(qp, 2, t.tile * 4);
    if (p.has_c) pipe.InitBuffer(qc, 2, t.tile * static_cast<uint32_t>(sizeof(C)));
    pipe.InitBuffer(qy, 2, t.tile * static_cast<uint32_t>(sizeof(Y)));
    pipe.InitBuffer(b1, t.tile * 4);
    pipe.InitBuffer(b2, t.tile * 4);
    const LocalTensor<float> s1 = b1.Get<float>(), s2 = b2.Get<float>();
    for (uint64_t off = 0; off < count; off += t.tile) {
        ctx.scalar(2);
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(t.tile, count - off));
        const uint32_t lanes = (len + 63) / 64 * 64;
        LocalTensor<float> x = qx.AllocTensor<float>();
        DataCopy(x, gx[off], len);
        qx.EnQue(x);
        if (p.has_c) {
            LocalTensor<C> c = qc.AllocTensor<C>();
            DataCopy(c, gc[off], len);
            qc.EnQue(c);
        }
        x = qx.DeQue<float>();
        for (uint32_t part = 1; part < p.parts; ++part) {
            LocalTensor<float> xp = qp.AllocTensor<float>();
            DataCopy(xp, gx[part * p.part_stride + off], len);
            qp.EnQue(xp);
            xp = qp.DeQue<float>();
            Add(x, x, xp, lanes);
            qp.FreeTensor(xp);
        }
        if (p.has_c) {
            LocalTensor<C> c = qc.DeQue<C>();
            if constexpr (std::is_same_v<C, float>) {
                Axpy(x, c, static_cast<float>(p.beta), lanes);
            } else {
                Cast(s1, c, RoundMode::RINT, lanes);
                Axpy(x, s1, static_cast<float>(p.beta), lanes);
            }
            qc.FreeTensor(c);
        }
        apply(p.act, x, s1, s2, lanes);
        LocalTensor<Y> y = qy.AllocTensor<Y>();
        if constexpr (std::is_same_v<Y, float>)
            DataCopy(y, x, DataCopyParams{1, static_cast<uint16_t>(lanes * 4 / 32), 0, 0});
        else
            Cast(y, x, RoundMode::RINT, lanes);
        qx.FreeTensor(x);
        qy.EnQue(y);
        y = qy.DeQue<Y>();
        DataCopy(gy[off], y, len);
        qy.FreeTensor(y);
    }
}

template <class Y>
void dispatch_c(isa::IInstrSink& s, const EpiloguePlan& p, const EpiTiling& t) {
    switch (p.c_dtype) {
        case isa::DType::FP16: return epilogue_body<Y, half>(s, p, t);
        case isa::DType::BF16: return epilogue_body<Y, bfloat16>(s, p, t);
        default: return epilogue_body<Y, float>(s, p, t);
    }
}

}  // namespace

KernelDesc epilogue_kernel(const EpiloguePlan& p, const DeviceInfo& dev, const std::string& name,
                           const std::string& type) {
    const uint32_t ey = isa::dtype_size(p.y_dtype), ec = p.has_c ? isa::dtype_size(p.c_dtype) : 0;
    // Two buffers each of x (fp32), a further partial sum, c and y, and two fp32 scratch tiles.
    const uint64_t per_elem = 2ull * (4 + (p.parts > 1 ? 4 : 0) + ec + ey) + 8;
    const uint64_t fit = dev.ub_bytes / per_elem / 64 * 64;
    if (fit == 0) throw InputError("epilogue: UB of " + std::to_string(dev.ub_bytes) + " bytes is too small");
    EpiTiling t;
    t.tile = static_cast<uint32_t>(std::min<uint64_t>(fit, 4096));
    const uint64_t cores = std::max<uint32_t>(1, dev.vector_cores);
    t.block_dim = static_cast<uint32_t>(std::clamp<uint64_t>((p.n + 1023) / 1024, 1, cores));
    t.per_block = (p.n + t.block_dim - 1) / t.block_dim;
    t.per_block = (t.per_block + 15) / 16 * 16;
    t.block_dim = static_cast<uint32_t>((p.n + t.per_block - 1) / t.per_block);
    KernelDesc kd;
    kd.name = name;
    kd.type = type;
    kd.kind = KernelKind::Vector;
    kd.block_dim = t.block_dim;
    switch (p.y_dtype) {
        case isa::DType::FP16: kd.body = [p, t](isa::IInstrSink& s) { dispatch_c<half>(s, p, t); }; break;
        case isa::DType::BF16: kd.body = [p, t](isa::IInstrSink& s) { dispatch_c<bfloat16>(s, p, t); }; break;
        case isa::DType::FP32: kd.body = [p, t](isa::IInstrSink& s) { dispatch_c<float>(s, p, t); }; break;
        default:
            throw InputError(std::string("epilogue: unsupported output type ") + isa::dtype_name(p.y_dtype));
    }
    const double ops = act_ops(p.act) + (p.has_c ? 2 : 0) + 1 + (p.parts - 1);
    kd.flops = double(p.n) * ops;
    kd.bytes = p.n * (4ull * p.parts + ey + ec);
    // The chip's peak: every vector core (KernelDesc::min_compute_cycles).
    const double vcores = std::max<uint32_t>(1, dev.vector_cores);
    if (dev.vector_bytes_per_cycle > 0)
        kd.min_compute_cycles = double(p.n) * 4 * ops / (dev.vector_bytes_per_cycle * vcores);
    return kd;
}

}  // namespace sfumato::ops
