// Dispatcher of the functional semantics (isa/semantics.h) over the instruction classes, plus
// the sync and scalar classes, which move no data. Per-class semantics: sem_vector.cpp,
// sem_move.cpp (MTE1/MTE2/MTE3), sem_cube.cpp (mad, FixPipe).
#include "isa/semantics.h"

#include <stdexcept>

#include "isa/sem_detail.h"

namespace sfumato::isa {

using namespace detail;

namespace {
std::string validate_sync(const Instr& in) {
    switch (in.op) {
        case Opcode::SET_FLAG:
        case Opcode::WAIT_FLAG:
            if (in.flag.src >= Pipe::ALL || in.flag.dst >= Pipe::ALL) return "flag pipes must name one pipe";
            if (in.flag.src == in.flag.dst) return "flag between a pipe and itself";
            if (in.flag.event_id >= 16)
                return "event id " + std::to_string(in.flag.event_id) + " outside 0..15";
            return "";
        case Opcode::PIPE_BARRIER: return in.flag.src < Pipe::kCount ? "" : "bad pipe";
        case Opcode::SET_CROSS_FLAG:
        case Opcode::WAIT_CROSS_FLAG:
            if (in.xflag.mode > 2)
                return "cross-core flag mode " + std::to_string(in.xflag.mode) + " outside 0..2";
            if (in.xflag.flag_id > kMaxCrossFlag)
                return "cross-core flag id " + std::to_string(in.xflag.flag_id) + " outside 0..10";
            if (in.xflag.all > 1) return "cross-core flag `all` must be 0 or 1";
            return in.xflag.pipe < Pipe::ALL ? "" : "cross-core flag pipe must name one pipe";
        case Opcode::GET_SYSREG:
            if (in.sc.reg >= SysReg::kCount) return "bad system register";
            return in.sc.xd < 32 ? "" : "scalar register x" + std::to_string(in.sc.xd) + " outside x0..x31";
        default: return "";
    }
}
}  // namespace

std::string validate(const Instr& in) {
    if (in.op >= Opcode::kCount) return "bad opcode";
    // INT4 is not byte addressable: only the instructions that handle nibbles take it.
    if (in.dtype == DType::INT4 && in.op != Opcode::VCONV && in.op != Opcode::MAD && in.op != Opcode::LOAD2D)
        return std::string(opcode_name(in.op)) + ": int4 only in vconv (to and from fp16), mad and load2d";
    if (in.op == Opcode::VNCHWCONV) return validate_nchw(in);
    if (is_vector_compute(in.op)) return validate_vector(in);
    if (is_scalar_mem(in.op)) return validate_scalar_mem(in);
    if (std::string e = validate_move(in); !e.empty()) return e;
    if (std::string e = validate_cube(in); !e.empty()) return e;
    return validate_sync(in);
}

int footprint(const Instr& in, Extent out[kMaxExtents]) {
    if (in.op == Opcode::VNCHWCONV) return footprint_nchw(in, out);
    if (is_vector_compute(in.op)) return footprint_vector(in, out);
    if (is_scalar_mem(in.op)) return footprint_scalar_mem(in, out);
    if (int n = footprint_move(in, out)) return n;
    return footprint_cube(in, out);
}

uint64_t gm_bytes(const Instr& in) {
    switch (in.op) {
        case Opcode::COPY_GM_TO_UB:
        case Opcode::COPY_GM_TO_L1:
        case Opcode::COPY_UB_TO_GM:
        case Opcode::COPY_L1_TO_GM: return uint64_t{in.copy.nburst} * in.copy.len_bytes;
        case Opcode::COPY_GM_TO_L1_ND2NZ:
            return uint64_t{in.nd.nd_num} * in.nd.n * in.nd.d * dtype_size(in.dtype);
        case Opcode::LOAD2D_GM: return uint64_t{in.l2d.repeat} * kFractalBytes;
        case Opcode::FIXPIPE:
            return in.dst.pos == Pos::GM
                       ? uint64_t{in.fix.nd_num} * in.fix.m * in.fix.n * dtype_size(in.fix.out_dtype)
                       : 0;
        default: return 0;
    }
}

uint64_t moved_bytes(const Instr& in) {
    switch (param_kind(in.op)) {
        case ParamKind::Copy: return uint64_t{in.copy.nburst} * in.copy.len_bytes;
        case ParamKind::NdNz: return gm_bytes(in);
        case ParamKind::Load2d: return uint64_t{in.l2d.repeat} * kFractalBytes * load2d_fractals(in);
        case ParamKind::Load3d: return uint64_t{in.l3d.m_ext} * in.l3d.k_ext * dtype_size(in.dtype);
        case ParamKind::Fill: return uint64_t{in.fill.repeat} * in.fill.blk_num * kBlock;
        case ParamKind::Fix:
            return uint64_t{in.fix.nd_num} * in.fix.m * in.fix.n * dtype_size(in.dtype);
        default: return 0;
    }
}

void execute(const Instr& in, IMemView& mem) {
    if (std::string err = validate(in); !err.empty())
        throw std::invalid_argument(std::string(opcode_name(in.op)) + ": " + err);
    if (in.op == Opcode::VNCHWCONV) return exec_nchw(in, mem);
    if (is_vector_compute(in.op)) return exec_vector(in, mem);
    if (is_scalar_mem(in.op)) return exec_scalar_mem(in, mem);
    switch (param_kind(in.op)) {
        case ParamKind::Copy:
        case ParamKind::NdNz:
        case ParamKind::Load2d:
        case ParamKind::Load3d:
        case ParamKind::Fill: return exec_move(in, mem);
        case ParamKind::Mad:
        case ParamKind::Fix: return exec_cube(in, mem);
        default: return;  // sync and scalar instructions move no data
    }
}

void execute_scalar(const Instr& in, ScalarState& st, IMemView& mem) {
    if (in.op == Opcode::LD_GM) {
        st.x[in.sc.xd % 32] = load_scalar(in, mem);
        return;
    }
    execute_scalar(in, st);
}

void execute_scalar(const Instr& in, ScalarState& st) {
    if (in.op == Opcode::SET_MASK) {
        st.mask_lo = in.vec.mask_lo;
        st.mask_hi = in.vec.mask_hi;
    } else if (in.op == Opcode::GET_SYSREG && in.sc.xd < 32) {
        switch (in.sc.reg) {
            case SysReg::BLOCK_IDX: st.x[in.sc.xd] = st.block_idx; break;
            case SysReg::BLOCK_NUM: st.x[in.sc.xd] = st.block_num; break;
            case SysReg::SUB_BLOCK_ID: st.x[in.sc.xd] = st.sub_block_id; break;
            case SysReg::SYS_CNT: st.x[in.sc.xd] = st.sys_cnt; break;
            default: break;
        }
    }
}

}  // namespace sfumato::isa
