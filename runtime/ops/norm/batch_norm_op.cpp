// BatchNormalization in inference mode: y = x * a[c] + b[c] with a = scale / sqrt(var + eps)
// and b = B - mean * a, computed on the vector unit from the four parameter tensors (never on
// the host). Two layouts:
// - planes (spatial size S > 1): work rows (n, c) of S contiguous elements; a tile is k
//   consecutive channels of one n, so its parameters are four contiguous slices loaded with
//   the tile; a and b become one 32-byte block per row (Brcb) and apply with block-stride-0
//   operands.
// - segments (a plane larger than UB): each row (n, c) is cut into equal segments of at most
//   what UB holds; a work item is one segment, with its channel's coefficients.
// - lanes (S = 1, x is [N, C]): rows n of C elements; a and b are fp32 lane vectors computed
//   once per block.
// - NC1HWC0 (the graph's layout pass keeps a tensor so): rows of C0 lanes, one per pixel of an
//   (n, C1 block) plane; the lane vectors a and b hold all C1 x C0 channels (zeros for the
//   padding channels, which so stay zero) and a plane's rows read its block's C0 of them.
// training_mode = 1 (batch statistics, running-stat outputs) is not supported on the device.
// Out of place (the 220x bank rules, docs/fidelity.md): x a goes into a second fp32 buffer t and
// t + b back into xf (2-byte x) or into the output (fp32 x), never a buffer into itself; the
// buffers are placed in the bank spans (ub_place.h) so that each instruction writes another span
// than it reads, else laid out one after the other.
#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ref/axes.h"

