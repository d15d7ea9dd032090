// Instruction builders behind runtime/kernel/api.h: each turns an Ascend-C-like call into one
// ISA instruction (opcode and pipe chosen from the operand positions) and issues it. Checks
// here are the ones only the API can make (which positions a call connects, parameters that
// do not fit an instruction field); operand ranges and alignment are the core's to check.
#include "runtime/kernel/api.h"

#include <limits>

#include "isa/layout.h"

namespace sfumato::kernel::detail {

namespace {

isa::Instr make(isa::Opcode op, isa::DType t) {
    isa::Instr in = isa::make_instr(op);
    in.dtype = t;
    return in;
}

[[noreturn]] void bad_positions(const char* call, isa::Pos dst, isa::Pos src) {
    throw InputError(std::string(call) + ": no copy from " + isa::pos_name(src) + " to " +
                     isa::pos_name(dst));
}

template <class To, class From>
To narrow(From v, const char* call, const char* field) {
    if (v > std::numeric_limits<To>::max())
        throw InputError(std::string(call) + ": " + field + " = " + std::to_string(v) +
                         " does not fit the instruction");
    return static_cast<To>(v);
}

}  // namespace

isa::CopyParams blocks(const DataCopyParams& p) {
    return {p.blockCount, p.blockLen * 32u, p.srcStride * 32u, p.dstStride};
}
isa::CopyParams bytes(const DataCopyExtParams& p) {
    return {p.blockCount, p.blockLen, p.srcStride, p.dstStride};
}

void copy_in(KernelContext& ctx, isa::DType t, isa::Pos dst_pos, uint32_t dst, uint64_t src,
             const isa::CopyParams& c, double pad_value) {
    isa::Opcode op;
    switch (dst_pos) {
        case isa::Pos::UB:
            op = isa::Opcode::COPY_GM_TO_UB;
            break;
        case isa::Pos::L1:
            op = isa::Opcode::COPY_GM_TO_L1;
            break;
        default:
            bad_positions("DataCopy", dst_pos, isa::Pos::GM);
    }
    isa::Instr in = make(op, t);
    in.dst = {dst, dst_pos};
    in.src0 = {src, isa::Pos::GM};
    in.copy = c;
    in.scalar = pad_value;
    ctx.issue(in);
}

void copy_out(KernelContext& ctx, isa::DType t, uint64_t dst, isa::Pos src_pos, uint32_t src,
              const isa::CopyParams& c) {
    // L1 -> GM: the cube core's MTE3 (split parts; a core without that path stops the run).
    if (src_pos != isa::Pos::UB && src_pos != isa::Pos::L1) bad_positions("DataCopy", isa::Pos::GM, src_pos);
    isa::Instr in = make(src_pos == isa::Pos::L1 ? isa::Opcode::COPY_L1_TO_GM : isa::Opcode::COPY_UB_TO_GM, t);
    in.dst = {dst, isa::Pos::GM};
    in.src0 = {src, src_pos};
    in.copy = c;
    ctx.issue(in);
}

void copy_local(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
                const isa::CopyParams& c) {
    isa::Opcode op;
    if (src.pos == isa::Pos::L1 && dst.pos == isa::Pos::UB)
        op = isa::Opcode::COPY_L1_TO_UB;
    else if (src.pos == isa::Pos::UB && dst.pos == isa::Pos::L1)
        op = isa::Opcode::COPY_UB_TO_L1;
    else if (src.pos == isa::Pos::UB && dst.pos == isa::Pos::UB)
        op = isa::Opcode::COPY_UB_TO_UB;
    else if (src.pos == isa::Pos::L1 && dst.pos == isa::Pos::FB)
        op = isa::Opcode::COPY_L1_TO_FB;
    else if (src.pos == isa::Pos::L1 && dst.pos == isa::Pos::BT)
        op = isa::Opcode::COPY_L1_TO_BT;
    else
        bad_positions("DataCopy", dst.pos, src.pos);
    isa::Instr in = make(op, t);
    in.dst = dst;
    in.src0 = src;
    in.copy = c;
    ctx.issue(in);
}

void nd2nz(KernelContext& ctx, isa::DType t, const isa::Addr& dst, uint64_t src, const Nd2NzParams& p) {
    if (dst.pos != isa::Pos::L1) bad_positions("DataCopy(Nd2NzParams)", dst.pos, isa::Pos::GM);
    isa::Instr in = make(isa::Opcode::COPY_GM_TO_L1_ND2NZ, t);
    in.dst = dst;
    in.src0 = {src, isa::Pos::GM};
    in.nd.nd_num = p.ndNum;
    in.nd.n = p.nValue;
    in.nd.d = p.dValue;
    in.nd.src_d = p.srcDValue;
    in.nd.src_nd_stride = p.srcNdMatrixStride;
    in.nd.dst_c0_stride = p.dstNzC0Stride;
    in.nd.dst_n_stride = p.dstNzNStride;
    in.nd.dst_nd_stride = p.dstNzMatrixStride;
    ctx.issue(in);
}

void load2d(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
            const LoadData2DParams& p) {
    if ((dst.pos != isa::Pos::L0A && dst.pos != isa::Pos::L0B) ||
        (src.pos != isa::Pos::L1 && src.pos != isa::Pos::GM))
        bad_positions("LoadData", dst.pos, src.pos);
    isa::Instr in = make(src.pos == isa::Pos::GM ? isa::Opcode::LOAD2D_GM : isa::Opcode::LOAD2D, t);
    in.dst = dst;
    in.src0 = src;
    in.l2d.start_index = p.startIndex;
    in.l2d.repeat = p.repeatTimes;
    in.l2d.src_stride = p.srcStride;
    in.l2d.dst_gap = p.dstGap;
    in.l2d.transpose = p.ifTranspose ? 1 : 0;
    ctx.issue(in);
}

void load2d_transpose(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
                      const LoadData2dTransposeParams& p) {
    if ((dst.pos != isa::Pos::L0A && dst.pos != isa::Pos::L0B) || src.pos != isa::Pos::L1)
        bad_positions("LoadDataWithTranspose", dst.pos, src.pos);
    isa::Instr in = make(isa::Opcode::LOAD2D, t);
    in.dst = dst;
    in.src0 = src;
    in.l2d.start_index = p.startIndex;
    in.l2d.repeat = p.repeatTimes;
    in.l2d.src_stride = p.srcStride;
    in.l2d.dst_gap = p.dstGap;
    in.l2d.transpose = 1;
    in.l2d.frac_gap = isa::dtype_size(t) == 2 ? 0 : p.dstFracGap;
    ctx.issue(in);
}

void load3d(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const isa::Addr& src,
            const LoadData3DParams& p) {
    if ((dst.pos != isa::Pos::L0A && dst.pos != isa::Pos::L0B) || src.pos != isa::Pos::L1)
        bad_positions("LoadData(3D)", dst.pos, src.pos);
    isa::Instr in = make(isa::Opcode::LOAD3D, t);
    in.dst = dst;
    in.src0 = src;
    isa::Load3dParams& l = in.l3d;
    l.l1_h = p.l1H, l.l1_w = p.l1W, l.c1 = p.c1;
    l.kh = p.filterH, l.kw = p.filterW;
    l.stride_h = p.strideH, l.stride_w = p.strideW;
    l.dil_h = p.dilationH, l.dil_w = p.dilationW;
    l.pad_left = p.padList[0], l.pad_right = p.padList[1], l.pad_top = p.padList[2],
    l.pad_bottom = p.padList[3];
    l.m_start = p.mStartPt, l.m_ext = p.mExtension;
    l.k_start = p.kStartPt, l.k_ext = p.kExtension;
    l.transpose = p.transpose ? 1 : 0;
    in.scalar = p.padValue;
    ctx.issue(in);
}

void load2d_sparse(KernelContext& ctx, const isa::Addr& dst, const isa::Addr& src, const isa::Addr& idx,
                   const LoadData2DParams& p) {
    if (dst.pos != isa::Pos::L0B || src.pos != isa::Pos::L1) bad_positions("LoadDataWithSparse", dst.pos, src.pos);
    if (idx.pos != isa::Pos::L1)
        throw InputError(std::string("LoadDataWithSparse: the index is read from L1, not ") + isa::pos_name(idx.pos));
    if (p.srcStride != 1 || p.dstGap != 0 || p.ifTranspose)
        throw InputError("LoadDataWithSparse: consecutive fractals only (srcStride 1, dstGap 0, no transpose)");
    isa::Instr in = make(isa::Opcode::LOAD2D, isa::DType::INT8);
    in.dst = dst;
    in.src0 = src;
    in.src1 = idx;
    in.l2d.start_index = p.startIndex;
    in.l2d.repeat = p.repeatTimes;
    in.l2d.sparse = 1;
    ctx.issue(in);
}

void fill(KernelContext& ctx, isa::DType t, const isa::Addr& dst, const InitConstValueParams& p) {
    isa::Instr in = make(isa::Opcode::FILL, t);
    in.dst = dst;
    in.fill = {p.repeatTimes, p.blockNum, p.dstGap};
    in.scalar = p.initValue;
    ctx.issue(in);
}

void mmad(KernelContext& ctx, isa::DType t, const isa::Addr& c, const isa::Addr& a, const isa::Addr& b,
          const isa::Addr* bias, const MmadParams& p) {
    if (bias && !p.cmatrixInitVal)
        throw InputError("Mmad: a bias only when cmatrixInitVal (overwrite) is set");
    isa::Instr in = make(isa::Opcode::MAD, t);
    in.dst = c;
    in.src0 = a;
    in.src1 = b;
    if (bias) in.src2 = *bias;
    in.mad.m = p.m, in.mad.k = p.k, in.mad.n = p.n;
    in.mad.accumulate = p.cmatrixInitVal ? 0 : 1;
    in.mad.bias = bias ? 1 : 0;
    in.mad.gemv = p.gemv ? 1 : 0;
    in.mad.kalign16 = p.kDirectionAlign ? 1 : 0;
    in.mad.unit_flag = p.unitFlag;
    in.mad.sparse = p.sparse ? 1 : 0;
    ctx.issue(in);
}

void fixpipe(KernelContext& ctx, isa::Opcode op, isa::DType acc, isa::DType out, const isa::Addr& dst,
             const isa::Addr& src, const isa::Addr* scales, const FixpipeParams& p) {
    isa::Instr in = make(op, acc);
    in.dst = dst;
    in.src0 = src;
    if (scales) in.src1 = *scales;
    isa::FixpipeParams& f = in.fix;
    f.m = p.mSize, f.n = p.nSize;
    f.src_stride =
        p.srcStride ? p.srcStride : narrow<uint16_t>(isa::round_up16(p.mSize), "Fixpipe", "srcStride");
    f.dst_stride = p.dstStride ? p.dstStride : (p.nz2ndEn ? p.nSize : p.mSize);
    f.out_dtype = out;
    f.quant = p.quantPre;
    f.relu = p.reluEn ? 1 : 0;
    f.nz2nd = p.nz2ndEn ? 1 : 0;
    f.atomic = p.atomicAdd ? 1 : 0;
    f.channel_split = p.channelSplit && !p.nz2ndEn && out == isa::DType::FP32 ? 1 : 0;
    f.unit_flag = p.unitFlag;
    f.nd_num = p.ndNum, f.src_nd_stride = p.srcNdStride, f.dst_nd_stride = p.dstNdStride;
    in.scalar = p.deqScalar;
    ctx.issue(in);
}

}  // namespace sfumato::kernel::detail

