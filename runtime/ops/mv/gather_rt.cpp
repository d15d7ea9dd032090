#include "runtime/ops/mv/gather_rt.h"

#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/ew/kernel.h"
#include "runtime/ref/broadcast.h"

namespace sfumato::ops::mv {

using isa::DType;
using isa::Opcode;
using isa::Pos;
using kernel::KernelContext;

namespace {

uint64_t up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }
uint32_t u32(uint64_t v) { return static_cast<uint32_t>(v); }

struct GPlan {
    uint64_t data = 0, idx = 0, out = 0;
    DType dt = DType::FP32;
    uint32_t es = 4;
    int64_t pre = 1, dim = 1, post = 1, nidx = 0;
    uint32_t kr = 1, wc = 1, wp = 8, ch = 1;
    uint64_t nk = 1, ncc = 1, nch = 1, units = 0, per_block = 0;
    uint32_t block_dim = 1, sbuf = 2;
    // UB: queue buffer sizes and calc offsets
    uint32_t q_idx = 0, q_slab = 0, q_out = 0, calc = 0;
    uint32_t c_fix = 0, c_tmp = 0, c_base = 0, c_offs = 0, c_iota = 0, c_g = 0, c_t = 0, c_b1 = 0, c_b2 = 0;

    uint32_t tt() const { return kr * wp; }
    bool lay_out(uint64_t ub) {
        const uint64_t ki = up(kr, 256) * 4 + 256, t4 = up(uint64_t{tt()}, 256) * 4 + 256, te = up(uint64_t{tt()}, 256) * es + 256;
        const uint64_t bits = up(uint64_t{tt()}, 256) / 8 + 64;
        uint64_t c = 0;
        auto take = [&](uint64_t b) {
            const uint64_t o = c;
            c += up(b, 32);
            return u32(o);
        };
        c_fix = take(ki), c_tmp = take(ki), c_base = take(ki);
        c_offs = take(std::max<uint64_t>(uint64_t{kr + 8} * wp, up(uint64_t{tt()}, 256)) * 4 + 256);
        c_iota = take(t4);
        c_b1 = take(bits), c_b2 = take(bits);
        c_g = nch > 1 ? take(te) : 0;
        c_t = nch > 1 ? take(te) : 0;
        calc = u32(c);
        q_idx = u32(up(kr, 256) * 4 + 256);
        q_out = u32(te);
        q_slab = u32(up(uint64_t{ch} * wp * es, 32) + 256);
        return q_idx + uint64_t{sbuf} * q_slab + 2ull * q_out + calc <= ub;
    }
};

void gather_kernel(isa::IInstrSink& sink, const GPlan& p) {
    KernelContext ctx(sink);
    const uint64_t u0 = uint64_t{ctx.block_idx()} * p.per_block;
    if (u0 >= p.units) return;
    const uint64_t u1 = std::min(p.units, u0 + p.per_block);
    kernel::TPipe pipe(ctx);
    kernel::TQue<kernel::TPosition::VECIN> qi, qs;
    kernel::TQue<kernel::TPosition::VECOUT> qo;
    kernel::TBuf<kernel::TPosition::VECCALC> calc;
    pipe.InitBuffer(qi, 1, p.q_idx);
    pipe.InitBuffer(qs, p.sbuf, p.q_slab);
    pipe.InitBuffer(qo, 2, p.q_out);
    pipe.InitBuffer(calc, p.calc);
    const uint32_t cb = calc.Get<uint8_t>().address();
    using ew::vo;
    const DType I = DType::INT32;
    // Per core: the column offsets j * size of every tile row.
    ew::iota_i32(ctx, cb + p.c_iota, p.wp, static_cast<int32_t>(p.es));
    for (uint32_t have = 1; have < p.kr; have *= 2) {
        isa::CopyParams c{1, std::min(have, p.kr - have) * p.wp * 4, 0, 0};
        kernel::detail::copy_local(ctx, DType::UINT8, {cb + p.c_iota + have * p.wp * 4, Pos::UB}, {cb + p.c_iota, Pos::UB}, c);
    }
    for (uint64_t u = u0; u < u1; ++u) {
        ctx.scalar(6);
        const uint64_t pi = u / (p.nk * p.ncc), rem = u % (p.nk * p.ncc), kt = rem / p.ncc, cc = rem % p.ncc;
        const uint32_t kk = u32(std::min<uint64_t>(p.kr, static_cast<uint64_t>(p.nidx) - kt * p.kr));
        const uint64_t c0 = cc * p.wc;
        const uint32_t ww = u32(std::min<uint64_t>(p.wc, static_cast<uint64_t>(p.post) - c0));
        const uint64_t kc = up(kk, 256), tc = up(uint64_t{kk} * p.wp, 256);
        // Indices -> wrapped, clamped rows -> byte offsets of their rows in a chunk.
        kernel::LocalTensor<uint8_t> ib = qi.AllocTensor<uint8_t>();
        kernel::detail::copy_in(ctx, I, Pos::UB, ib.address(), p.idx + kt * p.kr * 4, {1, kk * 4, 0, 0}, 0);
        qi.EnQue(ib);
        ib = qi.DeQue<uint8_t>();
        ew::vloop(ctx, Opcode::VCMPS, I, I, vo(cb + p.c_b1), vo(ib.address()), {}, {}, kc, 0, isa::CmpMode::LT);
        ew::vloop(ctx, Opcode::VADDS, I, I, vo(cb + p.c_tmp), vo(ib.address()), {}, {}, kc, static_cast<double>(p.dim));
        ew::vloop(ctx, Opcode::VSEL, I, I, vo(cb + p.c_fix), vo(cb + p.c_tmp), vo(ib.address()), vo(cb + p.c_b1), kc, 0);
        qi.FreeTensor(ib);
        ew::vloop(ctx, Opcode::VMAXS, I, I, vo(cb + p.c_fix), vo(cb + p.c_fix), {}, {}, kc, 0);
        ew::vloop(ctx, Opcode::VMINS, I, I, vo(cb + p.c_fix), vo(cb + p.c_fix), {}, {}, kc, static_cast<double>(p.dim - 1));
        ew::vloop(ctx, Opcode::VMULS, I, I, vo(cb + p.c_fix), vo(cb + p.c_fix), {}, {}, kc, static_cast<double>(p.wp * p.es));
        kernel::LocalTensor<uint8_t> ob = qo.AllocTensor<uint8_t>();
        for (uint64_t ci = 0; ci < p.nch; ++ci) {
            const int64_t r0 = static_cast<int64_t>(ci) * p.ch;
            const uint32_t chn = u32(std::min<int64_t>(p.ch, p.dim - r0));
            const uint32_t span = chn * p.wp * p.es;
            kernel::LocalTensor<uint8_t> sb = qs.AllocTensor<uint8_t>();
            const uint64_t src = p.data + static_cast<uint64_t>((pi * p.dim + r0) * p.post + static_cast<int64_t>(c0)) * p.es;
            const uint32_t gap_blocks = u32((uint64_t{p.wp} * p.es - up(uint64_t{ww} * p.es, 32)) / 32);
            kernel::detail::copy_in(ctx, p.dt, Pos::UB, sb.address(), src,
                                    {chn, ww * p.es, u32((static_cast<uint64_t>(p.post) - ww) * p.es), gap_blocks}, 0);
            qs.EnQue(sb);
            sb = qs.DeQue<uint8_t>();
            ew::vloop(ctx, Opcode::VADDS, I, I, vo(cb + p.c_base), vo(cb + p.c_fix), {}, {}, kc,
                      -static_cast<double>(r0) * p.wp * p.es);
            ew::spread_rows(ctx, I, cb + p.c_offs, cb + p.c_base, kk, p.wp);
            ew::vloop(ctx, Opcode::VADD, I, I, vo(cb + p.c_offs), vo(cb + p.c_offs), vo(cb + p.c_iota), {}, tc, 0);
            if (p.nch > 1) {
                ew::vloop(ctx, Opcode::VCMPS, I, I, vo(cb + p.c_b1), vo(cb + p.c_offs), {}, {}, tc, 0, isa::CmpMode::GE);
                ew::vloop(ctx, Opcode::VCMPS, I, I, vo(cb + p.c_b2), vo(cb + p.c_offs), {}, {}, tc, span, isa::CmpMode::LT);
            }
            // Rows past the tile's indices hold stale offsets: every offset is clamped into the chunk.
            ew::vloop(ctx, Opcode::VMAXS, I, I, vo(cb + p.c_offs), vo(cb + p.c_offs), {}, {}, tc, 0);
            ew::vloop(ctx, Opcode::VMINS, I, I, vo(cb + p.c_offs), vo(cb + p.c_offs), {}, {}, tc, span - p.es);
            const uint32_t dst = p.nch > 1 ? cb + p.c_g : ob.address();
            isa::VecParams v;
            v.gather_span = span;
            kernel::detail::vec_count(ctx, Opcode::VGATHER, p.dt, p.dt,
                                      {{dst, Pos::UB}, {sb.address(), Pos::UB}, {cb + p.c_offs, Pos::UB}, {}}, tc, v, 0);
            qs.FreeTensor(sb);
            if (p.nch > 1) {
                if (ci == 0) {
                    isa::CopyParams c{1, u32(tc * p.es), 0, 0};
                    kernel::detail::copy_local(ctx, DType::UINT8, {ob.address(), Pos::UB}, {cb + p.c_g, Pos::UB}, c);
                } else {
                    ew::vloop(ctx, Opcode::VSEL, p.dt, p.dt, vo(cb + p.c_t), vo(cb + p.c_g), vo(ob.address()), vo(cb + p.c_b2), tc, 0);
                    ew::vloop(ctx, Opcode::VSEL, p.dt, p.dt, vo(ob.address()), vo(cb + p.c_t), vo(ob.address()), vo(cb + p.c_b1), tc, 0);
                }
            }
        }
        qo.EnQue(ob);
        ob = qo.DeQue<uint8_t>();
        const uint64_t dst = p.out + static_cast<uint64_t>((pi * p.nidx + kt * p.kr) * p.post + c0) * p.es;
        const uint32_t gap_blocks = u32((uint64_t{p.wp} * p.es - up(uint64_t{ww} * p.es, 32)) / 32);
        isa::CopyParams c{kk, ww * p.es, gap_blocks, u32((static_cast<uint64_t>(p.post) - ww) * p.es)};
        kernel::detail::copy_out(ctx, p.dt, dst, Pos::UB, ob.address(), c);
        qo.FreeTensor(ob);
    }
}

class GatherRt : public INodeOp {
public:
    GatherRt(const NodeDesc& n, const DeviceInfo& dev, int64_t axis, const TensorRef& out) : m_name(n.name), m_out(out) {
        const TensorRef &x = n.inputs.at(0), &idx = n.inputs.at(1);
        if (!x.contiguous() || !idx.contiguous()) throw UnsupportedError(n, "strided inputs");
        if (idx.dtype != DType::INT32) throw UnsupportedError(n, "indices must be int32 or int64");
        GPlan& p = m_p;
        p.dt = x.dtype;
        p.es = isa::dtype_size(x.dtype);
        for (int64_t d = 0; d < axis; ++d) p.pre *= x.shape[static_cast<size_t>(d)];
        p.dim = x.shape[static_cast<size_t>(axis)];
        for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) p.post *= x.shape[d];
        p.nidx = static_cast<int64_t>(ref::numel_of(idx.shape));
        m_empty = ref::numel_of(out.shape) == 0;
        if (m_empty) return;
        if (static_cast<uint64_t>(p.dim) * static_cast<uint64_t>(p.post) * p.es >= (1ull << 31))
            throw UnsupportedError(n, "data slab beyond 2 GiB");
        const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
        const uint32_t align = std::max<uint32_t>(8, 32 / p.es);
        // Tiles of up to 4096 elements (kr indices x wp columns), narrower columns while the UB
        // cannot hold one; when even that fails (a small UB: the index and offset buffers grow
        // with kr x wp), fewer indices per tile first, then narrower columns.
        bool fits = false;
        for (const bool shrink_tile : {false, true}) {
            p.wc = u32(std::min<int64_t>(p.post, 1024));
            uint64_t tile_cap = kGatherTileElems;
            for (int attempt = 0; attempt < 32 && !fits; ++attempt) {
                p.wp = u32(up(p.wc, align));
                p.ncc = (static_cast<uint64_t>(p.post) + p.wc - 1) / p.wc;
                const uint64_t want = std::max<uint64_t>(1, (static_cast<uint64_t>(p.nidx) * p.pre * p.ncc + cores - 1) / cores);
                p.kr = u32(std::max<uint64_t>(1, std::min<uint64_t>({want, static_cast<uint64_t>(p.nidx), std::max<uint64_t>(1, tile_cap / p.wp)})));
                for (p.sbuf = 2; p.sbuf >= 1 && !fits; --p.sbuf) {
                    p.ch = u32(std::min<int64_t>(p.dim, 1 << 20));
                    while (p.ch > 0) {
                        p.nch = (static_cast<uint64_t>(p.dim) + p.ch - 1) / p.ch;
                        if (p.lay_out(dev.ub_bytes)) break;
                        p.ch = p.ch > 1 ? p.ch / 2 : 0;
                    }
                    fits = p.ch > 0;
                    if (fits) break;
                }
                if (fits) break;
                if (shrink_tile && p.kr > 1) tile_cap = std::max<uint64_t>(1, tile_cap / 2);
                else if (p.wc > 1) p.wc = std::max<uint32_t>(1, p.wc / 2);
                else break;
            }
            if (fits) break;
        }
        if (!fits) throw UnsupportedError(n, "UB of " + std::to_string(dev.ub_bytes) + " bytes cannot hold a gather tile");
        if (p.nch > 1 && p.es < 2) throw UnsupportedError(n, "a 1-byte data table larger than one UB chunk");
        p.nk = (static_cast<uint64_t>(p.nidx) + p.kr - 1) / p.kr;
        p.units = static_cast<uint64_t>(p.pre) * p.nk * p.ncc;
        p.block_dim = u32(std::min<uint64_t>(p.units, cores));
        p.per_block = (p.units + p.block_dim - 1) / p.block_dim;
        p.block_dim = u32((p.units + p.per_block - 1) / p.per_block);
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out, uint64_t) const override {
        if (m_empty) return {};
        auto p = std::make_shared<GPlan>(m_p);
        p->data = in.at(0).addr;
        p->idx = in.at(1).addr;
        p->out = out.at(0).addr;
        KernelDesc k;
        k.name = m_name + " [gather: runtime indices, " + std::to_string(p->nch) + " data chunk(s)]";
        k.type = "Gather";
        k.kind = KernelKind::Vector;
        k.block_dim = p->block_dim;
        k.bytes = static_cast<uint64_t>(p->pre * p->dim * p->post) * p->es + static_cast<uint64_t>(p->nidx) * 4 +
                  ref::numel_of(m_out.shape) * p->es;
        k.body = [p](isa::IInstrSink& s) { gather_kernel(s, *p); };
        return {k};
    }

    std::string describe() const override {
        if (m_empty) return "empty output: no kernel";
        return "gather with runtime indices: " + std::to_string(m_p.kr) + " index rows x " + std::to_string(m_p.wc) +
               " columns per tile, data in " + std::to_string(m_p.nch) + " UB chunk(s) of " + std::to_string(m_p.ch) +
               " rows (vgather; " + (m_p.nch > 1 ? "every tile streams the data" : "one chunk") + "), " +
               std::to_string(m_p.units) + " tiles on " + std::to_string(m_p.block_dim) + " cores";
    }

private:
    std::string m_name;
    TensorRef m_out;
    GPlan m_p;
    bool m_empty = false;
};

}  // namespace

std::unique_ptr<INodeOp> make_gather_rt(const NodeDesc& n, const DeviceInfo& dev, int64_t axis, const TensorRef& out) {
    return std::make_unique<GatherRt>(n, dev, axis, out);
}

}  // namespace sfumato::ops::mv
