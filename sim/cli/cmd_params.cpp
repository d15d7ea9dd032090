// `sfumato params [--config F] [--set k=v]`: every parameter with its effective value, default,
// unit, valid range and description.
#include <cstdio>

#include "models/chip/chip_params.h"
#include "runtime/rt/runtime.h"
#include "sim/cli/command.h"
#include "sim/cli/session.h"

namespace sfumato::cli {

namespace {
int cmd_params(const std::vector<std::string>& args) {
    CommonOptions o;
    po::options_description d("sfumato params");
    add_config_options(d, o);
    po::variables_map vm;
    if (!parse_command(args, "sfumato params [--config F] [--set key=value]", d, vm)) return 0;
    Config c;
    load_config(c, o);
    ChipParams chip(c);
    rt::RuntimeParams host(ParamScope(c, "host"));
    c.check_unused();
    std::printf("%-44s %-14s %-14s %-8s %-22s %s\n", "key", "value", "default", "unit", "range", "description");
    for (const auto& p : c.decls())
        std::printf("%-44s %-14s %-14s %-8s %-22s %s\n", p.key.c_str(), p.value.c_str(), p.default_value.c_str(),
                    p.unit.c_str(), p.range.c_str(), p.description.c_str());
    return 0;
}
}  // namespace

SFUMATO_COMMAND("params", "list every parameter with default, unit, range and description", cmd_params);

}  // namespace sfumato::cli
