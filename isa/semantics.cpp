#include "isa/semantics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace sfumato::isa {

namespace {

constexpr uint64_t kBlock = 32;

bool is_vec_binary(Opcode op) { return op >= Opcode::VADD && op <= Opcode::VMIN; }

// Byte extent of a strided vector operand over all repeats.
Extent vec_extent(const Addr& a, uint16_t blk_stride, uint16_t rep_stride, uint16_t repeat, bool write) {
    uint64_t last_rep = static_cast<uint64_t>(repeat - 1) * rep_stride * kBlock;
    uint64_t last_blk = 7ull * blk_stride * kBlock;
    return {a.pos, a.addr, a.addr + last_rep + last_blk + kBlock, write};
}

bool lane_on(const VecParams& v, uint32_t lane) {
    return lane < 64 ? ((v.mask_lo >> lane) & 1u) : ((v.mask_hi >> (lane - 64)) & 1u);
}

float apply(Opcode op, float a, float b) {
    switch (op) {
        case Opcode::VADD: return a + b;
        case Opcode::VSUB: return a - b;
        case Opcode::VMUL: return a * b;
        case Opcode::VDIV: return a / b;
        case Opcode::VMAX: return std::fmax(a, b);
        case Opcode::VMIN: return std::fmin(a, b);
        default: return 0.0f;
    }
}

void exec_vec_binary(const Instr& in, IMemView& mem) {
    const VecParams& v = in.vec;
    const uint32_t es = dtype_size(in.dtype);
    const uint32_t epb = kBlock / es;  // elements per block
    Extent ed = vec_extent(in.dst, v.dst_blk_stride, v.dst_rep_stride, v.repeat, true);
    Extent e0 = vec_extent(in.src0, v.src0_blk_stride, v.src0_rep_stride, v.repeat, false);
    Extent e1 = vec_extent(in.src1, v.src1_blk_stride, v.src1_rep_stride, v.repeat, false);
    uint8_t* d = mem.local(in.dst.pos, ed.lo, ed.hi - ed.lo);
    const uint8_t* s0 = mem.local(in.src0.pos, e0.lo, e0.hi - e0.lo);
    const uint8_t* s1 = mem.local(in.src1.pos, e1.lo, e1.hi - e1.lo);
    // Sources are read per repeat before the repeat's results are written, as the hardware does.
    uint8_t tmp[256];
    for (uint32_t r = 0; r < v.repeat; ++r) {
        for (uint32_t b = 0; b < 8; ++b) {
            const uint64_t o0 = (static_cast<uint64_t>(r) * v.src0_rep_stride + b * v.src0_blk_stride) * kBlock;
            const uint64_t o1 = (static_cast<uint64_t>(r) * v.src1_rep_stride + b * v.src1_blk_stride) * kBlock;
            for (uint32_t e = 0; e < epb; ++e) {
                const uint32_t lane = b * epb + e;
                if (!lane_on(v, lane)) continue;
                float x = load_as_f32(in.dtype, s0 + o0 + e * es);
                float y = load_as_f32(in.dtype, s1 + o1 + e * es);
                store_from_f32(in.dtype, tmp + lane * es, apply(in.op, x, y));
            }
        }
        for (uint32_t b = 0; b < 8; ++b) {
            const uint64_t od = (static_cast<uint64_t>(r) * v.dst_rep_stride + b * v.dst_blk_stride) * kBlock;
            for (uint32_t e = 0; e < epb; ++e) {
                const uint32_t lane = b * epb + e;
                if (lane_on(v, lane)) std::copy_n(tmp + lane * es, es, d + od + e * es);
            }
        }
    }
}

uint64_t local_burst_bytes(uint32_t len) { return (len + kBlock - 1) / kBlock * kBlock; }

}  // namespace

std::string validate(const Instr& in) {
    if (is_vec_binary(in.op)) {
        if (in.vec.repeat < 1 || in.vec.repeat > 255) return "repeat " + std::to_string(in.vec.repeat) + " outside 1..255";
        if (in.dtype != DType::FP16 && in.dtype != DType::FP32 && in.dtype != DType::BF16 && in.dtype != DType::INT32 && in.dtype != DType::INT16)
            return std::string("dtype ") + dtype_name(in.dtype) + " not supported by " + opcode_name(in.op);
    }
    if (in.op == Opcode::COPY_GM_TO_UB || in.op == Opcode::COPY_UB_TO_GM || in.op == Opcode::COPY_UB_TO_UB) {
        if (in.copy.nburst == 0 || in.copy.len_bytes == 0) return "copy with zero bursts or zero burst length";
    }
    return "";
}

