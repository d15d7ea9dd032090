// Catch2 entry point. SystemC is linked in; tests that elaborate a model call run_simulation()
// helpers from tests/support.h, and CTest runs each case in its own process. The temporary
// directories the cases made (tests/support.h temp_dir) are removed when all of them passed,
// unless SFUMATO_KEEP_TEST_DIRS is set.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <systemc>

#include "tests/support.h"

int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
    const int failed = Catch::Session().run(argc, argv);
    if (failed == 0 && std::getenv("SFUMATO_KEEP_TEST_DIRS") == nullptr) sfumato::test::remove_temp_dirs();
    return failed;
}
