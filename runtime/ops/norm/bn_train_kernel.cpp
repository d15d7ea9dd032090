// Fused BatchNormalization training kernels (runtime/ops/norm/bn_train_kernel.h).
#include "runtime/ops/norm/bn_train_kernel.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

using BnKind = BnTrainPlan::Kind;

bool two_inputs(const BnTrainPlan& p) { return p.kind == BnKind::GradStats || p.kind == BnKind::GradApply; }
bool reduces(const BnTrainPlan& p) { return p.kind == BnKind::Stats || p.kind == BnKind::GradStats; }
// Coefficient rows (one 256-byte row each, a C0 vector repeated over the 64 fp32 lanes).
uint64_t coef_rows(const BnTrainPlan& p) {
    switch (p.kind) {
        case BnKind::GradStats: return 1;  // the mean
        case BnKind::Apply: return 2;      // a, c
        case BnKind::GradApply: return 3;  // a, b, c
        default: return 0;
    }
}

struct BnTrainLayout {
    uint64_t in, out, f, g, acc, rows, part;
};
BnTrainLayout bn_train_layout(const BnTrainPlan& p) {
    const uint64_t es = isa::dtype_size(p.xt), t = up(p.tile, 64);
    BnTrainLayout l{};
    l.in = staggered(t * es);
    l.out = p.kind == BnKind::Apply || p.kind == BnKind::GradApply ? staggered(t * es) : 0;
    // fp32 copies of the tile's operands (a 4-byte input computes in its input buffer).
    l.f = p.xt == F32 ? 0 : staggered(t * 4);
    // A second fp32 operand of the reductions (a second conversion of X for x * x, or x - mean),
    // so that no vector instruction reads one UB bank twice (a bank conflict).
    l.g = (p.kind == BnKind::Stats && p.xt != F32) || p.kind == BnKind::GradStats ? staggered(t * 4) : 0;
    l.acc = reduces(p) ? staggered(t * 4) : 0;
    l.rows = coef_rows(p) * 256;
    l.part = reduces(p) ? 256 : 0;
    return l;
}

}  // namespace

uint64_t bn_ub_bytes(const BnTrainPlan& p) {
    const BnTrainLayout l = bn_train_layout(p);
    const uint64_t ins = two_inputs(p) ? 2 : 1;
    return 2 * ins * l.in + 2 * l.out + ins * l.f + l.g + 2 * l.acc + l.rows + 2 * l.part + 1024;
}

bool plan_bn(BnTrainPlan& p, uint64_t ub, uint32_t cores) {
    // The largest tile (whole C0 rows, a multiple of 64 fp32 lanes) that fits, at most 16 Ki
    // elements (longer tiles gain nothing: each vector instruction already runs 255 repeats).
    const uint64_t row = p.C0, plane = p.L * p.C0;
    uint64_t t = 16384;
    for (;; t -= 64) {
        if (t < 64) return false;
        BnTrainPlan q = p;
        q.tile = t;
        if (bn_ub_bytes(q) <= ub) break;
    }
    t = t / row * row;
    if (plane <= t) {
        p.nch = 1, p.pc = p.L;
        p.nb = std::max<uint64_t>(1, std::min<uint64_t>(p.N, t / plane));
    } else {
        p.pc = t / row;
        p.nch = cdiv(p.L, p.pc);
        p.nb = 1;
    }
    p.tile = p.nb * p.pc * p.C0;
    // Ranges of rows per channel block: enough items for every core twice over, none smaller
    // than a tile.
    const uint64_t want = cdiv(2 * uint64_t{std::max(1u, cores)}, p.C1);
    const uint64_t tiles = p.nch == 1 ? cdiv(p.N, p.nb) : p.rows();
    p.S = std::max<uint64_t>(1, std::min(want, tiles));
    const WorkSplit w = split_work(p.items(), cores);
    p.per_block = w.per_block, p.blocks = w.blocks;
    return true;
}

