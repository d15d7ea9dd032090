// The instruction set of a DaVinci-style AI core, as the pipes see it: one compact POD per
// instruction (no heap), tagged with the pipe that executes it. The scalar unit issues these
// into per-pipe in-order queues; functional semantics live in isa/semantics.h. The encoding is
// structural (opcode + operand addresses + one parameter struct per instruction class), not the
// chip's binary format: every quantity a latency model needs (repeats, fractal counts, bytes) can
// be read off the fields directly. Scalar ALU work is not encoded per instruction: the kernel's
// C++ code is the scalar unit; only system-register reads, the mask register, scalar loads and
// stores of global memory (through the data cache), the data cache's clean/invalidate and a
// cycle charge (for recorded streams) are instructions.
#pragma once
#include <cstddef>
#include <cstdint>

#include "isa/dtype.h"

namespace sfumato::isa {

// Pipes of a core. S = scalar; ALL only names "every pipe" in barriers.
enum class Pipe : uint8_t { S, MTE1, MTE2, MTE3, M, FIX, V, ALL, kCount };
constexpr int kNumPipes = static_cast<int>(Pipe::ALL);
const char* pipe_name(Pipe p);
bool parse_pipe(const char* s, Pipe& out);

// Storage positions (buffers) an operand can live in.
enum class Pos : uint8_t { GM, L1, L0A, L0B, L0C, UB, BT, FB, kCount };
const char* pos_name(Pos p);
bool parse_pos(const char* s, Pos& out);

// clang-format off
enum class Opcode : uint16_t {
    NOP,
    // sync
    SET_FLAG,         // flag: src pipe, dst pipe, event id (executes in src pipe)
    WAIT_FLAG,        // executes in dst pipe
    PIPE_BARRIER,     // flag.src = the pipe to drain (ALL = every pipe)
    SET_CROSS_FLAG,   // xflag: split-arch cross-core counter +1, after xflag.pipe drained
    WAIT_CROSS_FLAG,  // xflag: blocks xflag.pipe while the counter is 0, then -1
    // scalar / system registers (Pipe::S)
    SCALAR,      // sc.cycles of scalar work (recorded streams replay control flow with it)
    GET_SYSREG,  // x[sc.xd] = sysreg sc.reg (block idx/num, sub-block id, system counter)
    SET_MASK,    // vector mask register = vec.mask_lo/hi (only the mask fields are meaningful)
    // scalar access to global memory through the core's data cache (Pipe::S)
    LD_GM,       // x[sc.xd] = the dtype-sized value at GM src0 (raw bits, zero-extended)
    ST_GM,       // GM dst = scalar, rounded once to dtype
    DCCI,        // data cache clean and invalidate: the line holding GM dst, or every line (sc.all = 1)
    // MTE2: global memory -> local
    COPY_GM_TO_UB,    // copy: bursts, gaps, byte-exact length, left/right padding (value = scalar)
    COPY_GM_TO_L1,    // copy
    COPY_GM_TO_L1_ND2NZ,  // nd: ND matrices -> NZ fractals in L1
    LOAD2D_GM,        // l2d: GM -> L0A/L0B, whole 512-B fractals
    // MTE1: on-chip moves
    LOAD2D,       // l2d: L1 -> L0A/L0B, optional per-fractal transpose
    LOAD3D,       // l3d: L1 (NC1HWC0) -> L0A (ZZ) img2col with stride/dilation/padding
    COPY_L1_TO_UB,  // copy (coupled cores only)
    COPY_L1_TO_BT,  // copy: L1 -> the bias table (mad bias, fp32/int32 entries), split parts' cube core
    FILL,         // fill: dst (L1/L0A/L0B) = scalar in dtype
    // M: cube
    MAD,  // mad: L0C (NZ) = [L0C +] L0A (ZZ) x L0B (ZN) [+ bias in BT]
    // FIX: accumulator drain
    FIXPIPE,  // fix: L0C -> GM/L1 with dequant/quant, ReLU, cast, NZ->ND
    COPY_L1_TO_FB,  // copy: L1 -> FixPipe buffer (per-channel quantisation words), in the FIX pipe
    // MTE3: stores
    COPY_UB_TO_GM,  // copy: bursts; copy.atomic = 1 does an atomic add in dtype
    COPY_UB_TO_L1,  // copy
    COPY_L1_TO_GM,  // copy: bursts (the cube core's MTE3, split parts: L1 straight to GM)
    // V: vector
    COPY_UB_TO_UB,    // copy
    COPY_L0C_TO_UB,   // fix: coupled cores drain the accumulator through the vector pipe
    VADD, VSUB, VMUL, VDIV, VMAX, VMIN, VAND, VOR,  // binary: dst = src0 op src1
    VADDS, VMULS, VMAXS, VMINS,                     // vector-scalar: dst = src0 op scalar
    VEXP, VLN, VSQRT, VRSQRT, VREC, VABS, VRELU, VNOT,  // unary: dst = f(src0)
    VLRELU,                       // dst = src0 >= 0 ? src0 : src0 * scalar
    VMADD,                        // dst = src0 * dst + src1
    VMLA,                         // dst = src0 * src1 + dst
    VAXPY,                        // dst = src0 * scalar + dst
    VADDRELU,                     // dst = max(src0 + src1, 0)
    VCONV,                        // dst(dtype) = round(src0(vec.src_dtype), vec.round)
    VCMP,                         // bitmask dst (1 bit per lane) = src0 vec.cmp src1
    VCMPS,                        // bitmask dst = src0 vec.cmp scalar
    VSEL,                         // dst = bit(src2 mask) ? src0 : src1
    VRED_SUM, VRED_MAX, VRED_MIN,        // per-repeat reduction (vec.with_index: value,index)
    VREDALL_SUM, VREDALL_MAX, VREDALL_MIN,  // whole reduction over all repeats
    VDUP,                         // dst = scalar
    VBRCB,                        // each of 8 src elements per repeat fills one dst block
    VTRANSPOSE,                   // 16x16 16-bit transpose per repeat
    VGATHER,                      // dst[i] = src0[byte offset src1[i] (uint32)]
    VCI,                          // dst lane l of repeat r = scalar + r * lanes + l (an index vector)
    VCPADD,                       // per repeat: dst[j] = src0[2j] + src0[2j + 1] (pairs of lanes)
    VREDUCEV2,                    // GatherMask: src0 lanes a pattern selects, packed into dst
    VBITSORT,                     // Sort32: 32 (score src0, index src1) per repeat, sorted descending
    VMRGSORT4,                    // MrgSort: up to 4 sorted (score, index) lists merged (isa/sem_sort.cpp)
    VGATHERB,                     // Gatherb: 8 blocks per repeat from src0 + byte offsets src1 (uint32)
    VNCHWCONV,                    // nchw: 16 source blocks transposed into 16 destination blocks (any addresses)
    kCount
};
// clang-format on
const char* opcode_name(Opcode op);
bool parse_opcode(const char* s, Opcode& out);

// Which parameter struct of the union an opcode uses.
enum class ParamKind : uint8_t {
    None,
    Flag,
    CrossFlag,
    Scalar,
    Vec,
    Copy,
    NdNz,
    Load2d,
    Load3d,
    Fill,
    Mad,
    Fix,
    Nchw
};
ParamKind param_kind(Opcode op);

// The operand shape of a vector opcode: the one list the assembler (how many address operands)
// and the semantics (which operands are read) both use.
enum class VecKind : uint8_t {
    Binary, Scalar, Unary, Fused, Conv, Cmp, Sel, Red, RedAll, Dup, Brcb, Transpose, Gather, Index, PairRed,
    GatherMask, BitSort, MrgSort, GatherB
};
VecKind vec_kind(Opcode op);
// Reads a second source operand (src1): binary ops, vsel, vmadd/vmla, vcmp, vgather, the sorts, vgatherb.
bool vec_uses_src1(Opcode op);
// Reads its destination too (multiply-add forms).
bool vec_reads_dst(Opcode op);

enum class CmpMode : uint8_t { EQ, NE, LT, GT, LE, GE, kCount };
const char* cmp_name(CmpMode m);
bool parse_cmp(const char* s, CmpMode& out);

// System registers readable by GET_SYSREG.
enum class SysReg : uint8_t { BLOCK_IDX, BLOCK_NUM, SUB_BLOCK_ID, SYS_CNT, kCount };
const char* sysreg_name(SysReg r);
bool parse_sysreg(const char* s, SysReg& out);

// FixPipe quantisation: none, one scalar scale (Instr::scalar), or a per-channel fp32 scale
// vector of n entries at src1 (FB).
enum class QuantMode : uint8_t { NONE, SCALAR, VECTOR, kCount };
const char* quant_name(QuantMode q);
bool parse_quant(const char* s, QuantMode& out);

struct Addr {
    uint64_t addr = 0;
    Pos pos = Pos::GM;
    bool operator==(const Addr&) const = default;
};

// Vector instruction parameters: repeats of 256 B, each of 8 blocks of 32 B.
// Strides in 32 B blocks; mask is a 128-bit lane mask (a continuous count n is bits 0..n-1).
// Lane l of a repeat lives in block l / (32 / element size). For per-repeat reductions the
// dst repeat stride counts results (one element, or a value+index pair), not blocks.
struct VecParams {
    uint16_t repeat = 1;  // 1..255
    uint16_t dst_blk_stride = 1, src0_blk_stride = 1, src1_blk_stride = 1;
    uint16_t dst_rep_stride = 8, src0_rep_stride = 8, src1_rep_stride = 8;
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;  // bit i = lane i of each repeat
    DType src_dtype = DType::FP16;              // VCONV source type
    RoundMode round = RoundMode::RINT;          // VCONV rounding
    CmpMode cmp = CmpMode::EQ;                  // VCMP/VCMPS
    uint8_t with_index = 0;                     // max/min reductions also return the lane index
    uint32_t gather_span = 0;                   // VGATHER: bytes of src0 the offsets may address
    bool operator==(const VecParams&) const = default;
};

// Burst-mode copy: nburst bursts of len_bytes each; gaps between bursts in 32 B blocks at
// the local side and in bytes at the GM side. Local-side bursts are padded to 32 B. GM->UB can
// also pad each burst with pad_left/pad_right elements of value Instr::scalar (byte mode).
struct CopyParams {
    uint32_t nburst = 1;
    uint32_t len_bytes = 0;
    uint32_t src_gap = 0;
    uint32_t dst_gap = 0;
    // Unused: keeps the fields below clear of VecParams' mask in Instr's union. Code that
    // writes only nburst/len/gaps into a default (vector-initialised) Instr then reads them as
    // 0 (they overlay VecParams fields that default to 0) instead of 0xff.
    uint64_t reserved_[2] = {0, 0};
    uint8_t pad_left = 0, pad_right = 0;  // elements of dtype, GM->UB only
    uint8_t atomic = 0;                   // UB->GM: 1 = atomic add in dtype
    bool operator==(const CopyParams& o) const {
        return nburst == o.nburst && len_bytes == o.len_bytes && src_gap == o.src_gap && dst_gap == o.dst_gap &&
               pad_left == o.pad_left && pad_right == o.pad_right && atomic == o.atomic;
    }
};

struct FlagParams {
    Pipe src = Pipe::S;
    Pipe dst = Pipe::S;
    uint8_t event_id = 0;
    bool operator==(const FlagParams&) const = default;
};

// Cross-core flags (split arch): mode 0 = all AICs/AIVs of the kernel, 1 = the 2 AIVs of one
// core, 2 = the AIC and AIVs of one core. Counters 0..10 (kMaxCrossFlag).
constexpr uint8_t kMaxCrossFlag = 10;
struct CrossFlagParams {
    uint8_t mode = 0;
    uint8_t flag_id = 0;
    Pipe pipe = Pipe::S;
    // 1: the chip's counting as the Ascend C reference gives it: every core has its own counter
    // per id, which a wait consumes whatever its mode; a mode-0 set counts once every core of the
    // setter's kind in the launch has set (then each of them gets one), a mode-1 set once both
    // AIVs of the core have (each gets one), an AIV's mode-2 set once both AIVs have (their AIC
    // gets one); an AIC's mode-2 set gives each of its AIVs one. 0: the kernel API's shared
    // counters (mode 0: one per kind, 1: one per core's AIVs, 2: per core), one count per set.
    uint8_t all = 0;
    bool operator==(const CrossFlagParams&) const = default;
};

struct ScalarParams {
    uint32_t cycles = 1;  // SCALAR
    SysReg reg = SysReg::BLOCK_IDX;
    uint8_t xd = 0;   // destination scalar register (0..31)
    uint8_t all = 0;  // DCCI: 1 = every line of the data cache (dst ignored)
    bool operator==(const ScalarParams&) const = default;
};

// ND -> NZ: nd_num matrices of n rows x d columns (row stride src_d elements, matrices
// src_nd_stride elements apart) become NZ fractals with C0 = 32 B / element size columns:
// element (r, c) goes to (c / C0) * dst_c0_stride + r * dst_n_stride blocks of 32 B plus
// (c % C0) elements; matrices dst_nd_stride blocks apart. The tail of a partial C0 group is 0.
struct NdNzParams {
    uint16_t nd_num = 1;
    uint16_t n = 0, d = 0;
    uint16_t dst_c0_stride = 0, dst_n_stride = 1;
    uint32_t src_d = 0, src_nd_stride = 0;
    uint32_t dst_nd_stride = 0;
    bool operator==(const NdNzParams&) const = default;
};

// Whole 512-byte fractals: fractal i (0..repeat-1) comes from src + (start_index + i *
// src_stride) * 512 and goes to dst + i * (1 + dst_gap) * 512. transpose swaps rows and
// columns of each 16x16 fractal (16-bit types). For 1- and 4-byte types (load2d from L1 only)
// transpose works on squares of two consecutive source fractals, as the vendor's
// LoadDataWithTranspose does: start_index and src_stride then count 1 KiB squares; a 4-byte
// square is two 16 x 8 fractals side by side (16 x 16), a 1-byte square two 16 x 32 fractals
// stacked (32 x 32); the transposed square splits the same way into two fractals, the first at
// dst + i * (1 + dst_gap) * 512, the second frac_gap fractals after the first's end.
constexpr uint32_t kFractalBytes = 512;
struct Load2dParams {
    uint16_t start_index = 0;
    uint16_t repeat = 1;  // 1..255
    uint16_t src_stride = 1;
    uint16_t dst_gap = 0;
    uint8_t transpose = 0;
    uint16_t frac_gap = 0;  // square transposes only
    bool operator==(const Load2dParams&) const = default;
};


// img2col from a feature map in L1 in NC1HWC0 (c1 groups of C0 = 32 B / element size channels,
// l1_h x l1_w). Output matrix row m = output pixel (oh * Wo + ow), column k = ((c1 * kh + y) *
// kw + x) * C0 + c0; the window [m_start, m_start + m_ext) x [k_start, k_start + k_ext) is
// written to L0A as ZZ fractals (m_ext, k_ext multiples of 16 and C0), or (2- and 4-byte types)
// to L0B as the B operand of a product with the pixels as columns: the same 16 x C0 fractals in
// ZN order (fractal (m / 16, k / C0) at (k / C0) * m_ext / 16 + m / 16). Out-of-image taps read
// the pad value Instr::scalar. transpose = 1 (2- and 4-byte types; load3dv2's enTranspose)
// writes the transposed matrix: into L0B as the B operand, the pixels B's K (rows) and the
// img2col columns B's N, in ZN order (element (m, k) at isa::zn_offset(m, k, round_up16(k_ext),
// C0)); into L0A as the A operand, the img2col columns A's rows and the pixels A's K, in ZZ order
// (element (m, k) at isa::zz_offset(k, m, m_ext, C0)). Rows/columns padding k_ext to 16 are left
// as they were.
struct Load3dParams {
    uint16_t l1_h = 1, l1_w = 1, c1 = 1;
    uint8_t kh = 1, kw = 1;
    uint8_t stride_h = 1, stride_w = 1;
    uint8_t dil_h = 1, dil_w = 1;
    uint8_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
    uint16_t m_start = 0, m_ext = 16;
    uint16_t k_start = 0, k_ext = 16;
    uint8_t transpose = 0;
    bool operator==(const Load3dParams&) const = default;
};

// Fill: repeat times blk_num blocks of 32 B, dst_gap blocks between repeats, value scalar.
struct FillParams {
    uint16_t repeat = 1;
    uint16_t blk_num = 1;
    uint16_t dst_gap = 0;
    bool operator==(const FillParams&) const = default;
};

// Cube: A (m x k) in L0A as ZZ, B (k x n) in L0B as ZN, C (m x n) in L0C as NZ with 16x16
// fractals of fp32/int32. K0 = 32 B / input element size (16 fp16/bf16, 32 int8, 8 fp32).
// bias = 1 adds an fp32/int32 vector of n entries at src2 (BT) when not accumulating.
struct MadParams {
    uint16_t m = 16, k = 16, n = 16;
    uint8_t accumulate = 0;
    uint8_t bias = 0;
    // GEMV (m = 1 only): A is one row of k elements stored contiguously in L0A (whole 512-B
    // fractals of it), not a ZZ matrix; only row 0 of C is computed. Atlas A2's cube enters this
    // mode whenever m = 1.
    uint8_t gemv = 0;
    // fp32 only (the vendor's MmadParams::kDirectionAlign): A's rows in L0A hold k padded to a
    // multiple of 16 (two 8-wide fractals), as a transposing load3d leaves them; the cube steps
    // over the padding and reads the ceil(k / 8) fractals of each row that hold k. B (ZN, k blocks
    // outermost) is read as without it.
    uint8_t kalign16 = 0;
    // Unit flag (0, 2 or 3; the vendor's MmadParams::unitFlag): with 2 or 3 the cube writes each
    // 512-B block of C in L0C only while the block's unit bit is 0 (waiting for it otherwise); 3
    // then sets the bits of every block it wrote to 1, for a FixPipe with a unit flag to read.
    uint8_t unit_flag = 0;
    bool operator==(const MadParams&) const = default;
};

// FixPipe: m x n of L0C (NZ, 16x16 fractals; column fractal j at src + j * src_stride * 64 B,
// so src_stride counts 16-element rows, default ceil(m/16)*16). Output out_dtype, either ND
// (nz2nd = 1, row stride dst_stride elements) or NZ (column groups dst_stride blocks of 32 B
// apart, each m rows of fix_nz_c0 elements: 32 B / out size, except 4-byte outputs, which keep
// the accumulator's 16 columns (64 B rows) unless channel_split halves them to 8). Applied in
// this order: quant scale, ReLU, cast (RINT, saturating for integers). Per-channel (quant = VECTOR):
// src1 holds one 64-bit quantisation word per column, the chip's format: the scale is bits 31..13
// read as an fp32 whose low 13 bits are 0; bits 32..45 (shift, offset) must be 0 (not modelled);
// bit 46 (the output's signedness) is ignored (out_dtype says it).
struct FixpipeParams {
    uint16_t m = 16, n = 16;
    uint16_t src_stride = 16;
    uint32_t dst_stride = 16;
    DType out_dtype = DType::FP16;
    QuantMode quant = QuantMode::NONE;
    uint8_t relu = 0;
    uint8_t nz2nd = 0;
    // 1: add into what GM holds, in out_dtype, instead of overwriting it (dst GM only; the L2
    // does the read-modify-write, as SetAtomicAdd before a Fixpipe on 910B-class parts).
    uint8_t atomic = 0;
    uint8_t channel_split = 0;  // NZ, 4-byte output: 16 x 8 fractals instead of 16 x 16
    // Unit flag (0, 2 or 3): with 2 or 3 the FixPipe reads each 512-B block of L0C only once its
    // unit bit is 1 (waiting for it otherwise); 3 then clears the bits of the blocks it read.
    uint8_t unit_flag = 0;
    // ND output (nz2nd) only: nd_num matrices (1..65535), source j at src + j x src_nd_stride x
    // 1024 B of L0C, destination j at dst + j x dst_nd_stride elements; each m x n as above.
    uint16_t nd_num = 1;
    uint16_t src_nd_stride = 0;
    uint32_t dst_nd_stride = 0;
    bool operator==(const FixpipeParams&) const = default;
};

// VNCHWCONV (the vendor's TransDataTo5HD): each repeat reads 16 source blocks of 32 B and writes 16
// destination blocks, every one at its own UB address (the chip's VA registers: 16 destination and 16
// source addresses). Element j of source i goes to element i of destination j for 2-byte types; for
// 4-byte types element j of source 8h + k goes to element k of destination 2j + h (j, k < 8); for 1-byte
// types byte 16 src_high + j of source i goes to byte 16 dst_high + i of destination j (j < 16: half of
// each destination block is written). Repeat r (of `repeat` > 1) adds r x the repeat strides (32-B
// blocks) to every address; a single repeat adds the strides once (the vendor's reference: set them to 0
// to use the addresses as given). Encoding: the destination addresses as 32-byte block numbers here;
// the source addresses as 32-byte block numbers packed four to an address operand (sources 4w .. 4w + 3
// in bits 16i .. 16i + 15 of src0, src1, src2, dst's addr for w = 0..3; their positions UB). Use
// nchw_src_block / set_nchw_lists (isa/semantics.h).
constexpr int kNchwList = 16;
struct NchwParams {
    uint16_t dst_blk[kNchwList] = {};  // destination j at UB byte 32 x dst_blk[j]
    uint16_t dst_rep_stride = 0, src_rep_stride = 0;
    uint8_t repeat = 1;  // 1..255
    uint8_t dst_high = 0, src_high = 0;  // 1-byte types only: which half of the blocks
    bool operator==(const NchwParams&) const = default;
};

struct Instr {
    Opcode op = Opcode::NOP;
    Pipe pipe = Pipe::S;
    DType dtype = DType::FP16;
    Addr dst, src0, src1, src2;
    union {
        VecParams vec;
        CopyParams copy;
        FlagParams flag;
        CrossFlagParams xflag;
        ScalarParams sc;
        NdNzParams nd;
        Load2dParams l2d;
        Load3dParams l3d;
        FillParams fill;
        MadParams mad;
        FixpipeParams fix;
        NchwParams nchw;
    };
    double scalar = 0.0;       // vector-scalar operand, fill/pad value, fixpipe scale
    uint64_t issue_cycle = 0;  // scalar cycle at which it entered its pipe queue (set by the core)
    uint32_t seq = 0;          // program order within the block (set by the core)

