// MoE router, permutation and combine: kernels and graph-node faces (runtime/ops/llm/moe.h).
#include "runtime/ops/llm/moe.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/kernel/api.h"
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

std::vector<int64_t> host_experts_attr(const NodeDesc& n, uint64_t entries, int64_t E) {
    if (!n.attrs.has("host_experts")) return {};
    std::vector<int64_t> v = n.attrs.get_ints("host_experts", {});
    if (v.size() != entries)
        throw UnsupportedError(n, "attribute 'host_experts' has " + std::to_string(v.size()) + " entries for " +
                                      std::to_string(entries) + " (tokens x top_k)");
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i] < 0 || v[i] >= E)
            throw UnsupportedError(n, "attribute 'host_experts': entry " + std::to_string(i) + " = " +
                                          std::to_string(v[i]) + " is outside [0, " + std::to_string(E) + ")");
    return v;
}

int64_t num_experts_attr(const NodeDesc& n) {
    const int64_t E = n.attrs.get_int("num_experts", 0);
    if (E < 1 || E > 4096)
        throw UnsupportedError(n, "attribute 'num_experts' = " + std::to_string(E) + " (supported: 1 to 4096)");
    return E;
}

namespace {

// One lane of a 256-byte row: dst lane l = src lane l (op with src1 or the scalar), the rest
// untouched.
void lane_op(KernelContext& ctx, Opcode op, uint32_t dst, uint32_t src0, uint32_t src1, uint32_t lane,
             double s = 1.0) {
    isa::Instr in = isa::make_instr(op);
    in.dtype = F32;
    in.dst = {dst + (lane / 64) * 256, Pos::UB};
    in.src0 = {src0 + (lane / 64) * 256 * (src0 == dst ? 1u : 0u), Pos::UB};
    if (src1) in.src1 = {src1, Pos::UB};
    in.vec.mask_lo = 1ull << (lane % 64);
    in.vec.mask_hi = 0;
    in.scalar = s;
    ctx.issue(in);
}

// A scalar load of one element of GM (LD_GM) as a double (0 in timing mode).
double load_scalar(KernelContext& ctx, DType t, uint64_t addr) {
    isa::Instr in = isa::make_instr(Opcode::LD_GM);
    in.dtype = t;
    in.src0 = {addr, Pos::GM};
    const uint64_t bits = ctx.sink().load(in);
    uint8_t b[8];
    std::memcpy(b, &bits, 8);
    return isa::load_f64(t, b);
}

// ---------------------------------------------------------------- router

struct RouterPlan {
    DType t = DType::FP16;
    uint64_t x = 0, w = 0, ids = 0;
    uint64_t T = 0, E = 0;
    uint32_t k = 1, ep = 64, rows = 1;
    uint64_t per_block = 1;
    uint32_t blocks = 1;
};

uint64_t router_ub(const RouterPlan& p, uint32_t rows) {
    const uint64_t o = up(uint64_t{rows} * p.k, 64);
    return 2 * stag(uint64_t{rows} * p.ep * isa::dtype_size(p.t)) + 2 * stag(p.ep * 4) + 12 * 256 +
           3 * stag(o * 4) + stag(o * isa::dtype_size(p.t)) + stag(o * 4) + norm::kBitsScratch + 1024;
}

class RouterKernel {
public:
    RouterKernel(KernelContext& ctx, const RouterPlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const RouterPlan& p = m_p;
        const uint64_t t0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (t0 >= p.T) return;
        const uint64_t t1 = std::min(p.T, t0 + p.per_block);
        const uint32_t es = isa::dtype_size(p.t), o = u32(up(uint64_t{p.rows} * p.k, 64));
        m_pipe.InitBuffer(m_in, 2, u32(stag(uint64_t{p.rows} * p.ep * es)));
        m_pipe.InitBuffer(m_ow, 1, u32(stag(uint64_t{o} * es)));
        m_pipe.InitBuffer(m_oi, 1, u32(stag(uint64_t{o} * 4)));
        m_pipe.InitBuffer(m_w, u32(stag(p.ep * 4)));
        m_pipe.InitBuffer(m_iota, u32(stag(p.ep * 4)));
        m_pipe.InitBuffer(m_small, 12 * 256);
        m_pipe.InitBuffer(m_vals, u32(stag(uint64_t{o} * 4)));
        m_pipe.InitBuffer(m_pos, u32(stag(uint64_t{o} * 4)));
        m_pipe.InitBuffer(m_sums, u32(stag(uint64_t{o} * 4)));
        m_pipe.InitBuffer(m_bits, norm::kBitsScratch);
        norm::iota(m_ctx, F32, a(m_iota), p.ep);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(sm(kNinf)), {}, {}, 1, 1, 64, -kInf);
        for (uint64_t t = t0; t < t1; t += p.rows) {
            m_ctx.scalar(4);
            tile(t, u32(std::min<uint64_t>(p.rows, t1 - t)));
        }
        m_in.drain();
        m_ow.drain();
        m_oi.drain();
    }

private:
    enum { kRes, kBlk, kVal, kPosf, kPose, kM0, kSum, kE, kNinf };
    uint32_t a(TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }
    uint32_t sm(int i) { return a(m_small) + static_cast<uint32_t>(i) * 256; }

