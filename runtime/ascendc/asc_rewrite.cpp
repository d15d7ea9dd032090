// See asc_rewrite.h. A small scanner, not a parser: it skips comments, string and character
// literals, finds `<<<`, walks back over the callee (an identifier path with optional template
// arguments) and forward to the `>>>` that closes the launch configuration at bracket depth 0.
#include "runtime/ascendc/asc_rewrite.h"

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

// The kind of the kernel named `name`, from the qualifiers of its definition: the code between
// the previous ';', '{' or '}' and the name (comments left out), when it holds __global__ or a core-kind
// attribute (__attribute__((aic)) / ((aiv)), which survive preprocessing where __global__ does not).
std::string definition_quals(const std::string& src, const std::vector<bool>& code, const std::string& name) {
    std::string quals;
    const std::regex use("\\b" + name + "\\s*\\(");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), use); it != std::sregex_iterator(); ++it) {
        const size_t at = static_cast<size_t>(it->position());
        if (!code[at]) continue;
        size_t b = at;
        while (b > 0 && !(code[b - 1] && (src[b - 1] == ';' || src[b - 1] == '{' || src[b - 1] == '}'))) --b;
        std::string chunk;  // the code between them (a comment may name another qualifier)
        for (size_t c = b; c < at; ++c)
            if (code[c]) chunk += src[c];
        const std::string flat = collapse(chunk);
        if (chunk.find("__global__") != std::string::npos || flat.find("__attribute__((aic))") != std::string::npos ||
            flat.find("__attribute__((aiv))") != std::string::npos) {
            quals = flat;
            break;
        }
    }
    return quals;
}

// The vendor compiler's core-kind attributes (catlass's SmallMatmul is `CATLASS_GLOBAL __attribute__((aic))`):
// the kernel is built for that kind of core only, and runs on it only. "" without one.
std::string attribute_kind(const std::string& quals) {
    if (quals.find("__attribute__((aic))") != std::string::npos) return "Cube";
    if (quals.find("__attribute__((aiv))") != std::string::npos) return "Vector";
    return "";
}

std::string kind_of(const std::string& src, const std::vector<bool>& code, const std::string& name) {
    const std::string quals = definition_quals(src, code, name);
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
    std::string out = "#line 1 \"" + file + "\"\n";
    size_t copied = 0;
    each_launch(src, code, file, [&](const Launch& l) {
        out.append(src, copied, l.begin - copied);
        out += "::sfumato::ascendc::make_launcher(" + l.callee + ", \"" + collapse(l.callee) +
               "\", ::sfumato::ascendc::LaunchKind::" + kind_of(src, code, l.name) + ", ";
        out.append(src, l.cfg_begin, l.cfg_end - l.cfg_begin);
        out += ")";
        copied = l.cfg_end + 3;
    });
    out.append(src, copied, std::string::npos);
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