namespace {

class BnTrainKernel {
public:
    BnTrainKernel(KernelContext& ctx, const BnTrainPlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const BnTrainPlan& p = m_p;
        const uint64_t i0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (i0 >= p.items()) return;
        const uint64_t i1 = std::min(p.items(), i0 + p.per_block);
        const BnTrainLayout l = bn_train_layout(p);
        // X and dY share one queue (a buffer holds both tiles): event ids per pipe pair are few
        // (4 on the 910), the coefficient rows take a fifth buffer's.
        m_in = l.in;
        m_pipe.InitBuffer(m_qx, 2, static_cast<uint32_t>((two_inputs(p) ? 2 : 1) * l.in));
        if (l.out) m_pipe.InitBuffer(m_qo, 2, static_cast<uint32_t>(l.out));
        if (l.f) {
            m_pipe.InitBuffer(m_xf, static_cast<uint32_t>(l.f));
            if (two_inputs(p)) m_pipe.InitBuffer(m_df, static_cast<uint32_t>(l.f));
        }
        if (l.g) m_pipe.InitBuffer(m_xg, static_cast<uint32_t>(l.g));
        if (l.acc) {
            m_pipe.InitBuffer(m_acc0, static_cast<uint32_t>(l.acc));
            m_pipe.InitBuffer(m_acc1, static_cast<uint32_t>(l.acc));
            m_pipe.InitBuffer(m_qp, 2, static_cast<uint32_t>(l.part));
        }
        if (l.rows) m_pipe.InitBuffer(m_qr, 1, static_cast<uint32_t>(l.rows));
        for (uint64_t it = i0; it < i1; ++it) item(it);
        m_qx.drain();
        if (l.out) m_qo.drain();
        if (l.acc) m_qp.drain();
        if (l.rows) m_qr.drain();
    }

private:
    static uint32_t a(const TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }

    // The item's coefficient rows: C0 fp32 values from GM each (src_gap apart), repeated over
    // the 64 lanes of a 256-byte row.
    LocalTensor<uint8_t> load_rows(uint64_t src, uint32_t rows, uint64_t stride_bytes) {
        const uint64_t c0b = m_p.C0 * 4;
        LocalTensor<uint8_t> r = m_qr.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, F32, isa::Pos::UB, r.address(), src,
                        isa::CopyParams{rows, static_cast<uint32_t>(c0b), static_cast<uint32_t>(stride_bytes - c0b),
                                        static_cast<uint32_t>((256 - c0b) / kBlk)},
                        0);
        m_qr.EnQue(r);
        LocalTensor<uint8_t> q = m_qr.DeQue<uint8_t>();
        const uint64_t copies = 64 / m_p.C0;
        if (copies > 1)
            vrun(m_ctx, Opcode::VMULS, F32, vop(static_cast<uint32_t>(q.address() + c0b), 256, static_cast<int64_t>(c0b)),
                 vop(q.address(), 256, 0), {}, rows, copies - 1, m_p.C0, 1.0);
        return q;
    }

    // Loads the tile of `nrows` rows of `len` elements starting at element `e` of the storage
    // (rows C1 x L x C0 elements apart) of X (and of dY after it, in the same buffer); x and d
    // get their fp32 forms. A 4-byte input is computed on in place (the buffer stays held, the
    // caller frees it), as with keep (a second conversion of X follows); otherwise the buffer is
    // freed after the conversions.
    void load(uint64_t e, uint32_t nrows, uint64_t len, uint32_t& x, uint32_t& d, LocalTensor<uint8_t>& held,
              bool& holding, bool keep) {
        const BnTrainPlan& p = m_p;
        const uint32_t es = isa::dtype_size(p.xt);
        LocalTensor<uint8_t> in = m_qx.AllocTensor<uint8_t>();
        const uint64_t gap = (p.C1 * p.L * p.C0 - len) * es;
        const isa::CopyParams cp{nrows, static_cast<uint32_t>(len * es), static_cast<uint32_t>(gap), 0};
        kernel::detail::copy_in(m_ctx, p.xt, isa::Pos::UB, in.address(), p.x + e * es, cp, 0);
        if (two_inputs(p))
            kernel::detail::copy_in(m_ctx, p.xt, isa::Pos::UB, static_cast<uint32_t>(in.address() + m_in), p.dy + e * es,
                                    cp, 0);
        m_qx.EnQue(in);
        held = m_qx.DeQue<uint8_t>();
        const uint32_t xr = held.address(), dr = static_cast<uint32_t>(held.address() + m_in);
        holding = true;
        if (p.xt == F32) {
            x = xr, d = dr;
            return;
        }
        const uint64_t n = uint64_t{nrows} * len;
        if (two_inputs(p)) vrun(m_ctx, Opcode::VCONV, F32, vop(a(m_df)), vop(dr), {}, 1, 1, n, 0, p.xt);
        vrun(m_ctx, Opcode::VCONV, F32, vop(a(m_xf)), vop(xr), {}, 1, 1, n, 0, p.xt);
        x = a(m_xf), d = two_inputs(p) ? a(m_df) : 0;
        if (!keep) {
            m_qx.FreeTensor(held);
            holding = false;
        }
    }

