// Helpers of the Ascend C layer that are not templates: the vector mask register, the sliced
// copies' walk over dimensions, the block-to-block flags in GM (IBSet/IBWait), and GatherMask.
// Mask register: SetVectorMask/SetMaskCount/SetMaskNorm record the mask as the chip's register
// holds it (and issue the SET_MASK instruction the chip runs), and every mask/repeat-form call
// resolves its mask here. A call with isSetMask = false takes the register's mask; in counter mode
// the register (or the call's mask) is an element count that the chip spreads over
// ceil(count / lanes) repeats, the last one partly masked: the layer issues the whole repeats as one
// instruction and the last as a second one with a lane-count mask, each operand advanced by the
// repeats already done (the ISA's masks are per instruction, so this is the same work in one more
// instruction). Simplified: a whole reduction (VREDALL_*) over a count that leaves a partial repeat
// is rejected, since two instructions would give two results.
#include "sfumato_ascendc/vector.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "isa/semantics.h"
#include "sfumato_ascendc/data_copy_more.h"
#include "sfumato_ascendc/gather.h"
#include "sfumato_ascendc/sync.h"

namespace sfumato::ascendc {

namespace {

uint32_t lanes_of(isa::DType dt, isa::DType st) {
    return 256 / std::max(isa::dtype_size(dt), isa::dtype_size(st));
}

// Bytes dst advances per repeat: per-repeat results for reductions, bitmask bytes for compares, the repeat
// stride in blocks otherwise.
uint64_t dst_step(isa::Opcode op, const isa::VecParams& v, uint32_t es, uint32_t lanes) {
    switch (isa::vec_kind(op)) {
        case isa::VecKind::Red:
            return uint64_t{v.dst_rep_stride} * es * (v.with_index && op != isa::Opcode::VRED_SUM ? 2 : 1);
        case isa::VecKind::Cmp:
            return lanes / 8;
        case isa::VecKind::PairRed:
            return uint64_t{v.dst_rep_stride} * (lanes / 2) * es;
        default:
            return uint64_t{v.dst_rep_stride} * 32;
    }
}

isa::Addr advance(const isa::Addr& a, uint64_t bytes) { return {a.addr + bytes, a.pos}; }

}  // namespace

kernel::VecMask resolve_mask(const MaskArg& m, const char* what) {
    const CoreState& s = *g_current;
    if (s.mask_counter) fail(std::string(what) + " in counter mode (SetMaskCount) is not modelled");
    kernel::VecMask k;
    if (!m.set) {
        k.lo = s.mask_lo, k.hi = s.mask_hi;
    } else if (m.bits) {
        k.lo = m.lo, k.hi = m.hi;
    } else {
        k = kmask(m.lo);
    }
    return k;
}

void vec_issue(isa::Opcode op, isa::DType dt, isa::DType st, const kernel::detail::VecArgs& a,
               isa::VecParams v, double scalar, const MaskArg& m) {
    CoreState& s = *g_current;
    const uint32_t lanes = lanes_of(dt, st);
    if (!s.mask_counter) {
        if (!m.set) {
            v.mask_lo = s.mask_lo, v.mask_hi = s.mask_hi;
        } else if (m.bits) {
            v.mask_lo = m.lo, v.mask_hi = m.hi;
        } else {
            const kernel::VecMask k = kmask(m.lo);
            v.mask_lo = k.lo, v.mask_hi = k.hi;
        }
        if (v.repeat == 0) return;  // repeatTime 0 is a no-op on the chip
        kernel::detail::vec_one(*s.ctx, op, dt, a, v, scalar);
        return;
    }
    // Counter mode: the count of elements, from the call (isSetMask) or the register.
    const uint64_t count = m.set ? m.lo : s.mask_lo;
    if (count == 0) return;
    const uint64_t full = count / lanes, tail = count % lanes;
    const isa::VecKind kind = isa::vec_kind(op);
    if (kind == isa::VecKind::RedAll && (full > 255 || (full && tail)))
        fail("a whole reduction over " + std::to_string(count) +
             " elements in counter mode (more than one instruction)");
    const uint32_t es = isa::dtype_size(dt);
    uint64_t done = 0;
    auto issue = [&](uint64_t reps, uint64_t lanes_on) {
        isa::VecParams w = v;
        w.repeat = static_cast<uint16_t>(reps);
        const kernel::VecMask k = lanes > 128 ? kernel::VecMask(lanes_on == lanes ? 128 : lanes_on / 2)
                                              : kernel::VecMask(std::min<uint64_t>(lanes_on, 128));
        w.mask_lo = k.lo, w.mask_hi = k.hi;
        kernel::detail::VecArgs b = a;
        if (kind != isa::VecKind::RedAll) b.dst = advance(a.dst, done * dst_step(op, v, es, lanes));
        b.src0 = advance(a.src0, done * v.src0_rep_stride * 32ull);
        if (isa::vec_uses_src1(op)) b.src1 = advance(a.src1, done * v.src1_rep_stride * 32ull);
        if (kind == isa::VecKind::Sel) b.src2 = advance(a.src2, done * (lanes / 8));
        // An index vector goes on counting where the previous instruction stopped.
        const double first =
            kind == isa::VecKind::Index ? scalar + static_cast<double>(done * lanes) : scalar;
        kernel::detail::vec_one(*s.ctx, op, dt, b, w, first);
        done += reps;
    };
    for (uint64_t left = full; left > 0;) {
        const uint64_t reps = std::min<uint64_t>(left, 255);
        issue(reps, lanes);
        left -= reps;
    }
    if (tail) issue(1, tail);
}

}  // namespace sfumato::ascendc

