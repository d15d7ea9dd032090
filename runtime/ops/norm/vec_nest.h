// Vector loop nests for the normalisation, reduction and pooling kernels: one vector operation
// over a [A][B][n] index space of UB operands, each with its own byte strides for A and B and
// either contiguous lanes or one 32-byte block broadcast over the lanes (a per-row value spread
// by Brcb, read with block and repeat stride 0). The host-free decomposition picks, per call,
// which level the instruction repeats walk (the lanes in 256-byte steps, or B, or A with their
// strides as repeat strides) so that the fewest instructions are issued, merging levels that
// are contiguous first; a partial lane chunk is masked. On top of it: folds (pairwise
// reduction of units within groups, log2 levels), per-repeat lane reductions, broadcasts of
// per-row values (Brcb), neutral fills of padding lanes, and an on-device iota. Everything is
// shape-driven, so functional and timing runs issue the same instructions.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>

#include "isa/instr.h"
#include "runtime/kernel/kernel_context.h"

namespace sfumato::ops::norm {

constexpr isa::DType F32 = isa::DType::FP32;
constexpr isa::DType I32 = isa::DType::INT32;
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr uint32_t kBlk = 32;  // bytes of a UB block
inline uint64_t up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }
inline uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

struct VOp {
    uint32_t addr = 0;    // UB byte address of element [0][0][0]
    int64_t sa = 0;       // bytes between consecutive A
    int64_t sb = 0;       // bytes between consecutive B
    bool block = false;   // one 32-byte block broadcast over the lanes (block stride 0)
    bool used = false;
    bool rep0 = false;    // one repeat's worth of lanes reused for every lane chunk (repeat stride 0)
};
inline VOp vop(uint32_t addr, int64_t sa = 0, int64_t sb = 0) { return {addr, sa, sb, false, true, false}; }
inline VOp vblock(uint32_t addr, int64_t sa = 0, int64_t sb = 0) { return {addr, sa, sb, true, true, false}; }
// A 256-byte vector (e.g. a per-row value expanded over a repeat) read again for every lane
// chunk: its blocks are distinct (no bank conflict within a repeat, unlike a block operand).
inline VOp vrow(uint32_t addr, int64_t sa = 0, int64_t sb = 0) { return {addr, sa, sb, false, true, true}; }

// dst row r (256 bytes, one repeat) = the value of 32-byte block r, for count rows (one
// instruction: the 8-fold block read costs once per row, not once per use).
void expand_blocks(kernel::KernelContext& ctx, isa::DType dt, uint32_t dst, uint32_t blocks, uint64_t count);

// Bytes to reserve for a buffer of `bytes` so that consecutive buffers start 256 bytes apart
// modulo 2 KiB: with the 220x UB (rows of 32 bytes over 16 bank groups) two operands of one
// vector instruction taken from consecutive buffers then read different halves of the groups.
// (A destination in the bank span of a source that shares its groups still conflicts.)
inline uint64_t staggered(uint64_t bytes) { return up(bytes, 2048) + 256; }

// One instruction of a nest: byte offsets of dst, src0, src1 from their [0][0][0] and the
// repeat parameters (strides, mask, repeat count).
struct VPiece {
    uint64_t off[3] = {0, 0, 0};
    isa::VecParams v;
};

// Decomposes op over [nA][nB][n]: ops[0] = dst, ops[1] = src0, ops[2] = src1 (unused ones
// ignored); es[i] = element size of operand i; lanes = elements per repeat. Calls emit once
// per instruction.
void vnest(uint32_t lanes, const VOp ops[3], const uint32_t es[3], uint64_t nA, uint64_t nB, uint64_t n,
           const std::function<void(const VPiece&)>& emit);

// Issues `op` (dtype dt; VCONV from st) over the nest. scalar: vector-scalar operand.
void vrun(kernel::KernelContext& ctx, isa::Opcode op, isa::DType dt, VOp dst, VOp a, VOp b, uint64_t nA, uint64_t nB,
          uint64_t n, double scalar = 0, isa::DType st = isa::DType::FP32, isa::RoundMode round = isa::RoundMode::RINT);

