// Parameters: declared by the component that uses them (name, type, default, unit, description,
// valid range), under hierarchical keys (`chip.aicore.ub.size`). Values come from INI files
// (Boost.Program_options) and `--set key=value` overrides. Every key a config file or `--set`
// gives must be read by the chosen configuration, otherwise Config::check_unused() names it: a
// key no component declares is unknown, and a key only declared through a scope marked unused
// (ParamScope::unused_because, e.g. the skeleton memory's keys under the detailed memory model)
// is set but not read. Out-of-range values name their key.
// Param structs are plain C++ (no SystemC), so `sfumato params`/`info` never elaborate a model.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>
#include <optional>
#include <string>
#include <vector>

#include "sim/error.h"

namespace sfumato {

struct ParamDecl {
    std::string key;
    std::string type;
    std::string default_value;
    std::string value;  // effective
    std::string unit;
    std::string description;
    std::string range;
    // Non-empty when the chosen configuration does not read this parameter (and why).
    std::string unused_reason;
};

class Config {
public:
    // Reads an INI file; `[a.b]` sections prefix their keys. Malformed files throw InputError.
    void load_ini(const std::string& path);
    // The same for INI text already in memory; `origin` names it in errors.
    void load_ini_text(const std::string& text, const std::string& origin);
    // Applies `key=value`; throws InputError when malformed.
    void apply_override(const std::string& assignment);
    void set_raw(const std::string& key, const std::string& value, const std::string& origin);

    // Used by Param<T>: the raw value of a key and the declaration. The key counts as read
    // unless `unused_reason` says why the chosen configuration does not read it.
    std::optional<std::string> consume(const std::string& key, const std::string& unused_reason = "");
    void declare(ParamDecl decl);

    // Throws ConfigError for the first key given (config file or --set) that nothing read:
    // unknown, or declared only where the chosen configuration does not read it.
    void check_unused() const;
    // Throws ConfigError for the first key given that only unread declarations consumed (one
    // set for the model the configuration did not choose); unknown keys are not checked.
    void check_set_unread() const;

