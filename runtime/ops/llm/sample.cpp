// Sample kernel, tiling and graph-node face (runtime/ops/llm/sample.h).
#include "runtime/ops/llm/sample.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/kernel/api.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ref/llm_sample.h"

namespace sfumato::ops::llm {

using isa::DType;
using isa::Opcode;
using isa::Pos;
using namespace sfumato::kernel;
using norm::up;
using norm::vblock;
using norm::vop;

namespace {

struct SampleLayout {
    uint64_t in, w, misc;
};
SampleLayout sample_layout(const SamplePlan& p, uint32_t C) {
    const uint64_t n = uint64_t{p.kp} + C;
    return {stag(uint64_t{C} * isa::dtype_size(p.t)), stag(n * 4),
            4 * stag(uint64_t{p.kp} * 4) + 8 * 256 + norm::kBitsScratch};
}

}  // namespace

uint64_t sample_ub_bytes(const SamplePlan& p, uint32_t C) {
    const SampleLayout l = sample_layout(p, C);
    return 2 * l.in + 3 * l.w + l.misc + 1024;
}

namespace {

class SampleKernel {
public:
    SampleKernel(KernelContext& ctx, const SamplePlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const SamplePlan& p = m_p;
        const uint64_t b0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (b0 >= p.B) return;
        const uint64_t b1 = std::min(p.B, b0 + p.per_block);
        const SampleLayout l = sample_layout(p, p.C);
        const uint32_t kp4 = u32(stag(uint64_t{p.kp} * 4));
        m_pipe.InitBuffer(m_in, 2, u32(l.in));
        m_pipe.InitBuffer(m_out, 1, 256);
        m_pipe.InitBuffer(m_w, u32(l.w));
        m_pipe.InitBuffer(m_widx, u32(l.w));
        m_pipe.InitBuffer(m_iota, u32(l.w));
        m_pipe.InitBuffer(m_nv, kp4);
        m_pipe.InitBuffer(m_ni, kp4);
        m_pipe.InitBuffer(m_g, kp4);
        m_pipe.InitBuffer(m_z, kp4);
        m_pipe.InitBuffer(m_small, 8 * 256);
        m_pipe.InitBuffer(m_bits, norm::kBitsScratch);
        norm::iota(m_ctx, F32, a(m_iota), uint64_t{p.kp} + p.C);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(sm(kNinf)), {}, {}, 1, 1, 64, -kInf);
        for (uint64_t b = b0; b < b1; ++b) {
            m_ctx.scalar(4);
            row(b);
        }
        m_in.drain();
        m_out.drain();
    }

private:
    enum { kRes = 0, kBlk = 1, kVal = 2, kIdx = 3, kPosf = 4, kOff = 5, kGi = 6, kNinf = 7 };
    uint32_t a(TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }
    uint32_t sm(int i) { return a(m_small) + static_cast<uint32_t>(i) * 256; }

    // One lane (lane % 64 of the 64-lane group lane / 64) of dst = every lane of the 256-byte row src.
    void put_lane(uint32_t dst, uint32_t src, uint32_t lane) {
        isa::Instr in = isa::make_instr(Opcode::VMULS);
        in.dtype = F32;
        in.dst = {dst + (lane / 64) * 256, Pos::UB};
        in.src0 = {src, Pos::UB};
        in.vec.mask_lo = 1ull << (lane % 64);
        in.vec.mask_hi = 0;
        in.scalar = 1.0;
        m_ctx.issue(in);
    }

    // The maximum of the first n lanes of src (first position on ties): its value spread over
    // sm(kVal), its position as fp32 in the block sm(kPosf), and idx[position] spread over sm(kIdx).
    void argmax(uint32_t src, uint32_t idx, uint64_t n) {
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
        norm::vrun(m_ctx, Opcode::VMULS, I32, vop(sm(kOff)), vop(sm(kBlk) + 32), {}, 1, 1, 8, 4.0);
        isa::VecParams v;
        v.gather_span = u32(n * 4);
        kernel::detail::vec_count(m_ctx, Opcode::VGATHER, F32, F32,
                                  {{sm(kGi), Pos::UB}, {idx, Pos::UB}, {sm(kOff), Pos::UB}, {}}, 8, v, 0);
        norm::expand_blocks(m_ctx, F32, sm(kIdx), sm(kGi), 1);
    }

