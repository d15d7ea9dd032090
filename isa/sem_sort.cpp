// Functional semantics of the Vector pipe's sorts and block gather (Atlas A2 class): VBITSORT (Sort32),
// VMRGSORT4 (MrgSort) and VGATHERB (Gatherb). Both sorts work on 8-byte (score, index) structures: the
// score in the low bytes (fp32: 4 bytes; fp16: 2 bytes, then 2 reserved bytes, which VBITSORT writes as 0
// and VMRGSORT4 moves as they are), the uint32 index in the high 4 bytes. Order: descending score; equal
// scores keep their input order (the vendor's reference: of score[i] == score[j] with i > j, j goes first;
// for the merge, lists in order 0..3, then position). Not documented, assumed: nan sorts above +inf, and
// -0 equals +0. Field encoding of VMRGSORT4 (it names five addresses and four lengths): see isa/README.md.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "isa/sem_detail.h"

namespace sfumato::isa {

namespace {

constexpr uint32_t kSortGroup = 32;     // elements one VBITSORT repeat sorts
constexpr uint32_t kSortPairBytes = 8;  // bytes of one (score, index) structure

// Total order on scores: nan above everything, else the value (so -0 == +0).
struct SortKey {
    bool nan;
    double v;
};
SortKey sort_key(DType t, const uint8_t* p) {
    const double v = load_f64(t, p);
    return {std::isnan(v), std::isnan(v) ? 0.0 : v};
}
bool sort_before(const SortKey& a, const SortKey& b) { return a.nan != b.nan ? a.nan : a.v > b.v; }

}  // namespace

MrgSort4Config mrgsort4_config(const Instr& in) {
    MrgSort4Config c;
    for (int i = 0; i < 4; ++i) c.len[i] = static_cast<uint16_t>(in.vec.mask_lo >> (16 * i));
    c.valid = static_cast<uint8_t>(in.vec.mask_hi & 0xfu);
    c.exhausted = (in.vec.mask_hi >> 4) & 1u;
    return c;
}

void set_mrgsort4_config(Instr& in, const MrgSort4Config& c, uint64_t list3_addr) {
    in.vec.mask_lo = 0;
    for (int i = 0; i < 4; ++i) in.vec.mask_lo |= uint64_t{c.len[i]} << (16 * i);
    in.vec.mask_hi = (c.valid & 0xfu) | (c.exhausted ? 0x10u : 0u);
    in.scalar = static_cast<double>(list3_addr);
}

uint32_t mrgsort4_lists(uint8_t valid) { return valid == 15 ? 4 : valid == 7 ? 3 : valid == 3 ? 2 : 0; }

uint64_t mrgsort4_merge(DType score, const uint8_t* const lists[4], const MrgSort4Config& c, uint8_t* dst,
                        uint32_t consumed[4]) {
    const uint32_t n = mrgsort4_lists(c.valid);
    for (uint32_t i = 0; i < 4; ++i) consumed[i] = 0;
    uint64_t out = 0;
    for (;;) {
        int best = -1;
        SortKey bk{};
        for (uint32_t i = 0; i < n; ++i) {
            if (consumed[i] == c.len[i]) {
                if (c.exhausted) return out;  // a list ran out: the instruction stops
                continue;
            }
            const SortKey k = sort_key(score, lists[i] + uint64_t{consumed[i]} * kSortPairBytes);
            if (best < 0 || sort_before(k, bk)) best = static_cast<int>(i), bk = k;
        }
        if (best < 0) return out;
        if (dst)
            std::memcpy(dst + out * kSortPairBytes, lists[best] + uint64_t{consumed[best]} * kSortPairBytes,
                        kSortPairBytes);
        ++consumed[best], ++out;
    }
}

namespace detail {

namespace {

uint64_t list_addr(const Instr& in, uint32_t i) {
    switch (i) {
        case 0:
            return in.src0.addr;
        case 1:
            return in.src1.addr;
        case 2:
            return in.src2.addr;
        default:
            return static_cast<uint64_t>(in.scalar);
    }
}

// Bytes one repeat of VMRGSORT4 writes (and the lists of one repeat span, when contiguous).
uint64_t merge_bytes(const MrgSort4Config& c) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < mrgsort4_lists(c.valid); ++i) n += c.len[i];
    return n * kSortPairBytes;
}

std::string validate_mrgsort(const Instr& in) {
    const MrgSort4Config c = mrgsort4_config(in);
    const uint32_t n = mrgsort4_lists(c.valid);
    if (n == 0)
        return "vmrgsort4 valid lists " + std::to_string(c.valid) + " (3, 7 or 15: the first 2, 3 or 4)";
    const Addr* ops[] = {&in.src0, &in.src1, &in.src2};
    const char* names[] = {"src0", "src1", "src2"};
    for (uint32_t i = 0; i < std::min<uint32_t>(n, 3); ++i)
        if (ops[i]->pos != Pos::UB) return bad_pos(in, names[i], ops[i]->pos);
    if (n == 4 && !(in.scalar >= 0 && in.scalar < 4294967296.0 && in.scalar == std::floor(in.scalar)))
        return "vmrgsort4 list 3 address (scalar) " + std::to_string(in.scalar) + " is not a UB address";
    for (uint32_t i = 0; i < 4; ++i)
        if (c.len[i] > 4095)
            return "vmrgsort4 list " + std::to_string(i) + " length " + std::to_string(c.len[i]) +
                   " outside 0..4095";
    if (in.vec.repeat > 1) {
        bool ok = n == 4 && !c.exhausted;
        for (uint32_t i = 1; i < 4 && ok; ++i)
            ok = c.len[i] == c.len[0] &&
                 list_addr(in, i) == list_addr(in, i - 1) + uint64_t{c.len[0]} * kSortPairBytes;
        if (!ok)
            return "vmrgsort4 repeat " + std::to_string(in.vec.repeat) +
                   " needs four contiguous lists of one length, valid 15 and no exhausted suspension";
    }
    const uint64_t out = in.vec.repeat * merge_bytes(c);
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t lo = list_addr(in, i),
                       hi = lo + (in.vec.repeat - 1ull) * merge_bytes(c) + c.len[i] * kSortPairBytes;
        if (c.len[i] && lo < in.dst.addr + out && in.dst.addr < hi)
            return "vmrgsort4 list " + std::to_string(i) + " overlaps dst";
    }
    return "";
}

}  // namespace

