// `sfumato asc-rewrite IN OUT`: turns an Ascend C source (an .asc file, or a kernel source with
// `kernel<<<blockDim, l2ctrl, stream>>>(args)` launches) into host C++ that builds against
// sfumato's Ascend C headers: each launch becomes a launch on the simulated chip (see
// runtime/ascendc/asc_rewrite.h). scripts/ascendc-build and the ASC CMake language call it.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "runtime/ascendc/asc_rewrite.h"
#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {
int cmd_asc_rewrite(const std::vector<std::string>& args) {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
        std::printf("usage: sfumato asc-rewrite [--preprocessed] IN OUT\n"
                    "  rewrites the <<<blockDim, l2ctrl, stream>>> kernel launches of IN into launches on the\n"
                    "  simulated chip and writes the host C++ source OUT; with --preprocessed, IN is a\n"
                    "  preprocessed translation unit whose placement lists (inline [host, aicore]) are removed\n"
                    "  and whose remaining launches (in headers) call the kernel through a generic lambda\n");
        return kExitOk;
    }
    const bool pre = !args.empty() && args[0] == "--preprocessed";
    if (args.size() != (pre ? 3u : 2u)) throw InputError("usage: sfumato asc-rewrite [--preprocessed] IN OUT");
    const std::string& from = args[pre ? 1 : 0];
    std::ifstream in(from, std::ios::binary);
    if (!in) throw InputError("cannot read '" + from + "'");
    std::ostringstream text;
    text << in.rdbuf();
    write_text_atomically(args.back(), pre ? ascendc::rewrite_unit_launches(
                                                     ascendc::strip_placement_lists(text.str(), from), from)
                                           : ascendc::rewrite_launches(text.str(), from));
    return kExitOk;
}
}  // namespace

SFUMATO_COMMAND("asc-rewrite", "rewrite an Ascend C source's <<<...>>> launches for sfumato", cmd_asc_rewrite);

}  // namespace sfumato::cli
