// Names, parsing, pipe assignment and equality of the instruction encoding (isa/instr.h).
#include "isa/instr.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <iterator>

namespace sfumato::isa {

namespace {
constexpr const char* kPipeNames[] = {"S", "MTE1", "MTE2", "MTE3", "M", "FIX", "V", "ALL"};
constexpr const char* kPosNames[] = {"GM", "L1", "L0A", "L0B", "L0C", "UB", "BT", "FB", "SPIDX"};
// clang-format off
constexpr const char* kOpNames[] = {
    "nop",
    "set_flag", "wait_flag", "pipe_barrier", "set_cross_flag", "wait_cross_flag",
    "scalar", "get_sysreg", "set_mask",
    "ld_gm", "st_gm", "dcci",
    "copy_gm_to_ub", "copy_gm_to_l1", "copy_gm_to_l1_nd2nz", "load2d_gm",
    "load2d", "load3d", "copy_l1_to_ub", "copy_l1_to_bt", "fill",
    "mad",
    "fixpipe", "copy_l1_to_fb",
    "copy_ub_to_gm", "copy_ub_to_l1", "copy_l1_to_gm",
    "copy_ub_to_ub", "copy_l0c_to_ub",
    "vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vand", "vor",
    "vadds", "vmuls", "vmaxs", "vmins",
    "vexp", "vln", "vsqrt", "vrsqrt", "vrec", "vabs", "vrelu", "vnot",
    "vlrelu", "vmadd", "vmla", "vaxpy", "vaddrelu",
    "vconv", "vcmp", "vcmps", "vsel",
    "vred_sum", "vred_max", "vred_min", "vredall_sum", "vredall_max", "vredall_min",
    "vdup", "vbrcb", "vtranspose", "vgather", "vci", "vcpadd", "vreducev2",
    "vbitsort", "vmrgsort4", "vgatherb", "vnchwconv"};
// clang-format on
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == static_cast<size_t>(Opcode::kCount));
constexpr const char* kCmpNames[] = {"eq", "ne", "lt", "gt", "le", "ge"};
constexpr const char* kSysRegNames[] = {"block_idx", "block_num", "sub_block_id", "sys_cnt"};
constexpr const char* kQuantNames[] = {"none", "scalar", "vector"};

template <class E, size_t N>
bool parse_in(const char* const (&names)[N], const char* s, E& out) {
    for (size_t i = 0; i < N; ++i)
        if (std::strcmp(s, names[i]) == 0) {
            out = static_cast<E>(i);
            return true;
        }
    return false;
}
}  // namespace

const char* pipe_name(Pipe p) { return kPipeNames[static_cast<int>(p)]; }
bool parse_pipe(const char* s, Pipe& out) { return parse_in(kPipeNames, s, out); }
const char* pos_name(Pos p) { return kPosNames[static_cast<int>(p)]; }
bool parse_pos(const char* s, Pos& out) { return parse_in(kPosNames, s, out); }
const char* opcode_name(Opcode op) {
    const auto i = static_cast<size_t>(op);
    return i < std::size(kOpNames) ? kOpNames[i] : "(bad opcode)";
}
bool parse_opcode(const char* s, Opcode& out) { return parse_in(kOpNames, s, out); }
const char* cmp_name(CmpMode m) { return kCmpNames[static_cast<int>(m)]; }
bool parse_cmp(const char* s, CmpMode& out) { return parse_in(kCmpNames, s, out); }
const char* sysreg_name(SysReg r) { return kSysRegNames[static_cast<int>(r)]; }
bool parse_sysreg(const char* s, SysReg& out) { return parse_in(kSysRegNames, s, out); }
const char* quant_name(QuantMode q) { return kQuantNames[static_cast<int>(q)]; }
bool parse_quant(const char* s, QuantMode& out) { return parse_in(kQuantNames, s, out); }

