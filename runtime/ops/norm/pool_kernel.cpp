// Pooling kernel (runtime/ops/norm/pool_kernel.h).
#include "runtime/ops/norm/pool_kernel.h"

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

// Shape of a tile (maxima over the tiles of a plan).
struct PoolGeomT {
    int64_t ie[kMaxPoolDims];  // input box extent per dim
    uint64_t wr = 0;           // UB row length (elements) of the input box
    uint64_t ps = 0;           // UB elements per plane of the input box
    uint64_t rows = 0;         // output rows (planes x all but the last dim) of the tile
    uint64_t wop = 0;          // UB row length of the output
};

PoolGeomT tile_geom(const PoolPlan& p) {
    PoolGeomT g{};
    const int L = p.nd - 1;
    uint64_t outer = 1;
    for (int i = 0; i < p.nd; ++i) {
        g.ie[i] = (p.tb[i] - 1) * p.s[i] + (p.k[i] - 1) * p.d[i] + 1;
        if (i < L) outer *= static_cast<uint64_t>(g.ie[i]);
    }
    g.wr = up(static_cast<uint64_t>(g.ie[L]), 32);
    g.ps = outer * g.wr;
    uint64_t orows = 1;
    for (int i = 0; i < L; ++i) orows *= static_cast<uint64_t>(p.tb[i]);
    g.rows = p.tp * orows;
    g.wop = up(static_cast<uint64_t>(p.tb[L]), 32);
    return g;
}

struct PoolLayout {
    uint64_t stage, tile, off0, offt, acc, acc2, tmp, out, vec, idx0, idxt, idx, iout, bits;
};
PoolLayout pool_layout(const PoolPlan& p) {
    const PoolGeomT g = tile_geom(p);
    const uint64_t es = isa::dtype_size(p.xt), r = g.rows * g.wop;
    PoolLayout l{};
    l.stage = staggered(p.tp * g.ps * es);
    l.tile = p.xt == F32 ? 0 : staggered(p.tp * g.ps * 4);
    l.off0 = staggered(r * 4);
    l.offt = staggered(r * 4);
    l.acc = staggered(r * 4);
    l.acc2 = staggered(r * 4);  // the taps accumulate out of place: acc, acc2, acc, ...
    l.tmp = staggered(r * 4);
    l.out = staggered(r * std::max<uint64_t>(es, 1));
    l.vec = 5 * g.wop * 4;
    if (p.indices) {
        l.idx0 = l.idxt = l.idx = up(r * 4, kBlk);
        l.iout = up(r * 4, kBlk);
        l.bits = 2048;  // one compare's bitmask: at most 255 repeats of 8 bytes
    }
    return l;
}

double pad_value(const PoolPlan& p) {
    if (!p.is_max) return 0.0;
    switch (p.xt) {
        case DType::UINT8: return 0.0;
        case DType::INT8: return -128.0;
        case DType::INT16: return -32768.0;
        case DType::INT32: return static_cast<double>(std::numeric_limits<int32_t>::min());
        default: return -std::numeric_limits<double>::infinity();
    }
}

}  // namespace

uint64_t PoolPlan::tiles() const {
    uint64_t t = cdiv(planes, tp);
    for (int i = 0; i < nd; ++i) t *= cdiv(static_cast<uint64_t>(out[i]), static_cast<uint64_t>(tb[i]));
    return t;
}

uint64_t pool_ub_bytes(const PoolPlan& p) {
    const PoolLayout l = pool_layout(p);
    return p.buffers * l.stage + l.tile + l.off0 + l.offt + l.acc + l.acc2 + l.tmp + 2 * l.out + l.vec + l.idx0 + l.idxt + l.idx +
           2 * l.iout + l.bits + 1024;
}