namespace AscendC {

void set_vector_mask(uint64_t hi, uint64_t lo, bool length) {
    sfumato::ascendc::CoreState& s = *sfumato::ascendc::g_current;
    sfumato::kernel::VecMask m;
    if (s.mask_counter) {
        m.lo = lo, m.hi = 0;
    } else if (length) {
        m = sfumato::ascendc::kmask(lo);
    } else {
        m.lo = lo, m.hi = hi;
    }
    s.mask_lo = m.lo, s.mask_hi = m.hi;
    sfumato::kernel::SetVectorMask(*s.ctx, m);
}

}  // namespace AscendC

namespace sfumato::ascendc {

namespace {
// Slots IBSet has set (device addresses), cleared when a kernel's first block starts.
std::set<uint64_t> g_ib_set;
// GroupBarrier slots: the arrival count whose store completed last.
std::map<uint64_t, uint32_t> g_group_counts;
constexpr uint32_t kIbEvents = 8, kIbSlotBytes = 32;
constexpr uint64_t kIbMaxPolls = 1u << 20;

uint64_t ib_slot(const GmSpan& gm, int32_t block, int32_t event) {
    if (block < 0 || event < 0 || event >= static_cast<int32_t>(kIbEvents))
        fail("blockIdx " + std::to_string(block) + " / eventID " + std::to_string(event) + " (eventID 0..7)");
    const uint64_t slot = gm.dev + (uint64_t(block) * kIbEvents + uint64_t(event)) * kIbSlotBytes;
    gm_check(gm, slot, kIbSlotBytes);
    return slot;
}
}  // namespace

void ib_reset() {
    g_ib_set.clear();
    g_group_counts.clear();
}

namespace {
// Fills the 32-byte slot of UB at ub_addr with `value` (int32) once every earlier instruction of
// the block completed, and stores it to each GM slot (MTE3), returning once the stores completed.
void slot_store_all(const std::vector<uint64_t>& slots, isa::Pos ub_pos, uint32_t ub_addr, double value) {
    kernel::KernelContext& ctx = *g_current->ctx;
    ctx.pipe_barrier(isa::Pipe::ALL);  // what the block did before is complete
    kernel::detail::VecArgs a{{ub_addr, ub_pos}, {}, {}, {}};
    isa::VecParams v;
    const kernel::VecMask m(kIbSlotBytes / 4);
    v.mask_lo = m.lo, v.mask_hi = m.hi;
    kernel::detail::vec_one(ctx, isa::Opcode::VDUP, isa::DType::INT32, a, v, value);
    ctx.pipe_barrier(isa::Pipe::ALL);
    for (uint64_t slot : slots)
        kernel::detail::copy_out(ctx, isa::DType::INT32, slot, ub_pos, ub_addr, {1, kIbSlotBytes, 0, 0});
    ctx.pipe_barrier(isa::Pipe::ALL);  // the scalar unit goes on once the stores completed
}

// Writes `value` to the 32-byte slot once every earlier instruction of the block completed, and
// returns once the store completed (value 1 marks the slot set for the waiters).
void slot_store(uint64_t slot, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes, double value) {
    if (ub_bytes < kIbSlotBytes) fail("ubWorkspace of " + std::to_string(ub_bytes) + " bytes (32 needed)");
    slot_store_all({slot}, ub_pos, ub_addr, value);
    if (value != 0)
        g_ib_set.insert(slot);
    else
        g_ib_set.erase(slot);
}

// Reads the slot into UB until a store of 1 to it completed.
void slot_wait(uint64_t slot, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes, const std::string& what) {
    CoreState& s = *g_current;
    if (ub_bytes < kIbSlotBytes) fail("ubWorkspace of " + std::to_string(ub_bytes) + " bytes (32 needed)");
    kernel::KernelContext& ctx = *s.ctx;
    for (uint64_t poll = 0;; ++poll) {
        if (poll == kIbMaxPolls)
            fail(what + " was never set after " + std::to_string(kIbMaxPolls) + " reads");
        kernel::detail::copy_in(ctx, isa::DType::INT32, ub_pos, ub_addr, slot, {1, kIbSlotBytes, 0, 0}, 0);
        ctx.pipe_barrier(isa::Pipe::ALL);  // the scalar unit reads the slot once it arrived
        if (g_ib_set.count(slot)) return;
    }
}

// Deterministic computation: one 32-byte slot per block, block k waits for block k - 1's.
uint64_t block_slot(const GmSpan& gm, int64_t block) {
    const uint64_t slot = gm.dev + static_cast<uint64_t>(block) * kIbSlotBytes;
    gm_check(gm, slot, kIbSlotBytes);
    return slot;
}
}  // namespace

void ib_set(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes, int32_t block, int32_t event) {
    slot_store(ib_slot(gm, block, event), ub_pos, ub_addr, ub_bytes, 1.0);
}

void ib_wait(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes, int32_t block, int32_t event) {
    slot_wait(ib_slot(gm, block, event), ub_pos, ub_addr, ub_bytes,
              "block " + std::to_string(block) + " event " + std::to_string(event) + " (IBSet)");
}

void determine_init(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes) {
    slot_store(block_slot(gm, g_current->block_idx), ub_pos, ub_addr, ub_bytes, 0.0);
}

void determine_wait(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes) {
    const int64_t b = g_current->block_idx;
    if (b == 0) {
        // The first block waits for nobody, but reads the workspace like every block: its
        // instructions so far complete before the next ones start.
        CoreState& s = *g_current;
        if (ub_bytes < kIbSlotBytes) fail("ubWorkspace of " + std::to_string(ub_bytes) + " bytes (32 needed)");
        kernel::detail::copy_in(*s.ctx, isa::DType::INT32, ub_pos, ub_addr, block_slot(gm, 0), {1, kIbSlotBytes, 0, 0},
                                0);
        s.ctx->pipe_barrier(isa::Pipe::ALL);
        return;
    }
    slot_wait(block_slot(gm, b - 1), ub_pos, ub_addr, ub_bytes,
              "block " + std::to_string(b - 1) + " (NotifyNextBlock)");
}

void determine_notify(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes) {
    slot_store(block_slot(gm, g_current->block_idx), ub_pos, ub_addr, ub_bytes, 1.0);
}

namespace {
constexpr uint32_t kGroupWaiterBytes = 512;
uint32_t ub_tail(uint32_t bytes) { return static_cast<uint32_t>(g_current->sink->buffer_size(isa::Pos::UB)) - bytes; }
}  // namespace

void group_arrive(const GmSpan& gm, uint32_t arrivers, uint32_t waiters, uint32_t index, uint32_t count) {
    (void)arrivers;
    std::vector<uint64_t> slots;
    for (uint32_t w = 0; w < waiters; ++w) {
        slots.push_back(gm.dev + uint64_t(w) * kGroupWaiterBytes + uint64_t(index) * kIbSlotBytes);
        gm_check(gm, slots.back(), kIbSlotBytes);
    }
    slot_store_all(slots, isa::Pos::UB, ub_tail(kGroupWaiterBytes), static_cast<double>(count));
    for (uint64_t slot : slots) g_group_counts[slot] = count;
}

void group_wait(const GmSpan& gm, uint32_t arrivers, uint32_t waiters, uint32_t index, uint32_t count) {
    (void)waiters;
    kernel::KernelContext& ctx = *g_current->ctx;
    const uint64_t first = gm.dev + uint64_t(index) * kGroupWaiterBytes;
    const uint32_t bytes = arrivers * kIbSlotBytes;
    gm_check(gm, first, bytes);
    for (uint64_t poll = 0;; ++poll) {
        if (poll == kIbMaxPolls)
            fail("the arrivers of GroupBarrier waiter " + std::to_string(index) + " never arrived after " +
                 std::to_string(kIbMaxPolls) + " reads");
        kernel::detail::copy_in(ctx, isa::DType::INT32, isa::Pos::UB, ub_tail(kGroupWaiterBytes), first, {1, bytes, 0, 0},
                                0);
        ctx.pipe_barrier(isa::Pipe::ALL);  // the scalar unit reads the slots once they arrived
        bool all = true;
        for (uint32_t a = 0; a < arrivers && all; ++a) {
            auto it = g_group_counts.find(first + uint64_t(a) * kIbSlotBytes);
            all = it != g_group_counts.end() && it->second >= count;
        }
        if (all) return;
    }
}

void init_output(const GmSpan& gm, uint64_t dev, uint64_t bytes, isa::DType dt, double value) {
    gm_check(gm, dev, bytes);
    kernel::KernelContext& ctx = *g_current->ctx;
    constexpr uint32_t kChunk = 256;  // one repeat of the vector unit, at the end of UB
    const uint32_t es = isa::dtype_size(dt);
    kernel::detail::VecArgs a{{ub_tail(kChunk), isa::Pos::UB}, {}, {}, {}};
    isa::VecParams v;
    const kernel::VecMask m(kChunk / es);
    v.mask_lo = m.lo, v.mask_hi = m.hi;
    ctx.pipe_barrier(isa::Pipe::ALL);
    kernel::detail::vec_one(ctx, isa::Opcode::VDUP, dt, a, v, value);
    ctx.pipe_barrier(isa::Pipe::ALL);  // the filled chunk is in UB before MTE3 reads it
    for (uint64_t at = 0; at < bytes; at += kChunk) {
        const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kChunk, bytes - at));
        kernel::detail::copy_out(ctx, dt, dev + at, isa::Pos::UB, ub_tail(kChunk), {1, n, 0, 0});
    }
    ctx.pipe_barrier(isa::Pipe::MTE3);
}

}  // namespace sfumato::ascendc