VecKind vec_kind(Opcode op) {
    switch (op) {
        case Opcode::VADD:
        case Opcode::VSUB:
        case Opcode::VMUL:
        case Opcode::VDIV:
        case Opcode::VMAX:
        case Opcode::VMIN:
        case Opcode::VAND:
        case Opcode::VOR:
        case Opcode::VADDRELU: return VecKind::Binary;
        case Opcode::VADDS:
        case Opcode::VMULS:
        case Opcode::VMAXS:
        case Opcode::VMINS:
        case Opcode::VLRELU: return VecKind::Scalar;
        case Opcode::VMADD:
        case Opcode::VMLA:
        case Opcode::VAXPY: return VecKind::Fused;
        case Opcode::VCONV: return VecKind::Conv;
        case Opcode::VCMP:
        case Opcode::VCMPS: return VecKind::Cmp;
        case Opcode::VSEL: return VecKind::Sel;
        case Opcode::VRED_SUM:
        case Opcode::VRED_MAX:
        case Opcode::VRED_MIN: return VecKind::Red;
        case Opcode::VREDALL_SUM:
        case Opcode::VREDALL_MAX:
        case Opcode::VREDALL_MIN: return VecKind::RedAll;
        case Opcode::VDUP: return VecKind::Dup;
        case Opcode::VBRCB: return VecKind::Brcb;
        case Opcode::VTRANSPOSE: return VecKind::Transpose;
        case Opcode::VGATHER: return VecKind::Gather;
        case Opcode::VCI: return VecKind::Index;
        case Opcode::VCPADD: return VecKind::PairRed;
        case Opcode::VREDUCEV2: return VecKind::GatherMask;
        case Opcode::VBITSORT: return VecKind::BitSort;
        case Opcode::VMRGSORT4: return VecKind::MrgSort;
        case Opcode::VGATHERB: return VecKind::GatherB;
        default: return VecKind::Unary;
    }
}

bool vec_uses_src1(Opcode op) {
    const VecKind k = vec_kind(op);
    return k == VecKind::Binary || k == VecKind::Sel || op == Opcode::VMADD || op == Opcode::VMLA || op == Opcode::VCMP ||
           k == VecKind::Gather || k == VecKind::BitSort || k == VecKind::MrgSort || k == VecKind::GatherB;
}

bool vec_reads_dst(Opcode op) { return op == Opcode::VMADD || op == Opcode::VMLA || op == Opcode::VAXPY; }

namespace {
constexpr ParamKind param_kind_of(Opcode op) {
    switch (op) {
        case Opcode::NOP: return ParamKind::None;
        case Opcode::SET_FLAG:
        case Opcode::WAIT_FLAG:
        case Opcode::PIPE_BARRIER: return ParamKind::Flag;
        case Opcode::SET_CROSS_FLAG:
        case Opcode::WAIT_CROSS_FLAG: return ParamKind::CrossFlag;
        case Opcode::SCALAR:
        case Opcode::GET_SYSREG:
        case Opcode::LD_GM:
        case Opcode::ST_GM:
        case Opcode::DCCI: return ParamKind::Scalar;
        case Opcode::COPY_GM_TO_UB:
        case Opcode::COPY_GM_TO_L1:
        case Opcode::COPY_L1_TO_UB:
        case Opcode::COPY_L1_TO_BT:
        case Opcode::COPY_UB_TO_GM:
        case Opcode::COPY_UB_TO_L1:
        case Opcode::COPY_L1_TO_GM:
        case Opcode::COPY_L1_TO_FB:
        case Opcode::COPY_UB_TO_UB: return ParamKind::Copy;
        case Opcode::COPY_GM_TO_L1_ND2NZ: return ParamKind::NdNz;
        case Opcode::LOAD2D_GM:
        case Opcode::LOAD2D: return ParamKind::Load2d;
        case Opcode::LOAD3D: return ParamKind::Load3d;
        case Opcode::FILL: return ParamKind::Fill;
        case Opcode::MAD: return ParamKind::Mad;
        case Opcode::FIXPIPE:
        case Opcode::COPY_L0C_TO_UB: return ParamKind::Fix;
        case Opcode::VNCHWCONV: return ParamKind::Nchw;
        default: return ParamKind::Vec;  // SET_MASK and every V-pipe compute opcode
    }
}

}  // namespace

