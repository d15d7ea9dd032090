// Kernel timing re-use across the ranks of a data-parallel training step (runtime/reuse/
// timing_reuse.h, lockstep): the ranks share one table of identities, and a rank's launch takes
// the time of another rank's run of the same launch, also while that run still runs (a twin).
// Measured exact (--reuse-timing off, every rank simulated) against re-used on 2 and 4 tiny
// chips: the step and the compute time move by no more than the error bound the service states
// (a step's time is a longest path through the chips' kernels, copies and waits, so changing
// each kernel by at most its part of the bound moves it by at most the parts' sum); the counters
// add up; the ranks re-use each other's runs; the identities are those of one rank; the same
// inputs give the same cycles; and with re-use off timing mode takes functional mode's cycles.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

const std::string kResNet = "\"zoo:resnet18?image=32&width=8&classes=10\"";
// Functional mode checks the values: 64 x 64 images, so that layer4's BatchNorms see more than
// one pixel per image (train_step_cli_test.cpp).
const std::string kResNet64 = "\"zoo:resnet18?image=64&width=8&classes=10\"";

nlohmann::json train(const std::string& args, const std::string& out, const std::string& model = kResNet,
                     const std::string& trace = "off") {
    const CliResult r = run_cli("train-step " + model + " --system " + config("system-tiny") +
                                " --batch 2 --precision fp16 --bucket-mb 0.1 --trace " + trace + " " + args + " --out " +
                                out);
    INFO(args << "\n" << r.output);
    REQUIRE(r.code == 0);
    return read_json(out + "/summary.json");
}

uint64_t u(const nlohmann::json& c, const char* k) { return c[k].get<uint64_t>(); }

// The premises of the twins' sample (timing_reuse.h), read from the exact run's task trace: every
// rank's compute-stream tasks that end before the first task of any communication stream starts
// have rank 0's start and duration (`in_step` counts them; 0 if any differs); after it, how much
// the tasks that overlap a collective on either rank (`coll`) and those that overlap none
// (`quiet`) differ from rank 0's (summed |difference| over summed duration; printed).
struct RankDiffs {
    size_t in_step = 0;
    double quiet = 0, coll = 0;
};
RankDiffs rank_differences(const std::string& trace_file, uint32_t chips) {
    const nlohmann::json t = read_json(trace_file);
    const nlohmann::json& ev = t.is_object() ? t["traceEvents"] : t;
    std::map<int, std::string> proc;
    std::map<std::pair<int, int>, std::string> thread;
    for (const auto& e : ev) {
        if (e.value("ph", "") != "M") continue;
        if (e["name"] == "process_name") proc[e["pid"].get<int>()] = e["args"]["name"];
        if (e["name"] == "thread_name") thread[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    }
    std::map<std::string, std::vector<std::pair<double, double>>> compute;  // chip -> (start, duration)
    std::vector<std::pair<double, double>> comm;                             // (start, end)
    for (const auto& e : ev) {
        if (e.value("ph", "") != "X") continue;
        const std::string& p = proc[e["pid"].get<int>()];
        if (p.rfind("chip", 0) != 0 || p.find("host") != std::string::npos) continue;
        const std::string& th = thread[{e["pid"].get<int>(), e["tid"].get<int>()}];
        const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
        if (th.size() >= 8 && th.compare(th.size() - 8, 8, "stream 0") == 0)
            compute[p].push_back({ts, dur});
        else
            comm.push_back({ts, ts + dur});
    }
    REQUIRE(compute.size() == chips);
    REQUIRE(!comm.empty());
    double first_comm = comm[0].first;
    for (const auto& c : comm) first_comm = std::min(first_comm, c.first);
    auto overlaps = [&](const std::pair<double, double>& x) {
        for (const auto& c : comm)
            if (c.first < x.first + x.second && x.first < c.second) return true;
        return false;
    };
    for (auto& [chip, tasks] : compute) std::sort(tasks.begin(), tasks.end());
    const auto& r0 = compute["chip0"];
    RankDiffs d;
    size_t n = 0;
    while (n < r0.size() && r0[n].first + r0[n].second < first_comm) ++n;
    double dq = 0, bq = 0, dc = 0, bc = 0;
    bool same = true;
    for (const auto& [chip, tasks] : compute) {
        INFO(chip);
        REQUIRE(tasks.size() == r0.size());
        for (size_t i = 0; i < n; ++i) same = same && tasks[i] == r0[i];
        if (&tasks == &r0) continue;
        for (size_t i = n; i < r0.size(); ++i) {
            const bool c = overlaps(r0[i]) || overlaps(tasks[i]);
            (c ? dc : dq) += std::fabs(tasks[i].second - r0[i].second);
            (c ? bc : bq) += r0[i].second;
        }
    }
    d.in_step = same ? n : 0;
    d.quiet = bq > 0 ? dq / bq : 0;
    d.coll = bc > 0 ? dc / bc : 0;
    return d;
}

}  // namespace