// dst = (a cmp b) ? x : y over the nest (x and y as dst's dtype), through a bitmask scratch
// of 8 KiB at `bits` (one VCMP + VSEL pair per instruction of the decomposition).
void vselect_cmp(kernel::KernelContext& ctx, isa::DType cmp_dt, isa::CmpMode cmp, VOp a, VOp b, isa::DType dt,
                 VOp dst, VOp x, VOp y, uint32_t bits, uint64_t nA, uint64_t nB, uint64_t n);
constexpr uint32_t kBitsScratch = 8192;

// Pairwise fold of `units` units (n elements each, unit stride `us` bytes) within each of
// `groups` groups (group strides gs_src / gs_dst) into unit 0 of each group of dst; dst may be
// src (in place). Needs room for ceil(units / 2) units per group in dst.
void fold(kernel::KernelContext& ctx, isa::Opcode op, isa::DType dt, uint32_t src, uint32_t dst, uint64_t groups,
          int64_t gs_src, int64_t gs_dst, uint64_t units, int64_t us, uint64_t n);

// Where a fold's result (unit 0 of each group) is: its address and group stride.
struct Folded {
    uint32_t addr;
    int64_t gs;
};
// As fold, but out of place at every level when `alt` (group stride gs_alt, room for
// ceil(units / 4) units per group) lies in another UB bank span than dst: the levels alternate
// dst, alt, dst, ... so no level writes the bank it reads (an in-place level is a read-write
// bank conflict every repeat under the 220x rules). Falls back to fold when alt is 0 or shares
// a bank span with dst (kBankSpan). Returns the result.
Folded fold_alt(kernel::KernelContext& ctx, isa::Opcode op, isa::DType dt, uint32_t src, uint32_t dst, uint64_t groups,
                int64_t gs_src, int64_t gs_dst, uint64_t units, int64_t us, uint64_t n, uint32_t alt, int64_t gs_alt,
                uint64_t alt_bytes, uint64_t dst_bytes);

// The UB bank span the library's buffer placement assumes: the 220x layout (rows of 32 B over
// 16 groups, 128 rows a bank), so a group's banks are 64 KiB apart (docs/fidelity.md, "UB bank
// conflicts: the vendor's 220x rules"). Operands in different spans never share a bank.
constexpr uint64_t kBankSpan = 32 * 16 * 128;
// True when the byte ranges [a, a + an) and [b, b + bn) share no bank span.
inline bool spans_apart(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
    if (an == 0 || bn == 0) return true;
    const uint64_t a0 = a / kBankSpan, a1 = (a + an - 1) / kBankSpan, b0 = b / kBankSpan, b1 = (b + bn - 1) / kBankSpan;
    return a1 < b0 || b1 < a0;
}

// One result per group: red over the first n (<= lanes) elements of each group (stride gs
// bytes, a multiple of 32), results contiguous at dst. red = VRED_SUM / VRED_MAX / VRED_MIN.
void lane_reduce(kernel::KernelContext& ctx, isa::Opcode red, isa::DType dt, uint32_t src, uint32_t dst,
                 uint64_t groups, int64_t gs, uint64_t n);

// Spreads count values at src over count consecutive 32-byte blocks at dst (Brcb). Reads up
// to round_up(count, 8) values.
void brcb(kernel::KernelContext& ctx, isa::DType dt, uint32_t dst, uint32_t src, uint64_t count);

// Sets lanes [valid, lanes) of the chunk at `addr` in each of `rows` rows (row stride rs
// bytes, a multiple of 32) to value.
void fill_tail(kernel::KernelContext& ctx, isa::DType dt, uint32_t addr, uint64_t rows, int64_t rs, uint32_t valid,
               double value);

// dst[i] = i for i < n (fp32 or int32), built with masked adds and doublings; n rounded up to
// whole repeats of 64.
void iota(kernel::KernelContext& ctx, isa::DType dt, uint32_t dst, uint64_t n);

// Lanes per repeat for element size es (256 B per repeat).
inline uint32_t lanes_of(uint32_t es) { return 256 / es; }

}  // namespace sfumato::ops::norm
