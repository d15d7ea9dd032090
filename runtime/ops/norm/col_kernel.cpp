// Column kernel of Softmax and LogSoftmax (runtime/ops/norm/col_kernel.h).
#include "runtime/ops/norm/col_kernel.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

struct ColLayout {
    uint64_t in, out, xf, scr;
};
ColLayout col_layout(const ColPlan& p, uint32_t g, uint64_t icp) {
    const uint64_t elems = uint64_t{g} * p.len * icp;
    ColLayout l{};
    l.in = up(elems * isa::dtype_size(p.xt), kBlk);
    l.out = up(elems * isa::dtype_size(p.yt), kBlk);
    l.xf = p.xt == F32 ? 0 : elems * 4;
    // max/sum folds need ceil(len / 2) rows per group; LogSoftmax keeps exp(x) whole.
    l.scr = p.log ? elems * 4 : uint64_t{g} * cdiv(p.len, 2) * icp * 4;
    return l;
}
}  // namespace

uint64_t col_ub_bytes(const ColPlan& p, uint32_t g, uint64_t icp) {
    const ColLayout l = col_layout(p, g, icp);
    return p.buffers * (l.in + l.out) + l.xf + l.scr + 1024;
}

void col_kernel(isa::IInstrSink& sink, const ColPlan& p) {
    KernelContext ctx(sink);
    const uint64_t items = p.items();
    const uint64_t i_begin = uint64_t{ctx.block_idx()} * p.per_block;
    if (i_begin >= items) return;
    const uint64_t i_end = std::min(items, i_begin + p.per_block);
    const ColLayout l = col_layout(p, p.g, p.icp);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    TBuf<TPosition::VECCALC> bxf, bscr;
    pipe.InitBuffer(qin, p.buffers, static_cast<uint32_t>(l.in));
    pipe.InitBuffer(qout, p.buffers, static_cast<uint32_t>(l.out));
    if (l.xf) pipe.InitBuffer(bxf, static_cast<uint32_t>(l.xf));
    pipe.InitBuffer(bscr, static_cast<uint32_t>(l.scr));
    const uint32_t ex = isa::dtype_size(p.xt), ey = isa::dtype_size(p.yt);
    const uint64_t nch = p.chunks();
    const int64_t rs = int64_t{p.icp} * 4;         // row stride (fp32)
    const int64_t gs = rs * static_cast<int64_t>(p.len);  // group stride
    const int64_t keep = static_cast<int64_t>(cdiv(p.len, 2));
    for (uint64_t it = i_begin; it < i_end; ++it) {
        ctx.scalar(4);
        const uint64_t o0 = it / nch * p.g, ch = it % nch;
        const uint32_t g = static_cast<uint32_t>(std::min<uint64_t>(p.g, p.outer - o0));
        const uint64_t i0 = ch * p.ic, ic = std::min(p.ic, p.inner - i0);
        const uint64_t base = o0 * p.len * p.inner + i0;
        const uint32_t rows = static_cast<uint32_t>(uint64_t{g} * p.len);
        LocalTensor<uint8_t> in = qin.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, p.xt, isa::Pos::UB, in.address(), p.x + base * ex,
                        isa::CopyParams{rows, static_cast<uint32_t>(ic * ex), static_cast<uint32_t>((p.inner - ic) * ex),
                                        static_cast<uint32_t>((uint64_t{p.icp} * ex - up(ic * ex, kBlk)) / kBlk)},
                        0);
        qin.EnQue(in);
        LocalTensor<uint8_t> xin = qin.DeQue<uint8_t>();
        const uint64_t n = uint64_t{rows} * p.icp;
        const uint32_t xf = p.xt == F32 ? xin.address() : bxf.Get<uint8_t>().address();
        if (p.xt != F32) {
            vrun(ctx, Opcode::VCONV, F32, vop(xf), vop(xin.address()), {}, 1, 1, n, 0, p.xt);
            qin.FreeTensor(xin);
        }
        LocalTensor<uint8_t> out = qout.AllocTensor<uint8_t>();
        const uint32_t ydst = p.yt == F32 ? out.address() : xf;
        const uint32_t scr = bscr.Get<uint8_t>().address();
        // Per group: m = max over rows; x -= m.
        const int64_t sgs = p.log ? gs : keep * rs;  // scratch group stride
        fold(ctx, Opcode::VMAX, F32, xf, scr, g, gs, sgs, p.len, rs, p.icp);
        vrun(ctx, Opcode::VSUB, F32, vop(xf, gs, rs), vop(xf, gs, rs), vop(scr, sgs, 0), g, p.len, p.icp);
        if (!p.log) {
            vrun(ctx, Opcode::VEXP, F32, vop(xf), vop(xf), {}, 1, 1, n);
            fold(ctx, Opcode::VADD, F32, xf, scr, g, gs, sgs, p.len, rs, p.icp);
            vrun(ctx, Opcode::VREC, F32, vop(scr, sgs), vop(scr, sgs), {}, g, 1, p.icp);
            vrun(ctx, Opcode::VMUL, F32, vop(ydst, gs, rs), vop(xf, gs, rs), vop(scr, sgs, 0), g, p.len, p.icp);
        } else {
            vrun(ctx, Opcode::VEXP, F32, vop(scr), vop(xf), {}, 1, 1, n);
            fold(ctx, Opcode::VADD, F32, scr, scr, g, gs, gs, p.len, rs, p.icp);
            vrun(ctx, Opcode::VLN, F32, vop(scr, gs), vop(scr, gs), {}, g, 1, p.icp);
            vrun(ctx, Opcode::VSUB, F32, vop(ydst, gs, rs), vop(xf, gs, rs), vop(scr, gs, 0), g, p.len, p.icp);
        }
        if (p.yt != F32) vrun(ctx, Opcode::VCONV, p.yt, vop(out.address()), vop(xf), {}, 1, 1, n, 0, F32);
        if (p.xt == F32) qin.FreeTensor(xin);
        qout.EnQue(out);
        LocalTensor<uint8_t> o = qout.DeQue<uint8_t>();
        kernel::detail::copy_out(ctx, p.yt, p.y + base * ey, isa::Pos::UB, o.address(),
                         isa::CopyParams{rows, static_cast<uint32_t>(ic * ey),
                                         static_cast<uint32_t>((uint64_t{p.icp} * ey - up(ic * ey, kBlk)) / kBlk),
                                         static_cast<uint32_t>((p.inner - ic) * ey)});
        qout.FreeTensor(o);
    }
    qin.drain();
    qout.drain();
}

}  // namespace sfumato::ops::norm
