// Text assembler and disassembler (isa/asm.h). Table-driven: every parameter field of every
// instruction class has one row (key, class, type, offset, size), used in both directions so
// the two cannot drift apart. Not on a simulation hot path.
#include "isa/asm.h"
#include "isa/text.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "isa/semantics.h"

namespace sfumato::isa {

namespace {

enum class FT : uint8_t { U, DT, RM, CM, QM, SR };
struct Field {
    const char* key;
    ParamKind kind;
    FT type;
    size_t off, size;
};

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
    F("gemv", Mad, U, MadParams, gemv),
    F("m", Fix, U, FixpipeParams, m),
    F("n", Fix, U, FixpipeParams, n), F("srcstride", Fix, U, FixpipeParams, src_stride),
    F("dststride", Fix, U, FixpipeParams, dst_stride), F("out", Fix, DT, FixpipeParams, out_dtype),
    F("quant", Fix, QM, FixpipeParams, quant),
    F("relu", Fix, U, FixpipeParams, relu), F("nz2nd", Fix, U, FixpipeParams, nz2nd),
    F("atomic", Fix, U, FixpipeParams, atomic), F("chsplit", Fix, U, FixpipeParams, channel_split),
    F("cycles", Scalar, U, ScalarParams, cycles),
    F("reg", Scalar, SR, ScalarParams, reg), F("xd", Scalar, U, ScalarParams, xd),
    F("all", Scalar, U, ScalarParams, all),
};
#undef F
// clang-format on

uint8_t* params(Instr& in) { return reinterpret_cast<uint8_t*>(&in.vec); }  // all union members share it
const uint8_t* params(const Instr& in) { return reinterpret_cast<const uint8_t*>(&in.vec); }

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

// The address operands an opcode's text names, in order: scalar loads name their source only,
// scalar stores and DCCI their destination only; everything else dst, src0, src1, src2.
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

// Address operands an opcode always prints (more when a later one is not the default).
int required_addrs(Opcode op) {
    if (op == Opcode::LD_GM || op == Opcode::ST_GM) return 1;
    switch (param_kind(op)) {
        case ParamKind::None:
        case ParamKind::Flag:
        case ParamKind::CrossFlag:
        case ParamKind::Scalar: return 0;
        case ParamKind::Fill: return 1;
        case ParamKind::Mad: return 3;
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

using text::lower;
using text::trim;
using text::upper;

// ---- assembler -------------------------------------------------------------------------

using Env = std::map<std::string, int64_t>;

class ExprParser {
public:
    ExprParser(const std::string& s, const Env& env, int line, int max_depth)
        : m_s(s), m_env(env), m_line(line), m_max_depth(max_depth) {}
    int64_t parse() {
        int64_t v = expr();
        skip();
        if (m_p != m_s.size()) fail("unexpected character in expression");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) { throw AsmError(m_line, m_s, what); }
    void skip() {
        while (m_p < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_p]))) ++m_p;
    }
    bool eat(char c) {
        skip();
        if (m_p < m_s.size() && m_s[m_p] == c) return ++m_p, true;
        return false;
    }
    // Arithmetic is checked: a result outside int64 is an error, not a wrapped value.
    int64_t apply(char op, int64_t a, int64_t b) {
        int64_t r = 0;
        bool overflow = false;
        switch (op) {
            case '+': overflow = __builtin_add_overflow(a, b, &r); break;
            case '-': overflow = __builtin_sub_overflow(a, b, &r); break;
            case '*': overflow = __builtin_mul_overflow(a, b, &r); break;
            case '/': return div(a, b, false);
            default: return div(a, b, true);
        }
        if (overflow) fail("value overflows 64 bits");
        return r;
    }
    int64_t expr() {
        int64_t v = term();
        for (;;) {
            if (eat('+'))
                v = apply('+', v, term());
            else if (eat('-'))
                v = apply('-', v, term());
            else
                return v;
        }
    }
    int64_t term() {
        int64_t v = unary();
        for (;;) {
            if (eat('*'))
                v = apply('*', v, unary());
            else if (eat('/'))
                v = apply('/', v, unary());
            else if (eat('%'))
                v = apply('%', v, unary());
            else
                return v;
        }
    }
    int64_t div(int64_t a, int64_t b, bool mod) {
        if (b == 0) fail("division by zero");
        if (b == -1) {
            if (mod) return 0;
            if (a == INT64_MIN) fail("value overflows 64 bits");
            return -a;
        }
        return mod ? a % b : a / b;
    }
    int64_t unary() {
        // Nesting is bounded so that a pathological expression cannot exhaust the stack.
        if (++m_depth > m_max_depth) fail("expression nested too deeply");
        const int64_t v = primary();
        --m_depth;
        return v;
    }
    int64_t primary() {
        if (eat('-')) {
            const int64_t v = unary();
            if (v == INT64_MIN) fail("value overflows 64 bits");
            return -v;
        }
        if (eat('(')) {
            int64_t v = expr();
            if (!eat(')')) fail("missing ')'");
            return v;
        }
        skip();
        size_t b = m_p;
        if (m_p < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_p]))) {
            const bool hex = m_s.compare(m_p, 2, "0x") == 0 || m_s.compare(m_p, 2, "0X") == 0;
            m_p += hex ? 2 : 0;
            while (m_p < m_s.size() && (hex ? std::isxdigit(static_cast<unsigned char>(m_s[m_p]))
                                            : std::isdigit(static_cast<unsigned char>(m_s[m_p]))))
                ++m_p;
            const std::string lit = m_s.substr(b, m_p - b);
            if (hex && lit.size() == 2) fail("expected hex digits after 0x");
            errno = 0;
            const unsigned long long u = std::strtoull(lit.c_str(), nullptr, 0);
            if (errno == ERANGE) fail("number does not fit in 64 bits");
            // Literals up to 2^64-1 are 64-bit patterns (0xffffffffffffffff is a full mask).
            return static_cast<int64_t>(u);
        }
        while (m_p < m_s.size() && (std::isalnum(static_cast<unsigned char>(m_s[m_p])) || m_s[m_p] == '_'))
            ++m_p;
        const std::string name = m_s.substr(b, m_p - b);
        if (name.empty()) fail("expected a number or a name");
        auto it = m_env.find(name);
        if (it == m_env.end()) throw AsmError(m_line, name, "unknown name");
        return it->second;
    }
    const std::string& m_s;
    const Env& m_env;
    int m_line;
    size_t m_p = 0;
    int m_depth = 0;
    int m_max_depth;
};

