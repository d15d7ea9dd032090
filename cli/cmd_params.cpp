// `sfumato params [--config F] [--system F] [--set k=v]`: every parameter (chip, host runtime,
// system of chips `system.*`, collective library `comm.*`) with its effective value, default,
// unit, valid range and description; parameters the configuration does not read are marked.
#include <cstdio>

#include "models/chip/chip_params.h"
#include "runtime/rt/runtime.h"
#include "cli/command.h"
#include "cli/session.h"
#include "cli/system_session.h"

namespace sfumato::cli {

namespace {
int cmd_params(const std::vector<std::string>& args) {
    LoadedSystemParams lsp;
    if (!load_system_params_command(args, "params", lsp)) return 0;
    const LoadedParams& lp = lsp.base;
    const Config& c = lp.config;
    std::printf("%-44s %-14s %-14s %-8s %-22s %s\n", "key", "value", "default", "unit", "range", "description");
    for (const auto& p : c.decls()) {
        // A parameter this configuration does not read says so (setting it is an error).
        const std::string desc = p.unused_reason.empty() ? p.description : p.description + " [not read: " + p.unused_reason + "]";
        std::printf("%-44s %-14s %-14s %-8s %-22s %s\n", p.key.c_str(), p.value.c_str(), p.default_value.c_str(),
                    p.unit.c_str(), p.range.c_str(), desc.c_str());
    }
    return 0;
}
}  // namespace

SFUMATO_COMMAND("params", "list every parameter with default, unit, range and description", cmd_params);

}  // namespace sfumato::cli