TEST_CASE("timing re-use across data-parallel ranks: exact against re-used within the stated bound", "[reuse][train]") {
    for (const int chips : {2, 4}) {
        const std::string set = "--mode timing --set system.chips_per_server=" + std::to_string(chips);
        const std::string tag = "train_reuse" + std::to_string(chips);
        const std::string off_dir = temp_dir(tag + "_off");
        const auto off = train(set + " --reuse-timing off", off_dir, kResNet, "task");
        // Until a task couples the chips, the exact run's ranks are one machine: the forward's
        // tasks at least (the model's forward is more than 50 kernels) are identical on every rank.
        const RankDiffs rd = rank_differences(off_dir + "/trace.json", static_cast<uint32_t>(chips));
        INFO("exact run: " << rd.in_step << " tasks in step; after, ranks differ by " << 100 * rd.quiet
                           << " % between collectives, " << 100 * rd.coll << " % during them");
        CHECK(rd.in_step > 50);
        const auto a = train(set + " --reuse-timing auto", temp_dir(tag + "_auto"));
        const auto one = train(set + " --reuse-timing auto --simulate one", temp_dir(tag + "_one"));
        const auto& c = a["reuse_timing"];
        INFO(chips << " chips: " << c.dump());
        CHECK(a["ranks_simulated"] == chips);
        CHECK(off["reuse_timing"]["reused"] == 0);
        // Every candidate is an identity's first full run, a repeat in full (a check) or a
        // stand-in; stand-ins of another rank's run include the twins.
        CHECK(u(c, "unique") + u(c, "checks") + u(c, "reused") == u(c, "candidates"));
        // Every launch is a candidate: graph nodes, the collectives' copies and reductions, and
        // the plain-SGD bucket updates (one multi-tensor launch per bucket and rank).
        CHECK(u(c, "candidates") == u(c, "launches"));
        CHECK(u(c, "twins") > 0);
        CHECK(u(c, "twins") <= u(c, "across_chips"));
        CHECK(u(c, "across_chips") <= u(c, "reused"));
        // Twins while the chips are in step (before the first all-reduce's copies): the sample
        // skips those (nothing to measure there), and runs some after.
        CHECK(u(c, "twins_in_step") > 0);
        CHECK(u(c, "twins_in_step") <= u(c, "twins"));
        CHECK(u(c, "samples_in_step") > 0);
        // The other ranks take rank 0's runs: fewer launches in full than one rank makes alone
        // times the ranks, and the table's identities are one rank's (the identity, its L2
        // state included, does not depend on the chip).
        CHECK(u(c, "candidates") == chips * u(one["reuse_timing"], "candidates"));
        CHECK(u(c, "unique") == u(one["reuse_timing"], "unique"));
        CHECK(u(c, "candidates") - u(c, "reused") <
              chips * (u(one["reuse_timing"], "candidates") - u(one["reuse_timing"], "reused")));
        // Within the stated bound (device cycles, converted with the run's own clock).
        REQUIRE(!c["error_bound_cycles"].is_null());
        const double bound = c["error_bound_cycles"].get<double>();
        const double per_us = off["step_cycles"].get<double>() / off["step_us"].get<double>();
        const double d_step = a["step_us"].get<double>() - off["step_us"].get<double>();
        const double d_compute = a["compute_us"].get<double>() - off["compute_us"].get<double>();
        INFO("step " << off["step_us"] << " -> " << a["step_us"] << " us, compute " << off["compute_us"] << " -> "
                     << a["compute_us"] << " us, bound " << bound / per_us << " us");
        CHECK(std::fabs(d_step) * per_us <= bound);
        CHECK(std::fabs(d_compute) * per_us <= bound);
        // Communication is simulated in full either way: the same buckets.
        CHECK(a["train"]["buckets"] == off["train"]["buckets"]);
        // Every stand-in, twins included, is charged its template's dynamic energy: the kernels'
        // dynamic energy (chips and links, less what ran outside kernels) stays within the
        // tolerance of the exact run's.
        CHECK(c["energy_charged"] == c["reused"]);
        CHECK(c["energy_complete"] == true);
        auto kernels_j = [](const nlohmann::json& s) {
            return s["energy"]["dynamic_j"].get<double>() - s["energy"]["outside_kernels"]["dynamic_j"].get<double>();
        };
        const double d_energy = kernels_j(a) / kernels_j(off) - 1.0;
        INFO("kernels' dynamic energy: auto " << 100.0 * d_energy << " % of exact");
        CHECK(std::fabs(d_energy) <= c["tolerance"].get<double>());
        if (chips == 4) {
            // Which rank's process runs first within a tick decides nothing: the same cycles and
            // counters again.
            const auto again = train(set + " --reuse-timing auto", temp_dir(tag + "_again"));
            CHECK(again["step_cycles"] == a["step_cycles"]);
            CHECK(again["total_cycles"] == a["total_cycles"]);
            CHECK(again["reuse_timing"] == a["reuse_timing"]);
        }
    }
}

TEST_CASE("timing re-use off across ranks: timing mode takes functional mode's cycles", "[reuse][train]") {
    // Functional mode computes every kernel (auto is off there): re-use off must leave timing
    // mode exactly there, every rank simulated.
    const auto f = train("--reuse-timing auto --set system.chips_per_server=4", temp_dir("train_reuse_f"), kResNet64);
    const auto t = train("--mode timing --reuse-timing off --set system.chips_per_server=4", temp_dir("train_reuse_t"),
                         kResNet64);
    CHECK(f["check"]["passed"] == true);
    CHECK(f["reuse_timing"]["mode"] == "off");
    CHECK(f["ranks_simulated"] == 4);
    CHECK(f["step_cycles"].get<uint64_t>() > 0);
    CHECK(f["step_cycles"] == t["step_cycles"]);
    CHECK(f["compute_us"] == t["compute_us"]);
    CHECK(f["comm_us"] == t["comm_us"]);
}