namespace sfumato::ops::norm {

using isa::DType;
using isa::Opcode;
using namespace sfumato::kernel;

namespace {

struct BnPlan {
    DType xt = DType::FP16;
    DType pt[4] = {F32, F32, F32, F32};  // scale, B, mean, var
    uint64_t x = 0, y = 0, par[4] = {0, 0, 0, 0};
    bool lanes = false;
    bool c0 = false;     // NC1HWC0: lanes form over rows of C0 (cp) channels, C1 planes per image
    uint64_t C1 = 1;     // c0: channel blocks
    uint32_t lane_len = 64;  // lanes: length of the lane vectors (C, or C1 x C0, padded to 64)
    uint64_t N = 1, C = 1, S = 1;
    uint32_t cp = 64;  // padded row (S in planes form, C in lanes form)
    uint32_t k = 1;    // rows per tile
    uint64_t seg = 0;  // segments form: elements per segment (0 = whole planes)
    uint64_t nseg = 1; // segments per plane
    uint64_t per_block = 1;
    uint32_t blocks = 1;
    double eps = 1e-5;
    // Placed buffers (offsets from a reserve of the whole UB), else placed = false.
    bool placed = false;
    uint64_t reserve = 0, in_at[2] = {0, 0}, out_at[2] = {0, 0}, ps_at[2] = {0, 0}, xf_at = 0, t_at = 0, pvec_at = 0,
             blocks_at = 0;
};

struct BnLayout {
    uint64_t in, out, xf, t, pstage, pvec, blocks;
};
BnLayout bn_layout(const BnPlan& p, uint32_t k) {
    BnLayout l{};
    const uint64_t elems = uint64_t{k} * p.cp;
    // c0: rows of C0 lanes are masked repeats, each with a whole 256-byte repeat's footprint:
    // one repeat of slack after the last row.
    const uint64_t slack = p.c0 ? 256 : 0;
    l.in = up(elems * isa::dtype_size(p.xt), kBlk) + slack;
    l.out = l.in;
    l.xf = p.xt == F32 ? 0 : elems * 4 + slack;
    l.t = elems * 4 + slack;  // x a (out of place)
    const uint64_t plen = p.lanes ? p.lane_len : up(k, 64);  // parameter values per load
    l.pstage = 4 * up(plen * 4, kBlk);
    l.pvec = 4 * plen * 4;
    l.blocks = p.lanes ? 0 : 2 * up(k, 8) * kBlk;
    return l;
}
uint64_t bn_ub_bytes(const BnPlan& p, uint32_t k) {
    const BnLayout l = bn_layout(p, k);
    return 2 * (l.in + l.out) + l.xf + l.t + (p.lanes ? 1 : 2) * l.pstage + l.pvec + l.blocks + 1024;
}

// Places the buffers of tiles of p.k rows in a UB of ub bytes: each whole inside one bank span,
// the conversions' and the application's destinations apart from their sources (weighted by
// their fp32 repeats), the coefficient rows and blocks in the other half of the groups than the
// tiles they are read beside. False: they do not all fit whole inside spans.
bool place_bn(BnPlan& p, uint64_t ub) {
    p.placed = false;
    const BnLayout l = bn_layout(p, p.k);
    enum { In0, In1, Out0, Out1, Xf, T, Ps0, Ps1, Pvec, Blocks, N };
    std::vector<UbItem> it(N);
    it[In0] = it[In1] = {l.in, 0};
    it[Out0] = it[Out1] = {l.out, 0};
    it[Xf] = {l.xf, 0};
    it[T] = {l.t, 0};
    it[Ps0] = {l.pstage, 0};
    it[Ps1] = {p.lanes ? 0 : l.pstage, 0};
    it[Pvec] = {l.pvec, 256};
    it[Blocks] = {l.blocks, 256};
    // 2-byte x: in -> xf, xf a -> t, t + b -> xf, xf -> out; fp32 x: in a -> t, t + b -> out.
    const uint32_t w = 1;
    const int x = p.xt == F32 ? -1 : Xf;
    std::vector<UbApart> apart = {{T, Pvec, w}};
    for (int i : {In0, In1}) apart.push_back({i, x < 0 ? T : Xf, w});
    for (int o : {Out0, Out1}) apart.push_back({o, x < 0 ? T : Xf, w});
    if (x >= 0) apart.push_back({Xf, T, 2 * w}), apart.push_back({Xf, Pvec, w});
    const std::vector<uint64_t> at = place_apart(it, apart, ub, kBankSpan);
    if (at.empty()) return false;
    p.placed = true;
    p.reserve = ub;
    p.in_at[0] = at[In0], p.in_at[1] = at[In1], p.out_at[0] = at[Out0], p.out_at[1] = at[Out1];
    p.ps_at[0] = at[Ps0], p.ps_at[1] = at[Ps1], p.xf_at = at[Xf], p.t_at = at[T];
    p.pvec_at = at[Pvec], p.blocks_at = at[Blocks];
    return true;
}

class BnKernel {
public:
    BnKernel(KernelContext& ctx, const BnPlan& p) : m_ctx(ctx), m_p(p), m_pipe(ctx) {}