    void chunk(uint64_t b, uint64_t c0) {
        const SamplePlan& p = m_p;
        const uint64_t cl = std::min<uint64_t>(p.C, p.V - c0), n = p.kp + up(cl, 64);
        const uint32_t es = isa::dtype_size(p.t), w = a(m_w), wi = a(m_widx);
        LocalTensor<uint8_t> x = m_in.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.t, Pos::UB, x.address(), p.x + (b * p.V + c0) * es,
                                isa::CopyParams{1, u32(cl * es), 0, 0}, 0);
        m_in.EnQue(x);
        x = m_in.DeQue<uint8_t>();
        to_f32(m_ctx, w + p.kp * 4, x.address(), p.t, up(cl, 64));
        m_in.FreeTensor(x);
        if (cl % 64) norm::fill_tail(m_ctx, F32, u32(w + (n - 64) * 4), 1, 256, u32(cl % 64), -kInf);
        norm::vrun(m_ctx, Opcode::VADDS, F32, vop(wi + p.kp * 4), vop(a(m_iota) + p.kp * 4), {}, 1, 1,
                   up(cl, 64), static_cast<double>(c0) - p.kp);
        const uint32_t nv = a(m_nv), ni = a(m_ni);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(nv), {}, {}, 1, 1, p.kp, -kInf);
        for (uint32_t r = 0; r < p.k; ++r) {
            m_ctx.scalar(2);
            argmax(w, wi, n);
            put_lane(nv, sm(kVal), r);
            put_lane(ni, sm(kIdx), r);
            norm::vselect_cmp(m_ctx, F32, isa::CmpMode::EQ, vop(a(m_iota)), vblock(sm(kPosf), 0, 0), F32,
                              vop(w), vblock(sm(kNinf), 0, 0), vop(w), a(m_bits), 1, 1, n);
        }
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(w), vop(nv), {}, 1, 1, p.kp, 1.0);
        norm::vrun(m_ctx, Opcode::VMULS, F32, vop(wi), vop(ni), {}, 1, 1, p.kp, 1.0);
    }

    void row(uint64_t b) {
        const SamplePlan& p = m_p;
        const uint32_t w = a(m_w), wi = a(m_widx);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(w), {}, {}, 1, 1, p.kp, -kInf);
        norm::vrun(m_ctx, Opcode::VDUP, F32, vop(wi), {}, {}, 1, 1, p.kp, 0.0);
        for (uint64_t c0 = 0; c0 < p.V; c0 += p.C) chunk(b, c0);
        uint32_t chosen = wi;  // greedy: rank 0
        if (p.k > 1) {
            const uint32_t g = a(m_g), z = a(m_z);
            norm::vrun(m_ctx, Opcode::VDUP, F32, vop(g), {}, {}, 1, 1, p.kp, -kInf);
            for (uint32_t j = 0; j < p.k; ++j) {
                m_ctx.scalar(40);  // the generator: three hash rounds and two logarithms
                isa::Instr in = isa::make_instr(Opcode::VDUP);
                in.dtype = F32;
                in.dst = {g + (j / 64) * 256, Pos::UB};
                in.vec.mask_lo = 1ull << (j % 64);
                in.vec.mask_hi = 0;
                in.scalar = ref::sample_gumbel(p.seed, b, j);
                m_ctx.issue(in);
            }
            norm::vrun(m_ctx, Opcode::VMULS, F32, vop(z), vop(w), {}, 1, 1, p.kp, p.inv_temp);
            norm::vrun(m_ctx, Opcode::VADD, F32, vop(z), vop(z), vop(g), 1, 1, p.kp);
            argmax(z, wi, p.kp);
            chosen = sm(kIdx);
        }
        LocalTensor<uint8_t> o = m_out.AllocTensor<uint8_t>();
        norm::vrun(m_ctx, Opcode::VCONV, I32, vop(o.address()), vop(chosen), {}, 1, 1, 8, 0, F32);
        m_out.EnQue(o);
        o = m_out.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, I32, p.y + b * 4, Pos::UB, o.address(), isa::CopyParams{1, 4, 0, 0});
        m_out.FreeTensor(o);
    }

    KernelContext& m_ctx;
    const SamplePlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_in;
    TQue<TPosition::VECOUT> m_out;
    TBuf<TPosition::VECCALC> m_w, m_widx, m_iota, m_nv, m_ni, m_g, m_z, m_small, m_bits;
};