    // Max of the first n lanes of src with its first position: value spread over sm(kVal), the
    // position as fp32 in block sm(kPosf) and spread over sm(kPose).
    void argmax(uint32_t src, uint64_t n) {
        isa::Instr in = isa::make_instr(Opcode::VREDALL_MAX);
        in.dtype = F32;
        in.dst = {sm(kRes), Pos::UB};
        in.src0 = {src, Pos::UB};
        in.vec.repeat = static_cast<uint16_t>(n / 64);
        in.vec.with_index = 1;
        m_ctx.issue(in);
        norm::brcb(m_ctx, I32, sm(kBlk), sm(kRes), 2);  // [value x 8][position x 8]
        norm::expand_blocks(m_ctx, F32, sm(kVal), sm(kBlk), 1);
        norm::vrun(m_ctx, Opcode::VCONV, F32, vop(sm(kPosf)), vop(sm(kBlk) + 32), {}, 1, 1, 8, 0, I32);
        norm::expand_blocks(m_ctx, F32, sm(kPose), sm(kPosf), 1);
    }

    void tile(uint64_t t, uint32_t rows) {
        const RouterPlan& p = m_p;
        const uint32_t es = isa::dtype_size(p.t), n = rows * p.k, o = u32(up(n, 64));
        LocalTensor<uint8_t> x = m_in.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.t, Pos::UB, x.address(), p.x + t * p.E * es,
                                isa::CopyParams{rows, u32(p.E * es), 0, gap_blocks(p.ep, p.E, es)}, 0);
        m_in.EnQue(x);
        x = m_in.DeQue<uint8_t>();
        const uint32_t w = a(m_w), vals = a(m_vals), pos = a(m_pos), sums = a(m_sums);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(vals), {}, {}, 1, 1, o, 0.0);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(sums), {}, {}, 1, 1, o, 1.0);
        for (uint32_t i = 0; i < rows; ++i) {
            m_ctx.scalar(2);
            to_f32(m_ctx, w, x.address() + i * p.ep * es, p.t, p.ep);
            if (p.E % 64) norm::fill_tail(m_ctx, F32, u32(w + (p.ep - 64) * 4), 1, 256, u32(p.E % 64), -kInf);
            for (uint32_t r = 0; r < p.k; ++r) {
                m_ctx.scalar(2);
                argmax(w, p.ep);
                if (r == 0) {
                    norm::vrun(m_ctx, Opcode::VMULS, F32, vop(sm(kM0)), vop(sm(kVal)), {}, 1, 1, 64, 1.0);
                    norm::vrun(m_ctx, Opcode::VDUP, F32, vop(sm(kSum)), {}, {}, 1, 1, 64, 0.0);
                }
                norm::vrun(m_ctx, Opcode::VSUB, F32, vop(sm(kE)), vop(sm(kVal)), vop(sm(kM0)), 1, 1, 64);
                norm::vrun(m_ctx, Opcode::VEXP, F32, vop(sm(kE)), vop(sm(kE)), {}, 1, 1, 64);
                norm::vrun(m_ctx, Opcode::VADD, F32, vop(sm(kSum)), vop(sm(kSum)), vop(sm(kE)), 1, 1, 64);
                lane_op(m_ctx, Opcode::VMULS, vals, sm(kE), 0, i * p.k + r);
                lane_op(m_ctx, Opcode::VMULS, pos, sm(kPose), 0, i * p.k + r);
                if (r + 1 < p.k)
                    norm::vselect_cmp(m_ctx, F32, isa::CmpMode::EQ, vop(a(m_iota)), vblock(sm(kPosf), 0, 0), F32, vop(w),
                                      vblock(sm(kNinf), 0, 0), vop(w), a(m_bits), 1, 1, p.ep);
            }
            for (uint32_t j = 0; j < p.k; ++j) lane_op(m_ctx, Opcode::VMULS, sums, sm(kSum), 0, i * p.k + j);
        }
        m_in.FreeTensor(x);
        norm::vrun(m_ctx, Opcode::VDIV, F32, vop(vals), vop(vals), vop(sums), 1, 1, o);
        LocalTensor<uint8_t> ow = m_ow.AllocTensor<uint8_t>();
        from_f32(m_ctx, ow.address(), vals, p.t, o);
        m_ow.EnQue(ow);
        LocalTensor<uint8_t> oi = m_oi.AllocTensor<uint8_t>();
        norm::vrun(m_ctx, Opcode::VCONV, I32, vop(oi.address()), vop(pos), {}, 1, 1, o, 0, F32);
        m_oi.EnQue(oi);
        ow = m_ow.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, p.t, p.w + t * p.k * es, Pos::UB, ow.address(), isa::CopyParams{1, n * es, 0, 0});
        m_ow.FreeTensor(ow);
        oi = m_oi.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, I32, p.ids + t * p.k * 4, Pos::UB, oi.address(), isa::CopyParams{1, n * 4, 0, 0});
        m_oi.FreeTensor(oi);
    }

    KernelContext& m_ctx;
    const RouterPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_in;
    TQue<TPosition::VECOUT> m_ow, m_oi;
    TBuf<TPosition::VECCALC> m_w, m_iota, m_small, m_vals, m_pos, m_sums, m_bits;
};