    void item(uint64_t it) {
        const BnTrainPlan& p = m_p;
        m_ctx.scalar(4);
        const uint64_t c1 = it / p.S, s = it % p.S;
        // Rows [r0, r1) of this channel block; whole planes in tiles of nb when nch == 1.
        const uint64_t units = p.nch == 1 ? p.N : p.rows();
        const uint64_t per = cdiv(units, p.S), r0 = std::min(units, s * per), r1 = std::min(units, r0 + per);
        const uint64_t n_tile = up(p.tile, 64);
        LocalTensor<uint8_t> rows;
        if (p.kind == BnKind::GradStats) rows = load_rows(p.mean + c1 * p.C0 * 4, 1, p.C0 * 4);
        if (p.kind == BnKind::Apply) rows = load_rows(p.coef + c1 * p.C0 * 4, 2, p.C() * 4);
        if (p.kind == BnKind::GradApply) rows = load_rows(p.coef + (2 * p.C() + c1 * p.C0) * 4, 3, p.C() * 4);
        if (reduces(p)) {
            vrun(m_ctx, Opcode::VDUP, F32, vop(a(m_acc0)), {}, {}, 1, 1, n_tile, 0.0);
            vrun(m_ctx, Opcode::VDUP, F32, vop(a(m_acc1)), {}, {}, 1, 1, n_tile, 0.0);
        }
        for (uint64_t r = r0; r < r1;) {
            m_ctx.scalar(4);
            uint64_t e, len;
            uint32_t nrows;
            if (p.nch == 1) {
                nrows = static_cast<uint32_t>(std::min(p.nb, r1 - r));
                e = (r * p.C1 + c1) * p.L * p.C0, len = p.L * p.C0;
                r += nrows;
            } else {
                const uint64_t n = r / p.nch, p0 = r % p.nch * p.pc;
                nrows = 1;
                e = ((n * p.C1 + c1) * p.L + p0) * p.C0, len = std::min(p.pc, p.L - p0) * p.C0;
                r += 1;
            }
            tile(e, nrows, len, rows.address());
        }
        if (reduces(p)) write_part(c1, s);
        if (coef_rows(p)) m_qr.FreeTensor(rows);
    }

    void tile(uint64_t e, uint32_t nrows, uint64_t len, uint32_t rows) {
        const BnTrainPlan& p = m_p;
        const uint64_t n = uint64_t{nrows} * len;
        LocalTensor<uint8_t> hx;
        bool holding = false;
        uint32_t x = 0, d = 0;
        const bool keep_x = p.kind == BnKind::Stats && p.xt != F32;
        load(e, nrows, len, x, d, hx, holding, keep_x);
        // Accumulations as dst = src0 * scalar + dst and dst = src0 * src1 + dst: no operand
        // of one instruction shares another's UB banks.
        switch (p.kind) {
            case BnKind::Stats: {
                uint32_t x2 = x;  // x * x from two copies (one conversion more, no conflict)
                if (keep_x) {
                    x2 = a(m_xg);
                    vrun(m_ctx, Opcode::VCONV, F32, vop(x2), vop(hx.address()), {}, 1, 1, n, 0, p.xt);
                    m_qx.FreeTensor(hx);
                    holding = false;
                }
                vrun(m_ctx, Opcode::VAXPY, F32, vop(a(m_acc0)), vop(x), {}, 1, 1, n, 1.0);
                vrun(m_ctx, Opcode::VMLA, F32, vop(a(m_acc1)), vop(x), vop(x2), 1, 1, n);
                break;
            }
            case BnKind::GradStats:
                vrun(m_ctx, Opcode::VAXPY, F32, vop(a(m_acc0)), vop(d), {}, 1, 1, n, 1.0);
                vrun(m_ctx, Opcode::VSUB, F32, vop(a(m_xg)), vop(x), vrow(rows), 1, 1, n);
                vrun(m_ctx, Opcode::VMLA, F32, vop(a(m_acc1)), vop(a(m_xg)), vop(d), 1, 1, n);
                break;
            case BnKind::Apply:
                vrun(m_ctx, Opcode::VMADD, F32, vop(x), vrow(rows), vrow(rows + 256), 1, 1, n);
                if (p.relu) vrun(m_ctx, Opcode::VMAXS, F32, vop(x), vop(x), {}, 1, 1, n, 0.0);
                store(e, nrows, len, x);
                break;
            case BnKind::GradApply:
                vrun(m_ctx, Opcode::VMADD, F32, vop(d), vrow(rows), vrow(rows + 512), 1, 1, n);
                vrun(m_ctx, Opcode::VMLA, F32, vop(d), vop(x), vrow(rows + 256), 1, 1, n);
                store(e, nrows, len, d);
                break;
        }
        if (holding) m_qx.FreeTensor(hx);
    }

