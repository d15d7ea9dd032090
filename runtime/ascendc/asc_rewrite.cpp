// See asc_rewrite.h. A small scanner, not a parser: it skips comments, string and character
// literals, finds `<<<`, walks back over the callee (an identifier path with optional template
// arguments) and forward to the `>>>` that closes the launch configuration at bracket depth 0.
#include "runtime/ascendc/asc_rewrite.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <vector>

#include "sim/error.h"

namespace sfumato::ascendc {

namespace {

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Marks bytes inside comments and literals, which the scanner must not read as code.
std::vector<bool> code_mask(const std::string& s) {
    std::vector<bool> code(s.size(), true);
    size_t i = 0;
    while (i < s.size()) {
        if (s.compare(i, 2, "//") == 0) {
            while (i < s.size() && s[i] != '\n') code[i++] = false;
        } else if (s.compare(i, 2, "/*") == 0) {
            const size_t e = s.find("*/", i + 2);
            const size_t end = e == std::string::npos ? s.size() : e + 2;
            while (i < end) code[i++] = false;
        } else if (s[i] == '"' || s[i] == '\'') {
            const char q = s[i];
            if (q == '\'' && i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))) {  // digit separator
                ++i;
                continue;
            }
            code[i++] = false;
            while (i < s.size() && s[i] != q && s[i] != '\n') {
                if (s[i] == '\\') code[i++] = false;
                if (i < s.size()) code[i++] = false;
            }
            if (i < s.size()) code[i++] = false;
        } else {
            ++i;
        }
    }
    return code;
}

int line_of(const std::string& s, size_t pos) {
    int line = 1;
    for (size_t i = 0; i < pos && i < s.size(); ++i) line += s[i] == '\n';
    return line;
}

std::string collapse(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c))) continue;
        out += c == '"' ? '\'' : c;
    }
    return out;
}

// A definition (or declaration) of the kernel named `name` marked as one: where its name stands, and its
// qualifiers, the code between the previous ';', '{' or '}' and the name (comments left out), which hold
// __global__ or a core-kind attribute (__attribute__((aic)) / ((aiv)), which survive preprocessing where
// __global__ does not).
struct KernelDef {
    size_t at;
    std::string quals;
};
std::vector<KernelDef> kernel_defs(const std::string& src, const std::vector<bool>& code,
                                   const std::string& name) {
    std::vector<KernelDef> defs;
    const std::regex use("\\b" + name + "\\s*\\(");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), use); it != std::sregex_iterator(); ++it) {
        const size_t at = static_cast<size_t>(it->position());
        if (!code[at]) continue;
        size_t b = at;
        while (b > 0 && !(code[b - 1] && (src[b - 1] == ';' || src[b - 1] == '{' || src[b - 1] == '}'))) --b;
        // Nor past a preprocessor directive: `#if A` `f(...)` `#else` `g(...)` `#endif` `{ body }` gives the
        // two heads one body, the first head's qualifiers are not the second's.
        for (size_t c = b; c < at; ++c) {
            if (c > 0 && src[c - 1] != '\n') continue;
            size_t d = c;
            while (d < at && (src[d] == ' ' || src[d] == '\t')) ++d;
            if (d < at && code[d] && src[d] == '#') {
                const size_t e = src.find('\n', d);
                b = e == std::string::npos || e > at ? at : e + 1;
            }
        }
        std::string chunk;  // the code between them (a comment may name another qualifier)
        for (size_t c = b; c < at; ++c)
            if (code[c]) chunk += src[c];
        const std::string flat = collapse(chunk);
        if (chunk.find("__global__") != std::string::npos ||
            flat.find("__attribute__((aic))") != std::string::npos ||
            flat.find("__attribute__((aiv))") != std::string::npos)
            defs.push_back({at, flat});
    }
    return defs;
}

// The first definition's qualifiers ("" without one).
std::string definition_quals(const std::string& src, const std::vector<bool>& code, const std::string& name) {
    const std::vector<KernelDef> defs = kernel_defs(src, code, name);
    return defs.empty() ? std::string() : defs.front().quals;
}