bool plan_pool(PoolPlan& p, uint64_t ub, uint32_t cores) {
    // Whole planes when one fits (as many as fit, but leave every core some tiles); else one
    // plane and a box shrunk along the first spatial dims, then along the last.
    for (int i = 0; i < p.nd; ++i) p.tb[i] = p.out[i];
    p.tp = 1;
    p.buffers = 2;
    {
        PoolPlan q = p;  // the smallest box: single-buffer the input if even that does not fit
        for (int i = 0; i < q.nd; ++i) q.tb[i] = 1;
        if (pool_ub_bytes(q) > ub) p.buffers = 1;
    }
    if (pool_ub_bytes(p) <= ub) {
        const uint64_t cap = std::max<uint64_t>(1, p.planes / std::max(1u, cores));
        while (p.tp < cap) {
            PoolPlan q = p;
            ++q.tp;
            if (pool_ub_bytes(q) > ub) break;
            p.tp = q.tp;
        }
    } else {
        for (int i = 0; i < p.nd && pool_ub_bytes(p) > ub; ++i) {
            const bool last = i == p.nd - 1;
            int64_t lo = 1;
            if (lo >= p.tb[i]) continue;
            // Largest box size along dim i that fits (binary search), at least lo.
            int64_t hi = p.tb[i];
            p.tb[i] = lo;
            if (pool_ub_bytes(p) > ub) continue;
            while (lo < hi) {
                const int64_t mid = (lo + hi + 1) / 2;
                PoolPlan q = p;
                q.tb[i] = last && mid >= 32 ? mid / 32 * 32 : mid;
                if (pool_ub_bytes(q) <= ub) lo = mid;
                else hi = mid - 1;
            }
            p.tb[i] = last && lo >= 32 ? lo / 32 * 32 : lo;
        }
        if (pool_ub_bytes(p) > ub) return false;
    }
    // The MTE2 pads a burst with at most 255 elements per side.
    const int L = p.nd - 1;
    const int64_t full = (p.out[L] - 1) * p.s[L] + (p.k[L] - 1) * p.d[L] + 1;
    if (p.pb[L] > 255 || full - p.pb[L] - p.in[L] > 255) return false;
    const WorkSplit w = split_work(p.tiles(), cores);
    p.per_block = w.per_block, p.blocks = w.blocks;
    return true;
}

namespace {

class PoolKernel {
public:
    PoolKernel(KernelContext& ctx, const PoolPlan& p) : m_ctx(ctx), m_p(p), m_g(tile_geom(p)), m_pipe(ctx) {}

    void run() {
        const PoolPlan& p = m_p;
        const uint64_t t0 = uint64_t{m_ctx.block_idx()} * p.per_block;
        if (t0 >= p.tiles()) return;
        const uint64_t t1 = std::min(p.tiles(), t0 + p.per_block);
        const PoolLayout l = pool_layout(p);
        m_pipe.InitBuffer(m_stage, p.buffers, static_cast<uint32_t>(l.stage));
        m_pipe.InitBuffer(m_out, 2, static_cast<uint32_t>(l.out));
        if (l.tile) m_pipe.InitBuffer(m_tile, static_cast<uint32_t>(l.tile));
        m_pipe.InitBuffer(m_off0, static_cast<uint32_t>(l.off0));
        m_pipe.InitBuffer(m_offt, static_cast<uint32_t>(l.offt));
        m_pipe.InitBuffer(m_acc, static_cast<uint32_t>(l.acc));
        m_pipe.InitBuffer(m_acc2, static_cast<uint32_t>(l.acc2));
        m_pipe.InitBuffer(m_tmp, static_cast<uint32_t>(l.tmp));
        m_pipe.InitBuffer(m_vec, static_cast<uint32_t>(l.vec));
        if (p.indices) {
            m_pipe.InitBuffer(m_idx0, static_cast<uint32_t>(l.idx0));
            m_pipe.InitBuffer(m_idxt, static_cast<uint32_t>(l.idxt));
            m_pipe.InitBuffer(m_idx, static_cast<uint32_t>(l.idx));
            m_pipe.InitBuffer(m_iout, 2, static_cast<uint32_t>(l.iout));
            m_pipe.InitBuffer(m_bits, 2048);
        }
        // Lane positions 0..wop-1 (int32), kept for every tile's offsets and counts.
        iota(m_ctx, I32, vec(0), m_g.wop);
        for (uint64_t t = t0; t < t1; ++t) {
            m_ctx.scalar(8);
            tile(t);
        }
        m_stage.drain();
        m_out.drain();
        if (p.indices) m_iout.drain();
    }

private:
    static uint32_t a(const TBuf<TPosition::VECCALC>& b) { return b.Get<uint8_t>().address(); }
    uint32_t vec(int i) const { return a(m_vec) + static_cast<uint32_t>(i * m_g.wop * 4); }