namespace AscendC::detail_reduce {

void pick_extreme(sfumato::isa::Opcode op, sfumato::isa::DType dt, sfumato::isa::Pos pos, uint64_t dst, uint64_t work,
                  const std::vector<uint64_t>& starts) {
    using namespace sfumato;
    ascendc::CoreState& s = *ascendc::g_current;
    s.ctx->pipe_barrier(isa::Pipe::ALL);  // the scalar unit reads the pieces once V wrote them
    const uint32_t es = isa::dtype_size(dt);
    double best = 0;
    uint64_t best_index = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
        uint8_t raw[8] = {};
        ascendc::local_scalar_read(pos, work + 2 * i * es, raw, 2 * es);
        const double v = isa::load_f64(dt, raw);
        uint32_t idx = 0;
        std::memcpy(&idx, raw + es, es);
        const bool better = op == isa::Opcode::VREDALL_MAX ? v > best : v < best;
        if (i == 0 || better) best = v, best_index = starts[i] + idx;
    }
    uint8_t out[8] = {};
    isa::store_f64(dt, out, best);
    const uint32_t idx = static_cast<uint32_t>(best_index);
    std::memcpy(out + es, &idx, es);
    ascendc::local_scalar_write(pos, dst, out, 2 * es);
}

}  // namespace AscendC::detail_reduce

