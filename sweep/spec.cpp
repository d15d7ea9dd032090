#include "sweep/spec.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "sim/error.h"

namespace sfumato::sweep {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

// Drops a ';' or '#' comment that starts a line or follows whitespace, outside quotes.
std::string strip_comment(const std::string& line) {
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if ((c == ';' || c == '#') && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])))) {
            return line.substr(0, i);
        }
    }
    return line;
}

bool parse_int(const std::string& s, int64_t& v) {
    if (s.empty()) return false;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == s.size()) return false;
    for (size_t k = i; k < s.size(); ++k)
        if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
    try {
        size_t pos = 0;
        v = std::stoll(s, &pos);
        return pos == s.size();
    } catch (const std::exception&) {
        return false;
    }
}

// `lo..hi+step` or `lo..hi*factor` (integers, hi inclusive); false when s is not a range.
bool expand_range(const std::string& s, std::vector<std::string>& out, const std::string& where) {
    const size_t dots = s.find("..");
    if (dots == std::string::npos) return false;
    const std::string lo_s = trim(s.substr(0, dots));
    std::string rest = trim(s.substr(dots + 2));
    const size_t op = rest.find_first_of("+*");
    const std::string hi_s = trim(rest.substr(0, op));
    const std::string step_s = op == std::string::npos ? "1" : trim(rest.substr(op + 1));
    const char kind = op == std::string::npos ? '+' : rest[op];
    int64_t lo, hi, step;
    if (!parse_int(lo_s, lo) || !parse_int(hi_s, hi) || !parse_int(step_s, step))
        throw InputError(where + ": range '" + s + "' must be LO..HI, LO..HI+STEP or LO..HI*FACTOR with integers");
    if (kind == '+' && step <= 0) throw InputError(where + ": range '" + s + "' needs a positive step");
    if (kind == '*' && (step < 2 || lo <= 0)) throw InputError(where + ": range '" + s + "' needs a factor >= 2 and LO > 0");
    if (lo > hi) throw InputError(where + ": empty range '" + s + "' (LO > HI)");
    constexpr size_t kMaxValues = 100000;
    for (int64_t v = lo; v <= hi;) {
        out.push_back(std::to_string(v));
        if (out.size() > kMaxValues) throw InputError(where + ": range '" + s + "' has more than 100000 values");
        if (kind == '+') {
            if (v > std::numeric_limits<int64_t>::max() - step) break;
            v += step;
        } else {
            if (v > std::numeric_limits<int64_t>::max() / step) break;
            v *= step;
        }
    }
    return true;
}

std::string resolve_config(const std::string& name, const std::string& spec_path, const std::string& where) {
    const fs::path p(name);
    std::error_code ec;
    if (p.is_absolute()) {
        if (!fs::is_regular_file(p, ec)) throw InputError(where + ": config file '" + name + "' not found");
        return p.lexically_normal().string();
    }
    const fs::path beside = fs::path(spec_path).parent_path() / p;
    if (fs::is_regular_file(beside, ec)) return fs::absolute(beside, ec).lexically_normal().string();
    if (fs::is_regular_file(p, ec)) return fs::absolute(p, ec).lexically_normal().string();
    throw InputError(where + ": config file '" + name + "' not found (beside the spec or in the working directory)");
}

bool parse_double(const std::string& s, double& v) {
    try {
        size_t pos = 0;
        v = std::stod(s, &pos);
        return pos == s.size();
    } catch (const std::exception&) {
        return false;
    }
}

bool parse_u32(const std::string& s, uint32_t& v) {
    int64_t x;
    if (!parse_int(s, x) || x < 0 || x > std::numeric_limits<uint32_t>::max()) return false;
    v = static_cast<uint32_t>(x);
    return true;
}

}  // namespace

std::string Param::option() const {
    std::string n = key.substr(4);
    for (auto& c : n)
        if (c == '_') c = '-';
    return "--" + n;
}

std::vector<const Param*> Spec::params() const {
    std::vector<const Param*> v;
    for (const auto& p : grid) v.push_back(&p);
    for (const auto& p : zip) v.push_back(&p);
    return v;
}

std::vector<int> Spec::dims() const {
    std::vector<int> d;
    for (size_t i = 0; i < grid.size(); ++i) d.push_back(static_cast<int>(i));
    for (size_t i = 0; i < zip.size(); ++i) d.push_back(static_cast<int>(grid.size()));
    return d;
}

size_t Spec::num_points() const {
    size_t n = 1;
    for (const auto& p : grid) n *= p.values.size();
    if (!zip.empty()) n *= zip.front().values.size();
    return n;
}