ParamKind param_kind(Opcode op) { return param_kind_of(op); }

namespace {
constexpr Pipe default_pipe_of(Opcode op) {
    switch (op) {
        case Opcode::COPY_GM_TO_UB:
        case Opcode::COPY_GM_TO_L1:
        case Opcode::COPY_GM_TO_L1_ND2NZ:
        case Opcode::LOAD2D_GM: return Pipe::MTE2;
        case Opcode::LOAD2D:
        case Opcode::LOAD3D:
        case Opcode::COPY_L1_TO_UB:
        case Opcode::COPY_L1_TO_BT:
        case Opcode::FILL: return Pipe::MTE1;
        case Opcode::MAD: return Pipe::M;
        case Opcode::FIXPIPE:
        case Opcode::COPY_L1_TO_FB: return Pipe::FIX;
        case Opcode::COPY_UB_TO_GM:
        case Opcode::COPY_UB_TO_L1:
        case Opcode::COPY_L1_TO_GM: return Pipe::MTE3;
        case Opcode::NOP:
        case Opcode::SET_FLAG:
        case Opcode::WAIT_FLAG:
        case Opcode::PIPE_BARRIER:
        case Opcode::SET_CROSS_FLAG:
        case Opcode::WAIT_CROSS_FLAG:
        case Opcode::SCALAR:
        case Opcode::GET_SYSREG:
        case Opcode::SET_MASK:
        case Opcode::LD_GM:
        case Opcode::ST_GM:
        case Opcode::DCCI: return Pipe::S;
        default: return Pipe::V;  // COPY_UB_TO_UB, COPY_L0C_TO_UB and all vector compute
    }
}

}  // namespace

Pipe default_pipe(Opcode op) { return default_pipe_of(op); }

Pipe exec_pipe(const Instr& in) {
    switch (in.op) {
        case Opcode::SET_FLAG:
        case Opcode::PIPE_BARRIER: return in.flag.src;
        case Opcode::WAIT_FLAG: return in.flag.dst;
        case Opcode::SET_CROSS_FLAG:
        case Opcode::WAIT_CROSS_FLAG: return in.xflag.pipe;
        default: return default_pipe(in.op);
    }
}

namespace {
// The buffers an opcode's operands live in when they are fixed by the opcode (dst, src0, src1,
// src2); GM where the operand is unused.
struct Positions {
    Pos p[4] = {Pos::GM, Pos::GM, Pos::GM, Pos::GM};
};
constexpr Positions default_positions(Opcode op) {
    auto set = [](Pos d, Pos s0, Pos s1 = Pos::GM, Pos s2 = Pos::GM) { return Positions{{d, s0, s1, s2}}; };
    switch (op) {
        case Opcode::COPY_GM_TO_UB: return set(Pos::UB, Pos::GM);
        case Opcode::COPY_GM_TO_L1:
        case Opcode::COPY_GM_TO_L1_ND2NZ: return set(Pos::L1, Pos::GM);
        case Opcode::LOAD2D_GM: return set(Pos::L0A, Pos::GM);
        case Opcode::LOAD2D:
        case Opcode::LOAD3D: return set(Pos::L0A, Pos::L1);
        case Opcode::COPY_L1_TO_UB: return set(Pos::UB, Pos::L1);
        case Opcode::COPY_L1_TO_BT: return set(Pos::BT, Pos::L1);
        case Opcode::FILL: return set(Pos::L1, Pos::GM);
        case Opcode::MAD: return set(Pos::L0C, Pos::L0A, Pos::L0B, Pos::BT);
        case Opcode::FIXPIPE: return set(Pos::GM, Pos::L0C, Pos::FB);
        case Opcode::COPY_L1_TO_FB: return set(Pos::FB, Pos::L1);
        case Opcode::COPY_UB_TO_GM: return set(Pos::GM, Pos::UB);
        case Opcode::COPY_UB_TO_L1: return set(Pos::L1, Pos::UB);
        case Opcode::COPY_L1_TO_GM: return set(Pos::GM, Pos::L1);
        case Opcode::COPY_UB_TO_UB: return set(Pos::UB, Pos::UB);
        case Opcode::COPY_L0C_TO_UB: return set(Pos::UB, Pos::L0C, Pos::FB);
        case Opcode::LD_GM:
        case Opcode::ST_GM:
        case Opcode::DCCI: return set(Pos::GM, Pos::GM);
        default:
            if (op >= Opcode::VADD && op < Opcode::kCount) return set(Pos::UB, Pos::UB, Pos::UB, Pos::UB);
            return Positions{};
    }
}
}  // namespace

