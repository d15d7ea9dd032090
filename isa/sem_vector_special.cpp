// Semantics of the vector pipe's special instructions, whose operands are not the element-wise
// lane-for-lane shape: VCI (an index vector), VCPADD (pairs of lanes summed, results packed) and
// VREDUCEV2 (GatherMask: selected elements packed). Checks, footprints and execution; the dispatcher
// is isa/sem_vector.cpp.
#include <cmath>
#include <cstring>
#include <string>

#include "isa/sem_vector_detail.h"

namespace sfumato::isa::detail {

namespace {

// VCI: an index vector, lane l of repeat r holding scalar + r * lanes + l (in the element type).
void exec_index(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const uint32_t es = dtype_size(in.dtype), L = lanes_of(in);
    for (uint32_t r = 0; r < v.repeat; ++r)
        for (uint32_t l = 0; l < L; ++l) {
            if (!lane_on(v, l, L)) continue;
            uint8_t* q = p.d + lane_off(r, l, es, v.dst_blk_stride, v.dst_rep_stride);
            const double x = in.scalar + static_cast<double>(uint64_t{r} * L + l);
            if (is_int(in.dtype))
                store_wrap(in.dtype, q, static_cast<int64_t>(x));
            else
                store_f64(in.dtype, q, x);
        }
}

// VCPADD: result j of a repeat is the sum of its lanes 2j and 2j + 1 that the mask enables, rounded
// once; a pair with both lanes masked off leaves its result unwritten. A repeat's L / 2 results
// are packed; the dst repeat stride counts such 128-byte groups.
void exec_pair_reduce(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const uint32_t es = dtype_size(in.dtype), L = lanes_of(in);
    double out[128];
    bool any[128];
    for (uint32_t r = 0; r < v.repeat; ++r) {
        for (uint32_t j = 0; j < L / 2; ++j) {
            out[j] = 0.0, any[j] = false;
            for (uint32_t l = 2 * j; l < 2 * j + 2; ++l) {
                if (!lane_on(v, l, L)) continue;
                out[j] += load_f64(in.dtype, p.s0 + lane_off(r, l, es, v.src0_blk_stride, v.src0_rep_stride));
                any[j] = true;
            }
        }
        uint8_t* d = p.d + static_cast<uint64_t>(r) * v.dst_rep_stride * (L / 2) * es;
        for (uint32_t j = 0; j < L / 2; ++j)
            if (any[j]) store_f64(in.dtype, d + j * es, out[j]);
    }
}

// VREDUCEV2 (GatherMask): scalar 1..7 is a fixed pattern, the same in every repeat (1 the even lanes,
// 2 the odd ones, 3..6 lane 0..3 of every four, 7 all lanes); scalar 0 reads it from src1, one bit per
// element (bit e % 8 of byte e / 8), repeat r's bits at src1 + r x src1_rep_stride x 32 bytes. The
// elements it selects, of all repeats in order, are packed from dst (dst strides unused). Normal mode:
// a repeat is the 256 bytes of lanes, the mask limiting the last repeat only. Counter mode (with_index
// = 1, the mask register's count mode; Atlas A2): every repeat takes mask_lo elements from its start,
// consecutive elements block by block, however many 256-byte groups that spans.
bool gathermask_pattern_bit_impl(uint32_t pattern, uint64_t e) {
    switch (pattern) {
        case 1:
            return e % 2 == 0;
        case 2:
            return e % 2 == 1;
        case 7:
            return true;
        default:
            return e % 4 == pattern - 3;
    }
}

uint64_t gather_mask_elems(const Instr& in, uint32_t lanes) {
    return in.vec.with_index ? in.vec.mask_lo : lanes;
}

void exec_gather_mask(const Instr& in, const VecPtrs& p) {
    const VecParams& v = in.vec;
    const uint32_t es = dtype_size(in.dtype), L = lanes_of(in);
    const uint32_t pattern = static_cast<uint32_t>(in.scalar);
    const uint64_t n = gather_mask_elems(in, L);
    uint64_t kept = 0;
    for (uint32_t r = 0; r < v.repeat; ++r) {
        const uint8_t* bits = pattern ? nullptr : p.s1 + uint64_t{r} * v.src1_rep_stride * kBlock;
        for (uint64_t e = 0; e < n; ++e) {
            if (!v.with_index && r + 1u == v.repeat && !lane_on(v, static_cast<uint32_t>(e), L)) continue;
            const bool pick =
                bits ? ((bits[e / 8] >> (e % 8)) & 1u) : gathermask_pattern_bit_impl(pattern, e);
            if (!pick) continue;
            const uint64_t byte = e * es;
            const uint64_t off =
                (uint64_t{r} * v.src0_rep_stride + (byte >> 5) * v.src0_blk_stride) * kBlock + (byte & 31u);
            std::memcpy(p.d + kept * es, p.s0 + off, es);
            ++kept;
        }
    }
}

// The most elements a repeat of VREDUCEV2 can keep (the fixed patterns keep a half or a quarter).
uint64_t gather_mask_per_repeat(const Instr& in, uint32_t lanes) {
    const uint32_t pattern = static_cast<uint32_t>(in.scalar);
    const uint64_t n = gather_mask_elems(in, lanes);
    return pattern == 0 || pattern == 7 ? n : pattern <= 2 ? (n + 1) / 2 : (n + 3) / 4;
}

}  // namespace

std::string validate_special(const Instr& in) {
    const VecParams& v = in.vec;
    const DType t = in.dtype;
    const VecKind k = vec_kind(in.op);
    if (k == VecKind::Index)
        return t == DType::FP16 || t == DType::FP32 || t == DType::INT16 || t == DType::INT32
                   ? ""
                   : bad_dtype(in, t);
    if (k == VecKind::PairRed) return t == DType::FP16 || t == DType::FP32 ? "" : bad_dtype(in, t);
    if (k == VecKind::GatherMask) {
        if (!(in.scalar >= 0 && in.scalar <= 7 && in.scalar == std::floor(in.scalar)))
            return "vreducev2 pattern (scalar) " + std::to_string(in.scalar) + " outside 0..7";
        if (v.with_index > 1) return "vreducev2 idx " + std::to_string(v.with_index) + " (1: counter mode)";
        if (v.with_index && (v.mask_lo == 0 || v.mask_lo > 0xffffffffull || v.mask_hi))
            return "vreducev2 counter mode needs 1..2^32-1 elements per repeat in mask_lo (mask_hi 0)";
        if (in.scalar == 0 && in.src1.pos != Pos::UB) return bad_pos(in, "src1", in.src1.pos);
        return dtype_size(t) == 2 || dtype_size(t) == 4 ? "" : bad_dtype(in, t);
    }
    return "";
}

int footprint_special(const Instr& in, Extent out[kMaxExtents]) {
    const VecParams& v = in.vec;
    const uint32_t esd = dtype_size(in.dtype), ess = dtype_size(src_type(in)), L = lanes_of(in);
    int n = 0;
    switch (vec_kind(in.op)) {
        case VecKind::Index:
            out[n++] = strided_extent(in.dst, esd, L, v.dst_blk_stride, v.dst_rep_stride, v.repeat, true);
            return n;
        case VecKind::PairRed:
            out[n++] = strided_extent(in.src0, ess, L, v.src0_blk_stride, v.src0_rep_stride, v.repeat, false);
            out[n++] = {in.dst.pos, in.dst.addr,
                        in.dst.addr + ((v.repeat - 1ull) * v.dst_rep_stride + 1) * (L / 2ull) * esd, true};
            return n;
        case VecKind::GatherMask: {
            const uint64_t e = gather_mask_elems(in, L), nblk = (e * ess + kBlock - 1) / kBlock;
            const uint64_t hi = (v.repeat - 1ull) * v.src0_rep_stride + (nblk - 1) * v.src0_blk_stride;
            out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + hi * kBlock + kBlock, false};
            if (in.scalar == 0)
                out[n++] = {in.src1.pos, in.src1.addr,
                            in.src1.addr + (v.repeat - 1ull) * v.src1_rep_stride * kBlock + (e + 7) / 8,
                            false};
            out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + v.repeat * gather_mask_per_repeat(in, L) * esd,
                        true};
            return n;
        }
        default:
            return 0;
    }
}

void exec_special(const Instr& in, const VecPtrs& p) {
    switch (vec_kind(in.op)) {
        case VecKind::Index:
            return exec_index(in, p);
        case VecKind::PairRed:
            return exec_pair_reduce(in, p);
        case VecKind::GatherMask:
            return exec_gather_mask(in, p);
        default:
            return;
    }
}

}  // namespace sfumato::isa::detail

namespace sfumato::isa {

bool gathermask_pattern_bit(uint32_t pattern, uint64_t e) {
    return detail::gathermask_pattern_bit_impl(pattern, e);
}

}  // namespace sfumato::isa
