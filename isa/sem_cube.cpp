// Functional semantics of the Cube (mad) and of the accumulator drain (FixPipe, and L0C->UB
// on coupled cores). Layouts (see isa/layout.h): A (m x k) in L0A as ZZ, B (k x n) in L0B as
// ZN, C (m x n) in L0C as NZ with 16x16 fractals of fp32/int32; K0 = 32 B / input size.
// mad computes every output of the touched fractals (rows/columns past m/n come from whatever
// the padded fractal rows hold, as on the chip) over exactly k products. Each dot product is
// formed in double (fp16/bf16 products are exact there; sums stay exact unless magnitudes span
// more than ~30 binades; int8 and int4 are exact in int64), plus the previous C or the bias, then rounded
// once into fp32 (or wrapped into int32). The chip accumulates fractal by fractal in fp32, so
// deep-k results may differ from it in the last fp32 bit. FixPipe: scale (quant), then ReLU, then one RNE
// cast to the output type, saturating for integers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "isa/layout.h"
#include "isa/sem_detail.h"

namespace sfumato::isa::detail {

namespace {

bool is_fix(Opcode op) { return op == Opcode::FIXPIPE || op == Opcode::COPY_L0C_TO_UB; }

// Fractals from one row block of A to the next in L0A: ceil(k / K0), or with kalign16 (fp32) k
// rounded up to 16, two fractals per 16.
uint32_t mad_a_row_fractals(const Instr& in) {
    const MadParams& p = in.mad;
    return p.kalign16 ? ceil_div(p.k, 16) * 2 : ceil_div(p.k, cube_k0(in.dtype));
}
uint64_t mad_a_bytes(const Instr& in) {
    const MadParams& p = in.mad;
    if (p.gemv) return uint64_t{ceil_div(ceil_div(p.k * dtype_bits(in.dtype), 8), kFractalBytes)} * kFractalBytes;
    // The last row block's padding fractals are not read.
    return ((ceil_div(p.m, 16) - 1ull) * mad_a_row_fractals(in) + ceil_div(p.k, cube_k0(in.dtype))) *
           kFractalBytes;
}
uint64_t mad_b_bytes(const Instr& in) {
    const MadParams& p = in.mad;
    return uint64_t{ceil_div(p.k, cube_k0(in.dtype))} * ceil_div(p.n, 16) * kFractalBytes;
}
uint64_t mad_c_bytes(const Instr& in) {
    return uint64_t{ceil_div(in.mad.m, 16)} * ceil_div(in.mad.n, 16) * 16 * 16 * 4;
}

// Operands are decoded once into per-thread scratch rows (A by row, B by column), reused across
// instructions, so the inner loop is a plain dot product. An int4 element's offset is taken in
// elements (es 1) and read as a nibble.
double mad_elem(DType t, const uint8_t* base, uint64_t elem_off, uint32_t es) {
    return t == DType::INT4 ? int4_get(base, elem_off) : load_f64(t, base + elem_off * es);
}

void exec_mad(const Instr& in, IMemView& mem) {
    const MadParams& p = in.mad;
    const DType t = in.dtype;
    const uint32_t es = dtype_size(t), k0 = cube_k0(t), K = p.k;
    const uint32_t m1 = ceil_div(p.m, 16), a_row = mad_a_row_fractals(in), n1 = ceil_div(p.n, 16);
    const uint8_t* a = mem.local(in.src0.pos, in.src0.addr, mad_a_bytes(in));
    const uint8_t* b = mem.local(in.src1.pos, in.src1.addr, mad_b_bytes(in));
    uint8_t* c = mem.local(in.dst.pos, in.dst.addr, mad_c_bytes(in));
    const uint8_t* bias = p.bias ? mem.local(in.src2.pos, in.src2.addr, uint64_t{n1} * 16 * 4) : nullptr;
    const bool integer = t == DType::INT8 || t == DType::INT4;
    const DType ct = integer ? DType::INT32 : DType::FP32;
    thread_local std::vector<double> sa, sb;
    // GEMV: the row vector is contiguous and only C's row 0 is computed.
    const uint32_t rows = p.gemv ? 1 : m1 * 16;
    sa.resize(uint64_t{rows} * K);
    sb.resize(uint64_t{n1} * 16 * K);
    for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t kk = 0; kk < K; ++kk)
            sa[uint64_t{i} * K + kk] =
                mad_elem(t, a, p.gemv ? uint64_t{kk} : zz_offset(i, kk, a_row * k0, k0, 1), es);
    for (uint32_t j = 0; j < n1 * 16; ++j)
        for (uint32_t kk = 0; kk < K; ++kk)
            sb[uint64_t{j} * K + kk] = mad_elem(t, b, zn_offset(kk, j, n1 * 16, k0, 1), es);
    for (uint32_t i = 0; i < rows; ++i) {
        const double* ra = &sa[uint64_t{i} * K];
        for (uint32_t j = 0; j < n1 * 16; ++j) {
            const double* rb = &sb[uint64_t{j} * K];
            uint8_t* o = c + nz_offset(i, j, m1 * 16, 16, 4);
            double init = 0.0;
            if (p.accumulate)
                init = load_f64(ct, o);
            else if (bias)
                init = load_f64(ct, bias + j * 4);
            if (integer) {
                int64_t acc = static_cast<int64_t>(init);
                for (uint32_t kk = 0; kk < K; ++kk)
                    acc += static_cast<int64_t>(ra[kk]) * static_cast<int64_t>(rb[kk]);
                store_wrap(ct, o, acc);
            } else {
                // Four interleaved partial sums (fixed order: deterministic), then the old value.
                double s[4] = {0, 0, 0, 0};
                uint32_t kk = 0;
                for (; kk + 4 <= K; kk += 4)
                    for (int q = 0; q < 4; ++q) s[q] += ra[kk + q] * rb[kk + q];
                for (; kk < K; ++kk) s[kk % 4] += ra[kk] * rb[kk];
                store_f64(ct, o, ((s[0] + s[1]) + (s[2] + s[3])) + init);
            }
        }
    }
}

// Bytes of one per-channel quantisation word (instr.h: FixpipeParams).
constexpr uint64_t kQuantWord = 8;

// The scale of column j's quantisation word: bits 31..13 as an fp32 whose low 13 bits are 0.
double quant_word_scale(const uint8_t* words, uint32_t j) {
    uint64_t w;
    std::memcpy(&w, words + j * kQuantWord, sizeof w);
    if ((w >> 32) & 0x3fff)
        throw std::invalid_argument("fixpipe: the quantisation word of column " + std::to_string(j) +
                                    " has a shift or an offset (bits 32..45), which are not modelled");
    const uint32_t bits = static_cast<uint32_t>(w) & 0xffffe000u;
    float s;
    std::memcpy(&s, &bits, sizeof s);
    return s;
}

// One output element of FixPipe from an accumulator value.
double fix_value(const Instr& in, double v, const uint8_t* scales, uint32_t j) {
    const FixpipeParams& p = in.fix;
    if (p.quant == QuantMode::SCALAR)
        v *= in.scalar;
    else if (p.quant == QuantMode::VECTOR)
        v *= quant_word_scale(scales, j);
    if (p.relu && !(v >= 0) && !std::isnan(v)) v = 0.0;
    return v;
}

// L0C bytes from one source matrix to the next, and their span (every matrix's column fractals).
uint64_t fix_src_nd_bytes(const FixpipeParams& p) { return uint64_t{p.src_nd_stride} * 1024; }
uint64_t fix_src_hull(const FixpipeParams& p) {
    return (p.nd_num - 1ull) * fix_src_nd_bytes(p) + ceil_div(p.n, 16) * uint64_t{p.src_stride} * 64;
}

uint64_t fix_dst_hull(const Instr& in) {
    const FixpipeParams& p = in.fix;
    const uint64_t eo = dtype_size(p.out_dtype);
    if (p.nz2nd) return (p.nd_num - 1ull) * p.dst_nd_stride * eo + ((p.m - 1ull) * p.dst_stride + p.n) * eo;
    const uint64_t c0 = fix_nz_c0(p), groups = (p.n + c0 - 1) / c0;
    return (groups - 1) * p.dst_stride * kBlock + uint64_t{p.m} * fix_nz_row_bytes(p);
}

// GM[addr, addr + len) += vals, element by element in type t, each sum rounded once to t.
void gm_atomic_add(IMemView& mem, DType t, uint64_t addr, const uint8_t* vals, uint64_t len) {
    uint8_t old[1024];
    const uint32_t es = dtype_size(t);
    mem.gm_read(addr, old, len);
    for (uint64_t e = 0; e + es <= len; e += es) {
        if (is_int(t))
            store_wrap(t, old + e,
                       static_cast<int64_t>(load_f64(t, old + e)) + static_cast<int64_t>(load_f64(t, vals + e)));
        else
            store_f64(t, old + e, load_f64(t, old + e) + load_f64(t, vals + e));
    }
    mem.gm_write(addr, old, len);
}

// One m x n matrix of L0C at c to the destination at byte offset `base` of dst (d: local, else GM).
void fix_matrix(const Instr& in, IMemView& mem, const uint8_t* c, const uint8_t* scales, uint8_t* d,
                uint64_t base) {
    const FixpipeParams& p = in.fix;
    const uint32_t eo = dtype_size(p.out_dtype), c0 = fix_nz_c0(p), rb = fix_nz_row_bytes(p);
    const bool to_gm = in.dst.pos == Pos::GM;
    uint8_t row[1024];
    for (uint32_t i = 0; i < p.m; ++i) {
        // Output is produced in chunks that are contiguous at the destination: a run of ND
        // row elements, or one row of an NZ column group (32 B, or 64 B for a 4-byte type).
        const uint32_t chunk = p.nz2nd ? static_cast<uint32_t>(sizeof row) / eo : c0;
        for (uint32_t j0 = 0; j0 < p.n; j0 += chunk) {
            const uint32_t cols = std::min(chunk, p.n - j0);
            for (uint32_t j = j0; j < j0 + cols; ++j) {
                const uint8_t* src = c + (j / 16) * uint64_t{p.src_stride} * 64 + i * 64ull + (j % 16) * 4ull;
                store_f64(p.out_dtype, row + (j - j0) * eo,
                          fix_value(in, load_f64(in.dtype, src), scales, j));
            }
            const uint64_t off =
                base + (p.nz2nd ? (uint64_t{i} * p.dst_stride + j0) * eo
                                : uint64_t{j0 / c0} * p.dst_stride * kBlock + uint64_t{i} * rb);
            const uint64_t len = p.nz2nd ? uint64_t{cols} * eo : rb;
            if (!p.nz2nd) std::fill(row + cols * eo, row + rb, uint8_t{0});
            if (to_gm && p.atomic)
                gm_atomic_add(mem, p.out_dtype, in.dst.addr + off, row, len);
            else if (to_gm)
                mem.gm_write(in.dst.addr + off, row, len);
            else
                std::memcpy(d + off, row, len);
        }
    }
}

void exec_fix(const Instr& in, IMemView& mem) {
    const FixpipeParams& p = in.fix;
    const uint8_t* c = mem.local(in.src0.pos, in.src0.addr, fix_src_hull(p));
    const uint8_t* scales =
        p.quant == QuantMode::VECTOR ? mem.local(in.src1.pos, in.src1.addr, p.n * kQuantWord) : nullptr;
    uint8_t* d = in.dst.pos == Pos::GM ? nullptr : mem.local(in.dst.pos, in.dst.addr, fix_dst_hull(in));
    const uint64_t dst_nd = uint64_t{p.dst_nd_stride} * dtype_size(p.out_dtype);
    for (uint32_t q = 0; q < p.nd_num; ++q)
        fix_matrix(in, mem, c + q * fix_src_nd_bytes(p), scales, d, q * dst_nd);
}

}  // namespace