class RouterOp : public INodeOp {
public:
    RouterOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        RouterPlan& p = m_plan;
        p.t = act_input(n, 0, "logits");
        const TensorRef& x = n.inputs[0];
        if (x.shape.size() != 2 || x.shape[1] < 1)
            throw UnsupportedError(n, "logits must be [T, E], got " + ref::shape_str(x.shape));
        p.T = static_cast<uint64_t>(x.shape[0]), p.E = static_cast<uint64_t>(x.shape[1]);
        const int64_t k = n.attrs.get_int("top_k", 2);
        if (k < 1 || static_cast<uint64_t>(k) > p.E)
            throw UnsupportedError(n, "attribute 'top_k' = " + std::to_string(k) + " must be in [1, " +
                                          std::to_string(p.E) + "] (the experts)");
        if (p.E > 255 * 64) throw UnsupportedError(n, "more than 16320 experts");
        p.k = u32(static_cast<uint64_t>(k));
        p.ep = u32(up(p.E, 64));
        const norm::WorkSplit w = norm::split_work(p.T, dev.vector_cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        uint32_t rows = u32(std::min<uint64_t>({std::max<uint64_t>(p.per_block, 1), 32, 4096 / p.k}));
        while (rows > 1 && router_ub(p, rows) > dev.ub_bytes) --rows;
        if (router_ub(p, rows) > dev.ub_bytes) throw UnsupportedError(n, "a row of " + std::to_string(p.E) + " experts does not fit in UB");
        p.rows = rows;
        m_w = norm::tensor_like(x, {x.shape[0], k});
        m_ids = make_tensor({x.shape[0], k}, ref::ElemType::Int64);
        m_form = "top-" + std::to_string(p.k) + " of " + std::to_string(p.E) + ", " + std::to_string(rows) + " rows per tile";
    }
    std::vector<TensorRef> outputs() const override { return {m_w, m_ids}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.T == 0) return {};
        RouterPlan p = m_plan;
        p.x = in[0].addr, p.w = out[0].addr, p.ids = out[1].addr;
        const uint64_t n = p.T * p.E;
        const uint32_t es = isa::dtype_size(p.t);
        return {norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks,
            [p](isa::IInstrSink& s) {
                KernelContext ctx(s);
                RouterKernel(ctx, p).run();
            },
            3.0 * static_cast<double>(n) * p.k, n * es + p.T * p.k * (es + 4), 1.0 + 3.0 * p.k, p.T * p.ep, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    RouterPlan m_plan;
    TensorRef m_w, m_ids;
    std::string m_form;
};

// ---------------------------------------------------------------- permute

struct PermutePlan {
    DType t = DType::FP16;
    uint64_t x = 0, ex = 0, xp = 0, rows = 0, sizes = 0, table = 0;
    uint64_t T = 0, H = 0, k = 1, E = 1, N = 0;
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    uint32_t cnt = 64;     // ids per histogram step (multiple of 64)
    uint64_t chunk = 0;    // bytes per row copy
    std::shared_ptr<const std::vector<int64_t>> host;        // host_experts (null: loaded ids)
    std::shared_ptr<const std::vector<int64_t>> host_table;  // [blocks, E] from host_experts
};

uint64_t count_ub(uint32_t c, uint64_t E) {
    return stag(uint64_t{c} * 4) * 3 + 6 * 256 + 2 * stag(up(E, 64) * 4) + norm::kBitsScratch + 1024;
}

// Launch 1: the histogram of the block's entries into table[block][0, E).
void count_kernel(isa::IInstrSink& sink, const PermutePlan& p) {
    KernelContext ctx(sink);
    const uint64_t i0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (i0 >= p.N) return;
    const uint64_t i1 = std::min(p.N, i0 + p.per_block);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qi;
    TQue<TPosition::VECOUT> qo;
    TBuf<TPosition::VECCALC> f, tmp, small, cnt, bits;
    pipe.InitBuffer(qi, 1, u32(stag(uint64_t{p.cnt} * 4)));
    pipe.InitBuffer(qo, 1, u32(stag(up(p.E, 64) * 4)));
    pipe.InitBuffer(f, u32(stag(uint64_t{p.cnt} * 4)));
    pipe.InitBuffer(tmp, u32(stag(uint64_t{p.cnt} * 4)));
    pipe.InitBuffer(small, 6 * 256);
    pipe.InitBuffer(cnt, u32(stag(up(p.E, 64) * 4)));
    pipe.InitBuffer(bits, norm::kBitsScratch);
    const uint32_t fa = f.Get<uint8_t>().address(), ta = tmp.Get<uint8_t>().address(),
                   sa = small.Get<uint8_t>().address(), ca = cnt.Get<uint8_t>().address(),
                   ba = bits.Get<uint8_t>().address();
    const uint32_t one = sa, zero = sa + 256, id = sa + 512, res = sa + 768, blk = sa + 1024, spread = sa + 1280;
    norm::vrun(ctx, Opcode::VDUP, F32, vop(one), {}, {}, 1, 1, 64, 1.0);
    norm::vrun(ctx, Opcode::VDUP, F32, vop(zero), {}, {}, 1, 1, 64, 0.0);
    norm::vrun(ctx, Opcode::VDUP, F32, vop(ca), {}, {}, 1, 1, up(p.E, 64), 0.0);
    for (uint64_t c0 = i0; c0 < i1; c0 += p.cnt) {
        ctx.scalar(4);
        const uint64_t c = std::min<uint64_t>(p.cnt, i1 - c0), cp = up(c, 64);
        LocalTensor<uint8_t> b = qi.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, I32, Pos::UB, b.address(), p.ex + c0 * 4, isa::CopyParams{1, u32(c * 4), 0, 0}, 0);
        qi.EnQue(b);
        b = qi.DeQue<uint8_t>();
        norm::vrun(ctx, Opcode::VCONV, F32, vop(fa), vop(b.address()), {}, 1, 1, cp, 0, I32);
        qi.FreeTensor(b);
        if (c % 64) norm::fill_tail(ctx, F32, u32(fa + (cp - 64) * 4), 1, 256, u32(c % 64), -1.0);
        for (uint64_t e = 0; e < p.E; ++e) {
            ctx.scalar(2);
            norm::vrun(ctx, Opcode::VDUP, F32, vop(id), {}, {}, 1, 1, 8, static_cast<double>(e));
            norm::vselect_cmp(ctx, F32, isa::CmpMode::EQ, vop(fa), vblock(id, 0, 0), F32, vop(ta), vblock(one, 0, 0),
                              vblock(zero, 0, 0), ba, 1, 1, cp);
            isa::Instr in = isa::make_instr(Opcode::VREDALL_SUM);
            in.dtype = F32;
            in.dst = {res, Pos::UB};
            in.src0 = {ta, Pos::UB};
            in.vec.repeat = static_cast<uint16_t>(cp / 64);
            ctx.issue(in);
            norm::brcb(ctx, F32, blk, res, 1);
            norm::expand_blocks(ctx, F32, spread, blk, 1);
            lane_op(ctx, Opcode::VADD, ca, ca, spread, u32(e));
        }
    }
    LocalTensor<uint8_t> o = qo.AllocTensor<uint8_t>();
    norm::vrun(ctx, Opcode::VCONV, I32, vop(o.address()), vop(ca), {}, 1, 1, up(p.E, 64), 0, F32);
    qo.EnQue(o);
    o = qo.DeQue<uint8_t>();
    kernel::detail::copy_out(ctx, I32, p.table + uint64_t{ctx.block_idx()} * p.E * 4, Pos::UB, o.address(),
                             isa::CopyParams{1, u32(p.E * 4), 0, 0});
    qo.FreeTensor(o);
}