bool is_sort_kind(VecKind k) {
    return k == VecKind::BitSort || k == VecKind::MrgSort || k == VecKind::GatherB;
}

std::string validate_sort(const Instr& in) {
    const VecKind k = vec_kind(in.op);
    if (in.dst.pos != Pos::UB) return bad_pos(in, "dst", in.dst.pos);
    if (k == VecKind::GatherB) {
        if (in.src0.pos != Pos::UB) return bad_pos(in, "src0", in.src0.pos);
        if (in.src1.pos != Pos::UB) return bad_pos(in, "src1", in.src1.pos);
        if (in.vec.gather_span == 0) return "vgatherb needs span > 0";
        return dtype_size(in.dtype) == 2 || dtype_size(in.dtype) == 4 ? "" : bad_dtype(in, in.dtype);
    }
    if (in.dtype != DType::FP16 && in.dtype != DType::FP32) return bad_dtype(in, in.dtype);
    if (k == VecKind::MrgSort) return validate_mrgsort(in);
    if (in.src0.pos != Pos::UB) return bad_pos(in, "src0", in.src0.pos);
    if (in.src1.pos != Pos::UB) return bad_pos(in, "src1", in.src1.pos);
    return "";
}

int footprint_sort(const Instr& in, Extent out[kMaxExtents]) {
    const VecParams& v = in.vec;
    const uint64_t es = dtype_size(in.dtype);
    int n = 0;
    switch (vec_kind(in.op)) {
        case VecKind::BitSort:
            out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + v.repeat * kSortGroup * es, false};
            out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + v.repeat * kSortGroup * 4ull, false};
            out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + v.repeat * kSortGroup * kSortPairBytes, true};
            return n;
        case VecKind::MrgSort: {
            const MrgSort4Config c = mrgsort4_config(in);
            const uint64_t per = merge_bytes(c);
            for (uint32_t i = 0; i < mrgsort4_lists(c.valid); ++i) {
                if (c.len[i] == 0) continue;
                const uint64_t lo = list_addr(in, i);
                out[n++] = {Pos::UB, lo, lo + (v.repeat - 1ull) * per + c.len[i] * kSortPairBytes, false};
            }
            if (per) out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + v.repeat * per, true};
            return n;
        }
        default: {  // GatherB: 8 blocks of 32 bytes per repeat
            out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + v.gather_span, false};
            out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + v.repeat * 8ull * 4, false};
            const uint64_t hi =
                ((v.repeat - 1ull) * v.dst_rep_stride + 7ull * v.dst_blk_stride) * kBlock + kBlock;
            out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + hi, true};
            return n;
        }
    }
}

