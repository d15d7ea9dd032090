#include "sim/config.h"

#include "isa/text.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace po = boost::program_options;

namespace sfumato {

void Config::load_ini(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError("cannot open config file '" + path + "'");
    std::stringstream text;
    text << in.rdbuf();
    load_ini_text(text.str(), path);
}

namespace {
// The lines Boost's INI parser accepts: after a '#' comment is cut and blanks trimmed, empty, a
// [section] or name = value. Checked here first so that a bad line is named with its number, and
// because Boost's message for it substitutes the line into a template with %token% placeholders:
// a line containing "%invalid_line%" made that substitution loop forever.
void check_ini_lines(const std::string& text, const std::string& path) {
    std::istringstream in(text);
    std::string line;
    for (size_t no = 1; std::getline(in, line); ++no) {
        std::string s = line.substr(0, line.find('#'));
        const size_t b = s.find_first_not_of(" \t\r\n");
        if (b == std::string::npos) continue;
        s = s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
        if ((s.front() == '[' && s.back() == ']') || s.find('=') != std::string::npos) continue;
        // (Not `s.size() > 80 ? s.substr(0, 80) + "..." : s`: with the precompiled header of the demo's
        // build gcc 12 reports a false -Warray-bounds in that string concatenation, an error there.)
        std::string shown = s.substr(0, 80);
        if (s.size() > 80) shown += "...";
        for (char& ch : shown)
            if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
        throw InputError("malformed config file '" + path + "', line " + std::to_string(no) + ": '" + shown +
                         "' is neither a [section] nor key = value");
    }
}
}  // namespace

void Config::load_ini_text(const std::string& text, const std::string& path) {
    check_ini_lines(text, path);
    std::istringstream in(text);
    po::parsed_options parsed(nullptr);
    try {
        po::options_description none;
        parsed = po::parse_config_file(in, none, /*allow_unregistered=*/true);
    } catch (const po::error&) {  // not e.what(): its placeholder substitution can loop (above)
        throw InputError("malformed config file '" + path + "' (not INI: [section] and key = value lines)");
    }
    for (const auto& opt : parsed.options) {
        if (opt.value.size() != 1) throw InputError("malformed config file '" + path + "' at key '" + opt.string_key + "'");
        set_raw(opt.string_key, opt.value[0], path);
    }
    m_sources.push_back(path);
}

void Config::apply_override(const std::string& assignment) {
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set expects key=value, got '" + assignment + "'");
    std::string key = assignment.substr(0, eq);
    std::string value = assignment.substr(eq + 1);
    set_raw(key, value, "--set");
}

void Config::set_raw(const std::string& key, const std::string& value, const std::string& origin) {
    auto& r = m_raw[key];
    r.value = value;
    r.origin = origin;
    r.used = false;
}

std::optional<std::string> Config::consume(const std::string& key, const std::string& unused_reason) {
    auto it = m_raw.find(key);
    if (it == m_raw.end()) return std::nullopt;
    if (unused_reason.empty()) it->second.used = true;
    else if (it->second.unused_reason.empty()) it->second.unused_reason = unused_reason;
    return it->second.value;
}

void Config::declare(ParamDecl decl) {
    auto it = m_decl_index.find(decl.key);
    if (it != m_decl_index.end()) {
        // Several instances of one component read the same key: one declaration, read if any
        // of them reads it.
        if (decl.unused_reason.empty()) m_decls[it->second].unused_reason.clear();
        return;
    }
    m_decl_index[decl.key] = m_decls.size();
    m_decls.push_back(std::move(decl));
}

void Config::check_set_unread() const {
    for (const auto& [key, raw] : m_raw) {
        if (raw.used || raw.unused_reason.empty()) continue;
        throw ConfigError(key, "set (from " + raw.origin + ") but not read by this configuration: " + raw.unused_reason +
                                   "; remove it or choose the configuration that reads it");
    }
}

void Config::check_unused() const {
    check_set_unread();
    for (const auto& [key, raw] : m_raw)
        if (!raw.used) throw ConfigError(key, "unknown key (from " + raw.origin + "); `sfumato params` lists the valid keys");
}

std::map<std::string, std::string> Config::effective() const {
    std::map<std::string, std::string> out;
    for (const auto& d : m_decls)
        if (d.unused_reason.empty()) out[d.key] = d.value;
    return out;
}

std::string Config::hash() const {
    uint64_t h = 1469598103934665603ull;
    for (const auto& [k, v] : effective()) {
        for (char c : k + "=" + v + "\n") {
            h ^= static_cast<unsigned char>(c);
            h *= 1099511628211ull;
        }
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

namespace detail {

using text::trim;

uint64_t parse_u64(const std::string& key, const std::string& raw) {
    std::string s = trim(raw);
    if (s.empty()) throw ConfigError(key, "empty value");
    if (s[0] == '-') throw ConfigError(key, "value '" + s + "' must not be negative");
    size_t pos = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(s, &pos, 0);
    } catch (...) {
        throw ConfigError(key, "value '" + s + "' is not an unsigned integer");
    }
    std::string suffix = trim(s.substr(pos));
    static const std::pair<const char*, uint64_t> kSuffix[] = {
        {"", 1}, {"K", 1000}, {"M", 1000000}, {"G", 1000000000}, {"KiB", 1ull << 10},
        {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40}, {"B", 1}};
    for (const auto& [name, mul] : kSuffix) {
        if (suffix == name) {
            if (mul != 1 && v > std::numeric_limits<uint64_t>::max() / mul) throw ConfigError(key, "value '" + s + "' overflows");
            return v * mul;
        }
    }
    throw ConfigError(key, "value '" + s + "' has an unknown suffix '" + suffix + "' (use K, M, G, KiB, MiB, GiB)");
}

int64_t parse_i64(const std::string& key, const std::string& raw) {
    std::string s = trim(raw);
    size_t pos = 0;
    long long v = 0;
    try {
        v = std::stoll(s, &pos, 0);
    } catch (...) {
        throw ConfigError(key, "value '" + s + "' is not an integer");
    }
    if (pos != s.size()) throw ConfigError(key, "value '" + s + "' is not an integer");
    return v;
}

double parse_double(const std::string& key, const std::string& raw) {
    std::string s = trim(raw);
    size_t pos = 0;
    double v = 0;
    try {
        v = std::stod(s, &pos);
    } catch (...) {
        throw ConfigError(key, "value '" + s + "' is not a number");
    }
    if (pos != s.size() || !std::isfinite(v)) throw ConfigError(key, "value '" + s + "' is not a finite number");
    return v;
}

bool parse_bool(const std::string& key, const std::string& raw) {
    std::string s = trim(raw);
    if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "0" || s == "no" || s == "off") return false;
    throw ConfigError(key, "value '" + s + "' is not a boolean (true/false)");
}

std::string format_value(uint64_t v) { return std::to_string(v); }
std::string format_value(int64_t v) { return std::to_string(v); }
std::string format_value(bool v) { return v ? "true" : "false"; }
std::string format_value(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

}  // namespace detail

ChoiceParam::ChoiceParam(const ParamScope& scope, const std::string& name, std::string def,
                         const std::string& desc, std::vector<std::string> choices)
    : m_value(std::move(def)) {
    const std::string key = scope.key(name);
    std::string def_value = m_value;
    if (auto raw = scope.config().consume(key, scope.unused_reason())) m_value = detail::trim(*raw);
    std::string range;
    for (const auto& c : choices) range += (range.empty() ? "" : "|") + c;
    if (!choices.empty()) {
        bool ok = false;
        for (const auto& c : choices) ok |= (c == m_value);
        if (!ok) throw ConfigError(key, "value '" + m_value + "' is not one of " + range);
    }
    scope.config().declare({key, "choice", def_value, m_value, "", desc, range.empty() ? "any" : range, scope.unused_reason()});
}

}  // namespace sfumato