// Launch 2: rows of the block's entries from the table, then the row copies.
void scatter_kernel(isa::IInstrSink& sink, const PermutePlan& p) {
    KernelContext ctx(sink);
    const uint32_t b = ctx.block_idx();
    const uint64_t i0 = uint64_t{b} * p.per_block;
    if (i0 >= p.N) return;
    const uint64_t i1 = std::min(p.N, i0 + p.per_block);
    GlobalTensor<int32_t> table, ids, rows, sizes;
    table.SetGlobalBuffer(ctx, p.table, uint64_t{p.blocks} * p.E);
    ids.SetGlobalBuffer(ctx, p.ex, p.N);
    rows.SetGlobalBuffer(ctx, p.rows, p.N);
    sizes.SetGlobalBuffer(ctx, p.sizes, p.E);
    std::vector<int64_t> total(p.E, 0), base(p.E, 0);
    for (uint32_t bb = 0; bb < p.blocks; ++bb)
        for (uint64_t e = 0; e < p.E; ++e) {
            int64_t v = table.GetValue(bb * p.E + e);
            if (p.host_table) v = (*p.host_table)[bb * p.E + e];
            ctx.scalar(2);
            total[e] += v;
            if (bb < b) base[e] += v;
        }
    int64_t acc = 0;
    for (uint64_t e = 0; e < p.E; ++e) {
        ctx.scalar(2);
        base[e] += acc;
        acc += total[e];
        if (b == 0) sizes.SetValue(e, static_cast<int32_t>(total[e]));
    }
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> q;  // MTE2 -> MTE3 directly
    pipe.InitBuffer(q, 2, u32(up(p.chunk, 32)), QueuePipes{Pipe::MTE2, Pipe::MTE3});
    const uint64_t rb = p.H * isa::dtype_size(p.t);
    const int64_t E = static_cast<int64_t>(p.E);
    std::vector<uint64_t> dst(p.k);
    for (uint64_t i = i0; i < i1;) {
        const uint64_t t = i / p.k, end = std::min(i1, (t + 1) * p.k);
        uint32_t nd = 0;
        for (; i < end; ++i) {
            int64_t e = ids.GetValue(i);
            if (p.host) e = (*p.host)[i];
            ctx.scalar(4);  // clamp, base[e]++, address
            e = std::clamp<int64_t>(e, 0, E - 1);
            const int64_t r = base[static_cast<size_t>(e)]++;
            rows.SetValue(i, static_cast<int32_t>(r));
            dst[nd++] = static_cast<uint64_t>(r);
        }
        for (uint64_t off = 0; off < rb; off += p.chunk) {
            const uint32_t len = u32(std::min(p.chunk, rb - off));
            LocalTensor<uint8_t> buf = q.AllocTensor<uint8_t>();
            kernel::detail::copy_in(ctx, p.t, Pos::UB, buf.address(), p.x + t * rb + off, isa::CopyParams{1, len, 0, 0}, 0);
            q.EnQue(buf);
            buf = q.DeQue<uint8_t>();
            for (uint32_t j = 0; j < nd; ++j)
                kernel::detail::copy_out(ctx, p.t, p.xp + dst[j] * rb + off, Pos::UB, buf.address(),
                                         isa::CopyParams{1, len, 0, 0});
            q.FreeTensor(buf);
        }
    }
    q.drain();
    DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE>(rows);
}