class SampleOp : public INodeOp {
public:
    SampleOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        SamplePlan& p = m_plan;
        p.t = act_input(n, 0, "logits");
        const TensorRef& x = n.inputs[0];
        if (x.shape.size() != 2 || x.shape[1] < 1)
            throw UnsupportedError(n, "logits must be [B, V], got " + ref::shape_str(x.shape));
        p.B = static_cast<uint64_t>(x.shape[0]), p.V = static_cast<uint64_t>(x.shape[1]);
        const int64_t k = n.attrs.get_int("top_k", 1);
        if (k < 1 || k > 1024)
            throw UnsupportedError(n, "attribute 'top_k' = " + std::to_string(k) + " (supported: 1 to 1024)");
        const double temp = n.attrs.get_float("temperature", 1.0);
        if (!(temp > 0) || !std::isfinite(temp))
            throw UnsupportedError(n, "attribute 'temperature' must be a positive number");
        p.k = static_cast<uint32_t>(std::min<uint64_t>(static_cast<uint64_t>(k), p.V));
        p.kp = static_cast<uint32_t>(up(p.k, 64));
        p.inv_temp = 1.0 / temp;
        p.seed = static_cast<uint64_t>(n.attrs.get_int("seed", 0));
        // The chunk: whole 64-lane units, one whole-row reduction (at most 255 repeats) over
        // candidates and chunk, what fits UB.
        uint64_t C = std::min<uint64_t>(up(p.V, 64), 255 * 64 - p.kp);
        while (C > 64 && sample_ub_bytes(p, u32(C)) > dev.ub_bytes) C -= 64;
        if (p.kp + 64 > 255 * 64 || sample_ub_bytes(p, u32(C)) > dev.ub_bytes)
            throw UnsupportedError(n, "top_k " + std::to_string(k) + " does not fit in UB");
        p.C = u32(C);
        const norm::WorkSplit w = norm::split_work(p.B, dev.vector_cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        m_out = make_tensor({x.shape[0]}, ref::ElemType::Int64);
        m_form = std::string(p.k == 1 ? "greedy" : "top-" + std::to_string(p.k)) + ", chunks of " +
                 std::to_string(p.C);
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.B == 0) return {};
        SamplePlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr;
        const uint64_t n = p.B * p.V;
        // fp32 passes per logit and candidate round: max, compare, select; plus the conversion.
        return {norm::vector_launch(
            m_node.name, m_node.op_type, p.blocks, [p](isa::IInstrSink& s) { sample_kernel(s, p); },
            static_cast<double>(n) * p.k, n * isa::dtype_size(p.t) + p.B * 4, 1.0 + 3.0 * p.k, n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    SamplePlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_sample(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<SampleOp>(n, d);
}

}  // namespace

void sample_kernel(isa::IInstrSink& sink, const SamplePlan& p) {
    KernelContext ctx(sink);
    SampleKernel k(ctx, p);
    k.run();
}

SFUMATO_REGISTER_NODE_OP(sample, "Sample", make_sample);

}  // namespace sfumato::ops::llm
