// Select's helpers that are not templates (sfumato_ascendc/select.h says what each form issues): mode 1's
// scalar block in the UB the API reserves, the compare-mask register, the count form's instructions and
// mode 0's one vsel per repeat.
#include "sfumato_ascendc/select.h"

#include <algorithm>
#include <string>

namespace sfumato::ascendc {

namespace {

// The vendor's TMP_UB_OFFSET on Atlas A2: the last 8 KiB of UB, which the reference asks kernels using
// Select's modes 1 and 2 to leave free.
constexpr uint64_t kReservedUb = 8192;
constexpr uint32_t kBlock = 32;

isa::Addr plus(const isa::Addr& a, uint64_t bytes) { return {a.addr + bytes, a.pos}; }

}  // namespace

isa::Addr select_scalar_block(isa::DType dt, double scalar) {
    CoreState& s = *g_current;
    const uint64_t ub = s.sink->buffer_size(isa::Pos::UB);
    if (ub < kReservedUb)
        fail("Select with a scalar needs the " + std::to_string(kReservedUb) + " bytes the API reserves at the end of UB (" +
             std::to_string(ub) + " bytes of UB)");
    const isa::Addr block{ub - kReservedUb, isa::Pos::UB};
    isa::VecParams v;
    const kernel::VecMask m(kBlock / isa::dtype_size(dt));
    v.mask_lo = m.lo, v.mask_hi = m.hi;
    kernel::detail::vec_one(*s.ctx, isa::Opcode::VDUP, dt, {block, {}, {}, {}}, v, scalar);
    s.ctx->pipe_barrier(isa::Pipe::V);  // the chip's set_cmpmask reads the block once the dup wrote it
    return block;
}

void set_cmp_mask(isa::Addr a) {
    CoreState& s = *g_current;
    if (a.pos != isa::Pos::UB) fail(std::string("SetCmpMask of a tensor in ") + isa::pos_name(a.pos) + " (UB only)");
    if (a.addr % 16 != 0) fail("SetCmpMask of a tensor at UB address " + std::to_string(a.addr) + " (16-byte aligned)");
    s.cmp_set = true;
    s.cmp_addr = a;
}

isa::Addr cmp_mask(const char* what) {
    const CoreState& s = *g_current;
    if (!s.cmp_set) fail(std::string(what) + " reads the compare-mask register, which SetCmpMask never set");
    return s.cmp_addr;
}

void select_count(isa::DType dt, isa::Addr dst, isa::Addr sel, isa::Addr src0, isa::Addr src1, bool scalar_mode,
                  uint64_t count) {
    CoreState& s = *g_current;
    const uint32_t es = isa::dtype_size(dt), lanes = 256 / es;
    uint64_t done = 0;  // repeats issued
    const uint64_t full = count / lanes, tail = count % lanes;
    // Each instruction after the first is another iteration of the API's loop in the scalar code (as the kernel
    // API's count forms charge it): the counter, and the operand addresses it advances (src1 too in mode 2).
    const uint32_t iteration = kernel::ApiOps::kLoopIteration + (scalar_mode ? 3 : 4) * kernel::ApiOps::kAddressAdvance;
    auto issue = [&](uint64_t reps, uint32_t on) {
        if (done > 0) s.ctx->scalar(iteration);
        isa::VecParams v;
        v.repeat = static_cast<uint16_t>(reps);
        const kernel::VecMask m(on);
        v.mask_lo = m.lo, v.mask_hi = m.hi;
        if (scalar_mode) v.with_index = 1, v.src1_blk_stride = 0, v.src1_rep_stride = 0;
        const uint64_t bytes = done * 256;
        kernel::detail::vec_one(*s.ctx, isa::Opcode::VSEL, dt,
                                {plus(dst, bytes), plus(src0, bytes), scalar_mode ? src1 : plus(src1, bytes),
                                 plus(sel, done * (lanes / 8))},
                                v, 0);
        done += reps;
    };
    // A VecMask holds up to 128 lanes: half's 128 lanes are its full mask; float's 64 likewise.
    for (uint64_t left = full; left > 0;) {
        const uint64_t reps = std::min<uint64_t>(left, 255);
        issue(reps, lanes);
        left -= reps;
    }
    if (tail) issue(1, static_cast<uint32_t>(tail));
}

void select_same_bits(isa::DType dt, isa::Addr dst, isa::Addr sel, isa::Addr src0, isa::Addr src1,
                      const isa::VecParams& v, const MaskArg& m) {
    const CoreState& s = *g_current;
    if (s.mask_counter)
        fail("Select in VSEL_CMPMASK_SPR mode with the mask register in counter mode (SetMaskCount) is not modelled "
             "by sfumato");
    for (uint32_t r = 0; r < v.repeat; ++r) {
        isa::VecParams one = v;
        one.repeat = 1;
        vec_issue(isa::Opcode::VSEL, dt, dt,
                  {plus(dst, uint64_t{r} * v.dst_rep_stride * kBlock), plus(src0, uint64_t{r} * v.src0_rep_stride * kBlock),
                   plus(src1, uint64_t{r} * v.src1_rep_stride * kBlock), sel},
                  one, 0, m);
    }
}

void select_repeat(isa::DType dt, isa::Addr dst, isa::Addr sel, isa::Addr src0, isa::Addr src1, int mode,
                   const isa::VecParams& v, const MaskArg& m) {
    if (mode == 0) {
        select_same_bits(dt, dst, sel, src0, src1, v, m);
        return;
    }
    // Modes 1 and 2: the repeats consume the bits one after the other (vec_issue advances them in counter mode).
    vec_issue(isa::Opcode::VSEL, dt, dt, {dst, src0, src1, sel}, v, 0, m);
}

}  // namespace sfumato::ascendc
