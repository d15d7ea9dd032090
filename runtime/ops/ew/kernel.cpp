#include "runtime/ops/ew/kernel.h"

#include <algorithm>

#include "runtime/kernel/api.h"

namespace sfumato::ops::ew {

using isa::DType;
using isa::Opcode;
using isa::Pos;
using kernel::KernelContext;

namespace {

uint32_t es(DType t) { return isa::dtype_size(t); }
uint32_t up32(uint64_t b) { return static_cast<uint32_t>((b + 31) / 32 * 32); }
uint64_t up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

void copy_in(KernelContext& ctx, DType t, uint32_t ub, uint64_t gm, uint32_t nburst, uint32_t len, uint32_t gm_gap,
             uint32_t ub_gap_blocks) {
    isa::CopyParams c{nburst, len, gm_gap, ub_gap_blocks};
    kernel::detail::copy_in(ctx, t, Pos::UB, ub, gm, c, 0);
}

void copy_out(KernelContext& ctx, DType t, uint64_t gm, uint32_t ub, uint32_t nburst, uint32_t len,
              uint32_t ub_gap_blocks) {
    isa::CopyParams c{nburst, len, ub_gap_blocks, 0};
    kernel::detail::copy_out(ctx, t, gm, Pos::UB, ub, c);
}

void copy_ub(KernelContext& ctx, uint32_t dst, uint32_t src, uint32_t bytes) {
    isa::CopyParams c{1, bytes, 0, 0};
    kernel::detail::copy_local(ctx, DType::UINT8, {dst, Pos::UB}, {src, Pos::UB}, c);
}

// dst[0..count) = the value spread over the 32-byte block at src (a stride-0 read).
void fill_from_block(KernelContext& ctx, DType t, uint32_t dst, uint32_t src, uint64_t count) {
    if (t == DType::INT32 || t == DType::INT16)
        vloop(ctx, Opcode::VOR, t, t, vo(dst), vo(src, true), vo(src, true), {}, count, 0);
    else
        vloop(ctx, Opcode::VMULS, t, t, vo(dst), vo(src, true), {}, {}, count, 1.0);
}

// Each of n values at src fills one block, blocks `stride` blocks apart starting at dst.
// An instruction reads 8 values per repeat from a 32-byte-aligned source, so a split into
// several instructions advances the source by whole 32-byte blocks (254 repeats for 2-byte types).
void brcb(KernelContext& ctx, DType t, uint32_t dst, uint32_t src, uint32_t n, uint32_t stride) {
    const uint32_t unit = 8 * es(t) >= 32 ? 1 : 32 / (8 * es(t));
    const uint32_t max_reps = 255 / unit * unit;
    for (uint32_t done = 0; done < n;) {
        const uint32_t reps = std::min<uint32_t>(max_reps, (n - done + 7) / 8);
        isa::Instr in = isa::make_instr(Opcode::VBRCB);
        in.dtype = t;
        in.dst = {dst + done * stride * 32, Pos::UB};
        in.src0 = {src + done * es(t), Pos::UB};
        in.vec.repeat = static_cast<uint16_t>(reps);
        in.vec.dst_blk_stride = static_cast<uint16_t>(stride);
        in.vec.dst_rep_stride = static_cast<uint16_t>(8 * stride);
        ctx.issue(in);
        done += reps * 8;
    }
}

struct Run {
    uint64_t row;  // first row (global)
    uint32_t j0;   // its index in the tile
    uint32_t n;    // rows
};

// Offset (elements) of row `row` for strides os over the outer dims.
int64_t row_offset(const Plan& p, const std::vector<int64_t>& os, uint64_t row) {
    int64_t off = 0;
    for (size_t d = p.outer.size(); d-- > 0;) {
        const uint64_t dim = static_cast<uint64_t>(p.outer[d]);
        off += static_cast<int64_t>(row % dim) * os[d];
        row /= dim;
    }
    return off;
}

uint64_t gm_at(uint64_t addr, int64_t elem, uint32_t e) { return addr + static_cast<uint64_t>(elem) * e; }

// A one-lane reduction per 32-byte block packs the elements that single-element bursts left
// at the start of consecutive blocks: dst[i] = block i's first element.
void pack_blocks(KernelContext& ctx, DType t, uint32_t dst, uint32_t src, uint32_t n) {
    // At most 224 results per instruction: the next one's dst stays 32-byte aligned for
    // every element size (224 x 1, 2, 4 bytes are multiples of 32).
    for (uint32_t done = 0; done < n;) {
        const uint32_t reps = std::min<uint32_t>(224, n - done);
        isa::Instr in = isa::make_instr(Opcode::VRED_MAX);
        in.dtype = t;
        in.dst = {dst + done * es(t), Pos::UB};
        in.src0 = {src + done * 32, Pos::UB};
        in.vec.repeat = static_cast<uint16_t>(reps);
        in.vec.src0_blk_stride = 1;
        in.vec.src0_rep_stride = 1;
        in.vec.dst_rep_stride = 1;
        const kernel::VecMask m(1);
        in.vec.mask_lo = m.lo, in.vec.mask_hi = m.hi;
        ctx.issue(in);
        done += reps;
    }
}

class Tiler {
public:
    Tiler(KernelContext& ctx, const Plan& p, uint32_t calc) : m_ctx(ctx), m_p(p), m_cb(calc) {}

