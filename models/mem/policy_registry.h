// A name -> factory registry for swappable policies (HBM scheduler, address map, L2
// replacement). Each policy registers with one line next to its definition; components pick
// one by the name in their config. Lookups happen at construction only, never on a hot path.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/error.h"

namespace sfumato::mem {

template <class I, class... Args>
class PolicyRegistry {
public:
    using Factory = std::function<std::unique_ptr<I>(Args...)>;
    static bool add(const std::string& name, Factory f) {
        table()[name] = std::move(f);
        return true;
    }
    // Throws ConfigError naming `key` when no policy has that name.
    static std::unique_ptr<I> create(const std::string& name, const std::string& key, Args... args) {
        auto it = table().find(name);
        if (it == table().end()) {
            std::string known;
            for (const auto& [n, f] : table()) known += (known.empty() ? "" : "|") + n;
            throw ConfigError(key, "unknown policy '" + name + "' (known: " + known + ")");
        }
        return it->second(args...);
    }
    static std::vector<std::string> names() {
        std::vector<std::string> v;
        for (const auto& [n, f] : table()) v.push_back(n);
        return v;
    }

private:
    static std::map<std::string, Factory>& table() {
        static std::map<std::string, Factory> t;
        return t;
    }
};

}  // namespace sfumato::mem

#define SFUMATO_CONCAT_INNER(a, b) a##b
#define SFUMATO_CONCAT(a, b) SFUMATO_CONCAT_INNER(a, b)
// One registration line per policy: SFUMATO_REGISTER_POLICY(Registry, "name", factory-lambda).
#define SFUMATO_REGISTER_POLICY(Registry, name, ...) \
    [[maybe_unused]] static const bool SFUMATO_CONCAT(sfumato_policy_, __LINE__) = Registry::add(name, __VA_ARGS__)