namespace {
// What make_instr and operator== read of an opcode, in one table made at compile time from the
// functions above (three switches per instruction built were a measurable part of the kernel
// API's time).
struct OpInfo {
    Pipe pipe = Pipe::S;
    ParamKind kind = ParamKind::None;
    Positions pos;
};
constexpr OpInfo op_info_of(Opcode op) { return {default_pipe_of(op), param_kind_of(op), default_positions(op)}; }
constexpr auto kOpInfo = [] {
    std::array<OpInfo, static_cast<size_t>(Opcode::kCount)> t{};
    for (size_t i = 0; i < t.size(); ++i) t[i] = op_info_of(static_cast<Opcode>(i));
    return t;
}();
constexpr OpInfo kNotAnOpcode = op_info_of(Opcode::kCount);  // what the functions say of one
inline const OpInfo& op_info(Opcode op) {
    const auto i = static_cast<size_t>(op);
    return i < kOpInfo.size() ? kOpInfo[i] : kNotAnOpcode;
}
}  // namespace

Instr make_instr(Opcode op) {
    Instr in;  // VecParams value-initialised: None and Vec need nothing more
    in.op = op;
    const OpInfo& d = op_info(op);
    in.pipe = d.pipe;
    switch (d.kind) {
        case ParamKind::None:
        case ParamKind::Vec: break;
        case ParamKind::Flag: in.flag = FlagParams{}; break;
        case ParamKind::CrossFlag: in.xflag = CrossFlagParams{}; break;
        case ParamKind::Scalar: in.sc = ScalarParams{}; break;
        case ParamKind::Copy: in.copy = CopyParams{}; break;
        case ParamKind::NdNz: in.nd = NdNzParams{}; break;
        case ParamKind::Load2d: in.l2d = Load2dParams{}; break;
        case ParamKind::Load3d: in.l3d = Load3dParams{}; break;
        case ParamKind::Fill: in.fill = FillParams{}; break;
        case ParamKind::Mad: in.mad = MadParams{}; break;
        case ParamKind::Fix: in.fix = FixpipeParams{}; break;
        case ParamKind::Nchw: in.nchw = NchwParams{}; break;
    }
    in.dst.pos = d.pos.p[0], in.src0.pos = d.pos.p[1], in.src1.pos = d.pos.p[2], in.src2.pos = d.pos.p[3];
    return in;
}