    Instr() : vec() {}
};
static_assert(offsetof(CopyParams, pad_left) >= offsetof(VecParams, src_dtype),
              "CopyParams' byte-mode fields must overlay VecParams fields that default to 0");
static_assert(sizeof(CopyParams) <= sizeof(VecParams) && sizeof(NchwParams) <= sizeof(VecParams),
              "the union must stay the size of VecParams");

// Builds an instruction of opcode op with pipe = default_pipe(op), the parameter struct of its
// class value-initialised (so equality and disassembly see defined bytes), and the operand
// positions the opcode implies (e.g. UB for vector operands, L0C/L0A/L0B/BT for mad).
Instr make_instr(Opcode op);

// Which pipe executes an opcode. Sync instructions run in a pipe named by their operands
// (see exec_pipe); for them default_pipe returns S.
Pipe default_pipe(Opcode op);
// The pipe an instruction executes in: default_pipe, or the pipe its sync operands name.
Pipe exec_pipe(const Instr& in);

// Architectural equality: opcode, pipe, dtype, the operands and parameters the opcode uses,
// and scalar. issue_cycle and seq are bookkeeping and are not compared.
bool operator==(const Instr& a, const Instr& b);

// Scalar register values the scalar unit sets up to issue an instruction: its address operands
// and its packed parameter words (repeat and strides, burst geometry, matrix sizes, an immediate
// value). An estimate from the encoding's structure; the core charges scalar cycles per word.
uint32_t scalar_setup_words(const Instr& in);

// Whether a load2d moves squares of two fractals per repeat (a 1- or 4-byte transpose).
inline bool load2d_squares(const Instr& in) { return in.l2d.transpose && dtype_size(in.dtype) != 2; }

// Timing-relevant quantities.
// K0: the reduction depth of one 512-B fractal row group (32 B / element: 64 for int4).
constexpr uint32_t cube_k0(DType t) { return dtype_bits(t) ? 256 / dtype_bits(t) : 0; }
constexpr uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
// FixPipe NZ output: elements per row of a column group (C0) and bytes per row.
inline uint32_t fix_nz_c0(const FixpipeParams& p) {
    const uint32_t eo = dtype_size(p.out_dtype);
    return eo == 4 && !p.channel_split ? 16u : 32u / eo;
}
inline uint32_t fix_nz_row_bytes(const FixpipeParams& p) { return fix_nz_c0(p) * dtype_size(p.out_dtype); }
// The unit flag of a mad or fixpipe (0: none; 2: wait for the L0C blocks' unit bits; 3: wait,
// then flip them when done); 0 for every other instruction.
inline uint8_t unit_flag(const Instr& in) {
    if (in.op == Opcode::MAD) return in.mad.unit_flag;
    if (in.op == Opcode::FIXPIPE) return in.fix.unit_flag;
    return 0;
}
// Cube blocks of a MAD: ceil(m/16) * ceil(k/K0) * ceil(n/16).
inline uint64_t mad_blocks(const Instr& in) {
    return static_cast<uint64_t>(ceil_div(in.mad.m, 16)) * ceil_div(in.mad.k, cube_k0(in.dtype)) *
           ceil_div(in.mad.n, 16);
}

}  // namespace sfumato::isa
