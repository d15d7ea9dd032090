// Where a sfumato program is and what it is: its version and the presets it finds, in the
// build tree or installed (cmake --install, the Debian package). Light on purpose (the command
// dispatcher includes it, not cli/session.h); defined in cli/session.cpp.
#pragma once
#include <string>

namespace sfumato::cli {

// "sfumato X.Y.Z" (the CMake project version; also declared in cli/session.h).
std::string version_string();
// The chip and system presets: <prefix>/share/sfumato/configs beside the installed program or
// library (bin/sfumato, lib/libsfumato_ascendc.so), else the source tree's configs/ (a build tree).
std::string preset_dir();
// A --config or --system value: the file as given when it exists, else the preset of that name in
// preset_dir() ("tiny", "tiny.ini", or the source-tree spelling "configs/tiny.ini", so the
// documented commands work with an installed sfumato in any directory). Throws InputError naming
// both places when neither has it.
std::string resolve_config_file(const std::string& name);

}  // namespace sfumato::cli