    void run() {
        const BnPlan& p = m_p;
        const uint64_t total = p.c0 ? p.N * p.C1 * p.S : p.lanes ? p.N : p.N * p.C * p.nseg;
        const uint64_t w0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (w0 >= total) return;
        const uint64_t w1 = std::min(total, w0 + p.per_block);
        const BnLayout l = bn_layout(p, p.k);
        if (p.placed) {
            auto u = [](uint64_t v) { return static_cast<uint32_t>(v); };
            const uint32_t base = m_pipe.Reserve(TPosition::VECCALC, u(p.reserve), "batchnorm buffers");
            m_pipe.InitBufferAt(m_in, 2, u(l.in), base + u(p.in_at[0]));
            m_pipe.SetBufferAddress(m_in, 1, base + u(p.in_at[1]));
            m_pipe.InitBufferAt(m_out, 2, u(l.out), base + u(p.out_at[0]));
            m_pipe.SetBufferAddress(m_out, 1, base + u(p.out_at[1]));
            m_pipe.InitBufferAt(m_pstage, p.lanes ? 1 : 2, u(l.pstage), base + u(p.ps_at[0]));
            if (!p.lanes) m_pipe.SetBufferAddress(m_pstage, 1, base + u(p.ps_at[1]));
            if (l.xf) m_pipe.InitBufferAt(m_xf, u(l.xf), base + u(p.xf_at));
            m_pipe.InitBufferAt(m_t, u(l.t), base + u(p.t_at));
            m_pipe.InitBufferAt(m_pvec, u(l.pvec), base + u(p.pvec_at));
            if (l.blocks) m_pipe.InitBufferAt(m_blocks, u(l.blocks), base + u(p.blocks_at));
        } else {
            m_pipe.InitBuffer(m_in, 2, static_cast<uint32_t>(l.in));
            m_pipe.InitBuffer(m_out, 2, static_cast<uint32_t>(l.out));
            if (l.xf) m_pipe.InitBuffer(m_xf, static_cast<uint32_t>(l.xf));
            m_pipe.InitBuffer(m_t, static_cast<uint32_t>(l.t));
            m_pipe.InitBuffer(m_pstage, p.lanes ? 1 : 2, static_cast<uint32_t>(l.pstage));
            m_pipe.InitBuffer(m_pvec, static_cast<uint32_t>(l.pvec));
            if (l.blocks) m_pipe.InitBuffer(m_blocks, static_cast<uint32_t>(l.blocks));
        }
        m_plen = p.lanes ? p.lane_len : static_cast<uint32_t>(up(p.k, 64));
        if (p.lanes) {
            load_params(0, p.C);
            coefficients(p.C);
            if (p.c0) zero_padding_lanes();
        }
        for (uint64_t w = w0; w < w1 && p.c0;) {  // rows within one (n, C1 block) plane per tile
            const uint64_t plane = w / p.S;
            const uint32_t len =
                static_cast<uint32_t>(std::min<uint64_t>({p.k, w1 - w, (plane + 1) * p.S - w}));
            m_ctx.scalar(4);
            tile(w, plane % p.C1, len, 0, p.cp);
            w += len;
        }
        if (p.seg) {
            for (uint64_t w = w0; w < w1; ++w) {
                const uint64_t row = w / p.nseg, c0 = (w % p.nseg) * p.seg;
                m_ctx.scalar(4);
                tile(row, row % p.C, 1, c0, std::min(p.seg, p.S - c0));
            }
        }
        for (uint64_t w = w0; w < w1 && !p.seg && !p.c0;) {
            const uint64_t q0 = p.lanes ? w : w % p.C;
            const uint64_t lim = p.lanes ? w1 - w : std::min(w1 - w, p.C - q0);
            const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.k, lim));
            m_ctx.scalar(4);
            tile(w, q0, len, 0, p.lanes ? p.C : p.S);
            w += len;
        }
        m_in.drain();
        m_out.drain();
        m_pstage.drain();
    }

private:
    // c0: a and b of the padding channels [C, C1 x C0) as zeros (masked lanes of the repeats
    // holding them).
    void zero_padding_lanes() {
        const uint64_t end = m_p.C1 * m_p.cp;
        for (int i = 0; i < 2; ++i)
            for (uint64_t c = m_p.C; c < end;) {
                const uint64_t base = c / 64 * 64, stop = std::min(end, base + 64);
                const uint64_t upto = stop - base == 64 ? ~0ull : (1ull << (stop - base)) - 1;
                const uint64_t m[2] = {upto & ~((1ull << (c - base)) - 1), 0};
                const uint32_t at = static_cast<uint32_t>(i * m_plen + base);
                Duplicate(m_pvec.Get<float>()[at], 0.0f, VecMask(m), 1, 1, 8);
                c = stop;
            }
    }

    uint32_t pv(int i) const { return m_pvec.Get<uint8_t>().address() + static_cast<uint32_t>(i * m_plen * 4); }

    // MTE2: parameter slices [c0, c0 + n) of the four tensors into the staging queue.
    void load_params(uint64_t c0, uint64_t n) {
        LocalTensor<uint8_t> s = m_pstage.AllocTensor<uint8_t>();
        const uint32_t slot = static_cast<uint32_t>(up(uint64_t{m_plen} * 4, kBlk));
        for (int i = 0; i < 4; ++i) {
            const uint32_t es = isa::dtype_size(m_p.pt[i]);
            kernel::detail::copy_in(m_ctx, m_p.pt[i], isa::Pos::UB, s.address() + i * slot, m_p.par[i] + c0 * es,
                            isa::CopyParams{1, static_cast<uint32_t>(n * es), 0, 0}, 0);
        }
        m_pstage.EnQue(s);
    }