class PermuteOp : public INodeOp {
public:
    PermuteOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        PermutePlan& p = m_plan;
        p.t = act_input(n, 0, "x");
        const TensorRef& x = n.inputs[0];
        const TensorRef& ex = index_input(n, 1, "experts");
        if (x.shape.size() != 2) throw UnsupportedError(n, "x must be [T, H], got " + ref::shape_str(x.shape));
        if (ex.shape.size() != 2 || ex.shape[0] != x.shape[0] || ex.shape[1] < 1)
            throw UnsupportedError(n, "experts " + ref::shape_str(ex.shape) + " must be [T, k] with x's T = " +
                                          std::to_string(x.shape[0]));
        p.E = static_cast<uint64_t>(num_experts_attr(n));
        p.T = static_cast<uint64_t>(x.shape[0]), p.H = static_cast<uint64_t>(x.shape[1]);
        p.k = static_cast<uint64_t>(ex.shape[1]), p.N = p.T * p.k;
        const std::vector<int64_t> host = host_experts_attr(n, p.N, static_cast<int64_t>(p.E));
        // Whole tokens per block: a token's row is read once for its k entries.
        const norm::WorkSplit w = norm::split_work(p.T, dev.vector_cores);
        p.per_block = w.per_block * p.k, p.blocks = w.blocks;
        uint32_t c = u32(std::min<uint64_t>(up(std::max<uint64_t>(p.per_block, 1), 64), 4096));
        while (c > 64 && count_ub(c, p.E) > dev.ub_bytes) c -= 64;
        if (count_ub(c, p.E) > dev.ub_bytes)
            throw UnsupportedError(n, std::to_string(p.E) + " experts do not fit in UB");
        p.cnt = c;
        const uint64_t half = (dev.ub_bytes - 1024) / 2 / 32 * 32, rb = p.H * isa::dtype_size(p.t);
        p.chunk = std::max<uint64_t>(std::min(rb, half), 1);
        if (!host.empty()) {
            p.host = std::make_shared<const std::vector<int64_t>>(host);
            auto tab = std::make_shared<std::vector<int64_t>>(uint64_t{p.blocks} * p.E, 0);
            for (uint64_t i = 0; i < p.N; ++i)
                ++(*tab)[(i / p.per_block) * p.E + static_cast<uint64_t>(host[i])];
            p.host_table = tab;
        }
        m_ws = uint64_t{p.blocks} * p.E * 4;
        m_xp = norm::tensor_like(x, {static_cast<int64_t>(p.N), x.shape[1]});
        m_rows = make_tensor(ex.shape, ref::ElemType::Int64);
        m_sizes = make_tensor({static_cast<int64_t>(p.E)}, ref::ElemType::Int64);
        m_form = "counting sort over " + std::to_string(p.blocks) + " blocks" +
                 (p.host ? ", host-known experts" : ", experts read from GM");
    }
    std::vector<TensorRef> outputs() const override { return {m_xp, m_rows, m_sizes}; }
    uint64_t workspace_bytes() const override { return m_ws; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        if (m_plan.N == 0) return {};
        PermutePlan p = m_plan;
        p.x = in[0].addr, p.ex = in[1].addr, p.xp = out[0].addr, p.rows = out[1].addr, p.sizes = out[2].addr;
        p.table = ws;
        const uint64_t rb = p.H * isa::dtype_size(p.t);
        KernelDesc c = norm::vector_launch(
            m_node.name + "/count", m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { count_kernel(s, p); },
            2.0 * static_cast<double>(p.N * p.E), p.N * 4 + uint64_t{p.blocks} * p.E * 4, 3.0 * static_cast<double>(p.E),
            p.N, m_dev);
        KernelDesc s = norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& sk) { scatter_kernel(sk, p); }, 0,
            p.T * rb + p.N * rb + p.N * 8 + uint64_t{p.blocks} * p.E * 4, 0, 0, m_dev);
        return {c, s};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    PermutePlan m_plan;
    TensorRef m_xp, m_rows, m_sizes;
    uint64_t m_ws = 0;
    std::string m_form;
};