    const std::vector<ParamDecl>& decls() const { return m_decls; }
    // The parameters the chosen configuration reads, with their values.
    std::map<std::string, std::string> effective() const;
    // A stable hash (FNV-1a, hex) of the effective configuration.
    std::string hash() const;
    // The config file names loaded, for reports.
    const std::vector<std::string>& sources() const { return m_sources; }

private:
    struct Raw {
        std::string value;
        std::string origin;
        bool used = false;
        std::string unused_reason;  // declared, but only where it is not read
    };
    std::map<std::string, Raw> m_raw;
    std::vector<ParamDecl> m_decls;
    std::map<std::string, size_t> m_decl_index;
    std::vector<std::string> m_sources;
};

// A prefix into the key space, handed to each component.
class ParamScope {
public:
    ParamScope(Config& c, std::string prefix) : m_config(&c), m_prefix(std::move(prefix)) {}
    ParamScope sub(const std::string& name) const {
        ParamScope s(*m_config, m_prefix.empty() ? name : m_prefix + "." + name);
        s.m_unused_reason = m_unused_reason;
        return s;
    }
    // The same scope for parameters the chosen configuration does not read (an alternative
    // model's keys): they are declared (listed by `sfumato params`) but setting one is an error
    // that names `reason`. An empty reason keeps the scope's own.
    ParamScope unused_because(const std::string& reason) const {
        ParamScope s = *this;
        if (!reason.empty()) s.m_unused_reason = reason;
        return s;
    }
    // `unused_because(reason)` when `cond` holds, else this scope.
    ParamScope unused_if(bool cond, const std::string& reason) const { return cond ? unused_because(reason) : *this; }
    const std::string& unused_reason() const { return m_unused_reason; }
    std::string key(const std::string& name) const {
        return m_prefix.empty() ? name : m_prefix + "." + name;
    }
    Config& config() const { return *m_config; }
    const std::string& prefix() const { return m_prefix; }

private:
    Config* m_config;
    std::string m_prefix;
    std::string m_unused_reason;
};

namespace detail {
// Parse helpers; throw ConfigError naming the key.
uint64_t parse_u64(const std::string& key, const std::string& s);
int64_t parse_i64(const std::string& key, const std::string& s);
double parse_double(const std::string& key, const std::string& s);
bool parse_bool(const std::string& key, const std::string& s);
std::string format_value(uint64_t v);
std::string format_value(int64_t v);
std::string format_value(double v);
std::string format_value(bool v);
inline std::string format_value(const std::string& v) { return v; }
template <class T> struct TypeName;
template <> struct TypeName<uint64_t> { static constexpr const char* v = "uint"; };
template <> struct TypeName<uint32_t> { static constexpr const char* v = "uint"; };
template <> struct TypeName<int64_t> { static constexpr const char* v = "int"; };
template <> struct TypeName<double> { static constexpr const char* v = "float"; };
template <> struct TypeName<bool> { static constexpr const char* v = "bool"; };
template <> struct TypeName<std::string> { static constexpr const char* v = "string"; };
}  // namespace detail

// Inclusive valid range for numeric parameters.
template <class T>
struct Range {
    T lo;
    T hi;
};

// A numeric or boolean parameter.
template <class T>
class Param {
public:
    Param(const ParamScope& scope, const std::string& name, T def, const std::string& unit,
          const std::string& desc, Range<T> range)
        : m_value(def) {
        const std::string key = scope.key(name);
        if (auto raw = scope.config().consume(key, scope.unused_reason())) m_value = parse(key, *raw);
        if (m_value < range.lo || m_value > range.hi) {
            throw ConfigError(key, "value " + fmt(m_value) + " is outside the valid range [" +
                                       fmt(range.lo) + ", " + fmt(range.hi) + "]");
        }
        scope.config().declare({key, detail::TypeName<T>::v, fmt(def), fmt(m_value), unit, desc,
                                "[" + fmt(range.lo) + ", " + fmt(range.hi) + "]", scope.unused_reason()});
    }
    Param(const ParamScope& scope, const std::string& name, T def, const std::string& unit,
          const std::string& desc) requires std::is_same_v<T, bool>
        : m_value(def) {
        const std::string key = scope.key(name);
        if (auto raw = scope.config().consume(key, scope.unused_reason())) m_value = detail::parse_bool(key, *raw);
        scope.config().declare({key, "bool", fmt(def), fmt(m_value), unit, desc, "{false, true}", scope.unused_reason()});
    }
    operator T() const { return m_value; }
    T get() const { return m_value; }

private:
    static T parse(const std::string& key, const std::string& s) {
        if constexpr (std::is_same_v<T, double>) return detail::parse_double(key, s);
        else if constexpr (std::is_same_v<T, bool>) return detail::parse_bool(key, s);
        else if constexpr (std::is_signed_v<T>) return static_cast<T>(detail::parse_i64(key, s));
        else {
            uint64_t v = detail::parse_u64(key, s);
            if (v > std::numeric_limits<T>::max()) throw ConfigError(key, "value " + s + " does not fit");
            return static_cast<T>(v);
        }
    }
    static std::string fmt(T v) {
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double>) return detail::format_value(v);
        else if constexpr (std::is_signed_v<T>) return detail::format_value(static_cast<int64_t>(v));
        else return detail::format_value(static_cast<uint64_t>(v));
    }
    T m_value;
};

// A string parameter restricted to a set of choices (an empty set allows any string).
class ChoiceParam {
public:
    ChoiceParam(const ParamScope& scope, const std::string& name, std::string def,
                const std::string& desc, std::vector<std::string> choices);
    operator const std::string&() const { return m_value; }
    const std::string& get() const { return m_value; }
    bool operator==(const char* s) const { return m_value == s; }

private:
    std::string m_value;
};

}  // namespace sfumato