    void setup() {
        bool loads = false;
        for (size_t i = 0; i < m_p.in.size(); ++i) {
            const OperandPlan& o = m_p.in[i];
            if (o.form == Form::Scalar) {
                copy_in(m_ctx, o.storage, m_cb + o.stage_off, gm_at(m_p.in_addr[i], o.base, es(o.storage)), 1, es(o.storage), 0, 0);
                loads = true;
            } else if (o.form == Form::Row) {
                copy_in(m_ctx, o.storage, m_cb + o.calc_off, gm_at(m_p.in_addr[i], o.base, es(o.storage)), 1,
                        static_cast<uint32_t>(m_p.L) * es(o.storage), 0, 0);
                loads = true;
            }
        }
        if (loads) {
            const uint8_t ev = m_ctx.alloc_event(isa::Pipe::MTE2, isa::Pipe::V, "elementwise setup");
            m_ctx.set_flag(isa::Pipe::MTE2, isa::Pipe::V, ev);
            m_ctx.wait_flag(isa::Pipe::MTE2, isa::Pipe::V, ev);
        }
        for (const OperandPlan& o : m_p.in) {
            if (o.form == Form::Scalar) {
                uint32_t src = m_cb + o.stage_off;
                if (o.deliver != o.storage) {
                    vloop(m_ctx, Opcode::VCONV, o.deliver, o.storage, vo(m_cb + o.calc_off), vo(src), {}, {}, 1, 0);
                    src = m_cb + o.calc_off;
                }
                brcb(m_ctx, o.deliver, m_cb + o.calc_off, src, 1, 1);
            } else if (o.form == Form::Row && !m_p.chunk) {
                replicate(m_cb + o.calc_off, m_p.Lp * es(o.storage), m_p.k);
            }
        }
        for (size_t r = 0; r < m_p.prog.regs.size(); ++r) {
            const RegInfo& g = m_p.prog.regs[r];
            if (g.src == RegSrc::Const)
                vloop(m_ctx, Opcode::VDUP, g.dt, g.dt, vo(m_cb + m_p.const_off[r]), {}, {}, {}, 32 / es(g.dt), g.value);
        }
    }

