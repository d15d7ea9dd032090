// MaxPoolGrad over NC1HWC0 (runtime/ops/norm/pool_c0_kernel.h).
#include <algorithm>
#include <limits>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/pool_c0_kernel.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

uint64_t pcg_x_bytes(const PoolC0GradPlan& p) { return staggered(static_cast<uint64_t>(p.hb * p.Wp) * kBlk); }
uint64_t pcg_y_bytes(const PoolC0GradPlan& p) { return staggered(static_cast<uint64_t>(p.out_rows() * p.OW) * kBlk); }
int64_t pcg_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t pcg_ceil_div(int64_t a, int64_t b) { return -pcg_floor_div(-a, b); }

}  // namespace

uint64_t pool_c0_grad_ub_bytes(const PoolC0GradPlan& p) {
    // Queue buffers of X and (Y, dY) twice, dX twice, the selected gradients, a zero row, the
    // compare's bits.
    return 2 * (pcg_x_bytes(p) + 2 * pcg_y_bytes(p)) + 2 * pcg_x_bytes(p) + pcg_y_bytes(p) + 256 + kBitsScratch + 1024;
}

bool plan_pool_c0_grad(PoolC0GradPlan& p, uint64_t ub, uint32_t cores) {
    const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(p.xt));
    p.Wp = std::max(p.pl + p.W, ((p.OW + 7) / 8 * 8 - 1) * p.sw + p.kw);
    const int64_t pr = p.Wp - p.pl - p.W;
    if (p.pl * c0 > 255 || pr * c0 > 255 || p.pt < 0 || p.pl < 0) return false;
    if (p.sw * 8 > 65535 || p.sh * p.Wp > 65535 || p.OW > 65535) return false;
    p.hb = std::min<int64_t>(p.H, 255);
    while (p.hb > 1 && (pool_c0_grad_ub_bytes(p) > ub || p.out_rows() > 255)) --p.hb;
    if (pool_c0_grad_ub_bytes(p) > ub) return false;
    while (p.hb > 1 && p.items() < 2 * uint64_t{std::max(1u, cores)}) p.hb = (p.hb + 1) / 2;
    const WorkSplit w = split_work(p.items(), cores);
    p.per_block = w.per_block, p.blocks = w.blocks;
    return true;
}

