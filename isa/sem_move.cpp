// Functional semantics of data movement: MTE2 (GM->UB/L1 bursts with byte-exact length and
// padding, ND->NZ into L1, whole fractals GM->L0A/L0B), MTE1 (load2d with per-fractal
// transpose, load3d = img2col, L1->UB, L1->the bias table (fp16 converted to fp32), fills) and MTE3 (UB->GM with optional atomic add, max or min,
// UB->L1, and on split parts' cube cores L1->GM; L1->FB in the FIX pipe). Byte-exact: no timing, no partial-transfer effects; atomic add rounds once per
// element in the element type (RNE for floats, wrapping for integers).
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "isa/layout.h"
#include "isa/sem_detail.h"

namespace sfumato::isa::detail {

namespace {

struct Sides {
    Pos src, dst;
};
bool sides_of(Opcode op, Sides& s) {
    switch (op) {
        case Opcode::COPY_GM_TO_UB: s = {Pos::GM, Pos::UB}; return true;
        case Opcode::COPY_GM_TO_L1: s = {Pos::GM, Pos::L1}; return true;
        case Opcode::COPY_GM_TO_L1_ND2NZ: s = {Pos::GM, Pos::L1}; return true;
        case Opcode::COPY_L1_TO_UB: s = {Pos::L1, Pos::UB}; return true;
        case Opcode::COPY_L1_TO_BT: s = {Pos::L1, Pos::BT}; return true;
        case Opcode::COPY_UB_TO_GM: s = {Pos::UB, Pos::GM}; return true;
        case Opcode::COPY_UB_TO_L1: s = {Pos::UB, Pos::L1}; return true;
        case Opcode::COPY_L1_TO_GM: s = {Pos::L1, Pos::GM}; return true;
        case Opcode::COPY_L1_TO_FB: s = {Pos::L1, Pos::FB}; return true;
        case Opcode::COPY_UB_TO_UB: s = {Pos::UB, Pos::UB}; return true;
        case Opcode::LOAD2D_GM: s = {Pos::GM, Pos::L0A}; return true;
        case Opcode::LOAD2D:
        case Opcode::LOAD3D: s = {Pos::L1, Pos::L0A}; return true;
        case Opcode::FILL: s = {Pos::L1, Pos::L1}; return true;
        default: return false;
    }
}

bool is_copy(Opcode op) { return param_kind(op) == ParamKind::Copy; }

// Bytes of one local-side burst (padding included, rounded up to 32 B).
uint64_t local_burst(const Instr& in) {
    const uint64_t es = dtype_size(in.dtype);
    return round_up(in.copy.len_bytes + (in.copy.pad_left + in.copy.pad_right) * es, kBlock);
}
uint64_t local_hull(const Instr& in, uint32_t gap_blocks) {
    const uint64_t lb = local_burst(in);
    return (in.copy.nburst - 1ull) * (lb + gap_blocks * kBlock) + lb;
}
// copy_l1_to_bt of fp16 converts to the bias table's fp32: each burst of len_bytes of fp16 in L1 becomes twice
// as many bytes of fp32 (dst_gap counts the destination's 32-byte blocks).
bool bt_widens(const Instr& in) { return in.op == Opcode::COPY_L1_TO_BT && in.dtype == DType::FP16; }
uint64_t dst_hull(const Instr& in) {
    if (!bt_widens(in)) return local_hull(in, in.copy.dst_gap);
    const uint64_t lb = 2 * local_burst(in);
    return (in.copy.nburst - 1ull) * (lb + in.copy.dst_gap * kBlock) + lb;
}
uint64_t gm_hull(const Instr& in, uint32_t gap_bytes) {
    return (in.copy.nburst - 1ull) * (in.copy.len_bytes + gap_bytes) + in.copy.len_bytes;
}

struct L3dGeom {
    uint32_t ho, wo, c0, kcols;
};
bool l3d_geom(const Instr& in, L3dGeom& g) {
    const Load3dParams& p = in.l3d;
    const int64_t eh = static_cast<int64_t>(p.dil_h) * (p.kh - 1) + 1,
                  ew = static_cast<int64_t>(p.dil_w) * (p.kw - 1) + 1;
    const int64_t hh = p.l1_h + p.pad_top + p.pad_bottom - eh, ww = p.l1_w + p.pad_left + p.pad_right - ew;
    if (hh < 0 || ww < 0 || p.stride_h == 0 || p.stride_w == 0) return false;
    g.ho = static_cast<uint32_t>(hh / p.stride_h + 1);
    g.wo = static_cast<uint32_t>(ww / p.stride_w + 1);
    g.c0 = kBlock / dtype_size(in.dtype);
    g.kcols = static_cast<uint32_t>(p.c1) * p.kh * p.kw * g.c0;
    return true;
}

void fill_value(uint8_t* p, uint64_t n_elems, DType t, double v) {
    const uint32_t es = dtype_size(t);
    uint8_t e[4];
    store_f64(t, e, v);
    for (uint64_t i = 0; i < n_elems; ++i) std::memcpy(p + i * es, e, es);
}

void exec_copy(const Instr& in, IMemView& mem) {
    const CopyParams& c = in.copy;
    const uint64_t es = dtype_size(in.dtype), lb = local_burst(in);
    switch (in.op) {
        case Opcode::COPY_GM_TO_UB:
        case Opcode::COPY_GM_TO_L1: {
            uint8_t* d = mem.local(in.dst.pos, in.dst.addr, local_hull(in, c.dst_gap));
            for (uint32_t i = 0; i < c.nburst; ++i) {
                uint8_t* b = d + i * (lb + c.dst_gap * kBlock);
                fill_value(b, c.pad_left, in.dtype, in.scalar);
                mem.gm_read(in.src0.addr + i * static_cast<uint64_t>(c.len_bytes + c.src_gap),
                            b + c.pad_left * es, c.len_bytes);
                const uint64_t end = c.pad_left * es + c.len_bytes;
                fill_value(b + end, c.pad_right, in.dtype, in.scalar);
                std::fill(b + end + c.pad_right * es, b + lb, uint8_t{0});
            }
            return;
        }
        case Opcode::COPY_UB_TO_GM:
        case Opcode::COPY_L1_TO_GM: {  // atomic only from UB (validate_move)
            const uint8_t* s = mem.local(in.src0.pos, in.src0.addr, local_hull(in, c.src_gap));
            uint8_t buf[256];
            for (uint32_t i = 0; i < c.nburst; ++i) {
                const uint8_t* b = s + i * (lb + c.src_gap * kBlock);
                const uint64_t g = in.dst.addr + i * static_cast<uint64_t>(c.len_bytes + c.dst_gap);
                if (!c.atomic) {
                    mem.gm_write(g, b, c.len_bytes);
                    continue;
                }
                for (uint64_t off = 0; off < c.len_bytes; off += sizeof buf) {
                    const uint64_t n = std::min<uint64_t>(sizeof buf, c.len_bytes - off);
                    mem.gm_read(g + off, buf, n);
                    for (uint64_t e = 0; e + es <= n; e += es) {
                        const double x = load_f64(in.dtype, buf + e), y = load_f64(in.dtype, b + off + e);
                        if (c.atomic == 2 || c.atomic == 3)  // max / min: one of the two values, exact
                            store_f64(in.dtype, buf + e, (c.atomic == 2) == (y > x) ? y : x);
                        else if (is_int(in.dtype))
                            store_wrap(in.dtype, buf + e, static_cast<int64_t>(x) + static_cast<int64_t>(y));
                        else
                            store_f64(in.dtype, buf + e, x + y);
                    }
                    mem.gm_write(g + off, buf, n);
                }
            }
            return;
        }
        case Opcode::COPY_L1_TO_BT:
            if (bt_widens(in)) {
                const uint8_t* s = mem.local(in.src0.pos, in.src0.addr, local_hull(in, c.src_gap));
                uint8_t* d = mem.local(in.dst.pos, in.dst.addr, dst_hull(in));
                for (uint32_t i = 0; i < c.nburst; ++i) {
                    const uint8_t* b = s + i * (lb + c.src_gap * kBlock);
                    uint8_t* o = d + i * (2 * lb + c.dst_gap * kBlock);
                    for (uint64_t e = 0; e < lb / 2; ++e) store_f64(DType::FP32, o + 4 * e, load_f64(DType::FP16, b + 2 * e));
                }
                return;
            }
            [[fallthrough]];
        default: {  // local -> local
            const uint8_t* s = mem.local(in.src0.pos, in.src0.addr, local_hull(in, c.src_gap));
            uint8_t* d = mem.local(in.dst.pos, in.dst.addr, local_hull(in, c.dst_gap));
            for (uint32_t i = 0; i < c.nburst; ++i)
                std::memmove(d + i * (lb + c.dst_gap * kBlock), s + i * (lb + c.src_gap * kBlock), lb);
            return;
        }
    }
}

void exec_nd2nz(const Instr& in, IMemView& mem) {
    const NdNzParams& p = in.nd;
    const uint32_t es = dtype_size(in.dtype), c0 = kBlock / es;
    Extent ex[kMaxExtents];
    footprint_move(in, ex);
    uint8_t* d = mem.local(ex[1].pos, ex[1].lo, ex[1].hi - ex[1].lo);
    for (uint32_t m = 0; m < p.nd_num; ++m)
        for (uint32_t r = 0; r < p.n; ++r)
            for (uint32_t g = 0; g * c0 < p.d; ++g) {
                uint8_t* blk = d + (static_cast<uint64_t>(m) * p.dst_nd_stride +
                                    static_cast<uint64_t>(g) * p.dst_c0_stride +
                                    static_cast<uint64_t>(r) * p.dst_n_stride) *
                                       kBlock;
                const uint32_t cols = std::min(c0, p.d - g * c0);
                const uint64_t src = in.src0.addr + (static_cast<uint64_t>(m) * p.src_nd_stride +
                                                     static_cast<uint64_t>(r) * p.src_d + g * c0) *
                                                        es;
                mem.gm_read(src, blk, cols * es);
                std::fill(blk + cols * es, blk + kBlock, uint8_t{0});
            }
}

void transpose_fractal(const uint8_t* s, uint8_t* d) {
    for (uint32_t i = 0; i < 16; ++i)
        for (uint32_t j = 0; j < 16; ++j) std::memcpy(d + (j * 16 + i) * 2, s + (i * 16 + j) * 2, 2);
}

// One square of two fractals (4-byte: side by side, 16 x 16; 1-byte: stacked, 32 x 32)
// transposed and split the same way into d0 and d1.
void transpose_square(const uint8_t* s, uint8_t* d0, uint8_t* d1, uint32_t es) {
    const uint32_t rows = es == 4 ? 16 : 32, cols = rows;  // square side
    const uint32_t fr = 16, fc = kFractalBytes / es / fr;  // fractal rows x columns
    auto at = [&](uint32_t r, uint32_t c) {               // element (r, c) of the source square
        return es == 4 ? s + ((c / fc) * fr * fc + r * fc + c % fc) * es : s + (r * fc + c) * es;
    };
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c) {
            // Transposed element (c, r) lands in the output split like the input.
            const uint32_t tr = c, tc = r;
            uint8_t* o = es == 4 ? (tc / fc ? d1 : d0) + (tr * fc + tc % fc) * es
                                 : (tr / fr ? d1 : d0) + ((tr % fr) * fc + tc) * es;
            std::memcpy(o, at(r, c), es);
        }
}

// One int4 square of four 16 x 64 fractals stacked (64 x 64 nibbles, element 2i in the low nibble of byte
// i) transposed and split the same way into the four fractals d[0..3] (the vendor's LoadDataWithTranspose
// of int4b_t into L0B).
void transpose_square_int4(const uint8_t* s, uint8_t* const d[4]) {
    constexpr uint32_t side = 64, fr = 16;
    for (uint32_t r = 0; r < side; ++r)
        for (uint32_t c = 0; c < side; ++c) {
            const uint32_t si = r * side + c;
            const uint8_t v = static_cast<uint8_t>((s[si / 2] >> (4 * (si % 2))) & 0xfu);
            const uint32_t tr = c, tc = r, oi = (tr % fr) * side + tc;  // transposed element (c, r)
            uint8_t& o = d[tr / fr][oi / 2];
            const uint32_t sh = 4 * (oi % 2);
            o = static_cast<uint8_t>((o & ~(0xfu << sh)) | (uint32_t{v} << sh));
        }
}

void exec_load2d(const Instr& in, IMemView& mem) {
    const Load2dParams& p = in.l2d;
    Extent ex[kMaxExtents];
    footprint_move(in, ex);
    uint8_t* d = mem.local(ex[1].pos, ex[1].lo, ex[1].hi - ex[1].lo);
    const uint8_t* s = in.op == Opcode::LOAD2D ? mem.local(ex[0].pos, ex[0].lo, ex[0].hi - ex[0].lo) : nullptr;
    if (load2d_squares(in) && in.dtype == DType::INT4) {
        uint8_t tmp[4 * kFractalBytes];
        for (uint32_t i = 0; i < p.repeat; ++i) {
            std::memcpy(tmp, s + static_cast<uint64_t>(i) * p.src_stride * sizeof tmp, sizeof tmp);
            uint8_t* f0 = d + static_cast<uint64_t>(i) * (1 + p.dst_gap) * kFractalBytes;
            uint8_t* const fs[4] = {f0, f0 + (1 + p.frac_gap) * uint64_t{kFractalBytes},
                                    f0 + 2 * (1 + p.frac_gap) * uint64_t{kFractalBytes},
                                    f0 + 3 * (1 + p.frac_gap) * uint64_t{kFractalBytes}};
            transpose_square_int4(tmp, fs);
        }
        return;
    }
    if (load2d_squares(in)) {
        uint8_t tmp[2 * kFractalBytes];
        for (uint32_t i = 0; i < p.repeat; ++i) {
            std::memcpy(tmp, s + static_cast<uint64_t>(i) * p.src_stride * 2 * kFractalBytes, sizeof tmp);
            uint8_t* f0 = d + static_cast<uint64_t>(i) * (1 + p.dst_gap) * kFractalBytes;
            transpose_square(tmp, f0, f0 + (1 + p.frac_gap) * uint64_t{kFractalBytes}, dtype_size(in.dtype));
        }
        return;
    }
    uint8_t tmp[kFractalBytes];
    for (uint32_t i = 0; i < p.repeat; ++i) {
        const uint64_t rel =
            static_cast<uint64_t>(i) * p.src_stride * kFractalBytes;  // from fractal start_index
        if (s)
            std::memcpy(tmp, s + rel, kFractalBytes);
        else
            mem.gm_read(in.src0.addr + p.start_index * uint64_t{kFractalBytes} + rel, tmp, kFractalBytes);
        uint8_t* f = d + static_cast<uint64_t>(i) * (1 + p.dst_gap) * kFractalBytes;
        if (p.transpose)
            transpose_fractal(tmp, f);
        else
            std::memcpy(f, tmp, kFractalBytes);
    }
}

void exec_load3d(const Instr& in, IMemView& mem) {
    const Load3dParams& p = in.l3d;
    L3dGeom g;
    l3d_geom(in, g);
    const uint32_t es = dtype_size(in.dtype), k1 = p.k_ext / g.c0, m1 = p.m_ext / 16;
    const bool to_b = in.dst.pos == Pos::L0B;
    Extent ex[kMaxExtents];
    footprint_move(in, ex);
    const uint8_t* s = mem.local(ex[0].pos, ex[0].lo, ex[0].hi - ex[0].lo);
    uint8_t* d = mem.local(ex[1].pos, ex[1].lo, ex[1].hi - ex[1].lo);
    uint8_t pad[4];
    store_f64(in.dtype, pad, in.scalar);
    for (uint32_t mi = 0; mi < p.m_ext; ++mi) {
        const uint32_t m = p.m_start + mi;
        for (uint32_t ki = 0; ki < p.k_ext; ++ki) {
            const uint32_t k = p.k_start + ki;
            uint8_t* o;
            if (to_b && p.transpose) {  // B (K = pixels, N = columns), ZN; N padded to 16, pad untouched
                o = d + zn_offset(mi, ki, round_up16(p.k_ext), g.c0, es);
            } else if (p.transpose) {  // A (M = columns, K = pixels), ZZ; M padded to 16, pad untouched
                o = d + zz_offset(ki, mi, p.m_ext, g.c0, es);
            } else {
                const uint64_t frac = to_b ? uint64_t{ki / g.c0} * m1 + mi / 16 : uint64_t{mi / 16} * k1 + ki / g.c0;
                o = d + (frac * 16 * g.c0 + (mi % 16) * g.c0 + ki % g.c0) * es;
            }
            if (m >= g.ho * g.wo || k >= g.kcols) {
                std::memset(o, 0, es);
                continue;
            }
            const uint32_t c0i = k % g.c0, x = (k / g.c0) % p.kw, y = (k / g.c0 / p.kw) % p.kh,
                           c1i = k / g.c0 / p.kw / p.kh;
            const int64_t ih =
                static_cast<int64_t>(m / g.wo) * p.stride_h - p.pad_top + static_cast<int64_t>(y) * p.dil_h;
            const int64_t iw =
                static_cast<int64_t>(m % g.wo) * p.stride_w - p.pad_left + static_cast<int64_t>(x) * p.dil_w;
            if (ih < 0 || iw < 0 || ih >= p.l1_h || iw >= p.l1_w) {
                std::memcpy(o, pad, es);
                continue;
            }
            const uint64_t si = ((static_cast<uint64_t>(c1i) * p.l1_h + static_cast<uint64_t>(ih)) * p.l1_w +
                                 static_cast<uint64_t>(iw)) *
                                    g.c0 +
                                c0i;
            std::memcpy(o, s + si * es, es);
        }
    }
}

void exec_fill(const Instr& in, IMemView& mem) {
    const FillParams& p = in.fill;
    uint8_t* d = mem.local(in.dst.pos, in.dst.addr,
                           ((p.repeat - 1ull) * (p.blk_num + p.dst_gap) + p.blk_num) * kBlock);
    for (uint32_t r = 0; r < p.repeat; ++r)
        fill_value(d + static_cast<uint64_t>(r) * (p.blk_num + p.dst_gap) * kBlock,
                   p.blk_num * kBlock / dtype_size(in.dtype), in.dtype, in.scalar);
}

}  // namespace