    // V: a = scale * rsqrt(var + eps) into pv(0), b = B - mean * a into pv(1), n lanes.
    void coefficients(uint64_t n) {
        LocalTensor<uint8_t> s = m_pstage.DeQue<uint8_t>();
        const uint32_t slot = static_cast<uint32_t>(up(uint64_t{m_plen} * 4, kBlk));
        for (int i = 0; i < 4; ++i) {
            const uint32_t src = s.address() + i * slot;
            if (m_p.pt[i] != F32) vrun(m_ctx, Opcode::VCONV, F32, vop(pv(i)), vop(src), {}, 1, 1, n, 0, m_p.pt[i]);
            else vrun(m_ctx, Opcode::VMULS, F32, vop(pv(i)), vop(src), {}, 1, 1, n, 1.0);
        }
        m_pstage.FreeTensor(s);
        vrun(m_ctx, Opcode::VADDS, F32, vop(pv(3)), vop(pv(3)), {}, 1, 1, n, m_p.eps);
        vrun(m_ctx, Opcode::VRSQRT, F32, vop(pv(3)), vop(pv(3)), {}, 1, 1, n);
        vrun(m_ctx, Opcode::VMUL, F32, vop(pv(0)), vop(pv(0)), vop(pv(3)), 1, 1, n);   // a
        vrun(m_ctx, Opcode::VMUL, F32, vop(pv(2)), vop(pv(2)), vop(pv(0)), 1, 1, n);   // mean * a
        vrun(m_ctx, Opcode::VSUB, F32, vop(pv(1)), vop(pv(1)), vop(pv(2)), 1, 1, n);   // b
    }

    // Rows [w, w + len) (channels from q0), columns [c0, c0 + cols) of each.
    void tile(uint64_t w, uint64_t q0, uint32_t len, uint64_t c0, uint64_t cols) {
        const BnPlan& p = m_p;
        const uint32_t ex = isa::dtype_size(p.xt);
        const uint32_t gap = static_cast<uint32_t>((uint64_t{p.cp} * ex - up(cols * ex, kBlk)) / kBlk);
        const uint64_t row0 = w * (p.c0 ? p.cp : p.lanes ? p.C : p.S) + c0;
        LocalTensor<uint8_t> in = m_in.AllocTensor<uint8_t>();
        kernel::detail::copy_in(m_ctx, p.xt, isa::Pos::UB, in.address(), p.x + row0 * ex,
                        isa::CopyParams{len, static_cast<uint32_t>(cols * ex), 0, gap}, 0);
        m_in.EnQue(in);
        if (!p.lanes) load_params(q0, len);
        LocalTensor<uint8_t> xin = m_in.DeQue<uint8_t>();
        const uint64_t n = uint64_t{len} * p.cp;
        const uint32_t xf = p.xt == F32 ? xin.address() : m_xf.Get<uint8_t>().address();
        if (p.xt != F32) {
            vrun(m_ctx, Opcode::VCONV, F32, vop(xf), vop(xin.address()), {}, 1, 1, n, 0, p.xt);
            m_in.FreeTensor(xin);
        }
        LocalTensor<uint8_t> out = m_out.AllocTensor<uint8_t>();
        const uint32_t ydst = p.xt == F32 ? out.address() : xf, t = m_t.Get<uint8_t>().address();
        const int64_t rs = int64_t{p.cp} * 4;
        if (p.lanes) {
            const uint32_t lane0 = p.c0 ? static_cast<uint32_t>(q0 * p.cp * 4) : 0;  // the block's channels
            vrun(m_ctx, Opcode::VMUL, F32, vop(t, 0, rs), vop(xf, 0, rs), vop(pv(0) + lane0, 0, 0), 1, len, p.cp);
            vrun(m_ctx, Opcode::VADD, F32, vop(ydst, 0, rs), vop(t, 0, rs), vop(pv(1) + lane0, 0, 0), 1, len, p.cp);
        } else {
            coefficients(len);
            const uint32_t ab = m_blocks.Get<uint8_t>().address(), bb = ab + static_cast<uint32_t>(up(p.k, 8) * kBlk);
            brcb(m_ctx, F32, ab, pv(0), len);
            brcb(m_ctx, F32, bb, pv(1), len);
            vrun(m_ctx, Opcode::VMUL, F32, vop(t, 0, rs), vop(xf, 0, rs), vblock(ab, 0, kBlk), 1, len, p.cp);
            vrun(m_ctx, Opcode::VADD, F32, vop(ydst, 0, rs), vop(t, 0, rs), vblock(bb, 0, kBlk), 1, len, p.cp);
        }
        if (p.xt != F32) vrun(m_ctx, Opcode::VCONV, p.xt, vop(out.address()), vop(xf), {}, 1, 1, n, 0, F32);
        else m_in.FreeTensor(xin);
        m_out.EnQue(out);
        LocalTensor<uint8_t> o = m_out.DeQue<uint8_t>();
        kernel::detail::copy_out(m_ctx, p.xt, p.y + row0 * ex, isa::Pos::UB, o.address(),
                         isa::CopyParams{len, static_cast<uint32_t>(cols * ex), gap, 0});
        m_out.FreeTensor(o);
    }