// ---------------------------------------------------------------- combine

struct MoeCombinePlan {
    DType t = DType::FP16, wt = DType::FP16;
    uint64_t yp = 0, rows = 0, w = 0, y = 0;
    uint64_t T = 0, H = 0, k = 1, R = 0;
    uint32_t cw = 64;
    uint64_t nch = 1, per_block = 1;
    uint32_t blocks = 1;
    std::shared_ptr<const std::vector<int64_t>> host_rows;
};

uint64_t combine_ub(const MoeCombinePlan& p, uint32_t cw) {
    return 4 * stag(uint64_t{cw} * isa::dtype_size(p.t)) + 2 * stag(uint64_t{cw} * 4) + 1024;
}

void combine_kernel(isa::IInstrSink& sink, const MoeCombinePlan& p) {
    KernelContext ctx(sink);
    const uint64_t u0 = uint64_t{ctx.block_idx()} * p.per_block, total = p.T * p.nch;
    if (u0 >= total) return;
    const uint64_t u1 = std::min(total, u0 + p.per_block);
    const uint32_t es = isa::dtype_size(p.t), we = isa::dtype_size(p.wt);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qi;
    TQue<TPosition::VECOUT> qo;
    TBuf<TPosition::VECCALC> acc, tmp;
    pipe.InitBuffer(qi, 2, u32(stag(uint64_t{p.cw} * es)));
    pipe.InitBuffer(qo, 2, u32(stag(uint64_t{p.cw} * es)));
    pipe.InitBuffer(acc, u32(stag(uint64_t{p.cw} * 4)));
    pipe.InitBuffer(tmp, u32(stag(uint64_t{p.cw} * 4)));
    const uint32_t aa = acc.Get<uint8_t>().address(), ta = tmp.Get<uint8_t>().address();
    GlobalTensor<int32_t> rows;
    rows.SetGlobalBuffer(ctx, p.rows, p.T * p.k);
    const int64_t R = static_cast<int64_t>(p.R);
    for (uint64_t u = u0; u < u1; ++u) {
        const uint64_t t = u / p.nch, c0 = (u % p.nch) * p.cw, cv = std::min<uint64_t>(p.cw, p.H - c0);
        const uint64_t n = up(cv, 64);
        for (uint64_t j = 0; j < p.k; ++j) {
            const uint64_t i = t * p.k + j;
            int64_t r = rows.GetValue(i);
            if (p.host_rows) r = (*p.host_rows)[i];
            const double s = load_scalar(ctx, p.wt, p.w + i * we);
            ctx.scalar(4);
            r = std::clamp<int64_t>(r, 0, R - 1);
            LocalTensor<uint8_t> b = qi.AllocTensor<uint8_t>();
            kernel::detail::copy_in(ctx, p.t, Pos::UB, b.address(), p.yp + (static_cast<uint64_t>(r) * p.H + c0) * es,
                                    isa::CopyParams{1, u32(cv * es), 0, 0}, 0);
            qi.EnQue(b);
            b = qi.DeQue<uint8_t>();
            to_f32(ctx, ta, b.address(), p.t, n);
            qi.FreeTensor(b);
            if (j == 0)
                norm::vrun(ctx, Opcode::VMULS, F32, vop(aa), vop(ta), {}, 1, 1, n, s);
            else
                norm::vrun(ctx, Opcode::VAXPY, F32, vop(aa), vop(ta), {}, 1, 1, n, s);
        }
        LocalTensor<uint8_t> o = qo.AllocTensor<uint8_t>();
        from_f32(ctx, o.address(), aa, p.t, n);
        qo.EnQue(o);
        o = qo.DeQue<uint8_t>();
        kernel::detail::copy_out(ctx, p.t, p.y + (t * p.H + c0) * es, Pos::UB, o.address(),
                                 isa::CopyParams{1, u32(cv * es), 0, 0});
        qo.FreeTensor(o);
    }
}

