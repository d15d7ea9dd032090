// The finalize kernel of the fused BatchNormalization training kernels
// (runtime/ops/norm/bn_train_kernel.h): per chunk of channel blocks, the S partials of the
// reduction summed (pairwise folds), then the per-channel vector arithmetic in fp32 on C0-lane
// rows, results written per output.
#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/bn_train_kernel.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

// One fp32 vector of a chunk's channels (cg x C0), 256-byte aligned.
uint64_t bnf_slot(const BnTrainFinalPlan& p) { return up(p.cg * p.C0 * 4, 256); }
uint64_t bnf_part_bytes(const BnTrainFinalPlan& p) { return staggered(p.S * p.cg * 2 * p.C0 * 4); }
constexpr uint64_t kBnfIn = 4, kBnfTmp = 2, kBnfOut = 6;  // input, scratch and output vectors

}  // namespace

uint64_t bn_final_ub_bytes(const BnTrainFinalPlan& p) {
    return bnf_part_bytes(p) + (2 * kBnfIn + kBnfTmp + kBnfOut) * bnf_slot(p) + 1024;
}

bool plan_bn_final(BnTrainFinalPlan& p, uint64_t ub, uint32_t cores) {
    const WorkSplit w = split_work(p.C1, cores);
    p.per_block = w.per_block, p.blocks = w.blocks;
    for (p.cg = p.per_block; p.cg > 1 && bn_final_ub_bytes(p) > ub; --p.cg) {
    }
    return bn_final_ub_bytes(p) <= ub;
}