// The vendor compiler's core-kind attributes (catlass's SmallMatmul is `CATLASS_GLOBAL __attribute__((aic))`):
// the kernel is built for that kind of core only, and runs on it only. "" without one.
std::string attribute_kind(const std::string& quals) {
    if (quals.find("__attribute__((aic))") != std::string::npos) return "Cube";
    if (quals.find("__attribute__((aiv))") != std::string::npos) return "Vector";
    return "";
}

// The kind a definition with these qualifiers gives its kernel (see asc_rewrite.h).
std::string kind_of_quals(const std::string& src, const std::string& quals) {
    if (const std::string k = attribute_kind(quals); !k.empty()) return k;
    if (quals.find("__vector__") != std::string::npos) return "Vector";
    if (quals.find("__cube__") != std::string::npos) return "Cube";
    if (quals.find("__mix__") != std::string::npos) return "Mix";
    std::smatch t;
    if (std::regex_search(src, t, std::regex("KERNEL_TASK_TYPE_DEFAULT\\s*\\(\\s*KERNEL_TYPE_([A-Z_0-9]+)"))) {
        const std::string k = t[1].str();
        if (k.find("AIV_ONLY") != std::string::npos) return "Vector";
        if (k.find("AIC_ONLY") != std::string::npos) return "Cube";
        if (k.find("MIX") != std::string::npos) return "Mix";
    }
    const bool cube = std::regex_search(src, std::regex("\\b(Mmad|LoadData|Fixpipe|ASCEND_IS_AIC)\\b|TPosition::(A1|A2|B1|B2|CO1)"));
    const bool vec = std::regex_search(
        src, std::regex("\\b(Add|Sub|Mul|Div|Adds|Muls|Exp|Ln|Relu|LeakyRelu|Cast|Duplicate|ReduceSum|ReduceMax|"
                        "WholeReduceSum|Compare|Select|ASCEND_IS_AIV)\\b|TPosition::(VECIN|VECOUT|VECCALC)|QuePosition::VEC"));
    // The high-level Matmul (REGIST_MATMUL_OBJ) is the cube's work: with vector work beside it, a mix kernel.
    const bool matmul = std::regex_search(src, std::regex("\\bREGIST_MATMUL_OBJ\\b"));
    if ((cube || matmul) && vec) return "Mix";
    if (cube) return "Cube";
    if (vec) return "Vector";
    return "FromMode";
}

std::string kind_of(const std::string& src, const std::vector<bool>& code, const std::string& name) {
    return kind_of_quals(src, definition_quals(src, code, name));
}

// The start of the line holding pos, or npos when that line is part of a preprocessor directive (it starts
// with '#' or continues one with a trailing backslash): no directive can go before it.
size_t plain_line_start(const std::string& src, size_t pos) {
    const size_t ls = pos == 0 ? 0 : src.rfind('\n', pos - 1) + 1;  // npos + 1 == 0
    size_t c = ls;
    while (c < pos && (src[c] == ' ' || src[c] == '\t')) ++c;
    if (c < src.size() && src[c] == '#') return std::string::npos;
    if (ls >= 2 && src[ls - 2] == '\\') return std::string::npos;
    return ls;
}

}  // namespace