namespace {

void exec_bitsort(const Instr& in, IMemView& mem) {
    const uint32_t es = dtype_size(in.dtype);
    const uint32_t rep = in.vec.repeat;
    const uint8_t* s = mem.local(in.src0.pos, in.src0.addr, uint64_t{rep} * kSortGroup * es);
    const uint8_t* ix = mem.local(in.src1.pos, in.src1.addr, uint64_t{rep} * kSortGroup * 4);
    uint8_t* d = mem.local(in.dst.pos, in.dst.addr, uint64_t{rep} * kSortGroup * kSortPairBytes);
    for (uint32_t r = 0; r < rep; ++r) {
        const uint8_t* sr = s + uint64_t{r} * kSortGroup * es;
        SortKey keys[kSortGroup];
        uint32_t order[kSortGroup];
        uint8_t pairs[kSortGroup * kSortPairBytes] = {};
        for (uint32_t i = 0; i < kSortGroup; ++i) {
            keys[i] = sort_key(in.dtype, sr + i * es), order[i] = i;
            std::memcpy(pairs + i * kSortPairBytes, sr + i * es, es);
            std::memcpy(pairs + i * kSortPairBytes + 4, ix + (uint64_t{r} * kSortGroup + i) * 4, 4);
        }
        std::stable_sort(order, order + kSortGroup,
                         [&](uint32_t a, uint32_t b) { return sort_before(keys[a], keys[b]); });
        uint8_t* dr = d + uint64_t{r} * kSortGroup * kSortPairBytes;
        for (uint32_t i = 0; i < kSortGroup; ++i)
            std::memcpy(dr + i * kSortPairBytes, pairs + order[i] * kSortPairBytes, kSortPairBytes);
    }
}

void exec_mrgsort(const Instr& in, IMemView& mem) {
    const MrgSort4Config c = mrgsort4_config(in);
    const uint64_t per = merge_bytes(c);
    if (per == 0) return;
    for (uint32_t r = 0; r < in.vec.repeat; ++r) {
        const uint8_t* lists[4] = {};
        for (uint32_t i = 0; i < mrgsort4_lists(c.valid); ++i)
            if (c.len[i])
                lists[i] = mem.local(Pos::UB, list_addr(in, i) + r * per, c.len[i] * kSortPairBytes);
        uint32_t consumed[4];
        mrgsort4_merge(in.dtype, lists, c, mem.local(in.dst.pos, in.dst.addr + r * per, per), consumed);
    }
}

void exec_gatherb(const Instr& in, IMemView& mem) {
    const VecParams& v = in.vec;
    const uint8_t* src = mem.local(in.src0.pos, in.src0.addr, v.gather_span);
    const uint8_t* off = mem.local(in.src1.pos, in.src1.addr, v.repeat * 8ull * 4);
    for (uint32_t r = 0; r < v.repeat; ++r) {
        uint8_t blocks[8 * kBlock];
        for (uint32_t j = 0; j < 8; ++j) {
            uint32_t o;
            std::memcpy(&o, off + (uint64_t{r} * 8 + j) * 4, 4);
            if (o % kBlock || uint64_t{o} + kBlock > v.gather_span)
                throw std::invalid_argument("vgatherb: offset " + std::to_string(o) +
                                            (o % kBlock ? " not a multiple of 32" : " outside span ") +
                                            (o % kBlock ? "" : std::to_string(v.gather_span)));
            std::memcpy(blocks + j * kBlock, src + o, kBlock);
        }
        for (uint32_t j = 0; j < 8; ++j) {
            const uint64_t at = (uint64_t{r} * v.dst_rep_stride + uint64_t{j} * v.dst_blk_stride) * kBlock;
            std::memcpy(mem.local(in.dst.pos, in.dst.addr + at, kBlock), blocks + j * kBlock, kBlock);
        }
    }
}

}  // namespace

void exec_sort(const Instr& in, IMemView& mem) {
    switch (vec_kind(in.op)) {
        case VecKind::BitSort:
            return exec_bitsort(in, mem);
        case VecKind::MrgSort:
            return exec_mrgsort(in, mem);
        default:
            return exec_gatherb(in, mem);
    }
}

}  // namespace detail

}  // namespace sfumato::isa