class CombineOp : public INodeOp {
public:
    CombineOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        MoeCombinePlan& p = m_plan;
        p.t = act_input(n, 0, "y_perm");
        const TensorRef& yp = n.inputs[0];
        const TensorRef& rows = index_input(n, 1, "rows");
        p.wt = act_input(n, 2, "weights");
        if (yp.shape.size() != 2) throw UnsupportedError(n, "y_perm must be [R, H], got " + ref::shape_str(yp.shape));
        if (rows.shape.size() != 2 || rows.shape[1] < 1)
            throw UnsupportedError(n, "rows must be [T, k], got " + ref::shape_str(rows.shape));
        if (n.inputs[2].shape != rows.shape)
            throw UnsupportedError(n, "weights " + ref::shape_str(n.inputs[2].shape) + " differs from rows " +
                                          ref::shape_str(rows.shape));
        p.R = static_cast<uint64_t>(yp.shape[0]), p.H = static_cast<uint64_t>(yp.shape[1]);
        p.T = static_cast<uint64_t>(rows.shape[0]), p.k = static_cast<uint64_t>(rows.shape[1]);
        if (p.R == 0 && p.T > 0) throw UnsupportedError(n, "y_perm has no rows");
        if (n.attrs.has("host_experts")) {
            const int64_t E = num_experts_attr(n);
            const std::vector<int64_t> h = host_experts_attr(n, p.T * p.k, E);
            std::vector<int64_t> r = ref::moe_group(h, E, "node '" + n.name + "'").rows;
            for (int64_t v : r)
                if (static_cast<uint64_t>(v) >= p.R)
                    throw UnsupportedError(n, "attribute 'host_experts' gives rows past y_perm's " + std::to_string(p.R));
            p.host_rows = std::make_shared<const std::vector<int64_t>>(std::move(r));
        }
        uint64_t cw = std::min<uint64_t>(up(std::max<uint64_t>(p.H, 1), 64), 8192);
        while (cw > 64 && combine_ub(p, u32(cw)) > dev.ub_bytes) cw -= 64;
        if (combine_ub(p, u32(cw)) > dev.ub_bytes) throw UnsupportedError(n, "not even 64 columns fit in UB");
        p.cw = u32(cw);
        p.nch = cdiv(std::max<uint64_t>(p.H, 1), cw);
        const norm::WorkSplit w = norm::split_work(p.T * p.nch, dev.vector_cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        m_out = norm::tensor_like(yp, {rows.shape[0], yp.shape[1]});
        m_form = std::to_string(p.nch) + " chunk(s) of " + std::to_string(p.cw) + " per token" +
                 (p.host_rows ? ", host-known rows" : ", rows read from GM");
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.T == 0 || m_plan.H == 0) return {};
        MoeCombinePlan p = m_plan;
        p.yp = in[0].addr, p.rows = in[1].addr, p.w = in[2].addr, p.y = out[0].addr;
        const uint32_t es = isa::dtype_size(p.t);
        const uint64_t n = p.T * p.H;
        return {norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { combine_kernel(s, p); },
            2.0 * static_cast<double>(n * p.k), (p.k + 1) * n * es + p.T * p.k * (4 + isa::dtype_size(p.wt)),
            2.0 * static_cast<double>(p.k) + 1, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    MoeCombinePlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_router(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<RouterOp>(n, d); }
std::unique_ptr<INodeOp> make_permute(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<PermuteOp>(n, d); }
std::unique_ptr<INodeOp> make_combine(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<CombineOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(moe_router, "MoeRouter", make_router);
SFUMATO_REGISTER_NODE_OP(moe_permute, "MoePermute", make_permute);
SFUMATO_REGISTER_NODE_OP(moe_combine, "MoeCombine", make_combine);

}  // namespace sfumato::ops::llm