void bn_final_kernel(isa::IInstrSink& sink, const BnTrainFinalPlan& p) {
    KernelContext ctx(sink);
    const uint64_t b0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (b0 >= p.C1) return;
    const uint64_t b1 = std::min(p.C1, b0 + p.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qpart, qw;
    TQue<TPosition::VECOUT> qo;
    TBuf<TPosition::VECCALC> bw, bt;
    const uint64_t V = bnf_slot(p);
    pipe.InitBuffer(qpart, 1, static_cast<uint32_t>(bnf_part_bytes(p)));
    pipe.InitBuffer(qw, 1, static_cast<uint32_t>(kBnfIn * V));
    pipe.InitBuffer(bw, static_cast<uint32_t>(kBnfIn * V));
    pipe.InitBuffer(bt, static_cast<uint32_t>(kBnfTmp * V));
    pipe.InitBuffer(qo, 1, static_cast<uint32_t>(kBnfOut * V));
    const uint64_t C0b = p.C0 * 4;
    for (uint64_t c1 = b0; c1 < b1; c1 += p.cg) {
        ctx.scalar(8);
        const uint64_t cg = std::min(p.cg, b1 - c1), nch = cg * p.C0, row = cg * 2 * C0b;
        // Partials [S][cg][2][C0] -> [cg][2][C0].
        LocalTensor<uint8_t> pt = qpart.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, F32, isa::Pos::UB, pt.address(), p.part + c1 * 2 * C0b,
                        isa::CopyParams{static_cast<uint32_t>(p.S), static_cast<uint32_t>(row),
                                        static_cast<uint32_t>((p.C1 - cg) * 2 * C0b), 0},
                        0);
        // The per-channel inputs, each in its type, then in fp32.
        struct In {
            uint64_t addr;
            DType t;
        };
        std::vector<In> ins;
        if (p.grad) ins = {{p.mean, F32}, {p.var, F32}, {p.scale, p.scale_t}};
        else ins = {{p.scale, p.scale_t}, {p.bias, p.bias_t}, {p.in_mean, p.in_mean_t}, {p.in_var, p.in_var_t}};
        LocalTensor<uint8_t> wr = qw.AllocTensor<uint8_t>();
        for (size_t i = 0; i < ins.size(); ++i) {
            const uint32_t es = isa::dtype_size(ins[i].t);
            kernel::detail::copy_in(ctx, ins[i].t, isa::Pos::UB, static_cast<uint32_t>(wr.address() + i * V),
                            ins[i].addr + c1 * p.C0 * es, isa::CopyParams{1, static_cast<uint32_t>(nch * es), 0, 0}, 0);
        }
        qpart.EnQue(pt);
        qw.EnQue(wr);
        LocalTensor<uint8_t> P = qpart.DeQue<uint8_t>();
        LocalTensor<uint8_t> W = qw.DeQue<uint8_t>();
        const uint32_t w = bw.Get<uint8_t>().address(), t = bt.Get<uint8_t>().address();
        auto at = [&](uint32_t base, uint64_t k) { return static_cast<uint32_t>(base + k * V); };
        for (size_t i = 0; i < ins.size(); ++i) {
            if (ins[i].t == F32) vrun(ctx, Opcode::VMULS, F32, vop(at(w, i)), vop(at(W.address(), i)), {}, 1, 1, nch, 1.0);
            else vrun(ctx, Opcode::VCONV, F32, vop(at(w, i)), vop(at(W.address(), i)), {}, 1, 1, nch, 0, ins[i].t);
        }
        qw.FreeTensor(W);
        fold(ctx, Opcode::VADD, F32, P.address(), P.address(), 1, 0, 0, p.S, static_cast<int64_t>(row), 2 * nch);
        // Channel vectors: contiguous, or the two sums interleaved per channel block.
        const int64_t rs = static_cast<int64_t>(2 * C0b);
        auto v = [&](uint32_t addr) { return vop(addr, 0, static_cast<int64_t>(C0b)); };
        const VOp s0 = vop(P.address(), 0, rs), s1 = vop(static_cast<uint32_t>(P.address() + C0b), 0, rs);
        auto op2 = [&](Opcode op, VOp d, VOp x, VOp y, double sc = 0) { vrun(ctx, op, F32, d, x, y, 1, cg, p.C0, sc); };
        LocalTensor<uint8_t> o = qo.AllocTensor<uint8_t>();
        const uint32_t ob = o.address();
        const VOp t0 = v(at(t, 0)), t1 = v(at(t, 1));
        if (p.grad) {
            const VOp mean = v(at(w, 0)), var = v(at(w, 1)), scale = v(at(w, 2));
            const VOp dg = v(at(ob, 0)), db = v(at(ob, 1)), ca = v(at(ob, 2)), cb = v(at(ob, 3)), cc = v(at(ob, 4));
            op2(Opcode::VADDS, t0, var, {}, p.eps);
            op2(Opcode::VSQRT, t0, t0, {});
            op2(Opcode::VREC, t0, t0, {});                 // invstd
            op2(Opcode::VMUL, dg, s1, t0);                 // dscale
            op2(Opcode::VMULS, db, s0, {}, 1.0);           // dB
            op2(Opcode::VMUL, ca, scale, t0);              // a = scale invstd
            op2(Opcode::VMUL, t1, dg, t0);
            op2(Opcode::VMULS, t1, t1, {}, -p.inv_m);      // k1 = -dscale invstd / M
            op2(Opcode::VMUL, cb, t1, ca);                 // b = a k1
            op2(Opcode::VMUL, t1, mean, t1);               // mean k1
            op2(Opcode::VMULS, t0, s0, {}, -p.inv_m);      // k2 = -dB / M
            op2(Opcode::VSUB, t0, t0, t1);
            op2(Opcode::VMUL, cc, t0, ca);                 // c = a (k2 - mean k1)
        } else {
            const VOp scale = v(at(w, 0)), bias = v(at(w, 1)), im = v(at(w, 2)), iv = v(at(w, 3));
            const VOp mean = v(at(ob, 0)), var = v(at(ob, 1)), ca = v(at(ob, 2)), cc = v(at(ob, 3));
            op2(Opcode::VMULS, mean, s0, {}, p.inv_m);
            op2(Opcode::VMULS, var, s1, {}, p.inv_m);
            op2(Opcode::VMUL, t0, mean, mean);
            op2(Opcode::VSUB, var, var, t0);
            op2(Opcode::VMAXS, var, var, {}, 0.0);        // E[x^2] - mean^2 rounds below 0 at worst
            op2(Opcode::VADDS, t0, var, {}, p.eps);
            op2(Opcode::VSQRT, t0, t0, {});
            op2(Opcode::VREC, t0, t0, {});                 // invstd
            op2(Opcode::VMUL, ca, scale, t0);              // a = scale invstd
            op2(Opcode::VMUL, t0, mean, ca);
            op2(Opcode::VSUB, cc, bias, t0);               // c = B - mean a
            // Running statistics: input * momentum + batch * (1 - momentum), in their type.
            op2(Opcode::VMULS, t0, im, {}, p.mom);
            op2(Opcode::VAXPY, t0, mean, {}, 1 - p.mom);
            op2(Opcode::VMULS, t1, iv, {}, p.mom);
            op2(Opcode::VAXPY, t1, var, {}, 1 - p.mom);
            for (uint64_t k = 0; k < 2; ++k) {
                const VOp src = k ? t1 : t0, dst = v(at(ob, 4 + k));
                if (p.in_mean_t == F32) op2(Opcode::VMULS, dst, src, {}, 1.0);
                else vrun(ctx, Opcode::VCONV, p.in_mean_t, dst, src, {}, 1, cg, p.C0, 0, F32);
            }
        }
        qpart.FreeTensor(P);
        qo.EnQue(o);
        LocalTensor<uint8_t> O = qo.DeQue<uint8_t>();
        const uint32_t ugap = static_cast<uint32_t>((V - up(nch * 4, kBlk)) / kBlk);
        const uint32_t ggap = static_cast<uint32_t>((p.C() - nch) * 4);
        auto put = [&](uint64_t k, uint32_t rows, uint64_t dst, DType dt) {
            const uint32_t es = isa::dtype_size(dt);
            kernel::detail::copy_out(ctx, dt, dst + c1 * p.C0 * es, isa::Pos::UB, at(O.address(), k),
                             isa::CopyParams{rows, static_cast<uint32_t>(nch * es), ugap, ggap});
        };
        if (p.grad) {
            put(0, 5, p.coef, F32);  // dscale, dB, a, b, c: rows of [5][C]
        } else {
            put(0, 1, p.mean, F32);
            put(1, 1, p.var, F32);
            put(2, 2, p.coef, F32);  // a, c: rows of [2][C]
            put(4, 1, p.rm, p.in_mean_t);
            put(5, 1, p.rv, p.in_mean_t);
        }
        qo.FreeTensor(O);
    }
    qpart.drain();
    qw.drain();
    qo.drain();
}

}  // namespace sfumato::ops::norm