struct Line {
    int no;
    std::string text;
};

class Assembler {
public:
    explicit Assembler(const AsmLimits& lim) : m_lim(lim) {}
    std::vector<Instr> run(const std::string& text) {
        std::vector<Line> lines;
        size_t pos = 0;
        int no = 0;
        while (pos <= text.size()) {
            size_t e = text.find('\n', pos);
            if (e == std::string::npos) e = text.size();
            std::string l = text.substr(pos, e - pos);
            ++no;
            for (const char* c : {"#", "//"})
                if (size_t k = l.find(c); k != std::string::npos) l.resize(k);
            l = trim(l);
            if (!l.empty()) lines.push_back({no, l});
            pos = e + 1;
        }
        block(lines, 0, lines.size(), 0);
        return std::move(m_out);
    }

private:
    void block(const std::vector<Line>& ls, size_t b, size_t e, int depth_in) {
        for (size_t i = b; i < e; ++i) {
            const Line& l = ls[i];
            // .rep makes a short text expand to any size: bound the work and the result.
            if (++m_visits > m_lim.max_line_visits)
                throw AsmError(l.no, l.text.substr(0, 16), "program expands to more than " + std::to_string(m_lim.max_line_visits) + " lines");
            if (l.text.rfind(".rep", 0) == 0) {
                size_t depth = 1, j = i + 1;
                for (; j < e; ++j) {
                    if (ls[j].text.rfind(".rep", 0) == 0)
                        ++depth;
                    else if (ls[j].text == ".endr" && --depth == 0)
                        break;
                }
                if (j == e) throw AsmError(l.no, ".rep", "missing .endr");
                if (depth_in + 1 > m_lim.max_rep_depth)
                    throw AsmError(l.no, ".rep", ".rep nested more than " + std::to_string(m_lim.max_rep_depth) + " deep");
                std::string arg = trim(l.text.substr(4)), var;
                if (size_t c = arg.find(','); c != std::string::npos)
                    var = trim(arg.substr(c + 1)), arg = trim(arg.substr(0, c));
                const int64_t n = ExprParser(arg, m_env, l.no, m_lim.max_expr_depth).parse();
                if (n < 0) throw AsmError(l.no, arg, "negative repeat count");
                const bool had = m_env.count(var) != 0;
                const int64_t saved = had ? m_env[var] : 0;
                for (int64_t k = 0; k < n; ++k) {
                    if (++m_visits > m_lim.max_line_visits)  // an empty body counts too
                        throw AsmError(l.no, ".rep", "program expands to more than " + std::to_string(m_lim.max_line_visits) + " lines");
                    if (!var.empty()) m_env[var] = k;
                    block(ls, i + 1, j, depth_in + 1);
                }
                if (!var.empty()) {
                    if (had)
                        m_env[var] = saved;
                    else
                        m_env.erase(var);
                }
                i = j;
            } else if (l.text == ".endr") {
                throw AsmError(l.no, ".endr", ".endr without .rep");
            } else if (l.text.rfind(".set", 0) == 0) {
                std::string rest = trim(l.text.substr(4));
                size_t sp = rest.find_first_of(" \t");
                if (sp == std::string::npos) throw AsmError(l.no, rest, ".set needs a name and a value");
                m_env[rest.substr(0, sp)] = ExprParser(trim(rest.substr(sp)), m_env, l.no, m_lim.max_expr_depth).parse();
            } else if (l.text[0] == '.') {
                throw AsmError(l.no, l.text.substr(0, l.text.find_first_of(" \t")), "unknown directive");
            } else {
                if (m_out.size() >= m_lim.max_instructions)
                    throw AsmError(l.no, l.text.substr(0, l.text.find_first_of(" \t")),
                                   "program has more than " + std::to_string(m_lim.max_instructions) + " instructions");
                m_out.push_back(instr(l));
            }
        }
    }

