#include "runtime/ops/ew/program.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/error.h"

namespace sfumato::ops::ew {

using isa::DType;
using isa::Opcode;

bool is_float_dt(DType t) { return t == DType::FP16 || t == DType::BF16 || t == DType::FP32; }

double round_to(double x, DType t) {
    uint8_t b[4];
    isa::store_f64(t, b, x, is_float_dt(t) ? isa::RoundMode::RINT : isa::RoundMode::TRUNC);
    return isa::load_f64(t, b);
}

std::string Program::text() const {
    auto name = [&](int r) -> std::string {
        if (r < 0) return "-";
        const RegInfo& g = regs[static_cast<size_t>(r)];
        std::string k = g.kind == RegKind::Block ? "blk" : g.kind == RegKind::Bits ? "bits" : "t";
        std::string s = g.src == RegSrc::Input ? "in" + std::to_string(g.input)
                        : g.src == RegSrc::Out ? "out"
                        : g.src == RegSrc::Const ? "c(" + std::to_string(g.value) + ")"
                                                 : k + std::to_string(g.slot);
        return s + "." + isa::dtype_name(g.dt);
    };
    std::string s;
    for (const Step& st : steps) {
        s += std::string(isa::opcode_name(st.op)) + " " + name(st.dst) + " <- " + name(st.a);
        if (st.b >= 0) s += ", " + name(st.b);
        if (st.sel >= 0) s += " ? " + name(st.sel);
        if (st.op == Opcode::VADDS || st.op == Opcode::VMULS || st.op == Opcode::VMAXS || st.op == Opcode::VMINS ||
            st.op == Opcode::VLRELU || st.op == Opcode::VCMPS || st.op == Opcode::VDUP)
            s += ", #" + std::to_string(st.scalar);
        if (st.op == Opcode::VCMP || st.op == Opcode::VCMPS) s += std::string(" ") + isa::cmp_name(st.cmp);
        if (st.op == Opcode::VCONV) s += std::string(" ") + isa::round_name(st.round);
        s += "\n";
    }
    return s;
}

Builder::Builder(std::vector<InputDesc> inputs, DType out_storage) : m_in(std::move(inputs)), m_out(out_storage) {
    m_p.input_reg.assign(m_in.size(), -1);
}

int Builder::new_reg(RegKind k, DType t, RegSrc s) {
    RegInfo r;
    r.kind = k, r.dt = t, r.src = s;
    m_p.regs.push_back(r);
    return static_cast<int>(m_p.regs.size()) - 1;
}

int Builder::emit(const Step& s) {
    m_p.steps.push_back(s);
    return s.dst;
}

DType Builder::type_of(const Val& v) const { return v.imm ? v.dt : m_p.regs[static_cast<size_t>(v.reg)].dt; }

Val Builder::imm(double x, DType t) {
    Val v;
    v.imm = true;
    v.v = round_to(x, t);
    v.dt = t;
    return v;
}

Val Builder::in(int i, DType want) {
    const InputDesc& d = input(i);
    if (d.kind == InKind::Imm) return imm(d.imm, want);
    int& r = m_p.input_reg[static_cast<size_t>(i)];
    if (d.kind == InKind::Block) {
        // A block holds 16- or 32-bit values (vbrcb); 1-byte types arrive as fp16 and convert.
        const DType bt = isa::dtype_size(want) < 2 ? DType::FP16 : want;
        for (const auto& [k, t] : m_block_in)
            if (k == i && t != bt)
                throw InputError("elementwise program: block input " + std::to_string(i) + " asked in two types");
        if (r < 0) {
            r = new_reg(RegKind::Block, bt, RegSrc::Input);
            m_p.regs[static_cast<size_t>(r)].input = i;
            m_block_in.push_back({i, bt});
        }
        Val v;
        v.reg = r;
        return bt == want ? v : conv(v, want);
    }
    if (r < 0) {
        r = new_reg(RegKind::Tile, d.storage, RegSrc::Input);
        m_p.regs[static_cast<size_t>(r)].input = i;
    }
    Val v;
    v.reg = r;
    return conv(v, want);
}

Val Builder::conv(const Val& x, DType to, isa::RoundMode rm) {
    if (x.imm) {
        Val v = x;
        uint8_t b[4];
        isa::store_f64(to, b, x.v, rm);
        v.v = isa::load_f64(to, b);
        v.dt = to;
        return v;
    }
    if (type_of(x) == to) return x;
    Step s;
    s.op = Opcode::VCONV;
    s.a = x.reg;
    s.round = rm;
    s.dst = new_reg(RegKind::Tile, to);
    Val v;
    v.reg = emit(s);
    return v;
}

Val Builder::const_block(double v, DType t) {
    for (size_t r = 0; r < m_p.regs.size(); ++r) {
        const RegInfo& g = m_p.regs[r];
        if (g.src == RegSrc::Const && g.dt == t && std::bit_cast<uint64_t>(g.value) == std::bit_cast<uint64_t>(round_to(v, t))) {
            Val x;
            x.reg = static_cast<int>(r);
            return x;
        }
    }
    const int r = new_reg(RegKind::Block, t, RegSrc::Const);
    m_p.regs[static_cast<size_t>(r)].value = round_to(v, t);
    Val x;
    x.reg = r;
    return x;
}

Val Builder::block_of(const Val& v, DType t) { return v.imm ? const_block(v.v, t) : v; }

namespace {
bool scalar_form(Opcode op, Opcode& s) {
    switch (op) {
        case Opcode::VADD: s = Opcode::VADDS; return true;
        case Opcode::VMUL: s = Opcode::VMULS; return true;
        case Opcode::VMAX: s = Opcode::VMAXS; return true;
        case Opcode::VMIN: s = Opcode::VMINS; return true;
        default: return false;
    }
}
bool commutes(Opcode op) {
    return op == Opcode::VADD || op == Opcode::VMUL || op == Opcode::VMAX || op == Opcode::VMIN || op == Opcode::VAND ||
           op == Opcode::VOR;
}
double fold(Opcode op, double a, double b) {
    switch (op) {
        case Opcode::VADD: return a + b;
        case Opcode::VSUB: return a - b;
        case Opcode::VMUL: return a * b;
        case Opcode::VDIV: return a / b;
        case Opcode::VMAX: return std::fmax(a, b);
        case Opcode::VMIN: return std::fmin(a, b);
        case Opcode::VAND: return static_cast<double>(static_cast<int64_t>(a) & static_cast<int64_t>(b));
        case Opcode::VOR: return static_cast<double>(static_cast<int64_t>(a) | static_cast<int64_t>(b));
        default: return 0;
    }
}
}  // namespace

Val Builder::bin(Opcode op, const Val& a0, const Val& b0) {
    Val a = a0, b = b0;
    const DType t = a.imm ? b.imm ? a.dt : type_of(b) : type_of(a);
    if (a.imm && b.imm) return imm(fold(op, a.v, b.v), t);
    if (a.imm && commutes(op)) std::swap(a, b);
    Opcode sop;
    if (b.imm && op == Opcode::VSUB) return scal(Opcode::VADDS, a, -b.v);
    if (b.imm && scalar_form(op, sop)) return scal(sop, a, b.v);
    a = block_of(a, t);
    b = block_of(b, t);
    if (m_p.regs[static_cast<size_t>(a.reg)].kind == RegKind::Block && m_p.regs[static_cast<size_t>(b.reg)].kind == RegKind::Block) {
        // Two single values: widen one to a tile (a block stands for every element).
        a = copy(a);
    }
    Step s;
    s.op = op, s.a = a.reg, s.b = b.reg;
    s.dst = new_reg(RegKind::Tile, t);
    Val v;
    v.reg = emit(s);
    return v;
}

Val Builder::un(Opcode op, const Val& a) {
    if (a.imm) {
        double r = a.v;
        switch (op) {
            case Opcode::VEXP: r = std::exp(a.v); break;
            case Opcode::VLN: r = std::log(a.v); break;
            case Opcode::VSQRT: r = std::sqrt(a.v); break;
            case Opcode::VRSQRT: r = 1 / std::sqrt(a.v); break;
            case Opcode::VREC: r = 1 / a.v; break;
            case Opcode::VABS: r = std::fabs(a.v); break;
            case Opcode::VRELU: r = std::max(a.v, 0.0); break;
            default: throw InputError(std::string("elementwise program: cannot fold ") + isa::opcode_name(op));
        }
        return imm(r, a.dt);
    }
    Step s;
    s.op = op, s.a = a.reg;
    s.dst = new_reg(RegKind::Tile, type_of(a));
    Val v;
    v.reg = emit(s);
    return v;
}

Val Builder::scal(Opcode op, const Val& a, double x) {
    if (a.imm) {
        switch (op) {
            case Opcode::VADDS: return imm(a.v + x, a.dt);
            case Opcode::VMULS: return imm(a.v * x, a.dt);
            case Opcode::VMAXS: return imm(std::fmax(a.v, x), a.dt);
            case Opcode::VMINS: return imm(std::fmin(a.v, x), a.dt);
            case Opcode::VLRELU: return imm(a.v >= 0 ? a.v : a.v * x, a.dt);
            default: throw InputError(std::string("elementwise program: cannot fold ") + isa::opcode_name(op));
        }
    }
    Step s;
    s.op = op, s.a = a.reg, s.scalar = x;
    s.dst = new_reg(RegKind::Tile, type_of(a));
    Val v;
    v.reg = emit(s);
    return v;
}

Val Builder::cmp(isa::CmpMode m, const Val& a0, const Val& b0) {
    Val a = a0, b = b0;
    if (a.imm && !b.imm) {
        std::swap(a, b);
        switch (m) {  // a < b  <=>  b > a
            case isa::CmpMode::LT: m = isa::CmpMode::GT; break;
            case isa::CmpMode::GT: m = isa::CmpMode::LT; break;
            case isa::CmpMode::LE: m = isa::CmpMode::GE; break;
            case isa::CmpMode::GE: m = isa::CmpMode::LE; break;
            default: break;
        }
    }
    const DType t = a.imm ? a.dt : type_of(a);
    if (a.imm) a = const_block(a.v, t);
    if (m_p.regs[static_cast<size_t>(a.reg)].kind == RegKind::Block) a = copy(a);
    Step s;
    s.cmp = m, s.a = a.reg;
    if (b.imm) {
        s.op = Opcode::VCMPS;
        s.scalar = b.v;
    } else {
        s.op = Opcode::VCMP;
        s.b = b.reg;
    }
    s.dst = new_reg(RegKind::Bits, t);
    Val v;
    v.reg = emit(s);
    return v;
}

Val Builder::sel(const Val& bits, const Val& a0, const Val& b0) {
    const DType t = a0.imm ? b0.imm ? a0.dt : type_of(b0) : type_of(a0);
    const Val a = block_of(a0, t), b = block_of(b0, t);
    Step s;
    s.op = Opcode::VSEL, s.a = a.reg, s.b = b.reg, s.sel = bits.reg;
    s.dst = new_reg(RegKind::Tile, t);
    Val v;
    v.reg = emit(s);
    return v;
}

Val Builder::copy(const Val& a) {
    const DType t = type_of(a);
    Step s;
    s.dst = new_reg(RegKind::Tile, t);
    if (a.imm) {
        s.op = Opcode::VDUP, s.scalar = a.v;
    } else if (m_p.regs[static_cast<size_t>(a.reg)].kind == RegKind::Tile) {
        s.op = Opcode::COPY_UB_TO_UB, s.a = a.reg;  // bytes as they are, any type
    } else if (t == DType::INT32 || t == DType::INT16) {
        s.op = Opcode::VOR, s.a = a.reg, s.b = a.reg;  // a block spread: x | x
    } else {
        s.op = Opcode::VMULS, s.a = a.reg, s.scalar = 1.0;  // x * 1 keeps signed zeros, inf, nan
    }
    Val v;
    v.reg = emit(s);
    return v;
}

Program Builder::finish(const Val& result, isa::RoundMode rm) {
    Val r = result;
    if (r.imm) {
        r = copy(imm(r.v, m_out));
    } else {
        if (m_p.regs[static_cast<size_t>(r.reg)].kind == RegKind::Bits)
            throw InputError("elementwise program: a bitmask cannot be an output");
        r = conv(r, m_out, rm);
        const RegInfo& g = m_p.regs[static_cast<size_t>(r.reg)];
        if (g.src != RegSrc::Temp || g.kind != RegKind::Tile) r = copy(r);
    }
    // The step that produced it writes the output buffer directly.
    m_p.regs[static_cast<size_t>(r.reg)].src = RegSrc::Out;
    m_p.out = r.reg;
    allocate();
    return m_p;
}

void Builder::allocate() {
    const size_t n = m_p.regs.size();
    std::vector<int> last(n, -1);
    for (size_t i = 0; i < m_p.steps.size(); ++i) {
        const Step& s = m_p.steps[i];
        for (int r : {s.a, s.b, s.sel})
            if (r >= 0) last[static_cast<size_t>(r)] = static_cast<int>(i);
    }
    std::vector<int> slot_owner;  // reg holding each slot, -1 = free
    auto bits_of = [&](const RegInfo& g) { return g.kind == RegKind::Bits ? 1u : 8u * isa::dtype_size(g.dt); };
    for (size_t i = 0; i < m_p.steps.size(); ++i) {
        const Step& s = m_p.steps[i];
        RegInfo& d = m_p.regs[static_cast<size_t>(s.dst)];
        // Sources dying here free their slots once the destination has one: a step never
        // writes the slot it reads (under the 220x bank rules every repeat of an in-place
        // instruction reads and writes one bank; docs/fidelity.md), so its destination can be
        // placed in another bank span than its sources (runtime/ops/ew/ub_layout.h).
        if (d.src == RegSrc::Temp && d.slot < 0) {
            const uint32_t want = bits_of(d);
            for (size_t k = 0; k < slot_owner.size() && d.slot < 0; ++k)
                if (slot_owner[k] < 0 && m_p.slot_bits[k] == want) d.slot = static_cast<int>(k);
            if (d.slot < 0) {
                m_p.slot_bits.push_back(want);
                slot_owner.push_back(-1);
                d.slot = static_cast<int>(slot_owner.size()) - 1;
            }
            slot_owner[static_cast<size_t>(d.slot)] = s.dst;
        }
        for (int r : {s.a, s.b, s.sel}) {
            if (r < 0 || last[static_cast<size_t>(r)] != static_cast<int>(i)) continue;
            const RegInfo& g = m_p.regs[static_cast<size_t>(r)];
            if (g.src == RegSrc::Temp && g.slot >= 0) slot_owner[static_cast<size_t>(g.slot)] = -1;
        }
        // A temp never read again (dead) gives its slot back at once.
        if (d.src == RegSrc::Temp && last[static_cast<size_t>(s.dst)] < 0) slot_owner[static_cast<size_t>(d.slot)] = -1;
    }
}

}  // namespace sfumato::ops::ew