int footprint(const Instr& in, Extent out[kMaxExtents]) {
    if (is_vec_binary(in.op)) {
        const VecParams& v = in.vec;
        out[0] = vec_extent(in.src0, v.src0_blk_stride, v.src0_rep_stride, v.repeat, false);
        out[1] = vec_extent(in.src1, v.src1_blk_stride, v.src1_rep_stride, v.repeat, false);
        out[2] = vec_extent(in.dst, v.dst_blk_stride, v.dst_rep_stride, v.repeat, true);
        return 3;
    }
    const CopyParams& c = in.copy;
    const uint64_t n = c.nburst;
    switch (in.op) {
        case Opcode::COPY_GM_TO_UB: {
            uint64_t lb = local_burst_bytes(c.len_bytes);
            out[0] = {Pos::GM, in.src0.addr, in.src0.addr + (n - 1) * (c.len_bytes + c.src_gap) + c.len_bytes, false};
            out[1] = {in.dst.pos, in.dst.addr, in.dst.addr + (n - 1) * (lb + c.dst_gap * kBlock) + lb, true};
            return 2;
        }
        case Opcode::COPY_UB_TO_GM: {
            uint64_t lb = local_burst_bytes(c.len_bytes);
            out[0] = {in.src0.pos, in.src0.addr, in.src0.addr + (n - 1) * (lb + c.src_gap * kBlock) + lb, false};
            out[1] = {Pos::GM, in.dst.addr, in.dst.addr + (n - 1) * (c.len_bytes + c.dst_gap) + c.len_bytes, true};
            return 2;
        }
        case Opcode::COPY_UB_TO_UB: {
            uint64_t lb = local_burst_bytes(c.len_bytes);
            out[0] = {in.src0.pos, in.src0.addr, in.src0.addr + (n - 1) * (lb + c.src_gap * kBlock) + lb, false};
            out[1] = {in.dst.pos, in.dst.addr, in.dst.addr + (n - 1) * (lb + c.dst_gap * kBlock) + lb, true};
            return 2;
        }
        default: return 0;
    }
}

uint64_t gm_bytes(const Instr& in) {
    if (in.op == Opcode::COPY_GM_TO_UB || in.op == Opcode::COPY_UB_TO_GM)
        return static_cast<uint64_t>(in.copy.nburst) * in.copy.len_bytes;
    return 0;
}

void execute(const Instr& in, IMemView& mem) {
    if (std::string err = validate(in); !err.empty()) throw std::invalid_argument(std::string(opcode_name(in.op)) + ": " + err);
    if (is_vec_binary(in.op)) return exec_vec_binary(in, mem);
    const CopyParams& c = in.copy;
    const uint64_t lb = local_burst_bytes(c.len_bytes);
    switch (in.op) {
        case Opcode::COPY_GM_TO_UB: {
            for (uint32_t i = 0; i < c.nburst; ++i) {
                uint8_t* d = mem.local(in.dst.pos, in.dst.addr + i * (lb + c.dst_gap * kBlock), lb);
                mem.gm_read(in.src0.addr + i * static_cast<uint64_t>(c.len_bytes + c.src_gap), d, c.len_bytes);
                std::fill(d + c.len_bytes, d + lb, uint8_t{0});  // pad to 32 B
            }
            return;
        }
        case Opcode::COPY_UB_TO_GM: {
            for (uint32_t i = 0; i < c.nburst; ++i) {
                const uint8_t* s = mem.local(in.src0.pos, in.src0.addr + i * (lb + c.src_gap * kBlock), lb);
                mem.gm_write(in.dst.addr + i * static_cast<uint64_t>(c.len_bytes + c.dst_gap), s, c.len_bytes);
            }
            return;
        }
        case Opcode::COPY_UB_TO_UB: {
            std::vector<uint8_t> tmp(lb);
            for (uint32_t i = 0; i < c.nburst; ++i) {
                const uint8_t* s = mem.local(in.src0.pos, in.src0.addr + i * (lb + c.src_gap * kBlock), lb);
                std::copy_n(s, lb, tmp.data());
                uint8_t* d = mem.local(in.dst.pos, in.dst.addr + i * (lb + c.dst_gap * kBlock), lb);
                std::copy_n(tmp.data(), lb, d);
            }
            return;
        }
        default: return;  // sync instructions have no data effect
    }
}

}  // namespace sfumato::isa

namespace sfumato::isa {
void execute_scalar(const Instr& in, ScalarState& st) {
    if (in.op == Opcode::SET_MASK) st.mask_lo = in.vec.mask_lo, st.mask_hi = in.vec.mask_hi;
}
uint64_t moved_bytes(const Instr& in) { return gm_bytes(in); }
}  // namespace sfumato::isa
