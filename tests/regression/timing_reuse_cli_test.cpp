// Kernel timing re-use (runtime/reuse/timing_reuse.h) measured per command
// family, exact against re-used, on small models: `run` (three inferences of a
// small ResNet-18) and `replay` (a recording of that run); `train-step`, whose
// ranks re-use each other's runs, in train_reuse_cli_test.cpp. `--reuse-timing auto` re-uses an
// identity only once two full runs of it agree within the stated tolerance
// (summary.json reuse_timing.tolerance), so each family's result must stay
// within that tolerance of the exact run; `on` re-uses from the second launch
// with no check (its error is printed, docs/ timing_reuse.md states it). The
// counters add up, the switch is stated in the output, and functional mode
// never re-uses. The check log (--reuse-log) is exercised on the `run` family.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/reuse/timing_reuse.h"
#include "tests/support.h"

using namespace sfumato::test;

namespace {

const std::string kResNet = "\"zoo:resnet18?image=32&width=8&classes=10\"";

nlohmann::json run_ok(const std::string &args, const std::string &out) {
  const CliResult r = run_cli(args + " --trace off --out " + out);
  INFO(args << "\n" << r.output);
  REQUIRE(r.code == 0);
  return read_json(out + "/summary.json");
}

// Every candidate launch is an identity's first full run, a repeat simulated in
// full (a check) or a stand-in.
void check_counters(const nlohmann::json &s) {
  const auto &c = s["reuse_timing"];
  INFO(c.dump());
  CHECK(c["enabled"] == true);
  CHECK(c["candidates"].get<uint64_t>() <= c["launches"].get<uint64_t>());
  CHECK(c["unique"].get<uint64_t>() + c["checks"].get<uint64_t>() +
            c["reused"].get<uint64_t>() ==
        c["candidates"].get<uint64_t>());
  CHECK(c["reused"].get<uint64_t>() > 0);
  CHECK(c["reused_cycles"].get<uint64_t>() <=
        c["kernel_cycles"].get<uint64_t>());
  // Every stand-in is charged its template's dynamic energy.
  CHECK(c["energy_charged"] == c["reused"]);
  CHECK(c["energy_complete"] == true);
}

// The kernels' dynamic energy (the run's less what ran outside kernels).
double kernels_dynamic_j(const nlohmann::json &s) {
  return s["energy"]["dynamic_j"].get<double>() -
         s["energy"]["outside_kernels"]["dynamic_j"].get<double>();
}

// auto: its own error bound is known and within its tolerance; the family's
// result (`figure`) within the tolerance of the exact run's.
void check_auto(const nlohmann::json &exact, const nlohmann::json &a,
                const nlohmann::json &on, double exact_v, double auto_v,
                double on_v) {
  check_counters(a);
  check_counters(on);
  const double tol = a["reuse_timing"]["tolerance"].get<double>();
  REQUIRE(tol > 0);
  CHECK(exact["reuse_timing"]["enabled"] == false);
  CHECK(exact["reuse_timing"]["reused"] == 0);
  REQUIRE(!a["reuse_timing"]["error_bound_fraction"].is_null());
  CHECK(a["reuse_timing"]["error_bound_fraction"].get<double>() <= tol);
  CHECK(a["reuse_timing"]["unverified"] == 0);
  // on re-uses every repeat, auto only verified ones.
  CHECK(on["reuse_timing"]["reused"].get<uint64_t>() >=
        a["reuse_timing"]["reused"].get<uint64_t>());
  const double err_auto = auto_v / exact_v - 1.0, err_on = on_v / exact_v - 1.0;
  INFO("error of auto " << 100.0 * err_auto << " %, of on " << 100.0 * err_on
                        << " % (tolerance " << 100.0 * tol << " %)");
  CHECK(std::fabs(err_auto) <= tol);
  // A stand-in's events are its template's, a full run that agreed with an
  // earlier one: the kernels' dynamic energy stays within the tolerance too.
  const double e_auto = kernels_dynamic_j(a) / kernels_dynamic_j(exact) - 1.0;
  INFO("kernels' dynamic energy: auto " << 100.0 * e_auto << " % of exact");
  CHECK(std::fabs(e_auto) <= tol);
}

} // namespace

