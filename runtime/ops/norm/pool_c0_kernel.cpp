// MaxPool over NC1HWC0 (runtime/ops/norm/pool_c0_kernel.h).
#include "runtime/ops/norm/pool_c0_kernel.h"

#include <algorithm>
#include <limits>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

uint64_t pool_c0_in_bytes(const PoolC0Plan& p) { return staggered(static_cast<uint64_t>(p.in_rows() * p.Wp) * kBlk); }
uint64_t pool_c0_out_bytes(const PoolC0Plan& p) { return staggered(static_cast<uint64_t>(p.ob * p.OW) * kBlk); }

// The lowest value of the type (what a padded tap holds).
double lowest(DType t) {
    switch (t) {
        case DType::INT8: return -128.0;
        case DType::UINT8: return 0.0;
        default: return -std::numeric_limits<double>::infinity();
    }
}

}  // namespace

uint64_t pool_c0_ub_bytes(const PoolC0Plan& p) { return 2 * pool_c0_in_bytes(p) + 2 * pool_c0_out_bytes(p) + 1024; }

bool plan_pool_c0(PoolC0Plan& p, uint64_t ub, uint32_t cores) {
    const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(p.xt));
    // Whole groups of 8 output pixels stay inside a tile row (a masked tail reads no further).
    p.Wp = std::max(p.pl + p.W, ((p.OW + 7) / 8 * 8 - 1) * p.sw + p.kw);
    const int64_t pr = p.Wp - p.pl - p.W;
    if (p.pl * c0 > 255 || pr * c0 > 255 || p.pt < 0 || p.pl < 0) return false;  // the copy's pad fields
    if (p.sw * 8 > 65535 || p.sh * p.Wp > 65535 || p.OW > 65535) return false;    // repeat strides
    p.ob = std::min<int64_t>(p.OH, 255);
    while (p.ob > 1 && pool_c0_ub_bytes(p) > ub) --p.ob;
    if (pool_c0_ub_bytes(p) > ub) return false;
    // Enough items for every core twice over.
    while (p.ob > 1 && p.items() < 2 * uint64_t{std::max(1u, cores)}) p.ob = (p.ob + 1) / 2;
    const WorkSplit w = split_work(p.items(), cores);
    p.per_block = w.per_block, p.blocks = w.blocks;
    return true;
}