    void tile(uint64_t t) {
        const PoolPlan& p = m_p;
        const int L = p.nd - 1;
        // Tile coordinates: plane group, then box index per dim (last fastest).
        int64_t o0[kMaxPoolDims] = {0, 0, 0}, ob[kMaxPoolDims] = {1, 1, 1}, lo[kMaxPoolDims] = {0, 0, 0};
        uint64_t rem = t;
        for (int i = p.nd; i-- > 0;) {
            const uint64_t nb = cdiv(static_cast<uint64_t>(p.out[i]), static_cast<uint64_t>(p.tb[i]));
            o0[i] = static_cast<int64_t>(rem % nb) * p.tb[i];
            rem /= nb;
            ob[i] = std::min(p.tb[i], p.out[i] - o0[i]);
            lo[i] = o0[i] * p.s[i] - p.pb[i];
        }
        const uint64_t q0 = rem * p.tp, np = std::min<uint64_t>(p.tp, p.planes - q0);
        const uint32_t es = isa::dtype_size(p.xt);
        const double pv = pad_value(p);
        // ---- MTE2: input rows of the box, padding on both sides by the MTE2
        const int64_t ncol0 = std::max<int64_t>(lo[L], 0);
        const int64_t ncol1 = std::min<int64_t>(lo[L] + m_g.ie[L], p.in[L]);
        const int64_t ncols = ncol1 - ncol0;
        const int64_t padl = ncol0 - lo[L], padr = m_g.ie[L] - padl - std::max<int64_t>(ncols, 0);
        LocalTensor<uint8_t> st = m_stage.AllocTensor<uint8_t>();
        // Outer rows of the box (all dims but the last), row-major.
        uint64_t orows = 1;
        for (int i = 0; i < L; ++i) orows *= static_cast<uint64_t>(m_g.ie[i]);
        std::vector<std::pair<uint64_t, uint64_t>> pad_rows;  // [first, count) in UB rows of a plane
        for (uint64_t q = 0; q < np; ++q) {
            const uint64_t plane = q0 + q;
            // Runs of valid rows along the next-to-last dim become one DMA.
            for (uint64_t r = 0; r < orows;) {
                int64_t idx[kMaxPoolDims] = {0, 0, 0};
                uint64_t rr = r;
                bool valid = ncols > 0;
                uint64_t gm_row = 0;
                for (int i = L - 1; i >= 0; --i) {
                    idx[i] = static_cast<int64_t>(rr % static_cast<uint64_t>(m_g.ie[i]));
                    rr /= static_cast<uint64_t>(m_g.ie[i]);
                }
                for (int i = 0; i < L; ++i) {
                    const int64_t v = lo[i] + idx[i];
                    valid = valid && v >= 0 && v < p.in[i];
                    gm_row = gm_row * static_cast<uint64_t>(p.in[i]) + static_cast<uint64_t>(std::max<int64_t>(v, 0));
                }
                // Extend the run along the innermost outer dim while rows stay valid.
                uint64_t run = 1;
                if (L >= 1) {
                    const int64_t v = lo[L - 1] + idx[L - 1];
                    const int64_t last = std::min<int64_t>(m_g.ie[L - 1] - 1, p.in[L - 1] - 1 - lo[L - 1]);
                    if (valid) run = static_cast<uint64_t>(last - idx[L - 1] + 1);
                    (void)v;
                }
                if (!valid) {
                    if (q == 0) pad_rows.push_back({r, 1});
                    r += 1;
                    continue;
                }
                const uint64_t src = (plane * static_cast<uint64_t>(plane_in()) + gm_row * static_cast<uint64_t>(p.in[L]) +
                                      static_cast<uint64_t>(ncol0));
                const uint64_t lb = up(static_cast<uint64_t>(padl + ncols + padr) * es, kBlk);
                isa::CopyParams c{static_cast<uint32_t>(run), static_cast<uint32_t>(ncols * es),
                                  static_cast<uint32_t>((p.in[L] - ncols) * es),
                                  static_cast<uint32_t>((m_g.wr * es - lb) / kBlk)};
                c.pad_left = static_cast<uint8_t>(padl);
                c.pad_right = static_cast<uint8_t>(padr);
                detail::copy_in(m_ctx, p.xt, isa::Pos::UB, st.address() + static_cast<uint32_t>((q * m_g.ps + r * m_g.wr) * es),
                                p.x + src * es, c, pv);
                r += run;
            }
        }
        m_stage.EnQue(st);
        // ---- V: fp32 box with padding rows, offsets, taps
        LocalTensor<uint8_t> sv = m_stage.DeQue<uint8_t>();
        const uint32_t tile = p.xt == F32 ? sv.address() : a(m_tile);
        if (p.xt != F32) {
            vrun(m_ctx, Opcode::VCONV, F32, vop(tile), vop(sv.address()), {}, 1, 1, np * m_g.ps, 0, p.xt);
            m_stage.FreeTensor(sv);
        }
        const double fpv = p.is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        for (const auto& [r, n] : pad_rows)
            vrun(m_ctx, Opcode::VDUP, F32, vop(static_cast<uint32_t>(tile + r * m_g.wr * 4), static_cast<int64_t>(m_g.ps * 4)),
                 {}, {}, np, 1, n * m_g.wr, fpv);
        if (ncols <= 0) vrun(m_ctx, Opcode::VDUP, F32, vop(tile), {}, {}, 1, 1, np * m_g.ps, fpv);
        // Window origins: row r0[w] = min(w, ob_last - 1) * s_last * 4, plus each row's base.
        vrun(m_ctx, Opcode::VMINS, I32, vop(vec(1)), vop(vec(0)), {}, 1, 1, m_g.wop, static_cast<double>(ob[L] - 1));
        vrun(m_ctx, Opcode::VMULS, I32, vop(vec(1)), vop(vec(1)), {}, 1, 1, m_g.wop, static_cast<double>(p.s[L] * 4));
        uint64_t otb = 1;  // output rows per plane in the tile layout
        for (int i = 0; i < L; ++i) otb *= static_cast<uint64_t>(p.tb[i]);
        const uint32_t off0 = a(m_off0), offt = a(m_offt), acc = a(m_acc), tmp = a(m_tmp);
        int64_t mul[kMaxPoolDims] = {1, 1, 1};  // flat-index multiplier per spatial dim
        if (p.indices) {
            for (int i = 0; i < p.nd; ++i)
                for (int j = 0; j < p.nd; ++j)
                    if (p.storage_order == 0 ? j > i : j < i) mul[i] *= p.in[j];
            // Lane part of the window origin: min(w, ob - 1) * s_last * mul_last.
            vrun(m_ctx, Opcode::VMINS, I32, vop(vec(4)), vop(vec(0)), {}, 1, 1, m_g.wop, static_cast<double>(ob[L] - 1));
            vrun(m_ctx, Opcode::VMULS, I32, vop(vec(4)), vop(vec(4)), {}, 1, 1, m_g.wop,
                 static_cast<double>(p.s[L] * mul[L]));
        }
        for (uint64_t q = 0; q < np; ++q)
            for (uint64_t r = 0; r < otb; ++r) {
                int64_t idx[kMaxPoolDims] = {0, 0, 0};
                uint64_t rr = r, base = 0;
                for (int i = L - 1; i >= 0; --i) {  // rows past the box repeat its last (never stored)
                    idx[i] = std::min(static_cast<int64_t>(rr % static_cast<uint64_t>(p.tb[i])), ob[i] - 1);
                    rr /= static_cast<uint64_t>(p.tb[i]);
                }
                for (int i = 0; i < L; ++i) base = base * static_cast<uint64_t>(m_g.ie[i]) + static_cast<uint64_t>(idx[i] * p.s[i]);
                base = (q * m_g.ps + base * m_g.wr) * 4;
                m_ctx.scalar(2);
                if (p.indices) {
                    int64_t ib = static_cast<int64_t>(q0 + q) * plane_in() + (o0[L] * p.s[L] - p.pb[L]) * mul[L];
                    for (int i = 0; i < L; ++i) ib += ((o0[i] + idx[i]) * p.s[i] - p.pb[i]) * mul[i];
                    vrun(m_ctx, Opcode::VADDS, I32, vop(static_cast<uint32_t>(a(m_idx0) + (q * otb + r) * m_g.wop * 4)),
                         vop(vec(4)), {}, 1, 1, m_g.wop, static_cast<double>(ib));
                }
                vrun(m_ctx, Opcode::VADDS, I32, vop(static_cast<uint32_t>(off0 + (q * otb + r) * m_g.wop * 4)), vop(vec(1)), {},
                     1, 1, m_g.wop, static_cast<double>(base));
            }
        const uint64_t n = np * otb * m_g.wop;
        const uint32_t span = static_cast<uint32_t>(np * m_g.ps * 4);
        int64_t tap[kMaxPoolDims] = {0, 0, 0};
        uint64_t taps = 1;
        for (int i = 0; i < p.nd; ++i) taps *= static_cast<uint64_t>(p.k[i]);
        // The running result: each tap's max or sum goes into the other accumulator, never into
        // the one it reads (an in-place instruction reads and writes one bank every repeat).
        uint32_t cur = acc;
        for (uint64_t ti = 0; ti < taps; ++ti) {
            uint64_t toff = 0;
            for (int i = 0; i < L; ++i) toff = toff * static_cast<uint64_t>(m_g.ie[i]) + static_cast<uint64_t>(tap[i] * p.d[i]);
            toff = (toff * m_g.wr + static_cast<uint64_t>(tap[L] * p.d[L])) * 4;
            vrun(m_ctx, Opcode::VADDS, I32, vop(offt), vop(off0), {}, 1, 1, n, static_cast<double>(toff));
            LocalTensor<float> dst(&m_ctx, isa::Pos::UB, ti == 0 ? acc : tmp, static_cast<uint32_t>(n), -1);
            LocalTensor<float> src(&m_ctx, isa::Pos::UB, tile, span / 4, -1);
            LocalTensor<uint32_t> offs(&m_ctx, isa::Pos::UB, offt, static_cast<uint32_t>(n), -1);
            Gather(dst, src, offs, span, n);
            if (p.indices) {
                int64_t toi = 0;
                for (int i = 0; i < p.nd; ++i) toi += tap[i] * p.d[i] * mul[i];
                const uint32_t dsti = ti == 0 ? a(m_idx) : a(m_idxt);
                vrun(m_ctx, Opcode::VADDS, I32, vop(dsti), vop(a(m_idx0)), {}, 1, 1, n, static_cast<double>(toi));
                if (ti > 0)
                    vselect_cmp(m_ctx, F32, isa::CmpMode::GT, vop(tmp), vop(cur), I32, vop(a(m_idx)), vop(a(m_idxt)),
                                vop(a(m_idx)), a(m_bits), 1, 1, n);
            }
            if (ti > 0) {
                const uint32_t next = cur == acc ? a(m_acc2) : acc;
                vrun(m_ctx, p.is_max ? Opcode::VMAX : Opcode::VADD, F32, vop(next), vop(cur), vop(tmp), 1, 1, n);
                cur = next;
            }
            for (int i = p.nd; i-- > 0;) {
                if (++tap[i] < p.k[i]) break;
                tap[i] = 0;
            }
        }
        if (p.xt == F32) m_stage.FreeTensor(sv);
        if (!p.is_max) divide(cur, np, otb, o0, ob);
        // ---- out
        LocalTensor<uint8_t> out = m_out.AllocTensor<uint8_t>();
        if (p.xt != F32) vrun(m_ctx, Opcode::VCONV, p.xt, vop(out.address()), vop(cur), {}, 1, 1, n, 0, F32);
        else vrun(m_ctx, Opcode::VMULS, F32, vop(out.address()), vop(cur), {}, 1, 1, n, 1.0);
        m_out.EnQue(out);
        LocalTensor<uint8_t> o = m_out.DeQue<uint8_t>();
        // One DMA per plane and output row group (rows along the next-to-last dim are one run).
        const uint64_t run = L >= 1 ? static_cast<uint64_t>(ob[L - 1]) : 1;
        const uint64_t groups = L >= 1 ? otb / static_cast<uint64_t>(p.tb[L - 1]) : 1;
        for (uint64_t q = 0; q < np; ++q)
            for (uint64_t gi = 0; gi < groups; ++gi) {
                int64_t idx[kMaxPoolDims] = {0, 0, 0};
                uint64_t rr = gi;
                bool used = true;
                for (int i = L - 2; i >= 0; --i) {
                    idx[i] = static_cast<int64_t>(rr % static_cast<uint64_t>(p.tb[i]));
                    rr /= static_cast<uint64_t>(p.tb[i]);
                    used = used && idx[i] < ob[i];
                }
                if (!used) continue;
                uint64_t orow = 0;
                for (int i = 0; i < L; ++i) orow = orow * static_cast<uint64_t>(p.out[i]) + static_cast<uint64_t>(o0[i] + idx[i]);
                const uint64_t dst = (q0 + q) * static_cast<uint64_t>(plane_out()) + orow * static_cast<uint64_t>(p.out[L]) +
                                     static_cast<uint64_t>(o0[L]);
                const uint64_t urow = q * otb + gi * (L >= 1 ? static_cast<uint64_t>(p.tb[L - 1]) : 1);
                detail::copy_out(m_ctx, p.xt, p.y + dst * es, isa::Pos::UB,
                                 o.address() + static_cast<uint32_t>(urow * m_g.wop * es),
                                 isa::CopyParams{static_cast<uint32_t>(run), static_cast<uint32_t>(ob[L] * es),
                                                 static_cast<uint32_t>((m_g.wop * es - up(static_cast<uint64_t>(ob[L]) * es, kBlk)) / kBlk),
                                                 static_cast<uint32_t>((p.out[L] - ob[L]) * es)});
            }
        m_out.FreeTensor(o);
        if (p.indices) store_indices(np, q0, otb, o0, ob);
    }

