// Subcommand registry for the sfumato CLI: one file per subcommand, one registration line.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace sfumato::cli {

using CommandFn = std::function<int(const std::vector<std::string>& args)>;

struct CommandRegistrar {
    CommandRegistrar(const char* name, const char* summary, CommandFn fn);
};

#define SFUMATO_COMMAND(name, summary, fn) \
    static ::sfumato::cli::CommandRegistrar sfumato_cmd_registrar_##fn(name, summary, fn)

int dispatch(int argc, char** argv);

// The registered command of that name, or nullptr (sfumato sweep calls a command in-process to
// check a point's arguments before running anything).
const CommandFn* find_command(const std::string& name);

}  // namespace sfumato::cli