void pool_c0_kernel(isa::IInstrSink& sink, const PoolC0Plan& p) {
    KernelContext ctx(sink);
    const uint64_t i0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (i0 >= p.items()) return;
    const uint64_t i1 = std::min(p.items(), i0 + p.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qin;
    TQue<TPosition::VECOUT> qout;
    pipe.InitBuffer(qin, 2, static_cast<uint32_t>(pool_c0_in_bytes(p)));
    pipe.InitBuffer(qout, 2, static_cast<uint32_t>(pool_c0_out_bytes(p)));
    const uint32_t es = isa::dtype_size(p.xt), lanes = 256 / es, c0 = kBlk / es;
    const double low = lowest(p.xt);
    const uint64_t row_b = static_cast<uint64_t>(p.Wp) * kBlk;  // tile row bytes
    const int64_t pr = p.Wp - p.pl - p.W;
    const uint64_t bands = p.bands();
    for (uint64_t it = i0; it < i1; ++it) {
        ctx.scalar(8);
        const uint64_t plane = it / bands;
        const int64_t o0 = static_cast<int64_t>(it % bands) * p.ob, nob = std::min(p.ob, p.OH - o0);
        const int64_t r_lo = o0 * p.sh - p.pt, r_hi = (o0 + nob - 1) * p.sh - p.pt + p.kh;  // input rows [r_lo, r_hi)
        const int64_t v_lo = std::max<int64_t>(0, r_lo), v_hi = std::min(p.H, r_hi);
        LocalTensor<uint8_t> in = qin.AllocTensor<uint8_t>();
        const uint32_t t = in.address();
        if (v_hi > v_lo) {
            isa::CopyParams cp{static_cast<uint32_t>(v_hi - v_lo), static_cast<uint32_t>(p.W * kBlk), 0, 0};
            cp.pad_left = static_cast<uint8_t>(p.pl * c0), cp.pad_right = static_cast<uint8_t>(pr * c0);
            kernel::detail::copy_in(ctx, p.xt, isa::Pos::UB, static_cast<uint32_t>(t + (v_lo - r_lo) * row_b),
                                    p.x + ((plane * static_cast<uint64_t>(p.H) + static_cast<uint64_t>(v_lo)) *
                                           static_cast<uint64_t>(p.W)) * kBlk,
                                    cp, low);
        }
        qin.EnQue(in);
        LocalTensor<uint8_t> x = qin.DeQue<uint8_t>();
        // Rows of the band above or below the input: the lowest value (padding).
        const int64_t top = std::min(v_lo, r_hi) - r_lo, bottom = r_hi - std::max(v_hi, r_lo);
        if (v_hi <= v_lo) {
            vrun(ctx, Opcode::VDUP, p.xt, vop(t), {}, {}, 1, 1, static_cast<uint64_t>(r_hi - r_lo) * row_b / es, low);
        } else {
            if (top > 0) vrun(ctx, Opcode::VDUP, p.xt, vop(t), {}, {}, 1, 1, static_cast<uint64_t>(top) * row_b / es, low);
            if (bottom > 0)
                vrun(ctx, Opcode::VDUP, p.xt, vop(static_cast<uint32_t>(t + (v_hi - r_lo) * row_b)), {}, {}, 1, 1,
                     static_cast<uint64_t>(bottom) * row_b / es, low);
        }
        LocalTensor<uint8_t> out = qout.AllocTensor<uint8_t>();
        const uint32_t y = out.address();
        // Per group of 8 output pixels, per tap: the band's rows as repeats (source rows sh tile
        // rows apart, output rows OW pixels apart), pixels sw blocks apart in the source.
        for (int64_t g = 0; g * 8 < p.OW; ++g) {
            const uint64_t npix = static_cast<uint64_t>(std::min<int64_t>(8, p.OW - g * 8)), nl = npix * c0;
            isa::VecParams v;
            v.repeat = static_cast<uint16_t>(nob);
            v.dst_blk_stride = 1, v.dst_rep_stride = static_cast<uint16_t>(p.OW);
            v.src0_blk_stride = v.src1_blk_stride = static_cast<uint16_t>(p.sw);
            v.src0_rep_stride = v.src1_rep_stride = static_cast<uint16_t>(p.sh * p.Wp);
            v.mask_lo = nl >= 64 ? ~0ull : (1ull << nl) - 1;
            v.mask_hi = nl > 64 ? (nl - 64 >= 64 ? ~0ull : (1ull << (nl - 64)) - 1) : 0;
            if (lanes <= 64) v.mask_hi = 0;
            const uint32_t dst = static_cast<uint32_t>(y + g * 8 * kBlk);
            auto tap = [&](int64_t k) {
                const int64_t a = k / p.kw, b = k % p.kw;
                return static_cast<uint32_t>(t + static_cast<uint64_t>(a) * row_b +
                                             static_cast<uint64_t>(b + g * 8 * p.sw) * kBlk);
            };
            const int64_t taps = p.kh * p.kw;
            isa::Instr in0 = isa::make_instr(taps > 1 ? Opcode::VMAX : Opcode::VMULS);
            in0.dtype = p.xt;
            in0.dst = {dst, isa::Pos::UB};
            in0.src0 = {tap(0), isa::Pos::UB};
            in0.src1 = {taps > 1 ? tap(1) : tap(0), isa::Pos::UB};
            in0.vec = v;
            in0.scalar = 1.0;
            ctx.issue(in0);
            for (int64_t k = 2; k < taps; ++k) {
                isa::Instr in1 = isa::make_instr(Opcode::VMAX);
                in1.dtype = p.xt;
                in1.dst = {dst, isa::Pos::UB};
                in1.src0 = {tap(k), isa::Pos::UB};
                in1.src1 = {dst, isa::Pos::UB};
                in1.vec = v;
                in1.vec.src1_blk_stride = 1, in1.vec.src1_rep_stride = static_cast<uint16_t>(p.OW);
                ctx.issue(in1);
            }
        }
        qin.FreeTensor(x);
        qout.EnQue(out);
        LocalTensor<uint8_t> o = qout.DeQue<uint8_t>();
        kernel::detail::copy_out(ctx, p.xt,
                                 p.y + ((plane * static_cast<uint64_t>(p.OH) + static_cast<uint64_t>(o0)) *
                                        static_cast<uint64_t>(p.OW)) * kBlk,
                                 isa::Pos::UB, o.address(),
                                 isa::CopyParams{1, static_cast<uint32_t>(nob * p.OW * kBlk), 0, 0});
        qout.FreeTensor(o);
    }
    qin.drain();
    qout.drain();
}

}  // namespace sfumato::ops::norm
