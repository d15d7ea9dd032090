// W8A8: int8 activations x int8 weights (contract: docs/llm.md, "Operators").
// - DynamicQuant(x [.., H]) -> q [.., H] int8, scale [..] fp32: per-token symmetric
//   quantisation on the vector cores, rows split over them. Per row: convert to fp32, |x|, a
//   whole-row max, amax floored at 1e-30 (an all-zero row gives q = 0), scale = amax / 127 and
//   inv = 127 / amax (fp32 divisions), q = convert(x * inv) to int8 rounding to nearest even and
//   saturating. Scales of a run of rows leave UB in one burst.
// - QuantMatMul(a [M, K] int8, w [K, N] int8, w_scale [N] fp32, a_scale [M] fp32) -> y [M, N]
//   fp16 / bf16 (attribute `output_dtype`): the library's cube matmul with int8 operands and
//   int32 accumulation (K0 = 32, runtime/ops/cube_matmul.h) drains int32 tiles into a workspace;
//   a vector epilogue then dequantises: y = fl32(fl32(acc) * w_scale[n]) * a_scale[m], rounded
//   once to the output type. Why not in the FixPipe: its per-channel (VECTOR) dequant takes one
//   quantisation word per column (copy_l1_to_fb fills its buffer), but a per-token (row) scale
//   is beyond what the FixPipe applies;
//   the vendor's per-token quant matmul also finishes on the vector cores. On split parts the AIC
//   cannot reach UB, so the int32 tile passes through GM (L2) as the fp32 result of the library's
//   other vector epilogues does (runtime/ops/cube_epilogue.h).
#include <algorithm>
#include <cstring>

#include "runtime/kernel/api.h"
#include "runtime/ops/cube_matmul.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ref/llm_moe.h"