    void store_indices(uint64_t np, uint64_t q0, uint64_t otb, const int64_t* o0, const int64_t* ob) {
        const PoolPlan& p = m_p;
        const int L = p.nd - 1;
        const uint64_t n = np * otb * m_g.wop;
        LocalTensor<uint8_t> io = m_iout.AllocTensor<uint8_t>();
        vrun(m_ctx, Opcode::VMULS, I32, vop(io.address()), vop(a(m_idx)), {}, 1, 1, n, 1.0);
        m_iout.EnQue(io);
        LocalTensor<uint8_t> o = m_iout.DeQue<uint8_t>();
        const uint64_t run = L >= 1 ? static_cast<uint64_t>(ob[L - 1]) : 1;
        const uint64_t groups = L >= 1 ? otb / static_cast<uint64_t>(p.tb[L - 1]) : 1;
        for (uint64_t q = 0; q < np; ++q)
            for (uint64_t gi = 0; gi < groups; ++gi) {
                int64_t idx[kMaxPoolDims] = {0, 0, 0};
                uint64_t rr = gi;
                bool used = true;
                for (int i = L - 2; i >= 0; --i) {
                    idx[i] = static_cast<int64_t>(rr % static_cast<uint64_t>(p.tb[i]));
                    rr /= static_cast<uint64_t>(p.tb[i]);
                    used = used && idx[i] < ob[i];
                }
                if (!used) continue;
                uint64_t orow = 0;
                for (int i = 0; i < L; ++i) orow = orow * static_cast<uint64_t>(p.out[i]) + static_cast<uint64_t>(o0[i] + idx[i]);
                const uint64_t dst = (q0 + q) * static_cast<uint64_t>(plane_out()) + orow * static_cast<uint64_t>(p.out[L]) +
                                     static_cast<uint64_t>(o0[L]);
                const uint64_t urow = q * otb + gi * (L >= 1 ? static_cast<uint64_t>(p.tb[L - 1]) : 1);
                detail::copy_out(m_ctx, I32, p.ind + dst * 4, isa::Pos::UB,
                                 o.address() + static_cast<uint32_t>(urow * m_g.wop * 4),
                                 isa::CopyParams{static_cast<uint32_t>(run), static_cast<uint32_t>(ob[L] * 4),
                                                 static_cast<uint32_t>((m_g.wop * 4 - up(static_cast<uint64_t>(ob[L]) * 4, kBlk)) / kBlk),
                                                 static_cast<uint32_t>((p.out[L] - ob[L]) * 4)});
            }
        m_iout.FreeTensor(o);
    }

