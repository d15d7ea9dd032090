// Finding and loading configuration files (config_files.h).
#include "sim/config_files.h"

#include <filesystem>

#include "sim/error.h"

namespace sfumato {

std::string resolve_config_file(const std::string& name, const std::string& preset_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(name);
    if (fs::exists(p, ec)) return name;
    const fs::path dir = preset_dir;
    if (!p.empty() && p.is_relative()) {
        const fs::path rel = *p.begin() == "configs" ? p.lexically_relative("configs") : p;
        for (const fs::path& c : {dir / rel, fs::path(dir / rel) += ".ini"})
            if (fs::is_regular_file(c, ec)) return c.string();
    }
    throw InputError("config file '" + name + "' not found (neither a file nor a preset in " + dir.string() + ")");
}

namespace {

// The system file resolved (empty: none).
std::string system_file_path(const std::string& given, const std::string& preset_dir) {
    if (given.empty()) return given;
    try {
        return resolve_config_file(given, preset_dir);
    } catch (const InputError&) {
        throw InputError("system config '" + given + "' does not exist (nor a preset in " + preset_dir + ")");
    }
}

std::string chip_file(const std::string& system_file, const std::vector<std::string>& sets, const std::string& preset_dir) {
    std::string chip;
    std::filesystem::path base;
    if (!system_file.empty()) {
        Config peek;
        peek.load_ini(system_file);
        if (auto v = peek.consume("system.chip"); v && !v->empty()) chip = *v;
        base = std::filesystem::path(system_file).parent_path();
    }
    const std::string key = "system.chip=";
    for (const auto& s : sets) {
        if (s.rfind(key, 0) == 0) {
            chip = s.substr(key.size());
            base.clear();
        }
    }
    if (chip.empty()) return chip;
    std::filesystem::path p(chip);
    if (p.is_relative() && !base.empty()) p = base / p;
    try {
        return resolve_config_file(p.string(), preset_dir);
    } catch (const InputError&) {
        throw ConfigError("system.chip", "chip preset '" + p.string() + "' does not exist (nor a preset in " + preset_dir + ")");
    }
}

}  // namespace

std::string system_chip_file(const std::string& system_file, const std::vector<std::string>& sets,
                             const std::string& preset_dir) {
    return chip_file(system_file_path(system_file, preset_dir), sets, preset_dir);
}

void load_system_config(Config& c, const std::string& given_system_file, const std::vector<std::string>& configs,
                        const std::vector<std::string>& sets, const std::string& preset_dir) {
    const std::string system_file = system_file_path(given_system_file, preset_dir);
    if (const std::string chip = chip_file(system_file, sets, preset_dir); !chip.empty()) c.load_ini(chip);
    if (!system_file.empty()) c.load_ini(system_file);
    for (const auto& f : configs) c.load_ini(resolve_config_file(f, preset_dir));
    for (const auto& s : sets) c.apply_override(s);
}

}  // namespace sfumato