    // Row mode: kk rows from r0; chunk mode: one row's chunk [c0, c0 + ww).
    void tile(uint64_t r0, uint32_t kk, uint64_t c0, uint32_t ww) {
        const Plan& p = m_p;
        // Whole 256-element repeats where the tile's buffers hold them: every buffer holds T
        // elements, so a tile of 64 or 128 computes T (a masked last repeat for 1-byte types)
        // rather than write past its slots into the next buffer.
        const uint64_t count = std::min<uint64_t>(p.chunk ? up(ww, 256) : up(uint64_t{kk} * p.Lp, 256), p.T);
        m_ctx.scalar(4);  // tile bookkeeping
        runs(r0, kk);
        kernel::LocalTensor<uint8_t> in;
        uint32_t inb = 0;
        if (p.in_bytes) {
            in = m_inq->AllocTensor<uint8_t>();
            load(in.address(), c0, ww);
            m_inq->EnQue(in);
            in = m_inq->DeQue<uint8_t>();
            inb = in.address();
            prepare(inb, count, ww);
        }
        kernel::LocalTensor<uint8_t> out = m_outq->AllocTensor<uint8_t>();
        compute(inb, out.address(), c0, count);
        if (p.out_is != 1) {
            const uint32_t pitch = static_cast<uint32_t>(p.chunk ? 0 : up(static_cast<uint64_t>(p.L), 8)) * 32;
            for (uint32_t j = 0; j < kk; ++j)
                brcb(m_ctx, p.out_storage, out.address() + p.spread_off + j * pitch, out.address() + j * p.Lp * es(p.out_storage), ww, 1);
        }
        if (p.in_bytes) m_inq->FreeTensor(in);
        m_outq->EnQue(out);
        out = m_outq->DeQue<uint8_t>();
        store(out.address(), r0, c0, kk, ww);
        m_outq->FreeTensor(out);
    }

    kernel::TQue<kernel::TPosition::VECIN>* m_inq = nullptr;
    kernel::TQue<kernel::TPosition::VECOUT>* m_outq = nullptr;

private:
    void runs(uint64_t r0, uint32_t kk) {
        m_runs.clear();
        for (uint32_t j = 0; j < kk;) {
            const uint64_t row = r0 + j;
            const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kk - j, m_p.run_len - row % m_p.run_len));
            m_runs.push_back({row, j, n});
            j += n;
        }
    }

    // Doubling copies of row 0 of `base` (row_bytes each) into rows 1..n-1.
    void replicate(uint32_t base, uint32_t row_bytes, uint32_t n) {
        for (uint32_t have = 1; have < n; have *= 2)
            copy_ub(m_ctx, base + have * row_bytes, base, std::min(have, n - have) * row_bytes);
    }

    void load(uint32_t inb, uint64_t c0, uint32_t ww) {
        const Plan& p = m_p;
        for (size_t i = 0; i < p.in.size(); ++i) {
            const OperandPlan& o = p.in[i];
            if (o.form != Form::Stream && o.form != Form::Col && o.form != Form::Gather) continue;
            const uint32_t e = es(o.storage);
            const int64_t delta = o.os.empty() ? 0 : o.os.back();
            uint32_t soff = 0;
            for (const Run& r : m_runs) {
                m_ctx.scalar(2);  // the run's address
                const int64_t off = o.base + row_offset(p, o.os, r.row) + static_cast<int64_t>(c0) * o.istride;
                const uint64_t gm = gm_at(p.in_addr[i], off, e);
                if (o.form == Form::Col) {
                    if (delta == 0 || delta == 1) {
                        const uint32_t nv = delta == 0 ? 1 : r.n;
                        copy_in(m_ctx, o.storage, inb + o.in_off + soff, gm, 1, nv * e, 0, 0);
                        soff += up32(uint64_t{nv} * e);
                    } else {
                        for (uint32_t j = 0; j < r.n; ++j, soff += 32)
                            copy_in(m_ctx, o.storage, inb + o.in_off + soff, gm_at(gm, delta * j, e), 1, e, 0, 0);
                    }
                    continue;
                }
                if (o.form == Form::Gather) {
                    for (uint32_t j = 0; j < r.n; ++j) {
                        const uint64_t row = gm_at(gm, delta * j, e);
                        const uint32_t dst = inb + o.in_off + (r.j0 + j) * static_cast<uint32_t>(p.chunk ? 0 : p.L) * 32;
                        if (o.istride > 0) {
                            copy_in(m_ctx, o.storage, dst, row, ww, e, static_cast<uint32_t>((o.istride - 1) * e), 0);
                        } else {
                            for (uint32_t c = 0; c < ww; ++c) copy_in(m_ctx, o.storage, dst + c * 32, gm_at(row, o.istride * c, e), 1, e, 0, 0);
                        }
                    }
                    continue;
                }
                const uint32_t dst = inb + o.in_off + r.j0 * p.Lp * e;
                if (o.repeat_rows || r.n == 1) {
                    copy_in(m_ctx, o.storage, dst, gm, 1, ww * e, 0, 0);
                } else if (delta == p.L && p.Lp == p.L) {
                    copy_in(m_ctx, o.storage, dst, gm, 1, r.n * ww * e, 0, 0);
                } else if (delta >= p.L) {
                    const uint32_t gap_blocks = (p.Lp * e - up32(uint64_t{ww} * e)) / 32;
                    copy_in(m_ctx, o.storage, dst, gm, r.n, ww * e, static_cast<uint32_t>((delta - ww) * e), gap_blocks);
                } else {  // rows that overlap or run backwards: one burst each
                    for (uint32_t j = 0; j < r.n; ++j) copy_in(m_ctx, o.storage, dst + j * p.Lp * e, gm_at(gm, delta * j, e), 1, ww * e, 0, 0);
                }
            }
        }
    }

