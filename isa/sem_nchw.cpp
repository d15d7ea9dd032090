// Functional semantics of VNCHWCONV (the vendor's TransDataTo5HD, isa/instr.h): per repeat, 16 source
// blocks of 32 bytes at their own UB addresses transposed into 16 destination blocks at theirs. The
// element mapping per element size (the vendor's reference, "TransDataTo5HD"): 2 bytes, element j of
// source i -> element i of destination j (a 16 x 16 transpose); 4 bytes, element j of source 8h + k ->
// element k of destination 2j + h (16 x 8 -> 8 x 16, a destination row in two blocks); 1 byte, byte
// 16 src_high + j of source i -> byte 16 dst_high + i of destination j (the other half of each destination
// block is left as it was). Every source block of a repeat is read before any destination block is
// written.
#include <algorithm>
#include <cstring>

#include "isa/sem_detail.h"

namespace sfumato::isa {

namespace {

constexpr uint64_t kBlk = 32;
constexpr uint64_t kMaxBlocks = 32768;  // 15-bit block numbers (a packed word stays below 2^63): UB below 1 MiB

const Addr* src_word(const Instr& in, int w) {
    switch (w) {
        case 0: return &in.src0;
        case 1: return &in.src1;
        case 2: return &in.src2;
        default: return &in.dst;
    }
}
Addr* src_word(Instr& in, int w) { return const_cast<Addr*>(src_word(static_cast<const Instr&>(in), w)); }

// Bytes repeat r adds to each address of a list whose repeat stride is `stride` blocks.
uint64_t rep_offset(const NchwParams& p, uint32_t r, uint16_t stride) {
    return (p.repeat == 1 ? 1u : r) * uint64_t{stride} * kBlk;
}

}  // namespace

uint64_t nchw_src_addr(const Instr& in, int i) {
    return ((src_word(in, i / 4)->addr >> (16 * (i % 4))) & 0xffffu) * kBlk;
}
uint64_t nchw_dst_addr(const Instr& in, int j) { return uint64_t{in.nchw.dst_blk[j]} * kBlk; }

std::string set_nchw_lists(Instr& in, const uint64_t dst[kNchwList], const uint64_t src[kNchwList]) {
    for (int w = 0; w < 4; ++w) *src_word(in, w) = Addr{0, Pos::UB};
    for (int i = 0; i < kNchwList; ++i) {
        for (const auto& [list, a] : {std::pair{"destination", dst[i]}, std::pair{"source", src[i]}})
            if (a % kBlk != 0 || a / kBlk >= kMaxBlocks)
                return std::string(list) + " address " + std::to_string(i) + " (" + std::to_string(a) +
                       ") is not a multiple of 32 below 1 MiB";
        in.nchw.dst_blk[i] = static_cast<uint16_t>(dst[i] / kBlk);
        src_word(in, i / 4)->addr |= (src[i] / kBlk) << (16 * (i % 4));
    }
    return "";
}

namespace detail {

std::string validate_nchw(const Instr& in) {
    const NchwParams& p = in.nchw;
    if (p.repeat < 1) return "repeat 0 outside 1..255";
    const uint32_t es = dtype_size(in.dtype);
    if (es != 1 && es != 2 && es != 4) return bad_dtype(in, in.dtype);
    if (p.dst_high > 1 || p.src_high > 1) return "dst_high and src_high must be 0 or 1";
    if (es != 1 && (p.dst_high || p.src_high)) return "dst_high and src_high are for 1-byte types only";
    const Addr* ops[] = {&in.dst, &in.src0, &in.src1, &in.src2};
    const char* names[] = {"dst", "src0", "src1", "src2"};
    for (int i = 0; i < 4; ++i)
        if (ops[i]->pos != Pos::UB) return bad_pos(in, names[i], ops[i]->pos);
    return "";
}

int footprint_nchw(const Instr& in, Extent out[kMaxExtents]) {
    const NchwParams& p = in.nchw;
    auto hull = [&](bool dst) {
        uint64_t lo = ~0ull, hi = 0;
        for (int i = 0; i < kNchwList; ++i) {
            const uint64_t a = dst ? nchw_dst_addr(in, i) : nchw_src_addr(in, i);
            lo = std::min(lo, a), hi = std::max(hi, a + kBlk);
        }
        const uint16_t stride = dst ? p.dst_rep_stride : p.src_rep_stride;
        const uint64_t first = rep_offset(p, 0, stride), last = rep_offset(p, p.repeat - 1u, stride);
        return Extent{Pos::UB, lo + first, hi + last, dst};
    };
    out[0] = hull(false);
    out[1] = hull(true);
    return 2;
}

void exec_nchw(const Instr& in, IMemView& mem) {
    const NchwParams& p = in.nchw;
    const uint32_t es = dtype_size(in.dtype);
    uint8_t src[kNchwList][kBlk];
    for (uint32_t r = 0; r < p.repeat; ++r) {
        const uint64_t so = rep_offset(p, r, p.src_rep_stride), d_o = rep_offset(p, r, p.dst_rep_stride);
        for (int i = 0; i < kNchwList; ++i) std::memcpy(src[i], mem.local(Pos::UB, nchw_src_addr(in, i) + so, kBlk), kBlk);
        for (int j = 0; j < kNchwList; ++j) {
            uint8_t* d = mem.local(Pos::UB, nchw_dst_addr(in, j) + d_o, kBlk);
            if (es == 2) {
                for (int i = 0; i < kNchwList; ++i) std::memcpy(d + 2 * i, src[i] + 2 * j, 2);
            } else if (es == 4) {
                const int row = j / 2, half = j % 2;
                for (int k = 0; k < 8; ++k) std::memcpy(d + 4 * k, src[8 * half + k] + 4 * row, 4);
            } else {
                for (int i = 0; i < kNchwList; ++i) d[16 * p.dst_high + i] = src[i][16 * p.src_high + j];
            }
        }
    }
}

}  // namespace detail

}  // namespace sfumato::isa