namespace {

// One launch found: the callee's text, its last name, where it starts, where the configuration between
// <<< and >>> starts and ends.
struct Launch {
    size_t begin, cfg_begin, cfg_end;
    std::string callee, name;
};

// Calls emit(launch) for each launch in code, in order; the text between launches is the caller's.
template <class Emit>
void each_launch(const std::string& src, const std::vector<bool>& code, const std::string& file, Emit emit) {
    size_t copied = 0;
    size_t i = 0;
    while ((i = src.find("<<<", i)) != std::string::npos) {
        if (!code[i]) {
            i += 3;
            continue;
        }
        // Back over the callee: optional template arguments, then an identifier path.
        size_t b = i;
        while (b > copied && std::isspace(static_cast<unsigned char>(src[b - 1]))) --b;
        if (b > copied && src[b - 1] == '>') {
            int depth = 0;
            while (b > copied) {
                --b;
                if (!code[b]) continue;
                if (src[b] == '>') ++depth;
                else if (src[b] == '<' && --depth == 0) break;
            }
            while (b > copied && std::isspace(static_cast<unsigned char>(src[b - 1]))) --b;
        }
        size_t name_end = b;
        while (b > copied && (ident(src[b - 1]) || src[b - 1] == ':')) --b;
        if (b == name_end)
            throw InputError(file + ":" + std::to_string(line_of(src, i)) + ": '<<<' without a kernel name before it");
        std::string name = src.substr(b, name_end - b);
        if (const size_t c = name.rfind("::"); c != std::string::npos) name = name.substr(c + 2);
        // Forward to the closing >>> at bracket depth 0.
        size_t j = i + 3;
        int depth = 0;
        for (; j + 2 < src.size(); ++j) {
            if (!code[j]) continue;
            const char c = src[j];
            if (c == '(' || c == '[' || c == '{') ++depth;
            else if (c == ')' || c == ']' || c == '}') --depth;
            else if (depth == 0 && src.compare(j, 3, ">>>") == 0) break;
        }
        if (j + 2 >= src.size())
            throw InputError(file + ":" + std::to_string(line_of(src, i)) + ": kernel launch of '" + name +
                             "' without a closing '>>>'");
        emit(Launch{b, i + 3, j, src.substr(b, i - b), name});
        copied = i = j + 3;
    }
}

}  // namespace

std::string rewrite_launches(const std::string& src, const std::string& file) {
    const std::vector<bool> code = code_mask(src);
    std::vector<Launch> launches;
    each_launch(src, code, file, [&](const Launch& l) { launches.push_back(l); });
    // Text to put before a position (a kernel definition's line), and each launch's kind.
    std::vector<std::pair<size_t, std::string>> inserts;
    std::vector<std::string> kinds;
    for (const Launch& l : launches) {
        // Definitions that disagree on the kind can only be alternatives of the preprocessor (#if SCENARIO ==
        // 2 a
        // __cube__ one, #else an __aicore__ one, as the vendor's matmul_ibshareB has): the text before
        // preprocessing cannot tell which one is compiled, so each defines a macro naming its kind on the
        // line before it and the launch names the macro, which the preprocessor resolves to the compiled
        // definition's kind. That needs every definition before the launch and on a line a directive may
        // precede; otherwise the first one's.
        const std::vector<KernelDef> defs = kernel_defs(src, code, l.name);
        std::vector<std::pair<size_t, std::string>> marks;
        bool differ = false, placeable = true;
        for (const KernelDef& d : defs) {
            const std::string k = kind_of_quals(src, d.quals);
            differ = differ || k != kind_of_quals(src, defs.front().quals);
            const size_t ls = plain_line_start(src, d.at);
            placeable = placeable && d.at < l.begin && ls != std::string::npos;
            marks.emplace_back(ls, k);
        }
        if (!differ || !placeable) {
            kinds.push_back(kind_of(src, code, l.name));
            continue;
        }
        const std::string macro = "SFUMATO_ASC_KIND_" + l.name;
        for (const auto& [ls, k] : marks)  // a second launch of the kernel repeats them (removed below)
            inserts.emplace_back(ls, "#undef " + macro + "\n#define " + macro + " " + k + "\n#line " +
                                         std::to_string(line_of(src, ls)) + " \"" + file + "\"\n");
        kinds.push_back(macro);
    }
    std::sort(inserts.begin(), inserts.end());
    inserts.erase(std::unique(inserts.begin(), inserts.end()), inserts.end());
    std::string out = "#line 1 \"" + file + "\"\n";
    size_t copied = 0, next_insert = 0;
    auto copy_to = [&](size_t end) {  // the source up to end, with the insertions before it
        for (; next_insert < inserts.size() && inserts[next_insert].first <= end; ++next_insert) {
            out.append(src, copied, inserts[next_insert].first - copied);
            out += inserts[next_insert].second;
            copied = inserts[next_insert].first;
        }
        out.append(src, copied, end - copied);
        copied = end;
    };
    for (size_t i = 0; i < launches.size(); ++i) {
        const Launch& l = launches[i];
        copy_to(l.begin);
        out += "::sfumato::ascendc::make_launcher(" + l.callee + ", \"" + collapse(l.callee) +
               "\", ::sfumato::ascendc::LaunchKind::" + kinds[i] + ", ";
        out.append(src, l.cfg_begin, l.cfg_end - l.cfg_begin);
        out += ")";
        copied = l.cfg_end + 3;
    }
    copy_to(src.size());
    return out;
}