    // V work before the program: rows that repeat are copied, per-row values spread, strided
    // elements packed.
    void prepare(uint32_t inb, uint64_t count, uint32_t ww) {
        const Plan& p = m_p;
        for (const OperandPlan& o : p.in) {
            if (o.form == Form::Stream && o.repeat_rows && !p.chunk) {
                for (const Run& r : m_runs) replicate(inb + o.in_off + r.j0 * p.Lp * es(o.storage), p.Lp * es(o.storage), r.n);
            }
            if (o.form == Form::Gather) {
                for (const Run& r : m_runs)
                    for (uint32_t j = r.j0; j < r.j0 + r.n; ++j)
                        pack_blocks(m_ctx, o.storage, m_cb + o.calc_off + j * p.Lp * es(o.storage),
                                    inb + o.in_off + j * static_cast<uint32_t>(p.chunk ? 0 : p.L) * 32, ww);
            }
            if (o.form == Form::Col) spread(o, inb, count);
        }
    }

    void spread(const OperandPlan& o, uint32_t inb, uint64_t count) {
        const Plan& p = m_p;
        const DType xt = o.xtype;
        const uint32_t ex = es(xt);
        const int64_t delta = o.os.empty() ? 0 : o.os.back();
        uint32_t soff = 0, xoff = 0;
        for (const Run& r : m_runs) {
            // Value groups of this run: (first row, rows, values, contiguous)
            const bool one = delta == 0, contiguous = delta == 1;
            const uint32_t groups = one || contiguous ? 1 : r.n;
            for (uint32_t gi = 0; gi < groups; ++gi) {
                const uint32_t j0 = r.j0 + (groups > 1 ? gi : 0);
                const uint32_t rows = groups > 1 ? 1 : r.n;
                const uint32_t nv = one ? 1 : rows;
                uint32_t src = inb + o.in_off + soff;
                soff += groups > 1 ? 32 : up32(uint64_t{nv} * es(o.storage));
                if (xt != o.storage) {
                    vloop(m_ctx, Opcode::VCONV, xt, o.storage, vo(m_cb + o.stage_off + xoff), vo(src), {}, {}, nv, 0);
                    src = m_cb + o.stage_off + xoff;
                    xoff += groups > 1 ? 32 : up32(uint64_t{nv} * ex);
                }
                if (p.chunk) {
                    const uint32_t blk = m_cb + o.x_off + static_cast<uint32_t>(count) * ex;
                    brcb(m_ctx, xt, blk, src, 1, 1);
                    fill_from_block(m_ctx, xt, m_cb + o.x_off, blk, count);
                    continue;
                }
                const uint32_t nb = p.Lp * ex / 32;  // blocks per row
                const uint32_t row0 = m_cb + o.x_off + j0 * p.Lp * ex;
                brcb(m_ctx, xt, row0, src, nv, nb);
                if (one) {
                    fill_from_block(m_ctx, xt, row0, row0, uint64_t{rows} * p.Lp);
                } else if (nb > 1 && nb <= rows) {
                    for (uint32_t jb = 1; jb < nb; ++jb) brcb(m_ctx, xt, row0 + jb * 32, src, nv, nb);
                } else if (nb > 1) {
                    for (uint32_t j = 0; j < rows; ++j) fill_from_block(m_ctx, xt, row0 + j * p.Lp * ex, row0 + j * p.Lp * ex, p.Lp);
                }
            }
        }
        if (xt != o.storage)
            vloop(m_ctx, Opcode::VCONV, o.storage, xt, vo(m_cb + o.calc_off), vo(m_cb + o.x_off), {}, {}, count, 0);
    }