namespace {
// VecParams equality over the bytes of its fields: its fields are integers and one-byte enums laid
// out with padding only between the strides and the masks (checked below), so comparing the bytes
// of the fields is comparing the fields, in six loads each instead of twelve compares.
constexpr size_t kVecHead = offsetof(VecParams, src1_rep_stride) + sizeof(uint16_t);
constexpr size_t kVecTail = offsetof(VecParams, mask_lo);
static_assert(offsetof(VecParams, repeat) == 0 && offsetof(VecParams, dst_blk_stride) == 2 &&
                  offsetof(VecParams, src0_blk_stride) == 4 && offsetof(VecParams, src1_blk_stride) == 6 &&
                  offsetof(VecParams, dst_rep_stride) == 8 && offsetof(VecParams, src0_rep_stride) == 10 &&
                  offsetof(VecParams, src1_rep_stride) == 12 && kVecHead == 14,
              "VecParams' strides must be contiguous from offset 0");
static_assert(offsetof(VecParams, mask_hi) == kVecTail + 8 &&
                  offsetof(VecParams, src_dtype) == kVecTail + 16 &&
                  offsetof(VecParams, round) == kVecTail + 17 && offsetof(VecParams, cmp) == kVecTail + 18 &&
                  offsetof(VecParams, with_index) == kVecTail + 19 &&
                  offsetof(VecParams, gather_span) == kVecTail + 20 && sizeof(VecParams) == kVecTail + 24,
              "VecParams' fields from mask_lo on must be contiguous to its end");
static_assert(sizeof(DType) == 1 && sizeof(RoundMode) == 1 && sizeof(CmpMode) == 1, "one-byte enums");
template <class T>
uint64_t load(const VecParams& v, size_t at) {
    T x;
    std::memcpy(&x, reinterpret_cast<const unsigned char*>(&v) + at, sizeof x);
    return x;
}
// Bytes [0, 14) and [kVecTail, kVecTail + 24): every field, no padding.
bool vec_equal(const VecParams& a, const VecParams& b) {
    const uint64_t head = (load<uint64_t>(a, 0) ^ load<uint64_t>(b, 0)) |
                          (load<uint32_t>(a, 8) ^ load<uint32_t>(b, 8)) |
                          (load<uint16_t>(a, 12) ^ load<uint16_t>(b, 12));
    const uint64_t tail = (load<uint64_t>(a, kVecTail) ^ load<uint64_t>(b, kVecTail)) |
                          (load<uint64_t>(a, kVecTail + 8) ^ load<uint64_t>(b, kVecTail + 8)) |
                          (load<uint64_t>(a, kVecTail + 16) ^ load<uint64_t>(b, kVecTail + 16));
    return (head | tail) == 0;
}
}  // namespace

bool operator==(const Instr& a, const Instr& b) {
    // Opcode, pipe and dtype in one word, the operands' addresses and buffers without a branch each.
    static_assert(offsetof(Instr, op) == 0 && sizeof(Opcode) == 2 && offsetof(Instr, pipe) == 2 &&
                      offsetof(Instr, dtype) == 3 && sizeof(Pipe) == 1 && sizeof(DType) == 1,
                  "opcode, pipe and dtype fill the instruction's first four bytes");
    uint32_t ha, hb;
    std::memcpy(&ha, &a, 4);
    std::memcpy(&hb, &b, 4);
    const uint64_t addrs = (a.dst.addr ^ b.dst.addr) | (a.src0.addr ^ b.src0.addr) | (a.src1.addr ^ b.src1.addr) |
                           (a.src2.addr ^ b.src2.addr);
    const unsigned pos = (static_cast<unsigned>(a.dst.pos) ^ static_cast<unsigned>(b.dst.pos)) |
                         (static_cast<unsigned>(a.src0.pos) ^ static_cast<unsigned>(b.src0.pos)) |
                         (static_cast<unsigned>(a.src1.pos) ^ static_cast<unsigned>(b.src1.pos)) |
                         (static_cast<unsigned>(a.src2.pos) ^ static_cast<unsigned>(b.src2.pos));
    if ((ha ^ hb) | addrs | pos) return false;
    // Scalars compare by value and sign (so -0 != +0); any two nans are equal. Equal bits are
    // equal by that rule; only different bits need it.
    if (std::memcmp(&a.scalar, &b.scalar, sizeof(double)) != 0) {
        const bool both_nan = std::isnan(a.scalar) && std::isnan(b.scalar);
        if (!both_nan && (a.scalar != b.scalar || std::signbit(a.scalar) != std::signbit(b.scalar))) return false;
    }
    switch (op_info(a.op).kind) {
        case ParamKind::None: return true;
        case ParamKind::Vec:
            if (a.op == Opcode::SET_MASK)
                return a.vec.mask_lo == b.vec.mask_lo && a.vec.mask_hi == b.vec.mask_hi;
            return vec_equal(a.vec, b.vec);
        case ParamKind::Flag: return a.flag == b.flag;
        case ParamKind::CrossFlag: return a.xflag == b.xflag;
        case ParamKind::Scalar: return a.sc == b.sc;
        case ParamKind::Copy: return a.copy == b.copy;
        case ParamKind::NdNz: return a.nd == b.nd;
        case ParamKind::Load2d: return a.l2d == b.l2d;
        case ParamKind::Load3d: return a.l3d == b.l3d;
        case ParamKind::Fill: return a.fill == b.fill;
        case ParamKind::Mad: return a.mad == b.mad;
        case ParamKind::Fix: return a.fix == b.fix;
        case ParamKind::Nchw: return a.nchw == b.nchw;
    }
    return false;
}

}  // namespace sfumato::isa