    KernelContext& m_ctx;
    const BnPlan& m_p;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_in, m_pstage;
    TQue<TPosition::VECOUT> m_out;
    TBuf<TPosition::VECCALC> m_xf, m_t, m_pvec, m_blocks;
    uint32_t m_plen = 64;
};

class BatchNormOp : public INodeOp {
public:
    BatchNormOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        BnPlan& p = m_plan;
        const TensorRef& x = n.inputs[0];
        p.c0 = n.has_input(0) && x.format == Format::NC1HWC0;
        if (p.c0) {
            TensorRef nd = x;
            nd.format = Format::ND;
            NodeDesc probe = n;
            probe.inputs[0] = nd;
            p.xt = float_input(probe, 0, "X");
        } else {
            p.xt = float_input(n, 0, "X");
        }
        if (x.shape.size() < 2) throw UnsupportedError(n, "input 'X' rank " + std::to_string(x.shape.size()) + " < 2");
        if (n.opset < 9 && n.attrs.get_int("spatial", 1) == 0)
            throw UnsupportedError(n, "spatial = 0 (per-activation statistics) is not supported");
        if (n.opset >= 14 && n.attrs.get_int("training_mode", 0) != 0)
            throw UnsupportedError(n, "training_mode = 1 (batch statistics) is not supported on the device");
        const char* names[4] = {"scale", "B", "input_mean", "input_var"};
        p.N = static_cast<uint64_t>(x.shape[0]);
        p.C = static_cast<uint64_t>(x.shape[1]);
        p.S = ref::dim_product(x.shape, 2, x.shape.size());
        for (int i = 0; i < 4; ++i) {
            p.pt[i] = float_input(n, static_cast<size_t>(i) + 1, names[i]);
            if (n.inputs[static_cast<size_t>(i) + 1].numel() != p.C)
                throw UnsupportedError(n, std::string("input '") + names[i] + "' has " +
                                              std::to_string(n.inputs[static_cast<size_t>(i) + 1].numel()) +
                                              " values for " + std::to_string(p.C) + " channels");
        }
        p.eps = n.attrs.get_float("epsilon", 1e-5);
        m_out = tensor_like(x, x.shape);
        m_out.format = x.format;
        if (x.numel() == 0) return;
        if (p.c0) {
            plan_c0(n, dev);
            return;
        }
        p.lanes = p.S == 1;
        p.cp = static_cast<uint32_t>(up(p.lanes ? p.C : p.S, 64));
        p.lane_len = p.cp;
        if (p.lanes && bn_ub_bytes(p, 1) > dev.ub_bytes) {
            p.lanes = false;  // too many channels for lane vectors: one element per row instead
            p.cp = 64;
        }
        if (bn_ub_bytes(p, 1) > dev.ub_bytes) {
            // A plane larger than UB: equal segments of at most what UB holds (64-element multiples).
            uint64_t most = 64;
            BnPlan q = p;
            for (q.cp = 128; bn_ub_bytes(q, 1) <= dev.ub_bytes && q.cp < p.S; q.cp += 64) most = q.cp;
            p.cp = static_cast<uint32_t>(most);
            if (bn_ub_bytes(p, 1) > dev.ub_bytes) throw UnsupportedError(n, "UB too small for a 64-element segment");
            p.nseg = (p.S + most - 1) / most;
            p.seg = up((p.S + p.nseg - 1) / p.nseg, 64);
            p.cp = static_cast<uint32_t>(p.seg);
        }
        const WorkSplit w = split_work(p.lanes ? p.N : p.N * p.C * p.nseg, dev.vector_cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        const uint64_t cap = p.seg ? 1
                                   : std::min<uint64_t>({std::max<uint64_t>(1, p.per_block / 4),
                                                         std::max<uint64_t>(1, 65536 / p.cp), p.lanes ? p.N : p.C, 1024});
        uint32_t k = 1;
        while (k < cap && bn_ub_bytes(p, k + 1) <= dev.ub_bytes) ++k;
        p.k = k;
        place(dev.ub_bytes);
        m_form = p.seg ? "segments: " + std::to_string(p.nseg) + " of " + std::to_string(p.seg) + " elements per plane"
                       : std::string(p.lanes ? "lanes" : "planes") + ": " + std::to_string(p.k) + " rows per tile";
    }