namespace sfumato::ascendc {

SliceWalk slice_walk(const AscendC::SliceInfo* info, uint32_t dims, uint32_t elem_bytes) {
    if (dims < 1 || dims > AscendC::K_MAX_DIM)
        fail("SliceInfo dimValue " + std::to_string(dims) + " (1.." + std::to_string(AscendC::K_MAX_DIM) +
             ")");
    SliceWalk w;
    const AscendC::SliceInfo& d0 = info[0];
    if (d0.burstLen == 0 || (d0.burstLen * 32u) % elem_bytes != 0) fail("SliceInfo burstLen 0");
    w.burst = d0.burstLen * 32ull / elem_bytes;
    w.gap = d0.stride;
    if (d0.endIndex < d0.startIndex) fail("SliceInfo endIndex below startIndex");
    w.slices = static_cast<uint32_t>((d0.endIndex - d0.startIndex + 1 + w.gap) / (w.burst + w.gap));
    if (w.slices == 0) fail("SliceInfo of dimension 0 holds no whole slice");
    // Outer dimensions: indices start, start + stride + 1, ... up to end; row offsets in elements.
    w.rows.push_back(d0.startIndex);
    uint64_t span = d0.shapeValue ? d0.shapeValue : d0.endIndex + 1;
    for (uint32_t k = 1; k < dims; ++k) {
        const AscendC::SliceInfo& dk = info[k];
        if (dk.endIndex < dk.startIndex) fail("SliceInfo endIndex below startIndex");
        std::vector<uint64_t> next;
        for (uint64_t i = dk.startIndex; i <= dk.endIndex; i += uint64_t{dk.stride} + 1)
            for (uint64_t r : w.rows) next.push_back(i * span + r);
        w.rows.swap(next);
        span *= dk.shapeValue ? dk.shapeValue : dk.endIndex + 1;
    }
    return w;
}

std::pair<SliceWalk, SliceWalk> slice_walks(const AscendC::SliceInfo* dst, const AscendC::SliceInfo* src,
                                            uint32_t dims, uint32_t elem_bytes, bool ub_dst) {
    SliceWalk d = slice_walk(dst, dims, elem_bytes);
    SliceWalk s = slice_walk(src, dims, elem_bytes);
    if (d.rows.size() != s.rows.size() || d.slices != s.slices || d.burst != s.burst)
        fail("DataCopy with SliceInfo: the source and destination slices differ in number or length");
    if (((ub_dst ? d.gap : s.gap) * elem_bytes) % 32 != 0)
        fail("DataCopy with SliceInfo: UB slices must be whole 32-byte blocks apart");
    return {std::move(d), std::move(s)};
}

}  // namespace sfumato::ascendc

