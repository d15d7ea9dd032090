// Functional semantics of the Vector pipe: masked, repeated, strided SIMD over UB.
// One repeat covers 256 B (8 blocks of 32 B); lane l of a repeat sits in block l / (32 / size)
// at the operand's block stride, repeats at the repeat stride. All sources of a repeat are
// read before its results are written, so in-place operation works as on the chip.
// Numerics: each result is computed exactly (in double, which holds every product and sum of
// two ISA floats exactly or with a harmless first rounding for + - * / sqrt) and rounded once
// to the destination type with round-to-nearest-even: fp16 ops therefore behave as fp16
// hardware, fp32 ops as fp32. Transcendentals use the host libm in double, then round once
// (within 1 ulp of the chip, which uses its own approximations). Integer add/sub/mul wrap
// (two's complement); conversions (VCONV) saturate. Float max/min ignore a nan operand
// (IEEE maxNum/minNum); relu and abs keep nan. Reductions sum in double and round once; max/min
// return the first lane index of the extreme value, counted across repeats for VREDALL_*.
// For 1-byte types (256 lanes) each mask bit covers two adjacent lanes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "isa/sem_vector_detail.h"

namespace sfumato::isa::detail {

namespace {

// Operand shapes come from isa/instr.h (vec_kind), shared with the assembler.
using VKind = VecKind;
VKind kind_of(Opcode op) { return vec_kind(op); }
bool uses_src1(Opcode op) { return vec_uses_src1(op); }
bool reads_dst(Opcode op) { return vec_reads_dst(op); }


bool float_only(Opcode op) {
    switch (op) {
        case Opcode::VDIV:
        case Opcode::VEXP:
        case Opcode::VLN:
        case Opcode::VSQRT:
        case Opcode::VRSQRT:
        case Opcode::VREC:
        case Opcode::VLRELU:
        case Opcode::VMADD:
        case Opcode::VMLA:
        case Opcode::VAXPY:
        case Opcode::VADDRELU: return true;
        default: return false;
    }
}
bool int_only(Opcode op) { return op == Opcode::VAND || op == Opcode::VOR || op == Opcode::VNOT; }

double op_float(Opcode op, double a, double b, double c, double s) {
    switch (op) {
        case Opcode::VADD: return a + b;
        case Opcode::VSUB: return a - b;
        case Opcode::VMUL: return a * b;
        case Opcode::VDIV: return a / b;
        case Opcode::VMAX: return std::fmax(a, b);
        case Opcode::VMIN: return std::fmin(a, b);
        case Opcode::VADDRELU: {
            double x = a + b;
            return std::isnan(x) ? x : std::max(x, 0.0);
        }
        case Opcode::VADDS: return a + s;
        case Opcode::VMULS: return a * s;
        case Opcode::VMAXS: return std::fmax(a, s);
        case Opcode::VMINS: return std::fmin(a, s);
        case Opcode::VLRELU: return a >= 0 || std::isnan(a) ? a : a * s;
        case Opcode::VEXP: return std::exp(a);
        case Opcode::VLN: return std::log(a);
        case Opcode::VSQRT: return std::sqrt(a);
        case Opcode::VRSQRT: return 1.0 / std::sqrt(a);
        case Opcode::VREC: return 1.0 / a;
        case Opcode::VABS: return std::fabs(a);
        case Opcode::VRELU: return std::isnan(a) ? a : std::max(a, 0.0);
        case Opcode::VMADD: return std::fma(a, c, b);  // src0 * dst + src1
        case Opcode::VMLA: return std::fma(a, b, c);   // src0 * src1 + dst
        case Opcode::VAXPY: return std::fma(a, s, c);  // src0 * scalar + dst
        case Opcode::VDUP: return s;
        default: return 0.0;
    }
}

int64_t op_int(Opcode op, int64_t a, int64_t b, int64_t s) {
    switch (op) {
        case Opcode::VADD: return a + b;
        case Opcode::VSUB: return a - b;
        case Opcode::VMUL: return a * b;
        case Opcode::VMAX: return std::max(a, b);
        case Opcode::VMIN: return std::min(a, b);
        case Opcode::VAND: return a & b;
        case Opcode::VOR: return a | b;
        case Opcode::VNOT: return ~a;
        case Opcode::VADDS: return a + s;
        case Opcode::VMULS: return a * s;
        case Opcode::VMAXS: return std::max(a, s);
        case Opcode::VMINS: return std::min(a, s);
        case Opcode::VABS: return a < 0 ? -a : a;
        case Opcode::VRELU: return std::max<int64_t>(a, 0);
        case Opcode::VDUP: return s;
        default: return 0;
    }
}

// fp32 -> fp32 vconv: the integral value the rounding mode picks (rint: nearest, ties to even;
// round: nearest, ties away from zero).
double round_integral(double a, RoundMode m) {
    switch (m) {
        case RoundMode::TRUNC: return std::trunc(a);
        case RoundMode::FLOOR: return std::floor(a);
        case RoundMode::CEIL: return std::ceil(a);
        case RoundMode::ROUND: return std::round(a);
        default: return std::nearbyint(a);
    }
}

bool compare(CmpMode m, double a, double b) {
    switch (m) {
        case CmpMode::EQ: return a == b;
        case CmpMode::NE: return a != b;
        case CmpMode::LT: return a < b;
        case CmpMode::GT: return a > b;
        case CmpMode::LE: return a <= b;
        case CmpMode::GE: return a >= b;
        default: return false;
    }
}


VecPtrs map(const Instr& in, IMemView& mem) {
    Extent ex[kMaxExtents];
    const int n = footprint_vector(in, ex);
    VecPtrs p;
    // footprint_vector lists sources first (src0, src1, src2 as used), then dst.
    for (int i = 0; i < n; ++i) {
        uint8_t* q = mem.local(ex[i].pos, ex[i].lo, ex[i].hi - ex[i].lo);
        if (ex[i].write)
            p.d = q;
        else if (!p.s0)
            p.s0 = q;
        else if (!p.s1)
            p.s1 = q;
        else
            p.s2 = q;
    }
    return p;
}

// Lanes of one repeat of one operand, block by block (no per-lane address arithmetic).
// INT4: 64 elements per 32-B block.
void load_lanes(double* x, const uint8_t* base, DType t, uint32_t lanes, uint16_t blk, const bool* on) {
    if (t == DType::INT4) {
        for (uint32_t l = 0; l < lanes; ++l)
            if (on[l]) x[l] = int4_get(base + uint64_t{l / 64} * blk * kBlock, l % 64);
        return;
    }
    const uint32_t es = dtype_size(t), epb = kBlock / es;
    for (uint32_t l0 = 0, bi = 0; l0 < lanes; l0 += epb, ++bi) {
        const uint8_t* q = base + uint64_t{bi} * blk * kBlock;
        for (uint32_t e = 0; e < epb; ++e)
            if (on[l0 + e]) x[l0 + e] = load_f64(t, q + e * es);
    }
}
template <class Store>
void store_lanes(uint8_t* base, DType t, uint32_t lanes, uint16_t blk, const bool* on, Store&& st) {
    const uint32_t es = dtype_size(t), epb = kBlock / es;
    for (uint32_t l0 = 0, bi = 0; l0 < lanes; l0 += epb, ++bi) {
        uint8_t* q = base + uint64_t{bi} * blk * kBlock;
        for (uint32_t e = 0; e < epb; ++e)
            if (on[l0 + e]) st(q + e * es, l0 + e);
    }
}

// All lanes at once (masked lanes compute on stale values and are not stored); the common
// ops get tight loops, the rest go through op_float per lane.
void compute_float(Opcode op, uint32_t n, const double* a, const double* b, const double* c, double s,
                   double* out) {
    switch (op) {
        case Opcode::VADD:
            for (uint32_t l = 0; l < n; ++l) out[l] = a[l] + b[l];
            break;
        case Opcode::VSUB:
            for (uint32_t l = 0; l < n; ++l) out[l] = a[l] - b[l];
            break;
        case Opcode::VMUL:
            for (uint32_t l = 0; l < n; ++l) out[l] = a[l] * b[l];
            break;
        case Opcode::VADDS:
            for (uint32_t l = 0; l < n; ++l) out[l] = a[l] + s;
            break;
        case Opcode::VMULS:
            for (uint32_t l = 0; l < n; ++l) out[l] = a[l] * s;
            break;
        default:
            for (uint32_t l = 0; l < n; ++l) out[l] = op_float(op, a[l], b[l], c[l], s);
            break;
    }
}

void exec_elementwise(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const DType dt = in.dtype, st = src_type(in);
    const uint32_t L = lanes_of(in);
    const bool has1 = uses_src1(in.op), hasd = reads_dst(in.op),
               integer = is_int(dt) && in.op != Opcode::VCONV;
    const VKind k = kind_of(in.op);
    const bool sel_scalar = k == VKind::Sel && v.with_index;
    double a[256] = {}, b[256] = {}, c[256] = {}, res[256];
    bool on[256];
    for (uint32_t l = 0; l < L; ++l) on[l] = lane_on(v, l, L);
    const int64_t si = integer ? static_cast<int64_t>(in.scalar) : 0;
    for (uint32_t r = 0; r < v.repeat; ++r) {
        const uint8_t* s0 = p.s0 ? p.s0 + uint64_t{r} * v.src0_rep_stride * kBlock : nullptr;
        uint8_t* d = p.d + uint64_t{r} * v.dst_rep_stride * kBlock;
        if (k != VKind::Dup) load_lanes(a, s0, st, L, v.src0_blk_stride, on);
        if (sel_scalar) {  // vsel's tensor-scalar mode: one value for every lane
            const double s1 = load_f64(dt, p.s1);
            for (uint32_t l = 0; l < L; ++l) b[l] = s1;
        } else if (has1) {
            load_lanes(b, p.s1 + uint64_t{r} * v.src1_rep_stride * kBlock, dt, L, v.src1_blk_stride, on);
        }
        if (hasd) load_lanes(c, d, dt, L, v.dst_blk_stride, on);
        switch (k) {
            case VKind::Cmp: {
                uint8_t bits[32] = {};
                const bool vs = in.op == Opcode::VCMPS;
                for (uint32_t l = 0; l < L; ++l)
                    if (on[l] && compare(v.cmp, a[l], vs ? in.scalar : b[l]))
                        bits[l / 8] |= static_cast<uint8_t>(1u << (l % 8));
                std::memcpy(p.d + uint64_t{r} * (L / 8), bits, L / 8);
                break;
            }
            case VKind::Sel: {  // with_index = 1: tensor-scalar mode, b[] is src1's first element
                const uint8_t* sel = p.s2 + uint64_t{r} * (L / 8);
                store_lanes(d, dt, L, v.dst_blk_stride, on, [&](uint8_t* q, uint32_t l) {
                    store_f64(dt, q, ((sel[l / 8] >> (l % 8)) & 1u) ? a[l] : b[l]);
                });
                break;
            }
            case VKind::Conv:
                if (dt == DType::INT4) {  // rounded per mode, saturated to -8..7
                    for (uint32_t l = 0; l < L; ++l)
                        if (on[l])
                            int4_set(d + uint64_t{l / 64} * v.dst_blk_stride * kBlock, l % 64,
                                     round_bits(DType::INT4, a[l], v.round));
                    break;
                }
                if (st == dt) {  // fp32 -> fp32: rounded to an integral value per mode (exact in fp32)
                    store_lanes(d, dt, L, v.dst_blk_stride, on,
                                [&](uint8_t* q, uint32_t l) { store_f64(dt, q, round_integral(a[l], v.round)); });
                    break;
                }
                store_lanes(d, dt, L, v.dst_blk_stride, on,
                            [&](uint8_t* q, uint32_t l) { store_f64(dt, q, a[l], v.round); });
                break;
            default:
                if (integer) {
                    store_lanes(d, dt, L, v.dst_blk_stride, on, [&](uint8_t* q, uint32_t l) {
                        store_wrap(dt, q,
                                   op_int(in.op, static_cast<int64_t>(a[l]), static_cast<int64_t>(b[l]), si));
                    });
                } else {
                    compute_float(in.op, L, a, b, c, in.scalar, res);
                    store_lanes(d, dt, L, v.dst_blk_stride, on,
                                [&](uint8_t* q, uint32_t l) { store_f64(dt, q, res[l]); });
                }
                break;
        }
    }
}

void store_index(DType t, uint8_t* p, uint32_t idx) { std::memcpy(p, &idx, dtype_size(t)); }

void exec_reduce(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const DType dt = in.dtype;
    const uint32_t es = dtype_size(dt), L = lanes_of(in);
    const bool whole = kind_of(in.op) == VKind::RedAll;
    const Opcode base = whole ? static_cast<Opcode>(static_cast<int>(in.op) - 3) : in.op;
    const bool idx = v.with_index && base != Opcode::VRED_SUM;
    const uint32_t res = es * (idx ? 2 : 1);
    double acc = 0.0;
    uint32_t best_i = 0;
    bool any = false;
    for (uint32_t r = 0; r < v.repeat; ++r) {
        if (!whole) acc = 0.0, best_i = 0, any = false;
        for (uint32_t l = 0; l < L; ++l) {
            if (!lane_on(v, l, L)) continue;
            const double x = load_f64(dt, p.s0 + lane_off(r, l, es, v.src0_blk_stride, v.src0_rep_stride));
            const uint32_t i = whole ? r * L + l : l;
            if (base == Opcode::VRED_SUM)
                acc += x;
            else if (!any || (base == Opcode::VRED_MAX ? x > acc : x < acc) || std::isnan(acc))
                acc = x, best_i = i;
            any = true;
        }
        if (!whole) {
            uint8_t* out = p.d + static_cast<uint64_t>(r) * v.dst_rep_stride * res;
            if (is_int(dt))
                store_wrap(dt, out, static_cast<int64_t>(acc));
            else
                store_f64(dt, out, acc);
            if (idx) store_index(dt, out + es, best_i);
        }
    }
    if (whole) {
        if (is_int(dt))
            store_wrap(dt, p.d, static_cast<int64_t>(acc));
        else
            store_f64(dt, p.d, acc);
        if (idx) store_index(dt, p.d + es, best_i);
    }
}

void exec_brcb(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const uint32_t es = dtype_size(in.dtype);
    for (uint32_t r = 0; r < v.repeat; ++r) {
        uint8_t src[8 * 4];
        std::memcpy(src, p.s0 + static_cast<uint64_t>(r) * 8 * es, 8 * es);
        for (uint32_t b = 0; b < 8; ++b) {
            uint8_t* blk = p.d + (static_cast<uint64_t>(r) * v.dst_rep_stride +
                                  static_cast<uint64_t>(b) * v.dst_blk_stride) *
                                     kBlock;
            for (uint32_t e = 0; e < kBlock / es; ++e) std::memcpy(blk + e * es, src + b * es, es);
        }
    }
}

void exec_transpose(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    for (uint32_t r = 0; r < v.repeat; ++r) {
        uint16_t m[256];
        std::memcpy(m, p.s0 + static_cast<uint64_t>(r) * v.src0_rep_stride * kBlock, 512);
        uint8_t* d = p.d + static_cast<uint64_t>(r) * v.dst_rep_stride * kBlock;
        for (uint32_t i = 0; i < 16; ++i)
            for (uint32_t j = 0; j < 16; ++j) std::memcpy(d + (j * 16 + i) * 2, &m[i * 16 + j], 2);
    }
}

void exec_gather(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const uint32_t es = dtype_size(in.dtype), L = lanes_of(in);
    uint8_t tmp[256];
    for (uint32_t r = 0; r < v.repeat; ++r) {
        for (uint32_t l = 0; l < L; ++l) {
            if (!lane_on(v, l, L)) continue;
            uint32_t off;
            std::memcpy(&off, p.s1 + (static_cast<uint64_t>(r) * L + l) * 4, 4);
            if (static_cast<uint64_t>(off) + es > v.gather_span)
                throw std::invalid_argument("vgather: offset " + std::to_string(off) + " outside span " +
                                            std::to_string(v.gather_span));
            std::memcpy(tmp + l * es, p.s0 + off, es);
        }
        for (uint32_t l = 0; l < L; ++l)
            if (lane_on(v, l, L))
                std::memcpy(p.d + lane_off(r, l, es, v.dst_blk_stride, v.dst_rep_stride), tmp + l * es, es);
    }
}

}  // namespace

bool is_vector_compute(Opcode op) { return op >= Opcode::VADD && op < Opcode::kCount; }

std::string validate_vector(const Instr& in) {
    const VecParams& v = in.vec;
    if (v.repeat < 1 || v.repeat > 255) return "repeat " + std::to_string(v.repeat) + " outside 1..255";
    if (is_sort_kind(kind_of(in.op))) return validate_sort(in);
    const Addr* ops[] = {&in.dst, &in.src0, &in.src1, &in.src2};
    const char* names[] = {"dst", "src0", "src1", "src2"};
    const int used = in.op == Opcode::VSEL                          ? 4
                     : uses_src1(in.op)                             ? 3
                     : in.op == Opcode::VDUP || in.op == Opcode::VCI ? 1
                                                                    : 2;
    for (int i = 0; i < used; ++i)
        if (ops[i]->pos != Pos::UB) return bad_pos(in, names[i], ops[i]->pos);
    const DType t = in.dtype;
    if (t == DType::kCount || (in.op == Opcode::VCONV && v.src_dtype >= DType::kCount)) return "bad dtype";
    const VKind k = kind_of(in.op);
    if (in.op == Opcode::VCONV) {
        // The Atlas A2 vector unit rounds fp32 to integral fp32 values (vconv_f322f32r/f/c/a/z);
        // no other type converts to itself.
        if (v.src_dtype == t && (t != DType::FP32 || v.round == RoundMode::ODD))
            return std::string("vconv from ") + dtype_name(t) + " to itself" +
                   (t == DType::FP32 ? " with round mode odd" : "");
        if ((t == DType::INT4 && v.src_dtype != DType::FP16) || (v.src_dtype == DType::INT4 && t != DType::FP16))
            return std::string("vconv from ") + dtype_name(v.src_dtype) + " to " + dtype_name(t) +
                   ": int4 converts to and from fp16 only";
        if (v.round >= RoundMode::kCount) return "bad rounding mode";
        return "";
    }
    if (k == VKind::Dup || k == VKind::Gather) {
        if (k == VKind::Gather && v.gather_span == 0) return "vgather needs span > 0";
        return "";
    }
    if (k == VKind::Transpose) return dtype_size(t) == 2 ? "" : bad_dtype(in, t);
    if (is_special_kind(k)) return validate_special(in);
    if (k == VKind::Brcb) return dtype_size(t) >= 2 ? "" : bad_dtype(in, t);
    if (k == VKind::Cmp && v.cmp >= CmpMode::kCount) return "bad compare mode";
    if (k == VKind::Sel && v.with_index > 1)
        return "vsel idx " + std::to_string(v.with_index) + " (0: tensor-tensor, 1: tensor-scalar mode)";
    if (int_only(in.op)) return is_int(t) ? "" : bad_dtype(in, t);
    if (float_only(in.op)) return (t == DType::FP16 || t == DType::FP32) ? "" : bad_dtype(in, t);
    const bool ok =
        t == DType::FP16 || t == DType::FP32 || t == DType::BF16 || t == DType::INT16 || t == DType::INT32;
    return ok ? "" : bad_dtype(in, t);
}

int footprint_vector(const Instr& in, Extent out[kMaxExtents]) {
    if (is_sort_kind(kind_of(in.op))) return footprint_sort(in, out);
    if (is_special_kind(kind_of(in.op))) return footprint_special(in, out);
    const VecParams& v = in.vec;
    const uint32_t esd = dtype_size(in.dtype), ess = dtype_size(src_type(in)), L = lanes_of(in);
    const VKind k = kind_of(in.op);
    int n = 0;
    switch (k) {
        case VKind::Transpose:
            out[n++] = {in.src0.pos, in.src0.addr,
                        in.src0.addr + (v.repeat - 1ull) * v.src0_rep_stride * kBlock + 512, false};
            out[n++] = {in.dst.pos, in.dst.addr,
                        in.dst.addr + (v.repeat - 1ull) * v.dst_rep_stride * kBlock + 512, true};
            return n;
        case VKind::Brcb:
            out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + v.repeat * 8ull * esd, false};
            out[n++] = strided_extent(in.dst, esd, L, v.dst_blk_stride, v.dst_rep_stride, v.repeat, true);
            return n;
        case VKind::Gather:
            out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + v.gather_span, false};
            out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + v.repeat * 4ull * L, false};
            out[n++] = strided_extent(in.dst, esd, L, v.dst_blk_stride, v.dst_rep_stride, v.repeat, true);
            return n;
        default: break;
    }
    if (k == VKind::Conv) {  // by bits: either side may be int4
        out[n++] = strided_extent_bits(in.src0, dtype_bits(src_type(in)), L, v.src0_blk_stride, v.src0_rep_stride,
                                       v.repeat, false);
        out[n++] = strided_extent_bits(in.dst, dtype_bits(in.dtype), L, v.dst_blk_stride, v.dst_rep_stride,
                                       v.repeat, true);
        return n;
    }
    if (k != VKind::Dup)
        out[n++] = strided_extent(in.src0, ess, L, v.src0_blk_stride, v.src0_rep_stride, v.repeat, false);
    if (k == VKind::Sel && v.with_index)  // tensor-scalar mode: the one element
        out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + esd, false};
    else if (uses_src1(in.op))
        out[n++] = strided_extent(in.src1, esd, L, v.src1_blk_stride, v.src1_rep_stride, v.repeat, false);
    if (k == VKind::Sel) out[n++] = {in.src2.pos, in.src2.addr, in.src2.addr + v.repeat * (L / 8ull), false};
    if (k == VKind::Cmp) {
        out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + v.repeat * (L / 8ull), true};
    } else if (k == VKind::Red || k == VKind::RedAll) {
        const bool idx = v.with_index && in.op != Opcode::VRED_SUM && in.op != Opcode::VREDALL_SUM;
        const uint64_t res = esd * (idx ? 2ull : 1ull);
        const uint64_t hi = k == VKind::RedAll ? res : (v.repeat - 1ull) * v.dst_rep_stride * res + res;
        out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + hi, true};
    } else {
        out[n++] = strided_extent(in.dst, esd, L, v.dst_blk_stride, v.dst_rep_stride, v.repeat, true);
    }
    return n;
}

void exec_vector(const Instr& in, IMemView& mem) {
    if (is_sort_kind(kind_of(in.op))) return exec_sort(in, mem);
    VecPtrs p = map(in, mem);
    switch (kind_of(in.op)) {
        case VKind::Red:
        case VKind::RedAll: return exec_reduce(in, p);
        case VKind::Brcb: return exec_brcb(in, p);
        case VKind::Transpose: return exec_transpose(in, p);
        case VKind::Gather: return exec_gather(in, p);
        case VKind::Index:
        case VKind::PairRed:
        case VKind::GatherMask: return exec_special(in, p);
        default: return exec_elementwise(in, p);
    }
}

}  // namespace sfumato::isa::detail
