#include "models/aicore/gm_pattern.h"

namespace sfumato {

using isa::Opcode;

bool gm_pattern(const isa::Instr& in, GmPattern& p) {
    p = GmPattern{};
    switch (in.op) {
        case Opcode::COPY_GM_TO_UB:
        case Opcode::COPY_GM_TO_L1:
        case Opcode::COPY_UB_TO_GM:
        case Opcode::COPY_L1_TO_GM: {
            const bool store = in.op != Opcode::COPY_GM_TO_UB && in.op != Opcode::COPY_GM_TO_L1;
            p.base = store ? in.dst.addr : in.src0.addr;
            p.outer = 1;
            p.inner = in.copy.nburst;
            p.len = in.copy.len_bytes;
            p.inner_stride = p.len + (store ? in.copy.dst_gap : in.copy.src_gap);
            p.write = store;
            p.atomic = store && in.copy.atomic;
            break;
        }
        case Opcode::COPY_GM_TO_L1_ND2NZ: {
            const uint64_t es = isa::dtype_size(in.dtype);
            p.base = in.src0.addr;
            p.outer = in.nd.nd_num;
            p.outer_stride = uint64_t{in.nd.src_nd_stride} * es;
            p.inner = in.nd.n;
            p.inner_stride = uint64_t{in.nd.src_d} * es;
            p.len = uint64_t{in.nd.d} * es;
            break;
        }
        case Opcode::LOAD2D_GM:
            p.base = in.src0.addr + uint64_t{in.l2d.start_index} * isa::kFractalBytes;
            p.outer = 1;
            p.inner = in.l2d.repeat;
            p.inner_stride = uint64_t{in.l2d.src_stride} * isa::kFractalBytes;
            p.len = isa::kFractalBytes;
            break;
        case Opcode::FIXPIPE: {
            if (in.dst.pos != isa::Pos::GM) return false;
            const uint64_t eo = isa::dtype_size(in.fix.out_dtype);
            p.base = in.dst.addr;
            p.write = true;
            p.atomic = in.fix.atomic != 0;
            if (in.fix.nz2nd) {  // nd_num matrices of m rows of n elements
                p.outer = in.fix.nd_num;
                p.outer_stride = uint64_t{in.fix.dst_nd_stride} * eo;
                p.inner = in.fix.m;
                p.inner_stride = uint64_t{in.fix.dst_stride} * eo;
                p.len = uint64_t{in.fix.n} * eo;
            } else {  // column groups of C0 elements, each m rows contiguous
                const uint64_t c0 = isa::fix_nz_c0(in.fix);
                p.outer = static_cast<uint32_t>((in.fix.n + c0 - 1) / c0);
                p.outer_stride = uint64_t{in.fix.dst_stride} * 32;
                p.inner = 1;
                p.len = uint64_t{in.fix.m} * isa::fix_nz_row_bytes(in.fix);
            }
            break;
        }
        default: return false;
    }
    return p.total() > 0;
}

}  // namespace sfumato