namespace sfumato::ascendc {

namespace {

// GatherMask (vreducev2): the call's modes turned into one instruction, and the kept count the
// scalar unit reads back (sfumato_ascendc/gather.h).

// Elements of one repeat that the pattern keeps; `bits` is the repeat's pattern bytes (pattern 0).
uint64_t kept_in_repeat(uint32_t pattern, const uint8_t* bits, uint64_t n) {
    uint64_t k = 0;
    for (uint64_t e = 0; e < n; ++e)
        k += bits ? (bits[e / 8] >> (e % 8)) & 1u : sfumato::isa::gathermask_pattern_bit(pattern, e);
    return k;
}

}  // namespace

uint64_t gather_mask(const GatherMaskCall& c) {
    CoreState& s = *g_current;
    const uint32_t lanes = 256 / isa::dtype_size(c.dt);
    const uint64_t repeat = c.p.repeatTimes;
    // Counter mode on Atlas A2 (the reference's first form): every repeat takes `mask` elements.
    if (c.counter && c.mask == 0)
        fail("mask 0 in counter mode (reduceMode true): the elements of a repeat, at least 1");
    s.mask_counter = false;  // the reference: the call leaves normal mode behind
    if (repeat == 0) return 0;  // repeatTimes 0 is a no-op
    if (repeat > 255) fail("repeatTimes " + std::to_string(repeat) + " (at most 255 in one instruction)");
    const kernel::UnaryRepeatParams strides{1, c.p.src0BlockStride, 8, c.p.src0RepeatStride};
    isa::VecParams v = kernel::detail::rep(kernel::VecMask(), static_cast<uint8_t>(repeat), strides);
    v.src1_rep_stride = c.pattern ? 0 : c.p.src1RepeatStride;
    if (c.counter) v.with_index = 1, v.mask_lo = c.mask, v.mask_hi = 0;
    const isa::Addr bits = c.pattern ? isa::Addr{} : c.bits;
    kernel::detail::vec_one(*s.ctx, isa::Opcode::VREDUCEV2, c.dt, {c.dst, c.src0, bits, {}}, v, c.pattern);
    // rsvdCnt: the scalar unit reads the count once V has it.
    s.ctx->pipe_barrier(isa::Pipe::ALL);
    const uint64_t n = c.counter ? c.mask : lanes;
    uint64_t kept = 0;
    std::vector<uint8_t> bytes(c.pattern ? 0 : (n + 7) / 8);
    for (uint64_t r = 0; r < repeat; ++r) {
        if (!c.pattern)
            local_scalar_read(c.bits.pos, c.bits.addr + r * v.src1_rep_stride * 32ull, bytes.data(),
                              static_cast<uint32_t>(bytes.size()));
        kept += kept_in_repeat(c.pattern, c.pattern ? nullptr : bytes.data(), n);
    }
    return kept;
}

}  // namespace sfumato::ascendc