std::vector<std::string> split_command(const std::string& s, const std::string& where) {
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    char quote = 0;
    for (char c : s) {
        if (quote) {
            if (c == quote) quote = 0;
            else cur += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (in_word) words.push_back(cur);
            cur.clear();
            in_word = false;
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (quote) throw InputError(where + ": unterminated quote in the command");
    if (in_word) words.push_back(cur);
    return words;
}

// A value meant as a range: it starts with an (optionally negative) integer and holds "..".
static bool looks_like_range(const std::string& v) {
    const size_t digit = !v.empty() && v[0] == '-' ? 1 : 0;
    return v.size() > digit && std::isdigit(static_cast<unsigned char>(v[digit])) && v.find("..") != std::string::npos;
}

std::vector<std::string> parse_values(const std::string& s, const std::string& where, bool ranges) {
    std::vector<std::string> items;
    std::string cur;
    bool quoted = false, in_quote = false;
    auto flush = [&] {
        const std::string v = quoted ? cur : trim(cur);
        if (!quoted && ranges && looks_like_range(v)) {
            expand_range(v, items, where);
        } else {
            if (v.empty()) throw InputError(where + ": empty value in the list");
            items.push_back(v);
        }
        cur.clear();
        quoted = false;
    };
    if (trim(s).empty()) throw InputError(where + ": empty list of values");
    for (char c : s) {
        if (in_quote) {
            if (c == '"') in_quote = false;
            else cur += c;
        } else if (c == '"') {
            if (!trim(cur).empty()) throw InputError(where + ": a quote must open a value");
            cur.clear();
            in_quote = quoted = true;
        } else if (c == ',') {
            flush();
        } else if (quoted) {
            if (!std::isspace(static_cast<unsigned char>(c))) throw InputError(where + ": text after a closing quote");
        } else {
            cur += c;
        }
    }
    if (in_quote) throw InputError(where + ": unterminated quote");
    flush();
    return items;
}

Spec parse_spec(const std::string& text, const std::string& path) {
    Spec spec;
    spec.path = path;
    std::istringstream in(text);
    std::string raw, section;
    int line_no = 0;
    std::set<std::string> seen_sections, varied, sweep_keys, slurm_keys;
    bool have_command = false;
    while (std::getline(in, raw)) {
        ++line_no;
        const std::string where = path + ":" + std::to_string(line_no);
        const std::string line = trim(strip_comment(raw));
        if (line.empty()) continue;
        if (line.front() == '[') {
            if (line.back() != ']') throw InputError(where + ": malformed section header '" + line + "'");
            section = trim(line.substr(1, line.size() - 2));
            if (section != "sweep" && section != "grid" && section != "zip" && section != "slurm")
                throw InputError(where + ": unknown section [" + section + "] (sweep, grid, zip, slurm)");
            if (!seen_sections.insert(section).second) throw InputError(where + ": section [" + section + "] appears twice");
            continue;
        }
        const size_t eq = line.find('=');
        if (eq == std::string::npos) throw InputError(where + ": expected 'key = value', got '" + line + "'");
        const std::string key = trim(line.substr(0, eq));
        const std::string value = trim(line.substr(eq + 1));
        if (key.empty()) throw InputError(where + ": empty key");
        if (section.empty()) throw InputError(where + ": key '" + key + "' outside a section");
        if (section == "sweep") {
            if (!sweep_keys.insert(key).second) throw InputError(where + ": [sweep] " + key + " given twice");
            if (key == "command") {
                spec.command = split_command(value, where);
                if (spec.command.empty()) throw InputError(where + ": empty command");
                have_command = true;
            } else if (key == "config") {
                for (const auto& c : parse_values(value, where, false)) spec.configs.push_back(resolve_config(c, path, where));
            } else if (key == "timeout") {
                if (!parse_double(value, spec.timeout_seconds) || spec.timeout_seconds < 0)
                    throw InputError(where + ": timeout must be seconds >= 0, not '" + value + "'");
            } else {
                throw InputError(where + ": unknown key '" + key + "' in [sweep] (command, config, timeout)");
            }
        } else if (section == "slurm") {
            if (!slurm_keys.insert(key).second) throw InputError(where + ": [slurm] " + key + " given twice");
            SlurmOptions& s = spec.slurm;
            if (key == "partition") s.partition = value;
            else if (key == "time") s.time = value;
            else if (key == "mem") s.mem = value;
            else if (key == "account") s.account = value;
            else if (key == "qos") s.qos = value;
            else if (key == "cpus_per_task") {
                if (!parse_u32(value, s.cpus_per_task) || s.cpus_per_task == 0)
                    throw InputError(where + ": cpus_per_task must be a positive integer");
            } else if (key == "max_parallel") {
                if (!parse_u32(value, s.max_parallel)) throw InputError(where + ": max_parallel must be an integer >= 0");
            } else if (key == "poll_seconds") {
                if (!parse_double(value, s.poll_seconds) || s.poll_seconds < 0.1 || s.poll_seconds > 3600)
                    throw InputError(where + ": poll_seconds must be in [0.1, 3600]");
            } else if (key == "extra") {
                s.extra = split_command(value, where);
            } else {
                throw InputError(where + ": unknown key '" + key +
                                 "' in [slurm] (partition, time, mem, cpus_per_task, max_parallel, account, qos, extra, poll_seconds)");
            }
            for (const std::string* v : {&s.partition, &s.time, &s.mem, &s.account, &s.qos})
                if (v->find_first_of("\n\r\"'`$\\") != std::string::npos) throw InputError(where + ": [slurm] " + key + " holds characters not allowed in an sbatch option");
        } else {
            Param p;
            p.key = key;
            p.line = line_no;
            if (p.is_arg()) {
                if (p.key.size() == 4) throw InputError(where + ": 'arg.' needs an argument name");
                if (p.option() == "--out") throw InputError(where + ": arg.out is the sweep's to set (each point has its own out directory)");
                if (p.option() == "--config" || p.option() == "--set")
                    throw InputError(where + ": vary config files and keys as config keys, not as " + p.key);
            }
            if (!varied.insert(key).second) throw InputError(where + ": key '" + key + "' is varied twice");
            p.values = parse_values(value, where);
            (section == "grid" ? spec.grid : spec.zip).push_back(std::move(p));
        }
    }
    if (!have_command) throw InputError(path + ": [sweep] has no command");
    for (const auto& w : spec.command) {
        if (w == "--out" || w.rfind("--out=", 0) == 0)
            throw InputError(path + ": the command must not have --out (each point writes into its own directory)");
    }
    for (const auto& p : spec.zip) {
        if (p.values.size() != spec.zip.front().values.size())
            throw InputError(path + ":" + std::to_string(p.line) + ": [zip] lists must have equal lengths: '" + spec.zip.front().key +
                             "' has " + std::to_string(spec.zip.front().values.size()) + " values, '" + p.key + "' has " +
                             std::to_string(p.values.size()));
    }
    constexpr size_t kMaxPoints = 1000000;
    size_t n = 1;
    for (const auto& p : spec.grid) {
        n *= p.values.size();
        if (n > kMaxPoints) throw InputError(path + ": more than 1000000 points");
    }
    if (!spec.zip.empty() && n * spec.zip.front().values.size() > kMaxPoints) throw InputError(path + ": more than 1000000 points");
    return spec;
}

Spec load_spec(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot read sweep spec '" + path + "'");
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_spec(ss.str(), path);
}

Point make_point(const Spec& spec, size_t index) {
    Point pt;
    pt.index = index;
    // Row-major: the last dimension (the zip lists, or the last grid key) varies fastest.
    std::vector<size_t> pick(spec.grid.size() + 1, 0);
    size_t rest = index;
    if (!spec.zip.empty()) {
        pick.back() = rest % spec.zip.front().values.size();
        rest /= spec.zip.front().values.size();
    }
    for (size_t i = spec.grid.size(); i-- > 0;) {
        pick[i] = rest % spec.grid[i].values.size();
        rest /= spec.grid[i].values.size();
    }
    for (size_t i = 0; i < spec.grid.size(); ++i) pt.params.emplace_back(spec.grid[i].key, spec.grid[i].values[pick[i]]);
    for (const auto& z : spec.zip) pt.params.emplace_back(z.key, z.values[pick.back()]);

    pt.args = spec.command;
    for (const auto& [key, value] : pt.params) {
        if (key.rfind("arg.", 0) != 0) continue;
        Param tmp;
        tmp.key = key;
        const std::string opt = tmp.option();
        bool replaced = false;
        for (size_t i = 0; i < pt.args.size(); ++i) {
            if (pt.args[i] == opt && i + 1 < pt.args.size()) {
                pt.args[i + 1] = value;
                replaced = true;
            } else if (pt.args[i].rfind(opt + "=", 0) == 0) {
                pt.args[i] = opt + "=" + value;
                replaced = true;
            }
        }
        if (!replaced) {
            pt.args.push_back(opt);
            pt.args.push_back(value);
        }
    }
    for (const auto& c : spec.configs) {
        pt.args.push_back("--config");
        pt.args.push_back(c);
    }
    for (const auto& [key, value] : pt.params) {
        if (key.rfind("arg.", 0) == 0) continue;
        pt.args.push_back("--set");
        pt.args.push_back(key + "=" + value);
    }
    return pt;
}

std::vector<Point> expand(const Spec& spec) {
    std::vector<Point> v;
    const size_t n = spec.num_points();
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) v.push_back(make_point(spec, i));
    return v;
}

std::string point_name(size_t index, size_t num_points) {
    size_t width = 4;
    for (size_t n = num_points > 0 ? num_points - 1 : 0; n >= 10000; n /= 10) ++width;
    std::string s = std::to_string(index);
    return "p" + std::string(width > s.size() ? width - s.size() : 0, '0') + s;
}

}  // namespace sfumato::sweep