std::string validate_cube(const Instr& in) {
    if (in.op == Opcode::MAD) {
        const MadParams& p = in.mad;
        if (p.m == 0 || p.k == 0 || p.n == 0) return "mad with zero m, k or n";
        if (in.dtype != DType::FP16 && in.dtype != DType::BF16 && in.dtype != DType::FP32 &&
            in.dtype != DType::INT8 && in.dtype != DType::INT4)
            return bad_dtype(in, in.dtype);
        if (p.bias && p.accumulate) return "mad: bias only when not accumulating";
        if (p.accumulate > 1 || p.bias > 1) return "mad: accumulate and bias are 0 or 1";
        if (p.gemv > 1 || (p.gemv && p.m != 1)) return "mad: gemv is 0 or 1, and 1 only with m = 1";
        if (p.kalign16 > 1 || (p.kalign16 && (in.dtype != DType::FP32 || p.gemv)))
            return "mad: kalign is 0 or 1, and 1 only with fp32 operands outside GEMV";
        if (in.src0.pos != Pos::L0A) return bad_pos(in, "src0", in.src0.pos);
        if (in.src1.pos != Pos::L0B) return bad_pos(in, "src1", in.src1.pos);
        if (in.dst.pos != Pos::L0C) return bad_pos(in, "dst", in.dst.pos);
        if (p.bias && in.src2.pos != Pos::BT) return bad_pos(in, "src2", in.src2.pos);
        if (p.unit_flag != 0 && p.unit_flag != 2 && p.unit_flag != 3) return "mad: unit flag is 0, 2 or 3";
        return "";
    }
    if (is_fix(in.op)) {
        const FixpipeParams& p = in.fix;
        if (p.m == 0 || p.n == 0) return "fixpipe with zero m or n";
        if (in.dtype != DType::FP32 && in.dtype != DType::INT32) return bad_dtype(in, in.dtype);
        if (p.out_dtype >= DType::kCount || p.out_dtype == DType::INT4 || p.quant >= QuantMode::kCount)
            return "fixpipe: bad out dtype or quant mode";
        if (p.src_stride < ceil_div(p.m, 16) * 16)
            return "fixpipe: src_stride smaller than m rounded up to 16";
        if (p.nz2nd && p.dst_stride < p.n) return "fixpipe: ND dst_stride smaller than n";
        if (p.atomic > 1) return "fixpipe: atomic must be 0 or 1";
        if (p.unit_flag != 0 && p.unit_flag != 2 && p.unit_flag != 3)
            return "fixpipe: unit flag is 0, 2 or 3";
        if (p.unit_flag && in.op != Opcode::FIXPIPE) return "copy_l0c_to_ub: no unit flag (the FixPipe's)";
        if (p.nd_num == 0 || (p.nd_num > 1 && !p.nz2nd))
            return "fixpipe: nd_num is 1..65535, above 1 only with nz2nd";
        if (p.nd_num > 1 && (p.src_nd_stride == 0 || p.src_nd_stride > 512 || p.dst_nd_stride == 0))
            return "fixpipe: nd_num > 1 needs srcnd 1..512 (blocks of 1024 B) and dstnd >= 1 (elements)";
        if (p.atomic && (in.op != Opcode::FIXPIPE || in.dst.pos != Pos::GM)) return "fixpipe: atomic add only into GM";
        if (p.atomic && p.relu) return "fixpipe: atomic add with ReLU (a partial sum must not be clipped)";
        if (p.channel_split > 1) return "fixpipe: channel_split must be 0 or 1";
        if (p.channel_split && (p.nz2nd || p.out_dtype != DType::FP32))
            return "fixpipe: channel_split only with an NZ fp32 output";
        if (!p.nz2nd && p.n > fix_nz_c0(p) &&
            uint64_t{p.dst_stride} * kBlock < uint64_t{p.m} * fix_nz_row_bytes(p))
            return "fixpipe: NZ dst_stride (blocks of 32 B) smaller than m rows of a column group";
        if (in.src0.pos != Pos::L0C) return bad_pos(in, "src0", in.src0.pos);
        if (p.quant == QuantMode::VECTOR && in.src1.pos != Pos::FB && in.src1.pos != Pos::UB)
            return bad_pos(in, "src1", in.src1.pos);
        const bool ok = in.op == Opcode::FIXPIPE ? (in.dst.pos == Pos::GM || in.dst.pos == Pos::L1)
                                                 : in.dst.pos == Pos::UB;
        return ok ? "" : bad_pos(in, "dst", in.dst.pos);
    }
    return "";
}

int footprint_cube(const Instr& in, Extent out[kMaxExtents]) {
    if (in.op == Opcode::MAD) {
        int n = 0;
        out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + mad_a_bytes(in), false};
        out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + mad_b_bytes(in), false};
        if (in.mad.bias)
            out[n++] = {in.src2.pos, in.src2.addr, in.src2.addr + ceil_div(in.mad.n, 16) * 64ull, false};
        out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + mad_c_bytes(in), true};
        return n;
    }
    if (is_fix(in.op)) {
        const FixpipeParams& p = in.fix;
        int n = 0;
        out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + fix_src_hull(p), false};
        if (p.quant == QuantMode::VECTOR)
            out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + p.n * kQuantWord, false};
        out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + fix_dst_hull(in), true};
        return n;
    }
    return 0;
}

void exec_cube(const Instr& in, IMemView& mem) {
    if (in.op == Opcode::MAD)
        exec_mad(in, mem);
    else if (is_fix(in.op))
        exec_fix(in, mem);
}

}  // namespace sfumato::isa::detail