    int64_t num(const std::string& s, int line) { return ExprParser(s, m_env, line, m_lim.max_expr_depth).parse(); }

    Instr instr(const Line& l) {
        const int ln = l.no;
        size_t sp = l.text.find_first_of(" \t");
        std::string mn = l.text.substr(0, sp), rest = sp == std::string::npos ? "" : l.text.substr(sp);
        std::string opname = lower(mn), dt;
        if (size_t d = opname.find('.'); d != std::string::npos) dt = opname.substr(d + 1), opname.resize(d);
        Opcode op;
        if (!parse_opcode(opname.c_str(), op)) throw AsmError(ln, mn, "unknown mnemonic");
        Instr in = make_instr(op);
        if (!dt.empty() && !parse_dtype(dt, in.dtype)) throw AsmError(ln, dt, "unknown dtype");
        const ParamKind kind = param_kind(op);
        if (kind == ParamKind::Vec && op != Opcode::SET_MASK)
            in.vec.mask_lo = m_mask_lo, in.vec.mask_hi = m_mask_hi;
        // Split operands at top-level commas.
        std::vector<std::string> ops;
        int depth = 0;
        std::string cur;
        for (char c : rest) {
            if (c == '[' || c == '(') ++depth;
            if (c == ']' || c == ')') --depth;
            if (c == ',' && depth == 0)
                ops.push_back(trim(cur)), cur.clear();
            else
                cur += c;
        }
        if (!trim(cur).empty() || !ops.empty()) ops.push_back(trim(cur));
        int npos = 0;
        bool pipe_set = false;
        for (const std::string& o : ops) {
            if (o.empty()) throw AsmError(ln, l.text, "empty operand");
            const size_t eq = o.find('=');
            if (eq == std::string::npos) {
                positional(in, kind, npos++, o, ln);
                continue;
            }
            const std::string key = lower(trim(o.substr(0, eq))), val = trim(o.substr(eq + 1));
            if (key == "scalar") {
                char* end = nullptr;
                double v = std::strtod(val.c_str(), &end);
                in.scalar = (end && *end == '\0' && !val.empty()) ? v : static_cast<double>(num(val, ln));
            } else if (key == "pipe") {
                if (!parse_pipe(upper(val).c_str(), in.pipe)) throw AsmError(ln, val, "unknown pipe");
                pipe_set = true;
            } else if (key == "mask" && kind == ParamKind::Vec) {
                parse_mask(in, val, ln);
            } else {
                keyed(in, kind, key, val, ln);
            }
        }
        if (!pipe_set) in.pipe = exec_pipe(in);
        if (op == Opcode::SET_MASK) m_mask_lo = in.vec.mask_lo, m_mask_hi = in.vec.mask_hi;
        if (std::string err = validate(in); !err.empty()) throw AsmError(ln, mn, err);
        return in;
    }

    void parse_mask(Instr& in, const std::string& val, int ln) {
        if (size_t c = val.find(':'); c != std::string::npos) {
            in.vec.mask_hi = static_cast<uint64_t>(num(val.substr(0, c), ln));
            in.vec.mask_lo = static_cast<uint64_t>(num(val.substr(c + 1), ln));
            return;
        }
        const int64_t n = num(val, ln);
        if (n < 0 || n > 128) throw AsmError(ln, val, "mask count outside 0..128");
        in.vec.mask_lo = n >= 64 ? ~0ull : (1ull << n) - 1;
        in.vec.mask_hi = n >= 128 ? ~0ull : n <= 64 ? 0 : (1ull << (n - 64)) - 1;
    }

