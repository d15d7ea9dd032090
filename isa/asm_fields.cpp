// The assembler's parameter field table (isa/asm_detail.h) and the disassembler (isa/asm.h): the text
// form of one instruction, canonical so that assemble(disassemble(i)) == i.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "isa/asm.h"
#include "isa/asm_detail.h"
#include "isa/semantics.h"
#include "isa/text.h"

namespace sfumato::isa {

namespace asm_detail {

// clang-format off
#define F(k, K, T, S, m) Field{k, ParamKind::K, FT::T, offsetof(S, m), sizeof(S::m)}
const Field kFields[] = {
    F("repeat", Vec, U, VecParams, repeat), F("dstblk", Vec, U, VecParams, dst_blk_stride),
    F("src0blk", Vec, U, VecParams, src0_blk_stride), F("src1blk", Vec, U, VecParams, src1_blk_stride),
    F("dstrep", Vec, U, VecParams, dst_rep_stride), F("src0rep", Vec, U, VecParams, src0_rep_stride),
    F("src1rep", Vec, U, VecParams, src1_rep_stride), F("src", Vec, DT, VecParams, src_dtype),
    F("round", Vec, RM, VecParams, round),
    F("cmp", Vec, CM, VecParams, cmp), F("idx", Vec, U, VecParams, with_index),
    F("span", Vec, U, VecParams, gather_span),
    F("nburst", Copy, U, CopyParams, nburst), F("len", Copy, U, CopyParams, len_bytes),
    F("srcgap", Copy, U, CopyParams, src_gap), F("dstgap", Copy, U, CopyParams, dst_gap),
    F("padl", Copy, U, CopyParams, pad_left), F("padr", Copy, U, CopyParams, pad_right),
    F("atomic", Copy, U, CopyParams, atomic),
    F("ndnum", NdNz, U, NdNzParams, nd_num), F("n", NdNz, U, NdNzParams, n), F("d", NdNz, U, NdNzParams, d),
    F("dstc0", NdNz, U, NdNzParams, dst_c0_stride), F("dstn", NdNz, U, NdNzParams, dst_n_stride),
    F("srcd", NdNz, U, NdNzParams, src_d), F("srcnd", NdNz, U, NdNzParams, src_nd_stride),
    F("dstnd", NdNz, U, NdNzParams, dst_nd_stride),
    F("start", Load2d, U, Load2dParams, start_index), F("repeat", Load2d, U, Load2dParams, repeat),
    F("srcstride", Load2d, U, Load2dParams, src_stride), F("dstgap", Load2d, U, Load2dParams, dst_gap),
    F("transpose", Load2d, U, Load2dParams, transpose), F("fracgap", Load2d, U, Load2dParams, frac_gap),
    F("h", Load3d, U, Load3dParams, l1_h),
    F("w", Load3d, U, Load3dParams, l1_w), F("c1", Load3d, U, Load3dParams, c1),
    F("kh", Load3d, U, Load3dParams, kh), F("kw", Load3d, U, Load3dParams, kw),
    F("sh", Load3d, U, Load3dParams, stride_h), F("sw", Load3d, U, Load3dParams, stride_w),
    F("dh", Load3d, U, Load3dParams, dil_h), F("dw", Load3d, U, Load3dParams, dil_w),
    F("pt", Load3d, U, Load3dParams, pad_top), F("pb", Load3d, U, Load3dParams, pad_bottom),
    F("pl", Load3d, U, Load3dParams, pad_left), F("pr", Load3d, U, Load3dParams, pad_right),
    F("mstart", Load3d, U, Load3dParams, m_start), F("mext", Load3d, U, Load3dParams, m_ext),
    F("kstart", Load3d, U, Load3dParams, k_start), F("kext", Load3d, U, Load3dParams, k_ext),
    F("transpose", Load3d, U, Load3dParams, transpose),
    F("repeat", Fill, U, FillParams, repeat), F("blknum", Fill, U, FillParams, blk_num),
    F("dstgap", Fill, U, FillParams, dst_gap),
    F("m", Mad, U, MadParams, m), F("k", Mad, U, MadParams, k), F("n", Mad, U, MadParams, n),
    F("acc", Mad, U, MadParams, accumulate), F("bias", Mad, U, MadParams, bias),
    F("gemv", Mad, U, MadParams, gemv), F("kalign", Mad, U, MadParams, kalign16),
    F("uf", Mad, U, MadParams, unit_flag),
    F("m", Fix, U, FixpipeParams, m),
    F("n", Fix, U, FixpipeParams, n), F("srcstride", Fix, U, FixpipeParams, src_stride),
    F("dststride", Fix, U, FixpipeParams, dst_stride), F("out", Fix, DT, FixpipeParams, out_dtype),
    F("quant", Fix, QM, FixpipeParams, quant),
    F("relu", Fix, U, FixpipeParams, relu), F("nz2nd", Fix, U, FixpipeParams, nz2nd),
    F("atomic", Fix, U, FixpipeParams, atomic), F("chsplit", Fix, U, FixpipeParams, channel_split),
    F("uf", Fix, U, FixpipeParams, unit_flag), F("ndnum", Fix, U, FixpipeParams, nd_num),
    F("srcnd", Fix, U, FixpipeParams, src_nd_stride), F("dstnd", Fix, U, FixpipeParams, dst_nd_stride),
    F("cycles", Scalar, U, ScalarParams, cycles),
    F("reg", Scalar, SR, ScalarParams, reg), F("xd", Scalar, U, ScalarParams, xd),
    F("all", Scalar, U, ScalarParams, all),
    F("repeat", Nchw, U, NchwParams, repeat), F("dstrep", Nchw, U, NchwParams, dst_rep_stride),
    F("srcrep", Nchw, U, NchwParams, src_rep_stride), F("dsthigh", Nchw, U, NchwParams, dst_high),
    F("srchigh", Nchw, U, NchwParams, src_high),
#define D(j) Field{"d" #j, ParamKind::Nchw, FT::U, offsetof(NchwParams, dst_blk) + 2 * (j), 2}
    D(0), D(1), D(2), D(3), D(4), D(5), D(6), D(7), D(8), D(9), D(10), D(11), D(12), D(13), D(14), D(15),
#undef D
};
#undef F
// clang-format on
const size_t kNumFields = sizeof(kFields) / sizeof(kFields[0]);

namespace {

uint8_t* params(Instr& in) { return reinterpret_cast<uint8_t*>(&in.vec); }  // all union members share it
const uint8_t* params(const Instr& in) { return reinterpret_cast<const uint8_t*>(&in.vec); }

}  // namespace

uint64_t get_field(const Instr& in, const Field& f) {
    uint64_t v = 0;
    std::memcpy(&v, params(in) + f.off, f.size);  // little-endian host
    return v;
}
void set_field(Instr& in, const Field& f, uint64_t v) { std::memcpy(params(in) + f.off, &v, f.size); }

std::string field_text(const Field& f, uint64_t v) {
    switch (f.type) {
        case FT::DT: return dtype_name(static_cast<DType>(v));
        case FT::RM: return round_name(static_cast<RoundMode>(v));
        case FT::CM: return cmp_name(static_cast<CmpMode>(v));
        case FT::QM: return quant_name(static_cast<QuantMode>(v));
        case FT::SR: return sysreg_name(static_cast<SysReg>(v));
        default: return std::to_string(v);
    }
}

int addr_slots(const Instr& in, const Addr* out[4]) {
    if (in.op == Opcode::LD_GM) {
        out[0] = &in.src0;
        return 1;
    }
    if (in.op == Opcode::ST_GM || in.op == Opcode::DCCI) {
        out[0] = &in.dst;
        return 1;
    }
    out[0] = &in.dst, out[1] = &in.src0, out[2] = &in.src1, out[3] = &in.src2;
    return 4;
}

int required_addrs(Opcode op) {
    if (op == Opcode::LD_GM || op == Opcode::ST_GM) return 1;
    switch (param_kind(op)) {
        case ParamKind::None:
        case ParamKind::Flag:
        case ParamKind::CrossFlag:
        case ParamKind::Scalar: return 0;
        case ParamKind::Fill: return 1;
        case ParamKind::Mad: return 3;
        case ParamKind::Nchw: return 4;  // the packed source block numbers (isa/instr.h)
        default: break;
    }
    if (op == Opcode::SET_MASK) return 0;
    if (param_kind(op) != ParamKind::Vec) return 2;
    // dst and src0, src1 when the op reads one (isa/instr.h's one list), vsel's mask too.
    switch (vec_kind(op)) {
        case VecKind::Dup:
        case VecKind::Index: return 1;
        case VecKind::Sel:
        case VecKind::MrgSort: return 4;  // dst and lists 0..2 (list 3's address is `scalar`)
        default: return vec_uses_src1(op) ? 3 : 2;
    }
}

bool prefix_mask(uint64_t lo, uint64_t hi, int& count) {
    for (count = 0; count < 128; ++count) {
        const bool bit = count < 64 ? (lo >> count) & 1u : (hi >> (count - 64)) & 1u;
        if (!bit) break;
    }
    for (int i = count; i < 128; ++i)
        if (i < 64 ? (lo >> i) & 1u : (hi >> (i - 64)) & 1u) return false;
    return true;
}

}  // namespace asm_detail

using namespace asm_detail;

std::string disassemble(const Instr& in) {
    const ParamKind kind = param_kind(in.op);
    std::string s = opcode_name(in.op);
    const bool data = kind != ParamKind::None && kind != ParamKind::Flag && kind != ParamKind::CrossFlag &&
                      kind != ParamKind::Scalar && in.op != Opcode::SET_MASK;
    if (data || in.dtype != DType::FP16) s += std::string(".") + dtype_name(in.dtype);
    std::vector<std::string> parts;
    char buf[64];
    if (kind == ParamKind::Flag) {
        parts.push_back(pipe_name(in.flag.src));
        if (in.op != Opcode::PIPE_BARRIER) {
            parts.push_back(pipe_name(in.flag.dst));
            parts.push_back(std::to_string(in.flag.event_id));
        }
    } else if (kind == ParamKind::CrossFlag) {
        parts.push_back(pipe_name(in.xflag.pipe));
        parts.push_back(std::to_string(in.xflag.mode));
        parts.push_back(std::to_string(in.xflag.flag_id));
        if (in.xflag.all) parts.push_back("all");
    }
    const Instr def = make_instr(in.op);
    const Addr* addrs[4];
    const Addr* defs[4];
    const int slots = addr_slots(in, addrs);
    addr_slots(def, defs);
    int n = (kind == ParamKind::Flag || kind == ParamKind::CrossFlag) ? 0 : required_addrs(in.op);
    for (int i = 0; i < slots; ++i)
        if (!(*addrs[i] == *defs[i])) n = std::max(n, i + 1);
    if (kind == ParamKind::Flag || kind == ParamKind::CrossFlag) n = 0;  // sync carries no addresses
    for (int i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, "%s[0x%" PRIx64 "]", text::lower(pos_name(addrs[i]->pos)).c_str(),
                      addrs[i]->addr);
        parts.push_back(buf);
    }
    for (size_t fi = 0; fi < kNumFields; ++fi) {
        const Field& f = kFields[fi];
        if (f.kind != kind || in.op == Opcode::SET_MASK) continue;
        const uint64_t v = get_field(in, f);
        if (v != get_field(def, f)) parts.push_back(std::string(f.key) + "=" + field_text(f, v));
    }
    if (kind == ParamKind::Vec) {  // always explicit: text without mask= takes the mask register
        int count;
        if (prefix_mask(in.vec.mask_lo, in.vec.mask_hi, count))
            std::snprintf(buf, sizeof buf, "mask=%d", count);
        else
            std::snprintf(buf, sizeof buf, "mask=0x%" PRIx64 ":0x%" PRIx64, in.vec.mask_hi, in.vec.mask_lo);
        parts.push_back(buf);
    }
    if (std::isnan(in.scalar))
        parts.push_back(std::signbit(in.scalar) ? "scalar=-nan" : "scalar=nan");
    else if (in.scalar != 0.0 || std::signbit(in.scalar)) {
        std::snprintf(buf, sizeof buf, "scalar=%.17g", in.scalar);
        parts.push_back(buf);
    }
    if (in.pipe != exec_pipe(in)) parts.push_back(std::string("pipe=") + pipe_name(in.pipe));
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : " ") + parts[i];
    return s;
}

std::string disassemble(const std::vector<Instr>& prog) {
    std::string out;
    for (const Instr& in : prog) out += disassemble(in) + "\n";
    return out;
}

}  // namespace sfumato::isa