    std::vector<TensorRef> outputs() const override {
        std::vector<TensorRef> o = {m_out};
        return o;
    }

    // NC1HWC0: the lanes form over rows of C0 channels (one per pixel of a plane).
    void plan_c0(const NodeDesc& n, const DeviceInfo& dev) {
        BnPlan& p = m_plan;
        p.lanes = true;
        p.cp = 32 / isa::dtype_size(p.xt);
        p.C1 = (p.C + p.cp - 1) / p.cp;
        p.lane_len = static_cast<uint32_t>(up(p.C1 * p.cp, 64));
        if (bn_ub_bytes(p, 1) > dev.ub_bytes) throw UnsupportedError(n, "NC1HWC0: too many channels for UB");
        const WorkSplit w = split_work(p.N * p.C1 * p.S, dev.vector_cores);
        p.per_block = w.per_block, p.blocks = w.blocks;
        const uint64_t cap = std::min<uint64_t>({std::max<uint64_t>(1, p.per_block / 4), p.S, 4095});
        uint32_t k = 1;
        while (k < cap && bn_ub_bytes(p, k + 1) <= dev.ub_bytes) ++k;
        p.k = k;
        place(dev.ub_bytes);
        m_form = "NC1HWC0 lanes: " + std::to_string(p.k) + " pixels per tile";
    }
    // The buffers placed for the tile that fits in sequence, else laid out in sequence: a
    // smaller tile to place them would cost more per-tile work (parameter loads, coefficients)
    // than the conflicts it saves on a kernel bound by the HBM.
    void place(uint64_t ub) { place_bn(m_plan, ub); }
    std::string describe() const override { return m_form + (m_plan.placed ? ", buffers placed in the bank spans" : ""); }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        const uint64_t n = m_out.storage_bytes() / isa::dtype_size(m_out.dtype);
        if (m_out.numel() == 0) return {};
        BnPlan p = m_plan;
        p.x = in[0].addr, p.y = out[0].addr;
        uint64_t bytes = 2 * n * isa::dtype_size(p.xt);
        for (int i = 0; i < 4; ++i) {
            p.par[i] = in[static_cast<size_t>(i) + 1].addr;
            bytes += p.C * isa::dtype_size(p.pt[i]);
        }
        return {vector_launch(m_node.name, m_node.op_type, p.blocks,
                              [p](isa::IInstrSink& s) {
                                  KernelContext ctx(s);
                                  BnKernel(ctx, p).run();
                              },
                              2.0 * static_cast<double>(n), bytes, 2 + (p.xt == F32 ? 0 : 2), n, m_dev)};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    BnPlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_batch_norm(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<BatchNormOp>(n, d);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(batch_norm, "BatchNormalization", make_batch_norm);

}  // namespace sfumato::ops::norm