    // acc /= taps counted per position: the last dim's counts as a vector, the others as
    // per-row scalars (shape arithmetic of the scalar unit).
    void divide(uint32_t acc, uint64_t np, uint64_t otb, const int64_t* o0, const int64_t* ob) {
        const PoolPlan& p = m_p;
        const int L = p.nd - 1;
        auto bounds = [&](int i, int64_t& lo, int64_t& hi) {
            lo = p.count_include_pad ? -p.pb[i] : 0;
            hi = p.count_include_pad ? p.in[i] + p.pe[i] : p.in[i];
        };
        int64_t lo, hi;
        bounds(L, lo, hi);
        // start = (o0 + w) * s - pb; count = min(start + k, hi) - max(start, lo)  (no dilation)
        vrun(m_ctx, Opcode::VCONV, F32, vop(vec(2)), vop(vec(0)), {}, 1, 1, m_g.wop, 0, I32);
        vrun(m_ctx, Opcode::VMULS, F32, vop(vec(2)), vop(vec(2)), {}, 1, 1, m_g.wop, static_cast<double>(p.s[L]));
        vrun(m_ctx, Opcode::VADDS, F32, vop(vec(2)), vop(vec(2)), {}, 1, 1, m_g.wop,
             static_cast<double>(o0[L] * p.s[L] - p.pb[L]));
        vrun(m_ctx, Opcode::VADDS, F32, vop(vec(3)), vop(vec(2)), {}, 1, 1, m_g.wop, static_cast<double>(p.k[L]));
        vrun(m_ctx, Opcode::VMINS, F32, vop(vec(3)), vop(vec(3)), {}, 1, 1, m_g.wop, static_cast<double>(hi));
        vrun(m_ctx, Opcode::VMAXS, F32, vop(vec(2)), vop(vec(2)), {}, 1, 1, m_g.wop, static_cast<double>(lo));
        vrun(m_ctx, Opcode::VSUB, F32, vop(vec(3)), vop(vec(3)), vop(vec(2)), 1, 1, m_g.wop);
        vrun(m_ctx, Opcode::VMAXS, F32, vop(vec(3)), vop(vec(3)), {}, 1, 1, m_g.wop, 1.0);  // unused lanes
        vrun(m_ctx, Opcode::VREC, F32, vop(vec(3)), vop(vec(3)), {}, 1, 1, m_g.wop);
        (void)ob;
        for (uint64_t q = 0; q < np; ++q)
            for (uint64_t r = 0; r < otb; ++r) {
                uint64_t rr = r;
                double c = 1;
                for (int i = L - 1; i >= 0; --i) {
                    const int64_t idx = static_cast<int64_t>(rr % static_cast<uint64_t>(p.tb[i]));
                    rr /= static_cast<uint64_t>(p.tb[i]);
                    int64_t l, h;
                    bounds(i, l, h);
                    const int64_t st = (o0[i] + idx) * p.s[i] - p.pb[i];
                    c *= static_cast<double>(std::max<int64_t>(1, std::min(st + p.k[i], h) - std::max(st, l)));
                }
                m_ctx.scalar(2);
                const uint32_t row = static_cast<uint32_t>(acc + (q * otb + r) * m_g.wop * 4);
                vrun(m_ctx, Opcode::VMUL, F32, vop(row), vop(row), vop(vec(3)), 1, 1, m_g.wop);
                if (c != 1) vrun(m_ctx, Opcode::VMULS, F32, vop(row), vop(row), {}, 1, 1, m_g.wop, 1.0 / c);
            }
    }

    int64_t plane_in() const {
        int64_t v = 1;
        for (int i = 0; i < m_p.nd; ++i) v *= m_p.in[i];
        return v;
    }
    int64_t plane_out() const {
        int64_t v = 1;
        for (int i = 0; i < m_p.nd; ++i) v *= m_p.out[i];
        return v;
    }

    KernelContext& m_ctx;
    const PoolPlan& m_p;
    PoolGeomT m_g;
    TPipe m_pipe;
    TQue<TPosition::VECIN> m_stage;
    TQue<TPosition::VECOUT> m_out, m_iout;
    TBuf<TPosition::VECCALC> m_tile, m_off0, m_offt, m_acc, m_acc2, m_tmp, m_vec, m_idx0, m_idxt, m_idx, m_bits;
};

}  // namespace

void pool_kernel(isa::IInstrSink& sink, const PoolPlan& p) {
    KernelContext ctx(sink);
    PoolKernel(ctx, p).run();
}

}  // namespace sfumato::ops::norm
