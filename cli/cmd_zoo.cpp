// `sfumato zoo list` and `sfumato zoo export NAME[?key=value...] -o FILE.onnx`:
// the model zoo (runtime/graph/zoo.h), built with the ONNX protobuf API from a
// fixed seed.
#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "cli/session.h"
#include "runtime/graph/zoo.h"
#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {

int cmd_zoo(const std::vector<std::string>& args) {
    const char* usage =
        "usage: sfumato zoo list | sfumato zoo export "
        "NAME[?key=value&...] -o FILE.onnx\n";
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::cout << usage;
        return args.empty() ? kExitBadInput : kExitOk;
    }
    if (args[0] == "list") {
        for (const auto& z : graph::zoo_list()) {
            std::string params;
            for (const auto& [k, v] : z.params)
                params += (params.empty() ? "" : "&") + k + "=" + std::to_string(v);
            std::printf("%-14s %s\n%-14s   parameters: %s\n", z.name.c_str(), z.summary.c_str(), "",
                        params.c_str());
        }
        return kExitOk;
    }
    if (args[0] == "export") {
        std::string name, out;
        for (size_t i = 1; i < args.size(); ++i) {
            if ((args[i] == "-o" || args[i] == "--out") && i + 1 < args.size())
                out = args[++i];
            else if (name.empty() && args[i][0] != '-')
                name = args[i];
            else
                throw InputError("zoo export: unexpected argument '" + args[i] + "'\n" + usage);
        }
        if (name.empty() || out.empty())
            throw InputError(std::string("zoo export: give NAME and -o FILE.onnx\n") + usage);
        const std::string bytes = graph::zoo_model_bytes(name);
        write_text_atomically(out, bytes);
        std::printf("wrote %s (%.1f MB)\n", out.c_str(), static_cast<double>(bytes.size()) / 1e6);
        return kExitOk;
    }
    throw InputError("zoo: unknown subcommand '" + args[0] + "'\n" + usage);
}

}  // namespace

SFUMATO_COMMAND("zoo", "list the model zoo or export a zoo model as ONNX", cmd_zoo);

}  // namespace sfumato::cli