namespace sfumato::ascendc {

void gatherb(const GatherbCall& c) {
    if (c.repeat == 0) return;  // a no-op on Atlas A2
    const uint64_t blk = c.p.dstBlkStride ? c.p.dstBlkStride : 1;  // 0 counts as 1 (the reference)
    const uint64_t rep = c.repeat;
    const char* names[] = {"dst", "src0", "offset"};
    const isa::Addr* ops[] = {&c.dst, &c.src, &c.offset};
    for (int i = 0; i < 3; ++i)
        if (ops[i]->addr % 32)
            fail(std::string(names[i]) + " at UB address " + std::to_string(ops[i]->addr) +
                 " is not 32-byte aligned");
    const uint64_t dst_need = ((rep - 1) * c.p.dstRepStride + 7 * blk) * 32 + 32;
    if (c.offset_bytes < rep * 8 * 4)
        fail("offset holds " + std::to_string(c.offset_bytes / 4) + " offsets, " + std::to_string(rep) +
             " repeats read " + std::to_string(rep * 8));
    if (c.dst_bytes < dst_need)
        fail("dst holds " + std::to_string(c.dst_bytes) + " bytes, the call writes up to byte " +
             std::to_string(dst_need));
    if (c.src.addr < c.dst.addr + dst_need && c.dst.addr < c.src.addr + c.src_bytes)
        fail("src0 and dst share UB bytes (not supported by the chip)");
    isa::Instr in = isa::make_instr(isa::Opcode::VGATHERB);
    in.dtype = c.dt;
    in.dst = c.dst, in.src0 = c.src, in.src1 = c.offset;
    in.vec.repeat = static_cast<uint16_t>(rep);
    in.vec.dst_blk_stride = static_cast<uint16_t>(blk), in.vec.dst_rep_stride = c.p.dstRepStride;
    in.vec.gather_span = static_cast<uint32_t>(c.src_bytes);
    g_current->ctx->issue(in);
}

}  // namespace sfumato::ascendc
