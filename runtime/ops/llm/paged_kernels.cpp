// The cache-write and combine kernels of PagedAttention
// (runtime/ops/llm/paged_attention.h).
#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/llm/paged_attention.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::llm {

using isa::Opcode;
using isa::Pos;
using namespace sfumato::kernel;
using norm::up;
using norm::vop;
using norm::vrow;

void cache_write_kernel(isa::IInstrSink& sink, const CacheWritePlan& p) {
    KernelContext ctx(sink);
    if (ctx.block_idx() >= p.runs.size()) return;
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> q;  // MTE2 -> MTE3: a copy through UB
    pipe.InitBuffer(q, 2, u32(up(p.chunk, 32)), QueuePipes{Pipe::MTE2, Pipe::MTE3});
    auto copy = [&](uint64_t src, uint64_t dst, uint64_t bytes) {
        for (uint64_t off = 0; off < bytes; off += p.chunk) {
            const uint32_t len = u32(std::min(p.chunk, bytes - off));
            LocalTensor<uint8_t> b = q.AllocTensor<uint8_t>();
            kernel::detail::copy_in(ctx, p.t, Pos::UB, b.address(), src + off, isa::CopyParams{1, len, 0, 0},
                                    0);
            q.EnQue(b);
            LocalTensor<uint8_t> d = q.DeQue<uint8_t>();
            kernel::detail::copy_out(ctx, p.t, dst + off, Pos::UB, d.address(),
                                     isa::CopyParams{1, len, 0, 0});
            q.FreeTensor(d);
        }
    };
    for (size_t r = ctx.block_idx(); r < p.runs.size(); r += ctx.block_num()) {
        const CacheWritePlan::Run& run = p.runs[r];
        ctx.scalar(4);
        copy(p.k + run.token * p.row_bytes, p.kc + run.slot * p.row_bytes, run.n * p.row_bytes);
        copy(p.v + run.token * p.row_bytes, p.vc + run.slot * p.row_bytes, run.n * p.row_bytes);
    }
    q.drain();
}

namespace {

struct CombineLayout {
    uint64_t lse, o, acc, out, blk, e;
};
CombineLayout combine_layout(uint32_t rc, uint32_t D, uint32_t parts) {
    const uint64_t rs = up(uint64_t{rc} * 4, 32);
    return {
        stag(parts * rs), stag(uint64_t{rc} * D * 4), stag(uint64_t{rc} * D * 4), stag(uint64_t{rc} * D * 4),
        up(rc, 8) * 32,   stag(uint64_t{rc} * 256)};
}

}  // namespace

uint64_t combine_ub_bytes(uint32_t rc, uint32_t D, uint32_t parts) {
    const CombineLayout l = combine_layout(rc, D, parts);
    return 3 * l.lse + 2 * l.o + l.acc + l.out + l.blk + l.e + 1024;
}

namespace {

class CombineKernel {
public:
    CombineKernel(KernelContext& ctx, const CombinePlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const CombinePlan& p = m_p;
        if (m_ctx.block_idx() >= p.groups.size()) return;
        uint32_t pmax = 1;
        for (const auto& g : p.groups) pmax = std::max(pmax, g.parts);
        const CombineLayout l = combine_layout(p.rows, p.D, pmax);
        m_pipe.InitBuffer(m_qlse, 1, u32(l.lse));
        m_pipe.InitBuffer(m_qo, 2, u32(l.o));
        m_pipe.InitBuffer(m_qout, 1, u32(l.out));
        m_pipe.InitBuffer(m_w, u32(l.lse));
        m_pipe.InitBuffer(m_scr, u32(l.lse));
        m_pipe.InitBuffer(m_acc, u32(l.acc));
        m_pipe.InitBuffer(m_blk, u32(l.blk));
        m_pipe.InitBuffer(m_e, u32(l.e));
        for (size_t gi = m_ctx.block_idx(); gi < p.groups.size(); gi += m_ctx.block_num()) {
            const CombinePlan::Group& g = p.groups[gi];
            for (uint32_t a = 0; a < g.rows; a += p.rows) {
                m_ctx.scalar(4);
                chunk(g, a, std::min(p.rows, g.rows - a));
            }
        }
        m_qlse.drain();
        m_qo.drain();
        m_qout.drain();
    }

private:
    uint32_t at(TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }
    void per_row(uint32_t v, uint32_t rows) {
        norm::brcb(m_ctx, F32, at(m_blk), v, rows);
        norm::expand_blocks(m_ctx, F32, at(m_e), at(m_blk), rows);
    }