    void positional(Instr& in, ParamKind kind, int i, const std::string& o, int ln) {
        auto pipe = [&](const std::string& s) {
            Pipe p;
            if (!parse_pipe(upper(s).c_str(), p)) throw AsmError(ln, s, "unknown pipe");
            return p;
        };
        auto small = [&](const std::string& s, int64_t hi) {
            int64_t v = num(s, ln);
            if (v < 0 || v > hi) throw AsmError(ln, s, "value out of range");
            return static_cast<uint8_t>(v);
        };
        if (kind == ParamKind::Flag) {
            const int n = in.op == Opcode::PIPE_BARRIER ? 1 : 3;
            if (i >= n) throw AsmError(ln, o, "too many operands");
            if (i == 0)
                in.flag.src = pipe(o);
            else if (i == 1)
                in.flag.dst = pipe(o);
            else
                in.flag.event_id = small(o, 255);
            return;
        }
        if (kind == ParamKind::CrossFlag) {
            if (i >= 4) throw AsmError(ln, o, "too many operands");
            if (i == 0)
                in.xflag.pipe = pipe(o);
            else if (i == 1)
                in.xflag.mode = small(o, 255);
            else if (i == 2)
                in.xflag.flag_id = small(o, 255);
            else if (o == "all")
                in.xflag.all = 1;
            else
                throw AsmError(ln, o, "expected `all` (the chip's per-core counting)");
            return;
        }
        const Addr* slots_c[4];
        const int nslots = addr_slots(in, slots_c);
        if (i >= nslots) throw AsmError(ln, o, "too many address operands");
        const size_t lb = o.find('[');
        if (lb == std::string::npos || o.back() != ']')
            throw AsmError(ln, o, "expected an address pos[expr]");
        Addr a;
        if (!parse_pos(upper(trim(o.substr(0, lb))).c_str(), a.pos))
            throw AsmError(ln, o.substr(0, lb), "unknown buffer");
        const int64_t v = num(o.substr(lb + 1, o.size() - lb - 2), ln);
        if (v < 0) throw AsmError(ln, o, "negative address");
        a.addr = static_cast<uint64_t>(v);
        *const_cast<Addr*>(slots_c[i]) = a;
    }

    void keyed(Instr& in, ParamKind kind, const std::string& key, const std::string& val, int ln) {
        for (const Field& f : kFields) {
            if (f.kind != kind || key != f.key) continue;
            uint64_t v = 0;
            bool ok = true;
            const std::string lv = lower(val);
            switch (f.type) {
                case FT::DT: {
                    DType t;
                    ok = parse_dtype(lv, t);
                    v = static_cast<uint64_t>(t);
                    break;
                }
                case FT::RM: {
                    RoundMode t;
                    ok = parse_round(lv.c_str(), t);
                    v = static_cast<uint64_t>(t);
                    break;
                }
                case FT::CM: {
                    CmpMode t;
                    ok = parse_cmp(lv.c_str(), t);
                    v = static_cast<uint64_t>(t);
                    break;
                }
                case FT::QM: {
                    QuantMode t;
                    ok = parse_quant(lv.c_str(), t);
                    v = static_cast<uint64_t>(t);
                    break;
                }
                case FT::SR: {
                    SysReg t;
                    ok = parse_sysreg(lv.c_str(), t);
                    v = static_cast<uint64_t>(t);
                    break;
                }
                case FT::U: {
                    const int64_t x = num(val, ln);
                    const uint64_t max = f.size >= 8 ? ~0ull : (1ull << (8 * f.size)) - 1;
                    if (x < 0 || static_cast<uint64_t>(x) > max)
                        throw AsmError(ln, val, std::string("value out of range for ") + f.key);
                    v = static_cast<uint64_t>(x);
                    break;
                }
            }
            if (!ok) throw AsmError(ln, val, std::string("bad value for ") + f.key);
            set_field(in, f, v);
            return;
        }
        throw AsmError(ln, key, std::string("unknown key for ") + opcode_name(in.op));
    }

    AsmLimits m_lim;
    Env m_env;
    std::vector<Instr> m_out;
    uint64_t m_visits = 0;
    uint64_t m_mask_lo = ~0ull, m_mask_hi = ~0ull;
};

}  // namespace

std::vector<Instr> assemble(const std::string& text, const AsmLimits& limits) { return Assembler(limits).run(text); }

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
        std::snprintf(buf, sizeof buf, "%s[0x%" PRIx64 "]", lower(pos_name(addrs[i]->pos)).c_str(),
                      addrs[i]->addr);
        parts.push_back(buf);
    }
    for (const Field& f : kFields) {
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
