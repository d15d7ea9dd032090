// sfumato: command-line entry. Subcommands register themselves (sim/cli/command.h); main()
// dispatches and maps errors to exit codes (2 bad input, 3 race, 4 deadlock, 1 other).
#include <systemc>

#include "sim/cli/command.h"

int sc_main(int argc, char** argv) { return sfumato::cli::dispatch(argc, argv); }
