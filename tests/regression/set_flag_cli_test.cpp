// set_flag semantics end to end (`sfumato asm` on tiny): by default a set_flag waits for the
// earlier instructions of its pipe on its own (a scoreboard) and later instructions start
// meanwhile; with chip.aicore.set_flag_blocks=true it holds them until it executes.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

// MTE2 loads A and B (8 KiB each, far apart); the set_flag for A sits between the loads or
// after both. V waits on both flags. Returns the run's total cycles.
uint64_t two_loads(const std::string& dir, bool flag_between, bool blocks) {
    const std::string src = dir + "/p" + std::to_string(flag_between) + std::to_string(blocks) + ".s";
    {
        std::ofstream f(src);
        f << ".kind vector\n"
          << "copy_gm_to_ub ub[0x0], gm[0x0], nburst=1, len=8192\n"
          << (flag_between ? "set_flag MTE2, V, 0\n" : "")
          << "copy_gm_to_ub ub[0x2000], gm[0x100000], nburst=1, len=8192\n"
          << (flag_between ? "" : "set_flag MTE2, V, 0\n")
          << "set_flag MTE2, V, 1\n"
          << "wait_flag MTE2, V, 0\n"
          << "wait_flag MTE2, V, 1\n";
    }
    const std::string out = dir + "/o" + std::to_string(flag_between) + std::to_string(blocks);
    const auto r = run_cli("asm " + src + " --config " + config("tiny") + " --set chip.aicore.set_flag_blocks=" +
                           (blocks ? "true" : "false") + " --out " + out);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json").at("total_cycles").get<uint64_t>();
}

}  // namespace

TEST_CASE("set_flag: between two loads it does not delay the second load (scoreboard)") {
    const std::string dir = temp_dir("set_flag_sb");
    // The flag waits for the first load on its own: the run takes exactly as long as with the
    // set_flag after both loads.
    CHECK(two_loads(dir, true, false) == two_loads(dir, false, false));
}

TEST_CASE("set_flag: with set_flag_blocks the second load waits for the first to complete") {
    const std::string dir = temp_dir("set_flag_blocks");
    const uint64_t overlapped = two_loads(dir, false, true);
    CHECK(two_loads(dir, false, false) == overlapped);
    // The second load no longer overlaps the first one's memory latency.
    CHECK(two_loads(dir, true, true) > overlapped);
}