    // Rows [a, a + rc) of group g.
    void chunk(const CombinePlan::Group& g, uint32_t a, uint32_t rc) {
        const CombinePlan& p = m_p;
        const uint32_t P = g.parts, D = p.D;
        const int64_t rs = static_cast<int64_t>(up(uint64_t{rc} * 4, 32)), os = int64_t{D} * 4;
        const uint64_t slot0 = p.partial + uint64_t{g.part0} * p.slot_bytes;
        LocalTensor<uint8_t> lse = m_qlse.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, F32, Pos::UB, lse.address(), slot0 + uint64_t{p.br} * D * 4 + a * 4,
                                isa::CopyParams{P, rc * 4, u32(p.slot_bytes - rc * 4), 0}, 0);
        m_qlse.EnQue(lse);
        lse = m_qlse.DeQue<uint8_t>();
        const uint32_t w = at(m_w), scr = at(m_scr), acc = at(m_acc);
        // M = max over the parts; w_p = exp(lse_p - M); den = sum_p w_p.
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(scr, rs), vop(lse.address(), rs), {}, P, 1, rc, 1.0);
        norm::fold(m_ctx, Opcode::VMAX, F32, scr, scr, 1, 0, 0, P, rs, rc);
        norm::vrun(m_ctx, Opcode::VSUB, F32, vop(w, rs), vop(lse.address(), rs), vop(scr, 0), P, 1, rc);
        m_qlse.FreeTensor(lse);
        norm::vrun(m_ctx, Opcode::VEXP, F32, vop(w, rs), vop(w, rs), {}, P, 1, rc);
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(scr, rs), vop(w, rs), {}, P, 1, rc, 1.0);
        norm::fold(m_ctx, Opcode::VADD, F32, scr, scr, 1, 0, 0, P, rs, rc);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(acc), {}, {}, 1, 1, uint64_t{rc} * D, 0.0);
        for (uint32_t q = 0; q < P; ++q) {
            LocalTensor<uint8_t> o = m_qo.AllocTensor<uint8_t>();
            kernel::detail::copy_in(m_ctx, F32, Pos::UB, o.address(),
                                    slot0 + q * p.slot_bytes + uint64_t{a} * D * 4,
                                    isa::CopyParams{1, rc * D * 4, 0, 0}, 0);
            m_qo.EnQue(o);
            o = m_qo.DeQue<uint8_t>();
            per_row(u32(w + q * rs), rc);
            norm::vrun(m_ctx, Opcode::VMLA, F32, vop(acc, 0, os), vop(o.address(), 0, os),
                       vrow(at(m_e), 0, 256), 1, rc, D);
            m_qo.FreeTensor(o);
        }
        norm::vrun(m_ctx, Opcode::VREC, F32, vop(scr), vop(scr), {}, 1, 1, rc);
        per_row(scr, rc);
        norm::vrun(m_ctx, Opcode::VMUL, F32, vop(acc, 0, os), vop(acc, 0, os), vrow(at(m_e), 0, 256), 1, rc,
                   D);
        LocalTensor<uint8_t> y = m_qout.AllocTensor<uint8_t>();
        from_f32(m_ctx, y.address(), acc, p.t, uint64_t{rc} * D);
        m_qout.EnQue(y);
        y = m_qout.DeQue<uint8_t>();
        const uint32_t es = isa::dtype_size(p.t);
        kernel::detail::copy_out(m_ctx, p.t, g.o + uint64_t{a} * g.ldo * es, Pos::UB, y.address(),
                                 isa::CopyParams{rc, D * es, 0, (g.ldo - D) * es});
        m_qout.FreeTensor(y);
    }

    KernelContext& m_ctx;
    const CombinePlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_qlse, m_qo;
    TQue<TPosition::VECOUT> m_qout;
    TBuf<TPosition::VECCALC> m_w, m_scr, m_acc, m_blk, m_e;
};

}  // namespace

void combine_kernel(isa::IInstrSink& sink, const CombinePlan& p) {
    KernelContext ctx(sink);
    CombineKernel k(ctx, p);
    k.run();
}

}  // namespace sfumato::ops::llm
