// The reference matmul on the 910B-like preset runs cube-bound: one wave of output tiles (one per cube core)
// with a long k costs its cube cycles plus a bounded prologue and epilogue, all derived from the preset's
// parameters. The inputs stay in L2 after their upload (`--l2 warm`), so the prologue is the first L1 chunk
// of A and B at the core's L2 read port plus one round trip; the steady state may lag the cube by at most one
// more chunk (the second L1 buffer absorbs the rest); the epilogue drains the last tile through the FixPipe
// and the core's write port. Within the execution span besides: the scheduler starts the 24 cores one after
// another (the last one 23 x (block_dispatch + core_start) after the first), and each core's start-up (code
// fetch, initialisation, arguments: the summary's startup_cycles, checked against the parameters in
// startup_timing_test). Fails when loads stop overlapping the cube (the L1 or L0 double buffering, the cross-
// tile prefetch), when the tile stops halving bytes per MAC, or when the MTEs cannot keep enough requests in
// flight to reach their ports.
#include <catch2/catch.hpp>

#include "models/chip/chip_params.h"
#include "runtime/ops/matmul_tiling.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("matmul: one wave of 910B-like tiles with k = 4096 is cube-bound within derived fixed costs") {
    Config c;
    c.load_ini(config("ascend910b-like"));
    ChipParams p(c);
    REQUIRE(p.detailed_mem());
    const DeviceInfo d = device_info(p, true);  // what the tiling sees on this chip
    const uint32_t k = 4096, es = 2, eo = 4;
    // Shape: exactly one tile per cube core, in the tile the plan picks for a large matmul.
    const ops::MatmulTiling big = ops::plan_matmul(4096, 4096, k, es, eo, d);
    const uint32_t m = big.base_m * 6, n = big.base_n * (p.cube_cores / 6);
    REQUIRE(p.cube_cores % 6 == 0);
    const ops::MatmulTiling t = ops::plan_matmul(m, n, k, es, eo, d);
    REQUIRE(t.base_m == big.base_m);
    REQUIRE(t.base_n == big.base_n);
    REQUIRE(t.tiles() == p.cube_cores);

    const double cube = double(t.base_m) / p.core.cube_m0 * t.base_n / p.core.cube_n0 * k / p.core.cube_k0_16bit *
                        p.core.cube_cycles_per_step;
    const double round_trip = 2.0 * p.mem.noc.latency + p.mem.l2.hit_latency;
    const double chunk = (t.a1_bytes(es) + t.b1_bytes(es)) / double(p.mem.noc.l2_read_bytes_per_cycle) + round_trip +
                         p.core.mte2_startup;
    const double drain = double(t.c1_bytes()) / p.core.fix_l0c_bpc +
                         double(t.base_m) * t.base_n * eo / p.mem.noc.l2_write_bytes_per_cycle + round_trip +
                         p.core.fix_startup;
    // Inside the execution span: the later blocks' serial dispatch (the last core starts
    // (tiles - 1) x (block_dispatch + core_start) after the first).
    const double sched = double(t.tiles() - 1) * (p.ts.block_dispatch_cycles + p.ts.core_start_cycles);

    const std::string out = temp_dir("mm_peak");
    const CliResult r = run_cli("kernel matmul --m " + std::to_string(m) + " --n " + std::to_string(n) + " --k " +
                                std::to_string(k) + " --dtype fp16 --mode timing --trace off --l2 warm --config " +
                                config("ascend910b-like") + " --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto op = read_json(out + "/summary.json")["ops"][0];
    const double cycles = op["cycles"].get<double>();
    const double startup = op["startup_cycles"].get<double>();
    const double bound = cube + 2 * chunk + drain + sched + startup;
    INFO("cycles " << cycles << ", cube " << cube << ", start-up " << startup << ", bound " << bound);
    CHECK(cycles >= cube);
    CHECK(cycles <= bound);
    CHECK(op["pipe_util"]["cube"].get<double>() >= cube / bound);
}