    void store(uint64_t e, uint32_t nrows, uint64_t len, uint32_t src) {
        const BnTrainPlan& p = m_p;
        const uint32_t es = isa::dtype_size(p.xt);
        const uint64_t n = uint64_t{nrows} * len;
        LocalTensor<uint8_t> o = m_qo.AllocTensor<uint8_t>();
        if (p.xt == F32) vrun(m_ctx, Opcode::VMULS, F32, vop(o.address()), vop(src), {}, 1, 1, n, 1.0);
        else vrun(m_ctx, Opcode::VCONV, p.xt, vop(o.address()), vop(src), {}, 1, 1, n, 0, F32);
        m_qo.EnQue(o);
        LocalTensor<uint8_t> y = m_qo.DeQue<uint8_t>();
        const uint64_t gap = (p.C1 * p.L * p.C0 - len) * es;
        kernel::detail::copy_out(m_ctx, p.xt, p.y + e * es, isa::Pos::UB, y.address(),
                         isa::CopyParams{nrows, static_cast<uint32_t>(len * es), 0, static_cast<uint32_t>(gap)});
        m_qo.FreeTensor(y);
    }

    // The accumulators folded to C0 lanes (64-lane units pairwise, then the 64 / C0 lane groups)
    // and written as the item's partial [2][C0].
    void write_part(uint64_t c1, uint64_t s) {
        const BnTrainPlan& p = m_p;
        const uint64_t units = up(p.tile, 64) / 64;
        for (const auto* acc : {&m_acc0, &m_acc1}) {
            fold(m_ctx, Opcode::VADD, F32, a(*acc), a(*acc), 1, 0, 0, units, 256, 64);
            fold(m_ctx, Opcode::VADD, F32, a(*acc), a(*acc), 1, 0, 0, 64 / p.C0, static_cast<int64_t>(p.C0 * 4), p.C0);
        }
        LocalTensor<uint8_t> o = m_qp.AllocTensor<uint8_t>();
        vrun(m_ctx, Opcode::VMULS, F32, vop(o.address(), static_cast<int64_t>(p.C0 * 4)), vop(a(m_acc0), static_cast<int64_t>(a(m_acc1)) - static_cast<int64_t>(a(m_acc0))),
             {}, 2, 1, p.C0, 1.0);
        m_qp.EnQue(o);
        LocalTensor<uint8_t> q = m_qp.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, F32, p.part + ((s * p.C1 + c1) * 2 * p.C0) * 4, isa::Pos::UB, q.address(),
                         isa::CopyParams{1, static_cast<uint32_t>(2 * p.C0 * 4), 0, 0});
        m_qp.FreeTensor(q);
    }

    KernelContext& m_ctx;
    const BnTrainPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_qx, m_qr;
    uint64_t m_in = 0;  // bytes of one input's tile in a queue buffer
    TQue<TPosition::VECOUT> m_qo, m_qp;
    TBuf<TPosition::VECCALC> m_xf, m_df, m_xg, m_acc0, m_acc1;
};

}  // namespace

void bn_kernel(isa::IInstrSink& sink, const BnTrainPlan& p) {
    KernelContext ctx(sink);
    BnTrainKernel k(ctx, p);
    k.run();
}

}  // namespace sfumato::ops::norm
