// Split-K matmuls (runtime/ops/matmul_tiling.h, k_split) through the CLI: chosen by the tiling
// for few output tiles and a long k, partial sums added into C by the FixPipe's atomic add after
// the kernel zeroed C, functional-exact within the accumulation tolerance (fp32 and fp16
// outputs, the graph Gemm with alpha and a bias), bit-identical when repeated, and the same
// cycles in timing mode.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_ok(const std::string& args, const std::string& tag) {
    const std::string out = temp_dir("splitk_" + tag);
    const CliResult r = run_cli(args + " --config " + config("tiny") + " --trace off --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

}  // namespace

TEST_CASE("split-K: a small-M, long-k matmul is split, and its result passes the check (fp32 and fp16 out)") {
    for (const char* od : {"fp32", "fp16"}) {
        const auto s = run_ok(std::string("kernel matmul --m 16 --n 32 --k 4096 --dtype fp16 --out-dtype ") + od,
                              std::string("mm_") + od);
        CHECK(s["ops"][0]["name"].get<std::string>().find("[split-K") != std::string::npos);
        CHECK(s["check"]["passed"] == true);
        CHECK(s["ops"][0]["block_dim"] == 2);  // both cube cores of tiny, for one output tile
    }
    // Many tiles keep the cores busy without it.
    const auto big = run_ok("kernel matmul --m 256 --n 256 --k 256 --dtype fp16", "mm_many");
    CHECK(big["ops"][0]["name"] == "matmul");
}

TEST_CASE("split-K: the graph Gemm (alpha, a bias row, GEMV shape) splits and matches the reference") {
    const CliResult r = run_cli("kernel gemm --m 1 --n 48 --k 3000 --alpha 0.5 --bias row --config " + config("tiny"));
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find("check: passed") != std::string::npos);
}

TEST_CASE("split-K: repeated runs are bit-identical and timing mode takes the same cycles") {
    const std::string args = "kernel matmul --m 32 --n 16 --k 2048 --dtype bf16 --out-dtype bf16";
    const auto a = run_ok(args, "det_a"), b = run_ok(args, "det_b");
    const auto c = run_ok(args + " --mode timing", "det_c");
    CHECK(a["ops"][0]["name"].get<std::string>().find("[split-K") != std::string::npos);
    CHECK(a["check"]["passed"] == true);
    CHECK(a["ops"][0]["cycles"] == b["ops"][0]["cycles"]);
    CHECK(a["check"]["max_abs_err"] == b["check"]["max_abs_err"]);
    CHECK(a["ops"][0]["cycles"] == c["ops"][0]["cycles"]);
}

TEST_CASE("split-K two-pass: workspace slices and a vector reduction, same bits for any block count") {
    // Forced to 4 parts so every block count splits alike; two-pass needs no barrier, so
    // --block-dim works (the atomic form plans without split-K then).
    const std::string args = "kernel matmul --m 16 --n 48 --k 4096 --dtype fp16 --out-dtype fp16 --k-split 4 --split-k-mode two-pass";
    const auto a = run_ok(args, "tp_a"), b = run_ok(args + " --block-dim 1", "tp_b"), c = run_ok(args + " --block-dim 3", "tp_c");
    REQUIRE(a["ops"].size() == 2);  // the cube kernel and the reduction
    CHECK(a["ops"][0]["name"].get<std::string>().find("two-pass") != std::string::npos);
    CHECK(a["ops"][1]["name"].get<std::string>().find("reduction") != std::string::npos);
    CHECK(b["ops"][0]["block_dim"] == 1);
    for (const auto* s : {&a, &b, &c}) CHECK((*s)["check"]["passed"] == true);
    CHECK(a["check"]["max_abs_err"] == b["check"]["max_abs_err"]);
    CHECK(a["check"]["max_abs_err"] == c["check"]["max_abs_err"]);
    // Both forms agree with the reference within its tolerance (checked above and here).
    const auto at = run_ok("kernel matmul --m 16 --n 48 --k 4096 --dtype fp16 --out-dtype fp16 --k-split 4", "tp_atomic");
    CHECK(at["check"]["passed"] == true);
    CHECK(at["ops"].size() == 1);
    // Timing mode takes the same cycles as functional mode.
    const auto t = run_ok(args + " --mode timing", "tp_t");
    CHECK(t["ops"][0]["cycles"] == a["ops"][0]["cycles"]);
    CHECK(t["ops"][1]["cycles"] == a["ops"][1]["cycles"]);
}

TEST_CASE("split-K two-pass: a graph Gemm with the node attribute, alpha and a bias row") {
    for (const char* act : {"none", "Sigmoid"}) {
        const CliResult r = run_cli(std::string("kernel gemm --m 1 --n 48 --k 3000 --alpha 0.5 --bias row --activation ") +
                                    act + " --split-k-mode two-pass --config " + config("tiny"));
        INFO(r.output);
        CHECK(r.code == 0);
        CHECK(r.output.find("check: passed") != std::string::npos);
    }
}