std::string validate_move(const Instr& in) {
    Sides s;
    if (!sides_of(in.op, s)) return "";
    if (in.dtype >= DType::kCount) return "bad dtype";
    if (is_copy(in.op)) {
        const CopyParams& c = in.copy;
        if (c.nburst == 0 || c.len_bytes == 0) return "copy with zero bursts or zero burst length";
        if ((c.pad_left || c.pad_right) && in.op != Opcode::COPY_GM_TO_UB)
            return "padding only on copy_gm_to_ub";
        if (c.atomic && in.op != Opcode::COPY_UB_TO_GM) return "atomic only on copy_ub_to_gm";
        if (c.atomic > 3) return "atomic must be 0 (none), 1 (add), 2 (max) or 3 (min)";
        if (c.atomic && c.len_bytes % dtype_size(in.dtype))
            return "atomic add length not a whole number of elements";
        if (in.op == Opcode::COPY_L1_TO_BT && in.dtype != DType::FP32 && in.dtype != DType::INT32 &&
            in.dtype != DType::FP16)
            return "copy_l1_to_bt moves fp32 or int32, or converts fp16 to fp32";
        if (in.src0.pos != s.src) return bad_pos(in, "src0", in.src0.pos);
        if (in.dst.pos != s.dst) return bad_pos(in, "dst", in.dst.pos);
        return "";
    }
    switch (in.op) {
        case Opcode::COPY_GM_TO_L1_ND2NZ: {
            const NdNzParams& p = in.nd;
            if (p.nd_num == 0 || p.n == 0 || p.d == 0) return "nd2nz with an empty matrix";
            if (p.src_d < p.d) return "nd2nz src_d smaller than d";
            if (p.dst_n_stride == 0 ||
                (p.d > kBlock / dtype_size(in.dtype) && p.dst_c0_stride < p.n * p.dst_n_stride))
                return "nd2nz destination strides overlap";
            if (in.src0.pos != Pos::GM) return bad_pos(in, "src0", in.src0.pos);
            if (in.dst.pos != Pos::L1) return bad_pos(in, "dst", in.dst.pos);
            return "";
        }
        case Opcode::LOAD2D_GM:
        case Opcode::LOAD2D: {
            const Load2dParams& p = in.l2d;
            if (p.repeat < 1 || p.repeat > 255)
                return "repeat " + std::to_string(p.repeat) + " outside 1..255";
            if (p.transpose && dtype_size(in.dtype) != 2 && in.op == Opcode::LOAD2D_GM)
                return "load2d_gm transpose needs a 16-bit dtype";
            if (in.dtype == DType::INT4 && (!p.transpose || in.op != Opcode::LOAD2D || in.dst.pos != Pos::L0B))
                return "int4 load2d only transposing from L1 into L0B (untransposed int4 moves as int8)";
            if (p.transpose && dtype_size(in.dtype) != 1 && dtype_size(in.dtype) != 2 && dtype_size(in.dtype) != 4 &&
                in.dtype != DType::INT4)
                return "load2d transpose needs a 1-, 2- or 4-byte dtype or int4";
            if (p.frac_gap && !load2d_squares(in)) return "load2d frac_gap only with a 1-byte, 4-byte or int4 transpose";
            if (in.src0.pos != s.src) return bad_pos(in, "src0", in.src0.pos);
            if (in.dst.pos != Pos::L0A && in.dst.pos != Pos::L0B) return bad_pos(in, "dst", in.dst.pos);
            return "";
        }
        case Opcode::LOAD3D: {
            L3dGeom g;
            if (!l3d_geom(in, g)) return "load3d: kernel window larger than the padded image, or zero stride";
            if (in.l3d.kh == 0 || in.l3d.kw == 0 || in.l3d.dil_h == 0 || in.l3d.dil_w == 0 || in.l3d.c1 == 0)
                return "load3d: zero kernel, dilation or channel count";
            if (in.l3d.m_ext == 0 || in.l3d.m_ext % 16 || in.l3d.k_ext == 0 || in.l3d.k_ext % g.c0)
                return "load3d: m_ext must be a multiple of 16 and k_ext of C0";
            // 910B-class load3dv2 takes 1-, 2- and 4-byte floats (fp32 with C0 = 8); int32 not here.
            if (in.dtype == DType::INT32) return bad_dtype(in, in.dtype);
            if (in.src0.pos != Pos::L1) return bad_pos(in, "src0", in.src0.pos);
            if (in.dst.pos == Pos::L0B && dtype_size(in.dtype) == 1) return "load3d into L0B needs a 2- or 4-byte dtype";
            if (in.l3d.transpose && dtype_size(in.dtype) == 1) return "load3d transpose needs a 2- or 4-byte dtype";
            if (in.dst.pos != Pos::L0A && in.dst.pos != Pos::L0B) return bad_pos(in, "dst", in.dst.pos);
            return "";
        }
        case Opcode::FILL:
            if (in.fill.repeat == 0 || in.fill.blk_num == 0) return "fill with zero repeat or zero blocks";
            if (in.dst.pos != Pos::L1 && in.dst.pos != Pos::L0A && in.dst.pos != Pos::L0B)
                return bad_pos(in, "dst", in.dst.pos);
            return "";
        default: return "";
    }
}

