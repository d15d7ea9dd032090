// sfumato: command-line entry. Subcommands register themselves (cli/command.h); main()
// dispatches and maps errors to exit codes (2 bad input, 3 race, 4 deadlock, 1 other).
#include <cstdlib>
#include <systemc>

#include "cli/command.h"

int main(int argc, char** argv) {
    // The SystemC banner would clutter every command's output.
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) { return sfumato::cli::dispatch(argc, argv); }