namespace sfumato::ops::llm {

using isa::DType;
using isa::Opcode;
using isa::Pos;
using namespace sfumato::kernel;
using norm::cdiv;
using norm::up;
using norm::vblock;
using norm::vop;

namespace {

constexpr DType I8 = DType::INT8, I32 = DType::INT32;

// ---------------------------------------------------------------- dynamic quant

struct QuantPlan {
    DType t = DType::FP16;
    uint64_t x = 0, q = 0, s = 0;
    uint64_t T = 0, H = 0, hp = 64;
    uint64_t per_block = 1;
    uint32_t blocks = 1, srun = 64;  // rows whose scales are stored together
};

uint64_t quant_ub(const QuantPlan& p) {
    return 2 * stag(p.hp * isa::dtype_size(p.t)) + 2 * stag(p.hp * 4) + 2 * stag(p.hp) + 6 * 256 +
           stag(uint64_t{p.srun} * 4) + 1024;
}

void quant_kernel(isa::IInstrSink& sink, const QuantPlan& p) {
    KernelContext ctx(sink);
    const uint64_t r0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (r0 >= p.T) return;
    const uint64_t r1 = std::min(p.T, r0 + p.per_block);
    const uint32_t es = isa::dtype_size(p.t);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qi;
    TQue<TPosition::VECOUT> qo, qs;
    TBuf<TPosition::VECCALC> f, ab, small;
    pipe.InitBuffer(qi, 2, u32(stag(p.hp * es)));  // the conversion reads whole repeats
    pipe.InitBuffer(qo, 2, u32(stag(p.hp)));
    pipe.InitBuffer(qs, 1, u32(stag(uint64_t{p.srun} * 4)));
    pipe.InitBuffer(f, u32(stag(p.hp * 4)));
    pipe.InitBuffer(ab, u32(stag(p.hp * 4)));
    pipe.InitBuffer(small, 6 * 256);
    const uint32_t fa = f.Get<uint8_t>().address(), aa = ab.Get<uint8_t>().address(), sm = small.Get<uint8_t>().address();
    const uint32_t res = sm, blk = sm + 256, c127 = sm + 512, inv = sm + 768, sc = sm + 1024, spread = sm + 1280;
    norm::vrun(ctx, Opcode::VDUP, F32, vop(c127), {}, {}, 1, 1, 8, 127.0);
    LocalTensor<uint8_t> scales;
    uint64_t run0 = r0;
    for (uint64_t r = r0; r < r1; ++r) {
        ctx.scalar(4);
        if (r == run0) scales = qs.AllocTensor<uint8_t>();
        LocalTensor<uint8_t> x = qi.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, p.t, Pos::UB, x.address(), p.x + r * p.H * es, isa::CopyParams{1, u32(p.H * es), 0, 0}, 0);
        qi.EnQue(x);
        x = qi.DeQue<uint8_t>();
        to_f32(ctx, fa, x.address(), p.t, p.hp);
        qi.FreeTensor(x);
        if (p.H % 64) norm::fill_tail(ctx, F32, u32(fa + (p.hp - 64) * 4), 1, 256, u32(p.H % 64), 0.0);
        norm::vrun(ctx, Opcode::VABS, F32, vop(aa), vop(fa), {}, 1, 1, p.hp);
        isa::Instr in = isa::make_instr(Opcode::VREDALL_MAX);
        in.dtype = F32;
        in.dst = {res, Pos::UB};
        in.src0 = {aa, Pos::UB};
        in.vec.repeat = static_cast<uint16_t>(p.hp / 64);
        ctx.issue(in);
        norm::brcb(ctx, F32, blk, res, 1);
        norm::vrun(ctx, Opcode::VMAXS, F32, vop(blk), vop(blk), {}, 1, 1, 8, static_cast<double>(ref::kQuantFloor));
        norm::vrun(ctx, Opcode::VDIV, F32, vop(inv), vop(c127), vop(blk), 1, 1, 8);
        norm::vrun(ctx, Opcode::VDIV, F32, vop(sc), vop(blk), vop(c127), 1, 1, 8);
        norm::expand_blocks(ctx, F32, spread, sc, 1);
        {
            const uint32_t lane = u32(r - run0);
            isa::Instr put = isa::make_instr(Opcode::VMULS);
            put.dtype = F32;
            put.dst = {scales.address() + (lane / 64) * 256, Pos::UB};
            put.src0 = {spread, Pos::UB};
            put.vec.mask_lo = 1ull << (lane % 64);
            put.vec.mask_hi = 0;
            put.scalar = 1.0;
            ctx.issue(put);
        }
        norm::vrun(ctx, Opcode::VMUL, F32, vop(fa), vop(fa), vblock(inv, 0, 0), 1, 1, p.hp);
        LocalTensor<uint8_t> q = qo.AllocTensor<uint8_t>();
        norm::vrun(ctx, Opcode::VCONV, I8, vop(q.address()), vop(fa), {}, 1, 1, p.hp, 0, F32);
        qo.EnQue(q);
        q = qo.DeQue<uint8_t>();
        kernel::detail::copy_out(ctx, I8, p.q + r * p.H, Pos::UB, q.address(), isa::CopyParams{1, u32(p.H), 0, 0});
        qo.FreeTensor(q);
        if (r + 1 == r1 || r + 1 - run0 == p.srun) {
            qs.EnQue(scales);
            scales = qs.DeQue<uint8_t>();
            kernel::detail::copy_out(ctx, F32, p.s + run0 * 4, Pos::UB, scales.address(),
                                     isa::CopyParams{1, u32((r + 1 - run0) * 4), 0, 0});
            qs.FreeTensor(scales);
            run0 = r + 1;
        }
    }
}

class DynamicQuantOp : public INodeOp {
public:
    DynamicQuantOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        QuantPlan& p = m_plan;
        p.t = act_input(n, 0, "x");
        const TensorRef& x = n.inputs[0];
        if (x.shape.empty()) throw UnsupportedError(n, "x must have rank >= 1");
        p.H = static_cast<uint64_t>(x.shape.back());
        p.T = p.H ? x.numel() / p.H : 0;
        p.hp = up(std::max<uint64_t>(p.H, 1), 64);
        if (p.hp > 255 * 64 || quant_ub(p) > dev.ub_bytes)
            throw UnsupportedError(n, "a row of " + std::to_string(p.H) + " does not fit in UB");
        const norm::WorkSplit w = norm::split_work(p.T, dev.vector_cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        m_q = make_tensor(x.shape, ref::ElemType::Int8);
        m_s = make_tensor(std::vector<int64_t>(x.shape.begin(), x.shape.end() - 1), ref::ElemType::Float);
    }
    std::vector<TensorRef> outputs() const override { return {m_q, m_s}; }
    std::string describe() const override { return "per-token int8, one row per step"; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.T == 0 || m_plan.H == 0) return {};
        QuantPlan p = m_plan;
        p.x = in[0].addr, p.q = out[0].addr, p.s = out[1].addr;
        const uint64_t n = p.T * p.H;
        // fp32 passes: convert, abs, max, multiply, convert back.
        return {norm::vector_launch(m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { quant_kernel(s, p); },
                                    3.0 * static_cast<double>(n), n * (isa::dtype_size(p.t) + 1) + p.T * 4, 5.0,
                                    p.T * p.hp, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    QuantPlan m_plan;
    TensorRef m_q, m_s;
};

// ---------------------------------------------------------------- quant matmul

struct DequantPlan {
    DType out = DType::FP16;
    uint64_t acc = 0, ws = 0, as = 0, y = 0;
    uint64_t M = 0, N = 0;
    uint32_t cw = 64;
    uint64_t nch = 1, per_block = 1;
    uint32_t blocks = 1;
};

uint64_t dequant_ub(const DequantPlan& p, uint32_t cw) {
    return 2 * stag(uint64_t{cw} * 4) + 2 * stag(uint64_t{cw} * 4) + stag(uint64_t{cw} * 4) +
           2 * stag(uint64_t{cw} * isa::dtype_size(p.out)) + 1024;
}

void dequant_kernel(isa::IInstrSink& sink, const DequantPlan& p) {
    KernelContext ctx(sink);
    const uint64_t u0 = uint64_t{ctx.block_idx()} * p.per_block, total = p.M * p.nch;
    if (u0 >= total) return;
    const uint64_t u1 = std::min(total, u0 + p.per_block);
    const uint32_t eo = isa::dtype_size(p.out);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qa, qw;
    TQue<TPosition::VECOUT> qo;
    TBuf<TPosition::VECCALC> f;
    pipe.InitBuffer(qa, 2, u32(stag(uint64_t{p.cw} * 4)));
    pipe.InitBuffer(qw, 2, u32(stag(uint64_t{p.cw} * 4)));
    pipe.InitBuffer(qo, 2, u32(stag(uint64_t{p.cw} * eo)));
    pipe.InitBuffer(f, u32(stag(uint64_t{p.cw} * 4)));
    const uint32_t fa = f.Get<uint8_t>().address();
    GlobalTensor<float> as;
    as.SetGlobalBuffer(ctx, p.as, p.M);
    for (uint64_t u = u0; u < u1; ++u) {
        const uint64_t m = u / p.nch, c0 = (u % p.nch) * p.cw, cv = std::min<uint64_t>(p.cw, p.N - c0), n = up(cv, 64);
        const double s = as.GetValue(m);
        ctx.scalar(4);
        LocalTensor<uint8_t> a = qa.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, I32, Pos::UB, a.address(), p.acc + (m * p.N + c0) * 4, isa::CopyParams{1, u32(cv * 4), 0, 0}, 0);
        qa.EnQue(a);
        LocalTensor<uint8_t> w = qw.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, F32, Pos::UB, w.address(), p.ws + c0 * 4, isa::CopyParams{1, u32(cv * 4), 0, 0}, 0);
        qw.EnQue(w);
        a = qa.DeQue<uint8_t>();
        norm::vrun(ctx, Opcode::VCONV, F32, vop(fa), vop(a.address()), {}, 1, 1, n, 0, I32);
        qa.FreeTensor(a);
        w = qw.DeQue<uint8_t>();
        norm::vrun(ctx, Opcode::VMUL, F32, vop(fa), vop(fa), vop(w.address()), 1, 1, n);
        qw.FreeTensor(w);
        norm::vrun(ctx, Opcode::VMULS, F32, vop(fa), vop(fa), {}, 1, 1, n, s);
        LocalTensor<uint8_t> o = qo.AllocTensor<uint8_t>();
        from_f32(ctx, o.address(), fa, p.out, n);
        qo.EnQue(o);
        o = qo.DeQue<uint8_t>();
        kernel::detail::copy_out(ctx, p.out, p.y + (m * p.N + c0) * eo, Pos::UB, o.address(),
                                 isa::CopyParams{1, u32(cv * eo), 0, 0});
        qo.FreeTensor(o);
    }
}

class QuantMatMulOp : public INodeOp {
public:
    QuantMatMulOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        auto want = [&](size_t i, const char* what, DType t) -> const TensorRef& {
            const TensorRef& r = norm::need_input(n, i, what);
            if (r.dtype != t)
                throw UnsupportedError(n, std::string("input '") + what + "' has dtype " + isa::dtype_name(r.dtype) +
                                              " (expected " + isa::dtype_name(t) + ")");
            if (!r.contiguous() || r.format != Format::ND)
                throw UnsupportedError(n, std::string("input '") + what + "' is not contiguous ND");
            return r;
        };
        const TensorRef &a = want(0, "a", I8), &w = want(1, "w", I8), &ws = want(2, "w_scale", F32),
                        &as = want(3, "a_scale", F32);
        if (a.shape.size() != 2 || w.shape.size() != 2 || a.shape[1] != w.shape[0])
            throw UnsupportedError(n, "a " + ref::shape_str(a.shape) + " and w " + ref::shape_str(w.shape) +
                                          " must be [M, K] and [K, N]");
        const uint64_t M = static_cast<uint64_t>(a.shape[0]), K = static_cast<uint64_t>(a.shape[1]),
                       N = static_cast<uint64_t>(w.shape[1]);
        if (ws.numel() != N) throw UnsupportedError(n, "w_scale " + ref::shape_str(ws.shape) + " has not N = " + std::to_string(N) + " entries");
        if (as.numel() != M) throw UnsupportedError(n, "a_scale " + ref::shape_str(as.shape) + " has not M = " + std::to_string(M) + " entries");
        const std::string od = n.attrs.get_string("output_dtype", "fp16");
        if (od != "fp16" && od != "bf16")
            throw UnsupportedError(n, "attribute 'output_dtype' = '" + od + "' (valid: fp16, bf16)");
        for (uint64_t v : {M, K, N})
            if (v == 0 || v > 0x7fffffffull) throw UnsupportedError(n, "M, K and N must be in [1, 2^31)");
        CubeMatmulPlan& c = m_mm;
        c.in = I8, c.out = I32;
        c.lda = K, c.ldb = N, c.ldc = N;
        MatmulProblem pr;
        pr.m = u32(M), pr.n = u32(N), pr.k = u32(K), pr.in_es = 1, pr.out_es = 4;
        try {
            c.t = plan_matmul(pr, dev);
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        c.t.gm_nz = false;
        DequantPlan& d = m_dq;
        d.out = od == "bf16" ? DType::BF16 : DType::FP16;
        d.M = M, d.N = N;
        const uint64_t per = std::max<uint64_t>(1, std::max(1u, dev.vector_cores) / M);
        uint64_t cw = std::clamp<uint64_t>(up(cdiv(N, per), 64), 64, 8192);
        while (cw > 64 && dequant_ub(d, u32(cw)) > dev.ub_bytes) cw -= 64;
        if (dequant_ub(d, u32(cw)) > dev.ub_bytes) throw UnsupportedError(n, "not even 64 columns fit in UB");
        d.cw = u32(cw), d.nch = cdiv(N, cw);
        const norm::WorkSplit sp = norm::split_work(M * d.nch, dev.vector_cores);
        d.per_block = sp.per_block, d.blocks = sp.blocks;
        m_ws = M * N * 4;
        m_out = make_tensor({a.shape[0], w.shape[1]}, od == "bf16" ? ref::ElemType::Bfloat16 : ref::ElemType::Float16);
        const MatmulTiling& t = c.t;
        m_form = "int8 cube " + std::to_string(t.base_m) + "x" + std::to_string(t.base_n) + " tiles, k chunk " +
                 std::to_string(t.k_l1) + ", int32 -> vector dequant in chunks of " + std::to_string(d.cw);
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_ws; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        CubeMatmulPlan c = m_mm;
        c.a = in[0].addr, c.b = in[1].addr, c.c = ws;
        const MatmulTiling& t = c.t;
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = t.pf_ahead ? KernelKind::Mix : KernelKind::Cube;
        kd.block_dim = t.block_dim;
        kd.body = [c](isa::IInstrSink& s) { run_cube_matmul(s, c); };
        kd.flops = 2.0 * t.m * t.n * t.k;
        kd.bytes = uint64_t{t.m} * t.k + uint64_t{t.k} * t.n + uint64_t{t.m} * t.n * 4;
        const double steps = static_cast<double>(norm::cdiv(t.m, 16) * norm::cdiv(t.k, 32) * norm::cdiv(t.n, 16));
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        DequantPlan d = m_dq;
        d.acc = ws, d.ws = in[2].addr, d.as = in[3].addr, d.y = out[0].addr;
        const uint64_t n = d.M * d.N;
        KernelDesc e = norm::vector_launch(m_node.name + "/dequant", m_node.op_type, d.blocks,
                                           [d](isa::IInstrSink& s) { dequant_kernel(s, d); }, 2.0 * static_cast<double>(n),
                                           n * (4 + isa::dtype_size(d.out)) + d.N * 4 + d.M * 4, 4.0, n, m_dev);
        return {kd, e};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    CubeMatmulPlan m_mm;
    DequantPlan m_dq;
    TensorRef m_out;
    uint64_t m_ws = 0;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_dynamic_quant(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<DynamicQuantOp>(n, d); }
std::unique_ptr<INodeOp> make_quant_matmul(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<QuantMatMulOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(dynamic_quant, "DynamicQuant", make_dynamic_quant);
SFUMATO_REGISTER_NODE_OP(quant_matmul, "QuantMatMul", make_quant_matmul);

}  // namespace sfumato::ops::llm