int footprint_move(const Instr& in, Extent out[kMaxExtents]) {
    Sides s;
    if (!sides_of(in.op, s)) return 0;
    if (is_copy(in.op)) {
        const CopyParams& c = in.copy;
        const bool gm_src = in.src0.pos == Pos::GM, gm_dst = in.dst.pos == Pos::GM;
        out[0] = {in.src0.pos, in.src0.addr,
                  in.src0.addr + (gm_src ? gm_hull(in, c.src_gap) : local_hull(in, c.src_gap)), false};
        out[1] = {in.dst.pos, in.dst.addr, in.dst.addr + (gm_dst ? gm_hull(in, c.dst_gap) : dst_hull(in)), true};
        return 2;
    }
    switch (in.op) {
        case Opcode::COPY_GM_TO_L1_ND2NZ: {
            const NdNzParams& p = in.nd;
            const uint64_t es = dtype_size(in.dtype), c0 = kBlock / es, groups = (p.d + c0 - 1) / c0;
            out[0] = {
                in.src0.pos, in.src0.addr,
                in.src0.addr + ((p.nd_num - 1ull) * p.src_nd_stride + (p.n - 1ull) * p.src_d + p.d) * es,
                false};
            const uint64_t hi = ((p.nd_num - 1ull) * p.dst_nd_stride + (groups - 1) * p.dst_c0_stride +
                                 (p.n - 1ull) * p.dst_n_stride + 1) *
                                kBlock;
            out[1] = {in.dst.pos, in.dst.addr, in.dst.addr + hi, true};
            return 2;
        }
        case Opcode::LOAD2D_GM:
        case Opcode::LOAD2D: {
            const Load2dParams& p = in.l2d;
            // A square is two fractals (1- and 4-byte types) or four (int4); the last repeat's fractals end
            // (fractals - 1) x (1 + frac_gap) + 1 fractals after its first begins.
            const uint64_t fracs = load2d_fractals(in);
            const uint64_t unit = fracs * kFractalBytes;
            const uint64_t tail = (fracs - 1) * (1 + p.frac_gap) + 1;
            out[0] = {in.src0.pos, in.src0.addr + p.start_index * unit,
                      in.src0.addr + (p.start_index + (p.repeat - 1ull) * p.src_stride + 1) * unit, false};
            out[1] = {in.dst.pos, in.dst.addr,
                      in.dst.addr + ((p.repeat - 1ull) * (1 + p.dst_gap) + tail) * kFractalBytes, true};
            return 2;
        }
        case Opcode::LOAD3D: {
            const Load3dParams& p = in.l3d;
            const uint64_t es = dtype_size(in.dtype), c0 = kBlock / es;
            out[0] = {in.src0.pos, in.src0.addr,
                      in.src0.addr + static_cast<uint64_t>(p.c1) * p.l1_h * p.l1_w * c0 * es, false};
            // Transposed, the columns (k_ext) become rows of whole 16-row fractals.
            const uint64_t k_rows = p.transpose ? round_up16(p.k_ext) : p.k_ext;
            out[1] = {in.dst.pos, in.dst.addr, in.dst.addr + static_cast<uint64_t>(p.m_ext) * k_rows * es, true};
            return 2;
        }
        case Opcode::FILL: {
            const FillParams& p = in.fill;
            out[0] = {in.dst.pos, in.dst.addr,
                      in.dst.addr + ((p.repeat - 1ull) * (p.blk_num + p.dst_gap) + p.blk_num) * kBlock, true};
            return 1;
        }
        default: return 0;
    }
}

void exec_move(const Instr& in, IMemView& mem) {
    if (is_copy(in.op)) return exec_copy(in, mem);
    switch (in.op) {
        case Opcode::COPY_GM_TO_L1_ND2NZ: return exec_nd2nz(in, mem);
        case Opcode::LOAD2D_GM:
        case Opcode::LOAD2D: return exec_load2d(in, mem);
        case Opcode::LOAD3D: return exec_load3d(in, mem);
        case Opcode::FILL: return exec_fill(in, mem);
        default: return;
    }
}

}  // namespace sfumato::isa::detail
