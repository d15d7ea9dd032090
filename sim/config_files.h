// Finding and loading configuration files as a library (what the CLI's --config, --system and
// --set do; a user's C++ program building a chip or a system calls the same): a name is a file
// as given, else a preset in a preset directory; a system file names its chip preset in
// system.chip (relative to the system file), which loads first so the system file wins.
#pragma once
#include <string>
#include <vector>

#include "sim/config.h"

namespace sfumato {

// A --config or --system value: the file as given when it exists, else the preset of that name
// in preset_dir ("tiny", "tiny.ini", or the source-tree spelling "configs/tiny.ini"). Throws
// InputError naming both places when neither has it.
std::string resolve_config_file(const std::string& name, const std::string& preset_dir);

// The chip preset a system configuration names: system.chip of the system file (relative to it),
// unless an override "system.chip=P" in `sets` names one (relative to the working directory; the
// last wins); either may name a preset in preset_dir. Empty when neither names one (the chip's
// defaults). InputError when the system file is missing, ConfigError (system.chip) when the chip
// preset is.
std::string system_chip_file(const std::string& system_file, const std::vector<std::string>& sets,
                             const std::string& preset_dir);

// Loads into c, in this order (later wins): the chip preset (system_chip_file), the system file
// (none when empty), the `configs` files (resolved in preset_dir) and the `sets` overrides
// ("key=value").
void load_system_config(Config& c, const std::string& system_file, const std::vector<std::string>& configs,
                        const std::vector<std::string>& sets, const std::string& preset_dir);

}  // namespace sfumato
