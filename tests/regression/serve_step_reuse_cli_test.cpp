// `sfumato serve`'s step-time re-use (serve.step_reuse, runtime/serve/step_reuse.h) on the tiny
// model and chip: steps whose shape was simulated take their time from the simulated ones
// (interpolated over the decodes' summed contexts, or the nearest point and the slope pooled over
// the shapes), checked every N-th re-usable step. Measured against --exact (every step and kernel
// simulated) within what the run states: the checks' largest deviation of a step's time plus the
// kernels' re-use bound, per request (plus a shift of one step) and on the run's end; the
// checks' deviations and the bound are stated in the summary; --exact, off and several instances
// simulate every step; same inputs, identical results.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <vector>

#include "tests/regression/serve_support.h"

using namespace sfumato::test;

namespace {

const std::string kBase = "serve tiny --config " + config("tiny") + " --set serve.block_size=64 --trace off";
// Long enough for steps of one shape to repeat with growing contexts.
const std::string kTrace = "--generate n=48,rate=4000,prompt=uniform:32:96,output=uniform:32:96,seed=7";

double metric(const nlohmann::json& s, const std::string& k, const std::string& p) {
    return s["metrics"][k][p].get<double>();
}

// requests.csv's column `col` per row.
std::vector<double> column(const std::string& csv, const std::string& col) {
    std::istringstream in(csv);
    std::string line, cell;
    std::getline(in, line);
    size_t at = 0, i = 0;
    for (std::istringstream h(line); std::getline(h, cell, ','); ++i)
        if (cell == col) at = i;
    std::vector<double> v;
    while (std::getline(in, line)) {
        std::istringstream r(line);
        for (i = 0; std::getline(r, cell, ','); ++i)
            if (i == at) v.push_back(std::stod(cell));
    }
    return v;
}

}  // namespace

TEST_CASE("serve: step re-use against --exact", "[serve][reuse]") {
    const std::string d = temp_dir("serve_step_reuse");
    const nlohmann::json reused = serve_ok(kBase, kTrace, d + "/auto");
    const nlohmann::json exact = serve_ok(kBase, kTrace + " --exact", d + "/exact");
    const nlohmann::json& r = reused["timer"]["step_reuse"];
    INFO(r.dump());
    CHECK(r["on"].get<bool>());
    const size_t steps = reused["timer"]["steps"].get<size_t>();
    CHECK(r["reused"].get<size_t>() + r["simulated"].get<size_t>() == steps);
    CHECK(r["reused"].get<size_t>() > steps / 5);
    CHECK(r["interpolated"].get<size_t>() > 0);
    CHECK(r["pooled"].get<size_t>() > 0);
    CHECK(r["pooled_baselines"].get<size_t>() > 0);
    CHECK(r["exact"].get<size_t>() + r["interpolated"].get<size_t>() + r["extrapolated"].get<size_t>() +
              r["pooled"].get<size_t>() ==
          r["reused"].get<size_t>());
    // The 16th re-usable step and every 16th after it were simulated as checks (the interval
    // doubling after every 4), and the bound follows from them.
    const size_t reusable = r["reused"].get<size_t>() + r["checks"].get<size_t>();
    size_t checks = 0;
    for (size_t next = 16, interval = 16, n = 0; next <= reusable; next += interval, ++checks)
        if (++n % 4 == 0) interval *= 2;
    CHECK(r["checks"].get<size_t>() == checks);
    CHECK(checks > 0);
    // Each check counted under the way its time would have been given, the largest deviation
    // among them.
    size_t by_kind = 0;
    double worst = 0;
    for (const auto& [kind, c] : r["checks_by_kind"].items()) {
        by_kind += c["checks"].get<size_t>();
        worst = std::max(worst, c["max_deviation"].get<double>());
    }
    CHECK(by_kind == checks);
    CHECK(worst == r["check_max_deviation"].get<double>());
    REQUIRE(r["error_bound_known"].get<bool>());
    CHECK(r["error_bound_fraction"].get<double>() ==
          Approx(r["reused_s"].get<double>() * r["check_max_deviation"].get<double>() /
                 (r["reused_s"].get<double>() + r["simulated_s"].get<double>())));
    CHECK(exact["timer"]["step_reuse"]["on"] == false);
    CHECK(exact["timer"]["step_reuse"]["simulated"].get<size_t>() == exact["timer"]["steps"].get<size_t>());
    // What the run states: a re-used step's time is off by at most the checks' largest deviation,
    // a simulated one's kernels by the kernels' re-use bound; a request's latencies are sums of the
    // step times it waited through, so each is within their sum of --exact's, plus a shift of one
    // step where a step's time moved an arrival to the other side of a step boundary (the request
    // then starts a step earlier or later; TPOT spreads that step over its tokens after the first).
    const nlohmann::json kernels = read_json(d + "/auto/summary.json")["reuse_timing"];
    REQUIRE(kernels["error_bound_fraction"].is_number());  // null: unknown
    const double tol = r["check_max_deviation"].get<double>() + kernels["error_bound_fraction"].get<double>();
    double step_ms = 0;
    for (const char* run : {"/auto/steps.csv", "/exact/steps.csv"})
        for (double sec : column(read_text(d + run), "seconds")) step_ms = std::max(step_ms, sec * 1e3);
    INFO("tolerance " << tol << " and one step of " << step_ms << " ms");
    const std::vector<double> tokens = column(read_text(d + "/exact/requests.csv"), "output_tokens");
    REQUIRE(tokens.size() == 48);
    for (const char* col : {"ttft_ms", "e2e_ms", "tpot_ms"}) {
        const std::vector<double> a = column(read_text(d + "/auto/requests.csv"), col),
                                  e = column(read_text(d + "/exact/requests.csv"), col);
        REQUIRE(a.size() == e.size());
        REQUIRE(a.size() == tokens.size());
        const bool tpot = std::string(col) == "tpot_ms";
        for (size_t i = 0; i < a.size(); ++i) {
            INFO(col << " of request " << i << ": " << a[i] << " against " << e[i]);
            CHECK(std::abs(a[i] - e[i]) <= tol * e[i] + (tpot ? step_ms / std::max(1.0, tokens[i] - 1) : step_ms));
        }
    }
    // The means, and the run's end (the sum of the step times and the idle gaps) within tol.
    for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms"})
        CHECK(std::abs(metric(reused, k, "mean") - metric(exact, k, "mean")) <=
              tol * metric(exact, k, "mean") + step_ms);
    CHECK(std::abs(reused["metrics"]["duration_s"].get<double>() / exact["metrics"]["duration_s"].get<double>() - 1) <=
          tol);
    // The kernels of the re-used steps did not run: fewer launches than with every step run.
    const nlohmann::json off = serve_ok(kBase, kTrace + " --set serve.step_reuse=false", d + "/off");
    CHECK(off["timer"]["step_reuse"]["reused"].get<size_t>() == 0);
    CHECK(read_json(d + "/auto/summary.json")["reuse_timing"]["launches"].get<uint64_t>() <
          read_json(d + "/off/summary.json")["reuse_timing"]["launches"].get<uint64_t>());
    // Same inputs, identical results.
    serve_ok(kBase, kTrace, d + "/auto2");
    CHECK(read_text(d + "/auto/requests.csv") == read_text(d + "/auto2/requests.csv"));
    CHECK(read_text(d + "/auto/steps.csv") == read_text(d + "/auto2/steps.csv"));
}

