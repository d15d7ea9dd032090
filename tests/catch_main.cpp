// Catch2 entry point. SystemC is linked in; tests that elaborate a model call run_simulation()
// helpers from tests/support.h, and CTest runs each case in its own process.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <systemc>

int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) { return Catch::Session().run(argc, argv); }