void pool_c0_grad_kernel(isa::IInstrSink& sink, const PoolC0GradPlan& p) {
    KernelContext ctx(sink);
    const uint64_t i0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (i0 >= p.items()) return;
    const uint64_t i1 = std::min(p.items(), i0 + p.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> bt, bz, bbits;
    const uint64_t xb = pcg_x_bytes(p), yb = pcg_y_bytes(p);
    pipe.InitBuffer(qin, 2, static_cast<uint32_t>(xb + 2 * yb));
    pipe.InitBuffer(qout, 2, static_cast<uint32_t>(xb));
    pipe.InitBuffer(bt, static_cast<uint32_t>(yb));
    pipe.InitBuffer(bz, 256);
    pipe.InitBuffer(bbits, kBitsScratch);
    const uint32_t es = isa::dtype_size(p.xt), c0 = kBlk / es;
    const uint32_t tb = bt.Get<uint8_t>().address(), zb = bz.Get<uint8_t>().address(), bits = bbits.Get<uint8_t>().address();
    vrun(ctx, Opcode::VDUP, p.xt, vop(zb), {}, {}, 1, 1, 256 / es, 0.0);
    const uint64_t row_b = static_cast<uint64_t>(p.Wp) * kBlk;
    const int64_t pr = p.Wp - p.pl - p.W;
    const uint64_t bands = p.bands();
    for (uint64_t it = i0; it < i1; ++it) {
        ctx.scalar(8);
        const uint64_t plane = it / bands;
        const int64_t r0 = static_cast<int64_t>(it % bands) * p.hb, nrows = std::min(p.hb, p.H - r0);  // input rows
        const int64_t o_lo = std::max<int64_t>(0, pcg_ceil_div(r0 + p.pt - p.kh + 1, p.sh));
        const int64_t o_hi = std::min(p.OH, pcg_floor_div(r0 + nrows - 1 + p.pt, p.sh) + 1);
        const int64_t nr = std::max<int64_t>(0, o_hi - o_lo);
        LocalTensor<uint8_t> in = qin.AllocTensor<uint8_t>();
        const uint32_t xt = in.address(), yt = static_cast<uint32_t>(xt + xb), dyt = static_cast<uint32_t>(xt + xb + yb);
        isa::CopyParams cx{static_cast<uint32_t>(nrows), static_cast<uint32_t>(p.W * kBlk), 0, 0};
        cx.pad_left = static_cast<uint8_t>(p.pl * c0), cx.pad_right = static_cast<uint8_t>(pr * c0);
        kernel::detail::copy_in(ctx, p.xt, isa::Pos::UB, xt,
                                p.x + ((plane * static_cast<uint64_t>(p.H) + static_cast<uint64_t>(r0)) *
                                       static_cast<uint64_t>(p.W)) * kBlk,
                                cx, -std::numeric_limits<double>::infinity());
        if (nr > 0) {
            const uint64_t at = ((plane * static_cast<uint64_t>(p.OH) + static_cast<uint64_t>(o_lo)) *
                                 static_cast<uint64_t>(p.OW)) * kBlk;
            const isa::CopyParams cy{1, static_cast<uint32_t>(nr * p.OW * kBlk), 0, 0};
            kernel::detail::copy_in(ctx, p.xt, isa::Pos::UB, yt, p.y + at, cy, 0);
            kernel::detail::copy_in(ctx, p.xt, isa::Pos::UB, dyt, p.dy + at, cy, 0);
        }
        qin.EnQue(in);
        LocalTensor<uint8_t> tin = qin.DeQue<uint8_t>();
        LocalTensor<uint8_t> out = qout.AllocTensor<uint8_t>();
        const uint32_t dxt = out.address();
        vrun(ctx, Opcode::VDUP, p.xt, vop(dxt), {}, {}, 1, 1, static_cast<uint64_t>(nrows) * row_b / es, 0.0);
        for (int64_t a = 0; a < p.kh; ++a) {
            // Output rows whose tap row a lies in the band.
            const int64_t ra = std::max(o_lo, pcg_ceil_div(r0 + p.pt - a, p.sh));
            const int64_t rb = std::min(o_hi, pcg_floor_div(r0 + nrows - 1 + p.pt - a, p.sh) + 1);
            if (rb <= ra) continue;
            const uint64_t xrow = static_cast<uint64_t>(ra * p.sh + a - p.pt - r0), yrow = static_cast<uint64_t>(ra - o_lo);
            for (int64_t b = 0; b < p.kw; ++b)
                for (int64_t g = 0; g * 8 < p.OW; ++g) {
                    const uint64_t npix = static_cast<uint64_t>(std::min<int64_t>(8, p.OW - g * 8)), nl = npix * c0;
                    isa::VecParams v;
                    v.repeat = static_cast<uint16_t>(rb - ra);
                    v.mask_lo = nl >= 64 ? ~0ull : (1ull << nl) - 1;
                    v.mask_hi = nl > 64 ? (nl - 64 >= 64 ? ~0ull : (1ull << (nl - 64)) - 1) : 0;
                    const uint16_t xrep = static_cast<uint16_t>(p.sh * p.Wp), yrep = static_cast<uint16_t>(p.OW);
                    const uint32_t xo = static_cast<uint32_t>(xrow * row_b + static_cast<uint64_t>(b + g * 8 * p.sw) * kBlk);
                    const uint32_t yo = static_cast<uint32_t>((yrow * static_cast<uint64_t>(p.OW) + static_cast<uint64_t>(g) * 8) * kBlk);
                    auto instr = [&](Opcode op, uint32_t d, uint32_t s0, uint32_t s1) {
                        isa::Instr in1 = isa::make_instr(op);
                        in1.dtype = p.xt;
                        in1.dst = {d, isa::Pos::UB};
                        in1.src0 = {s0, isa::Pos::UB};
                        in1.src1 = {s1, isa::Pos::UB};
                        in1.vec = v;
                        return in1;
                    };
                    // bits = (x_tap == y)
                    isa::Instr cmp = instr(Opcode::VCMP, bits, xt + xo, yt + yo);
                    cmp.vec.cmp = isa::CmpMode::EQ;
                    cmp.vec.src0_blk_stride = static_cast<uint16_t>(p.sw), cmp.vec.src0_rep_stride = xrep;
                    cmp.vec.src1_rep_stride = yrep;
                    ctx.issue(cmp);
                    // t = bits ? dy : 0
                    isa::Instr sel = instr(Opcode::VSEL, tb + yo, dyt + yo, zb);
                    sel.src2 = {bits, isa::Pos::UB};
                    sel.vec.dst_rep_stride = yrep, sel.vec.src0_rep_stride = yrep;
                    sel.vec.src1_blk_stride = 0, sel.vec.src1_rep_stride = 0;
                    ctx.issue(sel);
                    // dx_tap += t
                    isa::Instr add = instr(Opcode::VADD, dxt + xo, dxt + xo, tb + yo);
                    add.vec.dst_blk_stride = add.vec.src0_blk_stride = static_cast<uint16_t>(p.sw);
                    add.vec.dst_rep_stride = add.vec.src0_rep_stride = xrep;
                    add.vec.src1_rep_stride = yrep;
                    ctx.issue(add);
                }
        }
        qin.FreeTensor(tin);
        qout.EnQue(out);
        LocalTensor<uint8_t> o = qout.DeQue<uint8_t>();
        // The band's interior columns (the pad columns skipped by the UB-side gap).
        kernel::detail::copy_out(ctx, p.xt,
                                 p.dx + ((plane * static_cast<uint64_t>(p.H) + static_cast<uint64_t>(r0)) *
                                         static_cast<uint64_t>(p.W)) * kBlk,
                                 isa::Pos::UB, static_cast<uint32_t>(o.address() + p.pl * kBlk),
                                 isa::CopyParams{static_cast<uint32_t>(nrows), static_cast<uint32_t>(p.W * kBlk),
                                                 static_cast<uint32_t>(p.pl + pr), 0});
        qout.FreeTensor(o);
    }
    qin.drain();
    qout.drain();
}

}  // namespace sfumato::ops::norm