TEST_CASE("serve: step re-use is stated and bounded by its knobs", "[serve][reuse]") {
    const std::string d = temp_dir("serve_step_reuse_knobs");
    // Checks from the first re-usable step: more checks than at the default 16th.
    const nlohmann::json all = serve_ok(kBase, kTrace + " --set serve.step_reuse_check=1", d + "/all");
    const nlohmann::json dflt = serve_ok(kBase, kTrace, d + "/default");
    const nlohmann::json& a = all["timer"]["step_reuse"];
    CHECK(a["checks"].get<size_t>() > dflt["timer"]["step_reuse"]["checks"].get<size_t>());
    // A wider span bridges more: fewer steps simulated.
    const nlohmann::json narrow = serve_ok(kBase, kTrace + " --set serve.step_reuse_span=64", d + "/narrow");
    CHECK(narrow["timer"]["step_reuse"]["simulated"].get<size_t>() > dflt["timer"]["step_reuse"]["simulated"].get<size_t>());
    CHECK(a["check_mean_abs_deviation"].get<double>() <= a["check_max_deviation"].get<double>());
    // No checks: the bound is unknown, and the output says so.
    const CliResult r = run_cli(kBase + " " + kTrace + " --set serve.step_reuse_check=0");
    REQUIRE(r.code == 0);
    CHECK(r.output.find("APPROXIMATION serve.step_reuse") != std::string::npos);
    CHECK(r.output.find("error bound unknown (no check ran)") != std::string::npos);
    // A knob out of range exits 2 naming it.
    const CliResult bad = run_cli(kBase + " " + kTrace + " --set serve.step_reuse_span=0");
    CHECK(bad.code == 2);
    CHECK(bad.output.find("serve.step_reuse_span") != std::string::npos);
    // Several instances simulate every step (step re-use is a single-chip instance's).
    const nlohmann::json cl = serve_ok("serve tiny --system " + config("system-tiny") +
                                           " --instances 2 --set serve.block_size=64 --trace off",
                                       "--generate n=8,rate=20000,prompt=48,output=8,seed=3", d + "/cluster");
    for (const nlohmann::json& in : cl["instances"]) {
        CHECK(in["timer"]["step_reuse"]["on"] == false);
        CHECK(in["timer"]["step_reuse"]["simulated"].get<size_t>() == in["steps"].get<size_t>());
    }
}