std::string rewrite_unit_launches(const std::string& src, const std::string& file) {
    const std::vector<bool> code = code_mask(src);
    std::string out;
    size_t copied = 0;
    each_launch(src, code, file, [&](const Launch& l) {
        out.append(src, copied, l.begin - copied);
        // A generic lambda calling the callee: overload resolution by the launch's arguments, as the
        // vendor's compiler resolves `K<<<...>>>(args)`; no line breaks added, so line markers stay true.
        // A kernel with a core-kind attribute runs on that kind of core only.
        const std::string kind = attribute_kind(definition_quals(src, code, l.name));
        out += "::sfumato::ascendc::make_call_launcher(\"" + collapse(l.callee) + "\", " +
               (kind.empty() ? "" : "::sfumato::ascendc::LaunchKind::" + kind + ", ") +
               "[](auto... sfumato_arg_) { " + l.callee + "(sfumato_arg_...); }, ";
        out.append(src, l.cfg_begin, l.cfg_end - l.cfg_begin);
        out += ")";
        copied = l.cfg_end + 3;
    });
    out.append(src, copied, std::string::npos);
    return out;
}

std::string strip_placement_lists(const std::string& src, const std::string& file) {
    const std::vector<bool> code = code_mask(src);
    std::string out;
    size_t copied = 0;
    size_t i = 0;
    while ((i = src.find("inline", i)) != std::string::npos) {
        const size_t end = i + 6;
        if (!code[i] || (i > 0 && ident(src[i - 1])) || (end < src.size() && ident(src[end]))) {
            i = end;
            continue;
        }
        // Over white space and the line markers (# N "file" flags) a preprocessor puts between a macro's
        // expansion from a system header (inline) and the rest of the use ([host, aicore]).
        size_t j = end;
        while (j < src.size()) {
            if (std::isspace(static_cast<unsigned char>(src[j]))) {
                ++j;
            } else if (src[j] == '#' && j > 0 && src[j - 1] == '\n') {
                while (j < src.size() && src[j] != '\n') ++j;
            } else {
                break;
            }
        }
        size_t k = j + 1;
        while (k < src.size() && std::isspace(static_cast<unsigned char>(src[k]))) ++k;
        if (j >= src.size() || src[j] != '[' || k >= src.size() || !ident(src[k])) {  // not a list; [[ is kept
            i = end;
            continue;
        }
        // identifier (, identifier)* ]
        bool want_ident = true;
        for (; k < src.size() && src[k] != ']'; ++k) {
            const char c = src[k];
            if (std::isspace(static_cast<unsigned char>(c))) continue;
            if (want_ident && ident(c)) {
                while (k + 1 < src.size() && ident(src[k + 1])) ++k;
                want_ident = false;
            } else if (!want_ident && c == ',') {
                want_ident = true;
            } else {
                break;
            }
        }
        if (k >= src.size() || src[k] != ']' || want_ident)
            throw InputError(file + ":" + std::to_string(line_of(src, j)) +
                             ": a placement list after 'inline' (such as [host, aicore]) is not closed by ']'");
        out.append(src, copied, j - copied);  // the white space and line markers stay
        for (size_t c = j; c < k; ++c)  // the list's line breaks stay, so later lines keep their numbers
            if (src[c] == '\n') out += '\n';
        copied = i = k + 1;
    }
    out.append(src, copied, std::string::npos);
    return out;
}

}  // namespace sfumato::ascendc
