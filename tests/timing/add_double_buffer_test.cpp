// Double buffering: the expected bounds come from the tiny preset's parameters.
// With one buffer per queue, each tile's chain (load both inputs, wait for the data, add) runs
// before the next tile's load can start, so a tile costs at least its load time plus the memory
// latency and the vector pipeline. With two, loads, adds and stores overlap, and the kernel runs
// at the shared global-memory bandwidth.
#include <catch2/catch.hpp>

#include "models/chip/chip_params.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("add: double buffering overlaps MTE2, V and MTE3 as the parameters predict") {
    Config c;
    c.load_ini(config("tiny"));
    ChipParams p(c);
    const uint64_t n = 1048576, es = 2, tile = 2048;  // the op's default tile (fits UB with 2 buffers)
    REQUIRE(3 * 2 * tile * es <= p.core.ub.size);
    const uint64_t tiles = n / tile;
    const double tile_load = 2.0 * tile * es / std::min<double>(p.gm.port_read_bpc, p.gm.bytes_per_cycle);
    const double chain = tile_load + p.gm.latency + p.core.vec_startup + static_cast<double>(tile * es) / 256.0;
    const double single_lb = tiles * chain;
    const double double_lb = 3.0 * n * es / p.gm.bytes_per_cycle;  // everything through the shared GM

    const std::string a = temp_dir("db1"), b = temp_dir("db2");
    // The bounds are those of the skeleton's latency + bandwidth memory (chip.gm.*).
    const std::string base = "kernel add --n 1048576 --dtype fp16 --trace off --set chip.mem.model=simple --config " + config("tiny");
    REQUIRE(run_cli(base + " --buffers 1 --out " + a).code == 0);
    REQUIRE(run_cli(base + " --buffers 2 --out " + b).code == 0);
    const double c1 = read_json(a + "/summary.json")["ops"][0]["cycles"].get<double>();
    const double c2 = read_json(b + "/summary.json")["ops"][0]["cycles"].get<double>();
    CHECK(c1 >= single_lb);
    CHECK(c2 >= double_lb);
    // Double buffering reaches the bandwidth bound within the fixed costs of one tile.
    CHECK(c2 <= double_lb + 2 * chain + p.ts.dispatch_cycles + p.ts.completion_cycles);
    const double predicted = single_lb / (double_lb + 2 * chain + p.ts.dispatch_cycles + p.ts.completion_cycles);
    INFO("buffers=1: " << c1 << " cycles, buffers=2: " << c2 << ", predicted speedup >= " << predicted);
    CHECK(c1 / c2 >= predicted);
    CHECK(c1 / c2 >= 1.3);
}