TEST_CASE(
    "timing re-use: run, exact against re-used, within the stated tolerance",
    "[reuse]") {
  const std::string base = "run " + kResNet + " --config " + config("tiny") +
                           " --mode timing --iterations 3 --reuse-timing ";
  const auto off = run_ok(base + "off", temp_dir("reuse_run_off"));
  const auto a = run_ok(base + "auto", temp_dir("reuse_run_auto"));
  const auto on = run_ok(base + "on", temp_dir("reuse_run_on"));
  auto latency = [](const nlohmann::json &s) {
    return s["inference"]["mean_latency_us"].get<double>();
  };
  check_auto(off, a, on, latency(off), latency(a), latency(on));

  // The check log: one line per full run (first runs and confirmations) with
  // the facts of both; writing it changes nothing simulated.
  const std::string dir = temp_dir("reuse_run_log");
  const std::string log = dir + "/checks.csv";
  const auto lg = run_ok(base + "auto --reuse-log " + log, dir + "/out");
  check_counters(lg);
  const auto &c = lg["reuse_timing"];
  INFO(c.dump());
  CHECK(lg["total_cycles"] == a["total_cycles"]);
  CHECK(c["reused"] == a["reuse_timing"]["reused"]);
  CHECK(c["checks"] == a["reuse_timing"]["checks"]);
  const auto log_lines = [&log] {
    std::ifstream in(log);
    std::vector<std::string> v;
    for (std::string line; std::getline(in, line);) {
      CHECK(std::count(line.begin(), line.end(), ',') == 23);
      v.push_back(line);
    }
    return v;
  };
  const uint64_t full = c["unique"].get<uint64_t>() + c["checks"].get<uint64_t>();
  std::vector<std::string> lines = log_lines();
  // The column names first, then one line per full run.
  REQUIRE(!lines.empty());
  CHECK(lines[0] + "\n" == sfumato::reuse::kCheckLogHeader);
  CHECK(lines.size() == 1 + full);
  // A second run appends its lines, without the names again.
  run_ok(base + "auto --reuse-log " + log, dir + "/out2");
  lines = log_lines();
  CHECK(lines.size() == 1 + 2 * full);
  CHECK(std::count(lines.begin(), lines.end(), lines[0]) == 1);
  // A check log that cannot be written is an input error naming it.
  const CliResult bad =
      run_cli(base + "auto --reuse-log " + dir + "/no/such/dir/x.csv --out " + dir + "/bad");
  CHECK(bad.code == 2);
  CHECK(bad.output.find("cannot write the check log '" + dir + "/no/such/dir/x.csv'") !=
        std::string::npos);
}

TEST_CASE(
    "timing re-use: replay, exact against re-used, within the stated tolerance",
    "[reuse]") {
  const std::string dir = temp_dir("reuse_replay");
  const std::string file = dir + "/resnet.json";
  run_ok("run " + kResNet + " --config " + config("tiny") +
             " --mode timing --iterations 3 --record " + file,
         dir + "/rec");
  const std::string base = "replay " + file + " --config " + config("tiny") +
                           " --mode timing --reuse-timing ";
  const auto off = run_ok(base + "off", dir + "/off");
  const auto a = run_ok(base + "auto", dir + "/auto");
  const auto on = run_ok(base + "on", dir + "/on");
  auto total = [](const nlohmann::json &s) {
    return s["total_time_us"].get<double>();
  };
  check_auto(off, a, on, total(off), total(a), total(on));
  // Recording instructions needs every kernel's own: on is refused, auto falls
  // back to exact.
  const CliResult r =
      run_cli(base + "on --record " + dir +
              "/again.json --record-level instructions --out " + dir + "/x");
  CHECK(r.code == 2);
  CHECK(r.output.find("--reuse-timing on cannot be combined with "
                      "--record-level instructions") != std::string::npos);
}

TEST_CASE("timing re-use: functional mode computes every kernel (auto is off, "
          "on is refused)",
          "[reuse]") {
  const std::string out = temp_dir("reuse_functional");
  const std::string base =
      "run \"zoo:mlp?in=16&hidden=32&layers=2&classes=8\" --config " +
      config("tiny") + " --iterations 3 --reuse-timing ";
  const auto s = run_ok(base + "auto", out);
  CHECK(s["reuse_timing"]["mode"] == "off");
  CHECK(s["reuse_timing"]["reused"] == 0);
  const CliResult r = run_cli(base + "on --out " + out);
  CHECK(r.code == 2);
  CHECK(r.output.find("--reuse-timing on needs timing mode") !=
        std::string::npos);
  const CliResult bad = run_cli(base + "maybe --out " + out);
  CHECK(bad.code == 2);
  CHECK(
      bad.output.find("--reuse-timing must be off, on or auto, not 'maybe'") !=
      std::string::npos);
}