namespace sfumato::kernel {

namespace {
void cross(KernelContext& ctx, isa::Opcode op, uint8_t mode, uint8_t flag_id, Pipe pipe, const char* call,
           bool all) {
    if (mode > 2)
        throw InputError(std::string(call) + ": mode " + std::to_string(mode) + " (valid: 0, 1, 2)");
    if (flag_id > isa::kMaxCrossFlag)
        throw InputError(std::string(call) + ": flag id " + std::to_string(flag_id) + " > " +
                         std::to_string(isa::kMaxCrossFlag));
    isa::Instr in = isa::make_instr(op);
    in.xflag = {mode, flag_id, pipe, static_cast<uint8_t>(all ? 1 : 0)};
    ctx.issue(in);
}
}  // namespace

void CrossCoreSetFlag(KernelContext& ctx, uint8_t mode, uint8_t flag_id, Pipe pipe, bool chip_counting) {
    cross(ctx, isa::Opcode::SET_CROSS_FLAG, mode, flag_id, pipe, "CrossCoreSetFlag", chip_counting);
}
void CrossCoreWaitFlag(KernelContext& ctx, uint8_t mode, uint8_t flag_id, Pipe pipe, bool chip_counting) {
    cross(ctx, isa::Opcode::WAIT_CROSS_FLAG, mode, flag_id, pipe, "CrossCoreWaitFlag", chip_counting);
}
void SyncAll(KernelContext& ctx, uint8_t flag_id, Pipe pipe, bool chip_counting) {
    CrossCoreSetFlag(ctx, 0, flag_id, pipe, chip_counting);
    CrossCoreWaitFlag(ctx, 0, flag_id, Pipe::S, chip_counting);
}

}  // namespace sfumato::kernel