    VOperand operand(int reg, uint32_t inb, uint32_t ob, uint64_t c0) const {
        if (reg < 0) return {};
        const RegInfo& g = m_p.prog.regs[static_cast<size_t>(reg)];
        switch (g.src) {
            case RegSrc::Temp: return vo(m_cb + m_p.slot_off[static_cast<size_t>(g.slot)]);
            case RegSrc::Out: return vo(ob);
            case RegSrc::Const: return vo(m_cb + m_p.const_off[static_cast<size_t>(reg)], true);
            default: break;
        }
        const OperandPlan& o = m_p.in[static_cast<size_t>(g.input)];
        switch (o.form) {
            case Form::Stream: return vo(inb + o.in_off);
            case Form::Scalar: return vo(m_cb + o.calc_off, true);
            case Form::Row: return vo(m_cb + o.calc_off + (m_p.chunk ? static_cast<uint32_t>(c0) * es(o.storage) : 0));
            default: return vo(m_cb + o.calc_off);
        }
    }

    void compute(uint32_t inb, uint32_t ob, uint64_t c0, uint64_t count) {
        const Program& pr = m_p.prog;
        for (const Step& s : pr.steps) {
            const VOperand d = operand(s.dst, inb, ob, c0), a = operand(s.a, inb, ob, c0), b = operand(s.b, inb, ob, c0),
                           sel = operand(s.sel, inb, ob, c0);
            const DType dt = pr.regs[static_cast<size_t>(s.op == Opcode::VCMP || s.op == Opcode::VCMPS ? s.a : s.dst)].dt;
            if (s.op == Opcode::COPY_UB_TO_UB) {
                copy_ub(m_ctx, d.addr, a.addr, static_cast<uint32_t>(count * es(dt)));
                continue;
            }
            const DType st = s.op == Opcode::VCONV ? pr.regs[static_cast<size_t>(s.a)].dt : dt;
            vloop(m_ctx, s.op, dt, st, d, a, b, sel, count, s.scalar, s.cmp, s.round);
        }
    }

