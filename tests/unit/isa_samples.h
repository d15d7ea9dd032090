// Test helper: one valid instruction per opcode with as many non-default fields as validate()
// allows (used by the assembler round trip and the footprint property test).
#pragma once
#include "isa/instr.h"
#include "isa/semantics.h"

namespace sfumato::isa::test {
inline Addr A(Pos p, uint64_t a) { return Addr{a, p}; }

// A valid instruction of opcode op with as many non-default fields as validate() allows.
inline Instr sample(Opcode op) {
    Instr in = make_instr(op);
    in.issue_cycle = 99, in.seq = 7;  // bookkeeping: not part of the text, not compared
    switch (param_kind(op)) {
        case ParamKind::None: break;
        case ParamKind::Flag:
            in.flag = {Pipe::MTE2, Pipe::V, 5};
            if (op == Opcode::PIPE_BARRIER) in.flag = {Pipe::ALL, Pipe::S, 0};
            break;
        case ParamKind::CrossFlag: in.xflag = {1, 9, Pipe::MTE3}; break;
        case ParamKind::Scalar:
            in.sc = {17, SysReg::SYS_CNT, 31, 0};
            if (op == Opcode::LD_GM) in.src0 = A(Pos::GM, 0x1238), in.dtype = DType::FP32;
            if (op == Opcode::ST_GM) in.dst = A(Pos::GM, 0x40), in.dtype = DType::INT32, in.scalar = -5;
            if (op == Opcode::DCCI) in.dst = A(Pos::GM, 0x1240);
            break;
        case ParamKind::Copy: {
            in.copy = {3, 70, 5, 2, {0, 0}, 0, 0, 0};
            Pos src = Pos::GM, dst = Pos::UB;
            switch (op) {
                case Opcode::COPY_GM_TO_UB: in.copy.pad_left = 2, in.copy.pad_right = 1; break;
                case Opcode::COPY_GM_TO_L1: dst = Pos::L1; break;
                case Opcode::COPY_L1_TO_UB: src = Pos::L1; break;
                case Opcode::COPY_UB_TO_GM:
                    src = Pos::UB, dst = Pos::GM, in.copy.atomic = 1, in.copy.len_bytes = 72;
                    break;
                case Opcode::COPY_UB_TO_L1: src = Pos::UB, dst = Pos::L1; break;
                case Opcode::COPY_L1_TO_GM: src = Pos::L1, dst = Pos::GM, in.copy.len_bytes = 72; break;
                case Opcode::COPY_L1_TO_FB: src = Pos::L1, dst = Pos::FB; break;
                case Opcode::COPY_L1_TO_BT: src = Pos::L1, dst = Pos::BT; break;
                default: src = Pos::UB; break;
            }
            in.dst = A(dst, 0x1240), in.src0 = A(src, 0x80);
            in.dtype = DType::FP32;
            in.scalar = -1.25;
            break;
        }
        case ParamKind::NdNz:
            in.nd = {2, 20, 37, 32, 1, 40, 800, 100};
            in.dst = A(Pos::L1, 0x400), in.src0 = A(Pos::GM, 0x10000), in.dtype = DType::BF16;
            break;
        case ParamKind::Load2d:
            in.l2d = {3, 4, 2, 1, 1};
            in.dst = A(Pos::L0B, 0x200), in.src0 = A(op == Opcode::LOAD2D ? Pos::L1 : Pos::GM, 0x600);
            break;
        case ParamKind::Load3d:
            in.l3d = {9, 11, 2, 3, 2, 2, 1, 1, 2, 1, 0, 1, 2, 16, 32, 16, 64, 0};
            in.dst = A(Pos::L0A, 0x0), in.src0 = A(Pos::L1, 0x800), in.scalar = 0.5;
            break;
        case ParamKind::Fill:
            in.fill = {4, 3, 2};
            in.dst = A(Pos::L0B, 0x1000), in.dtype = DType::INT8, in.scalar = -7;
            break;
        case ParamKind::Mad:
            in.mad = {33, 70, 17, 0, 1};
            in.mad.unit_flag = 2;
            in.src2 = A(Pos::BT, 0x40), in.dst.addr = 0x400, in.src0.addr = 0x200, in.src1.addr = 0x600;
            in.dtype = DType::BF16;
            break;
        case ParamKind::Fix:
            in.fix = {40, 24, 48, 30, DType::INT8, QuantMode::VECTOR, 1, 1};
            in.fix.nd_num = 2, in.fix.src_nd_stride = 3, in.fix.dst_nd_stride = 1000;
            if (op == Opcode::FIXPIPE) in.fix.unit_flag = 3;
            in.dtype = DType::INT32;
            in.src0 = A(Pos::L0C, 0x400), in.src1 = A(Pos::FB, 0x80);
            in.dst = A(op == Opcode::FIXPIPE ? Pos::L1 : Pos::UB, 0x2000);
            break;
        case ParamKind::Nchw: {  // a permuted, non-contiguous list each way
            uint64_t d[kNchwList], s[kNchwList];
            for (int i = 0; i < kNchwList; ++i) d[i] = 0x2000 + 64u * ((i * 5) % 16), s[i] = 0x400 + 96u * i;
            set_nchw_lists(in, d, s);
            in.nchw.repeat = 3, in.nchw.dst_rep_stride = 1, in.nchw.src_rep_stride = 40;
            in.nchw.dst_high = 1;
            in.dtype = DType::INT8;
            break;
        }
        case ParamKind::Vec: {
            if (op == Opcode::SET_MASK) {
                in.vec.mask_lo = 0x00ff00ff00ff00ffull, in.vec.mask_hi = 0x1;
                break;
            }
            VecParams& v = in.vec;
            v.repeat = 255, v.dst_blk_stride = 2, v.src0_blk_stride = 3, v.src1_blk_stride = 0;
            v.dst_rep_stride = 16, v.src0_rep_stride = 24, v.src1_rep_stride = 1;
            v.mask_lo = 0xdeadbeefcafef00dull, v.mask_hi = 0x123;
            in.dtype = DType::FP32;
            in.dst = A(Pos::UB, 0x2000), in.src0 = A(Pos::UB, 0x20), in.src1 = A(Pos::UB, 0x4000),
            in.src2 = A(Pos::UB, 0x6000);
            in.scalar = 0.1;
            if (op == Opcode::VAND || op == Opcode::VOR || op == Opcode::VNOT) in.dtype = DType::INT16;
            if (op == Opcode::VTRANSPOSE) in.dtype = DType::BF16;
            if (op == Opcode::VCONV)
                v.src_dtype = DType::INT32, v.round = RoundMode::ODD, in.dtype = DType::FP16;
            if (op == Opcode::VCMP || op == Opcode::VCMPS) v.cmp = CmpMode::GE;
            if (op >= Opcode::VRED_SUM && op <= Opcode::VREDALL_MIN) v.with_index = 1;
            if (op == Opcode::VGATHER) v.gather_span = 4096;
            if (op == Opcode::VCPADD) v.dst_rep_stride = 2;  // counts 128-byte result groups
            if (op == Opcode::VREDUCEV2) in.scalar = 0;         // the pattern from src1's bits
            v.mask_lo = 0x0000ffffull;  // a prefix mask prints as a count
            v.mask_hi = 0;
            if (static_cast<int>(op) % 2) v.mask_lo = 0xdeadbeefcafef00dull, v.mask_hi = 0x123;
            if (op == Opcode::VGATHERB) v.gather_span = 4096;  // the offsets (0) address src0's first block
            if (op == Opcode::VMRGSORT4) {  // the mask fields carry the lengths and valid lists
                v.repeat = 1;
                set_mrgsort4_config(in, MrgSort4Config{{3, 5, 2, 4}, 15, true}, 0x7000);
            }
            break;
        }
    }
    return in;
}

}  // namespace sfumato::isa::test
