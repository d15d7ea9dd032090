#include "runtime/system/transport.h"

#include <cstdlib>

#include "sim/error.h"
#ifdef SFUMATO_HAVE_MPI
#include "sim/mpi/mpi_transport.h"
#endif

namespace sfumato::sys {

namespace {
// The process count Open MPI's mpirun, a PMI-2 or PMIx launcher (srun --mpi=...) exports.
const char* launcher_size_env() {
    for (const char* k : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
        if (const char* v = std::getenv(k)) return v;
    if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK")) return "1";
    return nullptr;
}
}  // namespace

uint32_t launcher_ranks() {
    const char* v = launcher_size_env();
    if (!v) return 1;
    const long n = std::strtol(v, nullptr, 10);
    return n > 0 ? static_cast<uint32_t>(n) : 1;
}

std::unique_ptr<IRankTransport> open_transport(const std::string& mode) {
    if (mode != "auto" && mode != "on" && mode != "off")
        throw InputError("--distributed must be auto, on or off, not '" + mode + "'");
    const bool launched = launcher_size_env() != nullptr;
    if (mode == "off") {
        if (launcher_ranks() > 1)
            throw InputError("--distributed off, but an MPI launcher started " + std::to_string(launcher_ranks()) +
                             " processes (each would run the whole system)");
        return nullptr;
    }
    if (!launched) {
        if (mode == "auto") return nullptr;
        return std::make_unique<LoopbackTransport>();
    }
#ifdef SFUMATO_HAVE_MPI
    return std::make_unique<MpiTransport>();
#else
    throw InputError("started by an MPI launcher (" + std::to_string(launcher_ranks()) +
                     " processes), but this sfumato was built without MPI (install libopenmpi-dev and rebuild)");
#endif
}

}  // namespace sfumato::sys