    void store(uint32_t ob, uint64_t r0, uint64_t c0, uint32_t kk, uint32_t ww) {
        const Plan& p = m_p;
        const uint32_t e = es(p.out_storage);
        if (p.out_is != 1) {  // elements were spread one per block: a burst each
            const uint32_t pitch = static_cast<uint32_t>(p.chunk ? 0 : up(static_cast<uint64_t>(p.L), 8)) * 32;
            const int64_t delta = p.out_os.empty() ? 0 : p.out_os.back();
            for (const Run& r : m_runs)
                for (uint32_t j = 0; j < r.n; ++j) {
                    m_ctx.scalar(2);
                    const int64_t off = p.out_base + row_offset(p, p.out_os, r.row) + delta * j + static_cast<int64_t>(c0) * p.out_is;
                    isa::CopyParams c{ww, e, 0, static_cast<uint32_t>((p.out_is - 1) * e)};
                    kernel::detail::copy_out(m_ctx, p.out_storage, gm_at(p.out_addr, off, e), Pos::UB,
                                             ob + p.spread_off + (r.j0 + j) * pitch, c);
                }
            return;
        }
        const uint32_t pad_blocks = (p.Lp * e - up32(uint64_t{ww} * e)) / 32;
        if (p.out_contig) {
            const uint64_t gm = gm_at(p.out_addr, p.out_base + static_cast<int64_t>(r0 * static_cast<uint64_t>(p.L) + c0), e);
            if (p.chunk || kk == 1 || p.Lp == p.L) copy_out(m_ctx, p.out_storage, gm, ob, 1, kk * ww * e, 0);
            else copy_out(m_ctx, p.out_storage, gm, ob, kk, ww * e, pad_blocks);
            return;
        }
        const int64_t delta = p.out_os.empty() ? 0 : p.out_os.back();
        for (const Run& r : m_runs) {
            m_ctx.scalar(2);
            const uint64_t gm = gm_at(p.out_addr, p.out_base + row_offset(p, p.out_os, r.row) + static_cast<int64_t>(c0), e);
            const uint32_t src = ob + r.j0 * p.Lp * e;
            if (r.n == 1) {
                copy_out(m_ctx, p.out_storage, gm, src, 1, ww * e, 0);
            } else if (delta >= p.L) {
                isa::CopyParams c{r.n, ww * e, pad_blocks, static_cast<uint32_t>((delta - ww) * e)};
                kernel::detail::copy_out(m_ctx, p.out_storage, gm, Pos::UB, src, c);
            } else {
                for (uint32_t j = 0; j < r.n; ++j) copy_out(m_ctx, p.out_storage, gm_at(gm, delta * j, e), src + j * p.Lp * e, 1, ww * e, 0);
            }
        }
    }

    KernelContext& m_ctx;
    const Plan& m_p;
    uint32_t m_cb;
    std::vector<Run> m_runs;
};

}  // namespace

void vloop(KernelContext& ctx, Opcode op, DType dt, DType st, VOperand dst, VOperand a, VOperand b, VOperand sel,
           uint64_t count, double scalar, isa::CmpMode cmp, isa::RoundMode round) {
    if (count == 0) return;
    const bool is_cmp = op == Opcode::VCMP || op == Opcode::VCMPS;
    const uint32_t lanes = 256 / std::max(es(dt), es(st));
    const uint64_t step_d = is_cmp ? lanes / 8 : uint64_t{lanes} * es(dt);
    const uint64_t step_a = uint64_t{lanes} * es(st), step_b = uint64_t{lanes} * es(dt), step_s = lanes / 8;
    isa::Instr in = isa::make_instr(op);
    in.dtype = dt;
    in.scalar = scalar;
    isa::VecParams& v = in.vec;
    v.src_dtype = st;
    v.round = round;
    v.cmp = cmp;
    auto strides = [](const VOperand& o, uint16_t& blk, uint16_t& rep, uint64_t step) {
        blk = o.stride0 ? 0 : 1;
        rep = o.stride0 ? 0 : static_cast<uint16_t>(step / 32);
    };
    strides(dst, v.dst_blk_stride, v.dst_rep_stride, step_d);
    strides(a, v.src0_blk_stride, v.src0_rep_stride, step_a);
    strides(b, v.src1_blk_stride, v.src1_rep_stride, step_b);
    const uint64_t full = count / lanes, tail = count % lanes;
    auto issue = [&](uint64_t done, uint64_t reps, uint64_t mask_lanes) {
        auto at = [&](const VOperand& o, uint64_t step) -> isa::Addr {
            return {o.stride0 ? o.addr : o.addr + done * step, Pos::UB};
        };
        in.dst = at(dst, step_d);
        if (a.used) in.src0 = at(a, step_a);
        if (b.used) in.src1 = at(b, step_b);
        if (sel.used) in.src2 = at(sel, step_s);
        v.repeat = static_cast<uint16_t>(reps);
        const kernel::VecMask m = mask_lanes ? kernel::VecMask(mask_lanes) : kernel::VecMask();
        v.mask_lo = m.lo, v.mask_hi = m.hi;
        ctx.issue(in);
    };
    for (uint64_t done = 0; done < full;) {
        const uint64_t reps = std::min<uint64_t>(252, full - done);
        issue(done, reps, 0);
        done += reps;
    }
    if (tail) issue(full, 1, tail);
}

