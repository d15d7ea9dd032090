// `sfumato stats`: reads a run's stats.h5 back as text, filters by path, and rejects files that
// are missing or not stats files with exit 2.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("stats: prints the statistics of a run, filtered by path") {
    const std::string dir = temp_dir("stats_cli");
    REQUIRE(run_cli("kernel add --n 4096 --dtype fp32 --config " + config("tiny") + " --out " + dir).code == 0);
    const auto all = run_cli("stats " + dir + "/stats.h5");
    REQUIRE(all.code == 0);
    const auto hbm = run_cli("stats " + dir + "/stats.h5 hbm bytes_read");
    REQUIRE(hbm.code == 0);
    CHECK(hbm.output.find("chip/mem/hbm/bytes_read") != std::string::npos);
    CHECK(hbm.output.find("l2/") == std::string::npos);
    // Every line of the filtered listing is in the full one.
    std::istringstream lines(hbm.output);
    for (std::string line; std::getline(lines, line);) CHECK(all.output.find(line) != std::string::npos);
}

TEST_CASE("stats: a missing file or a file that is not HDF5 exits 2 naming it") {
    const std::string dir = temp_dir("stats_bad");
    const auto missing = run_cli("stats " + dir + "/nope.h5");
    CHECK(missing.code == 2);
    CHECK(missing.output.find("nope.h5") != std::string::npos);
    { std::ofstream(dir + "/junk.h5") << "not hdf5"; }
    const auto junk = run_cli("stats " + dir + "/junk.h5");
    CHECK(junk.code == 2);
    CHECK(junk.output.find("junk.h5") != std::string::npos);
}