namespace sfumato::isa {

uint32_t scalar_setup_words(const Instr& in) {
    switch (param_kind(in.op)) {
        case ParamKind::None:
        case ParamKind::Flag:
        case ParamKind::CrossFlag: return 0;  // immediates
        case ParamKind::Scalar:
            switch (in.op) {
                case Opcode::LD_GM: return 1;                   // address
                case Opcode::ST_GM: return 2;                   // address, value
                case Opcode::DCCI: return in.sc.all ? 0 : 1;    // address of the line
                default: return 0;
            }
        case ParamKind::Copy: return 3;    // dst, src, burst geometry (count, length, gaps, padding)
        case ParamKind::NdNz: return 4;    // dst, src, two words of matrix geometry and strides
        case ParamKind::Load2d: return 3;  // dst, src, start/repeat/stride/gap
        case ParamKind::Load3d: return 5;  // dst, src, feature map, filter and window geometry
        case ParamKind::Fill: return 3;    // dst, geometry, value
        case ParamKind::Mad: return in.mad.bias ? 5 : 4;  // c, a, b, [bias,] m/k/n
        // dst, src, 2 geometry, [scale,] [the ND matrices' count and strides]
        case ParamKind::Fix: return (in.fix.quant == QuantMode::NONE ? 4 : 5) + (in.fix.nd_num > 1 ? 1 : 0);
        // The four VA registers (8 addresses each, written from the scalar unit), repeat and strides.
        case ParamKind::Nchw: return 4 + 1;
        case ParamKind::Vec: break;
    }
    if (in.op == Opcode::SET_MASK) return 2;  // mask_lo, mask_hi
    // Vector: the address operands the opcode reads, one word of repeat and strides, and the
    // scalar operand where it has one.
    switch (in.op) {
        case Opcode::VDUP:
        case Opcode::VCI: return 1 + 1 + 1;
        case Opcode::VSEL: return 4 + 1;
        case Opcode::VADDS:
        case Opcode::VMULS:
        case Opcode::VMAXS:
        case Opcode::VMINS:
        case Opcode::VLRELU:
        case Opcode::VAXPY:
        case Opcode::VCMPS: return 2 + 1 + 1;
        case Opcode::VADD:
        case Opcode::VSUB:
        case Opcode::VMUL:
        case Opcode::VDIV:
        case Opcode::VMAX:
        case Opcode::VMIN:
        case Opcode::VAND:
        case Opcode::VOR:
        case Opcode::VADDRELU:
        case Opcode::VMADD:
        case Opcode::VMLA:
        case Opcode::VCMP:
        case Opcode::VGATHER: return 3 + 1;
        case Opcode::VREDUCEV2: return (in.scalar == 0 ? 3 : 2) + 1 + 1;  // addresses, strides, pattern
        case Opcode::VBITSORT: return 3 + 1;
        case Opcode::VGATHERB: return 3 + 1;
        case Opcode::VMRGSORT4: return 1 + 4 + 2;  // dst, the four list addresses, lengths, config
        default: return 2 + 1;  // unary, conversions, reductions, copies, transposes
    }
}

}  // namespace sfumato::isa
