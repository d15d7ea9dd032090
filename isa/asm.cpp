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

#include "isa/asm_detail.h"
#include "isa/semantics.h"

namespace sfumato::isa {


namespace {

using namespace asm_detail;
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
        for (size_t fi = 0; fi < kNumFields; ++fi) {
            const Field& f = kFields[fi];
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

}  // namespace sfumato::isa