void spread_rows(KernelContext& ctx, DType t, uint32_t dst, uint32_t src, uint32_t n, uint32_t row_elems) {
    const uint32_t nb = row_elems * es(t) / 32;
    brcb(ctx, t, dst, src, n, nb);
    if (nb <= 1) return;
    if (nb <= n) {
        for (uint32_t jb = 1; jb < nb; ++jb) brcb(ctx, t, dst + jb * 32, src, n, nb);
    } else {
        for (uint32_t j = 0; j < n; ++j) fill_from_block(ctx, t, dst + j * row_elems * es(t), dst + j * row_elems * es(t), row_elems);
    }
}

void iota_i32(KernelContext& ctx, uint32_t dst, uint32_t n, int32_t step) {
    for (uint32_t i = 0; i < 8; ++i) {
        isa::Instr in = isa::make_instr(Opcode::VDUP);
        in.dtype = DType::INT32;
        in.dst = {dst, Pos::UB};
        in.vec.mask_lo = 1ull << i;
        in.vec.mask_hi = 0;
        in.scalar = static_cast<double>(static_cast<int64_t>(i) * step);
        ctx.issue(in);
    }
    for (uint32_t have = 8; have < n; have *= 2) {
        const uint32_t c = std::min(have, n - have);
        vloop(ctx, Opcode::VADDS, DType::INT32, DType::INT32, vo(dst + have * 4), vo(dst), {}, {}, c,
              static_cast<double>(static_cast<int64_t>(have) * step));
    }
}

void ew_kernel(isa::IInstrSink& sink, const Plan& p) {
    KernelContext ctx(sink);
    const uint64_t b = ctx.block_idx();
    if (b >= p.block_dim) return;
    const uint64_t u0 = p.units * b / p.block_dim, u1 = p.units * (b + 1) / p.block_dim;
    if (u0 >= u1) return;
    kernel::TPipe pipe(ctx);
    kernel::TQue<kernel::TPosition::VECIN> inq;
    kernel::TQue<kernel::TPosition::VECOUT> outq;
    kernel::TBuf<kernel::TPosition::VECCALC> calc;
    uint32_t cb = 0;
    if (p.placed) {  // every buffer at its place in the bank spans (runtime/ops/ew/ub_layout.h)
        cb = pipe.Reserve(kernel::TPosition::VECCALC, p.ub_reserve, "elementwise buffers");
        if (p.in_bytes) {
            pipe.InitBufferAt(inq, p.nbuf, p.in_bytes, cb + p.in_at[0]);
            for (uint32_t i = 1; i < p.nbuf; ++i) pipe.SetBufferAddress(inq, i, cb + p.in_at[i]);
        }
        pipe.InitBufferAt(outq, p.nbuf, p.out_bytes, cb + p.out_at[0]);
        for (uint32_t i = 1; i < p.nbuf; ++i) pipe.SetBufferAddress(outq, i, cb + p.out_at[i]);
    } else {
        if (p.in_bytes) pipe.InitBuffer(inq, p.nbuf, p.in_bytes);
        pipe.InitBuffer(outq, p.nbuf, p.out_bytes);
        if (p.calc_bytes) {
            pipe.InitBuffer(calc, p.calc_bytes);
            cb = calc.Get<uint8_t>().address();
        }
    }
    Tiler t(ctx, p, cb);
    t.m_inq = &inq;
    t.m_outq = &outq;
    t.setup();
    if (p.chunk) {
        for (uint64_t u = u0; u < u1; ++u) {
            const uint64_t c0 = (u % p.nchunks) * p.w;
            t.tile(u / p.nchunks, 1, c0, static_cast<uint32_t>(std::min<uint64_t>(p.w, static_cast<uint64_t>(p.L) - c0)));
        }
    } else {
        for (uint64_t r = u0; r < u1; r += p.k)
            t.tile(r, static_cast<uint32_t>(std::min<uint64_t>(p.k, u1 - r)), 0, static_cast<uint32_t>(p.L));
    }
}

}  // namespace sfumato::ops::ew
