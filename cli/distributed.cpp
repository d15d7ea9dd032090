#include "cli/distributed.h"

namespace sfumato::cli {

void add_distributed_option(po::options_description& d, std::string& mode) {
    d.add_options()("distributed", po::value<std::string>(&mode)->default_value("auto"),
                    "auto | on | off: split the chips over window-synchronised ranks (auto: when started by mpirun or "
                    "srun; on without a launcher: one rank, the same windows)");
}

std::string split_refusal(const std::string& command) {
    if (launcher_ranks() <= 1 || command == "collective" || command == "replay") return "";
    return "an MPI launcher started " + std::to_string(launcher_ranks()) + " processes, but only `sfumato collective` "
           "and `sfumato replay --system` run split over processes yet (run '" + command + "' without mpirun/srun)";
}

}  // namespace sfumato::cli
