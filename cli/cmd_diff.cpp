// `sfumato diff A B [--tolerance PCT] [--by op|type|stream] [--top N]`: compares two runs (out
// dirs or summary.json files; traces/run_diff.h): the total and per-op (or per-type, per-stream)
// cycle deltas sorted by impact, what ran in one run only, and a verdict line. Exit 0 when
// every delta is within the tolerance (percent of A), 1 otherwise, so a CI job can guard a
// runtime or compiler change.
#include <cstdio>

#include "cli/command.h"
#include "cli/session.h"
#include "sim/error.h"
#include "traces/run_diff.h"

namespace sfumato::cli {

namespace {

void print_row(const diff::Row& r) {
    std::printf("  %-36s %-14s %12llu %12llu %+12lld %+8.2f%%\n", r.key.c_str(), r.type.c_str(),
                static_cast<unsigned long long>(r.a), static_cast<unsigned long long>(r.b),
                static_cast<long long>(r.delta()), r.pct());
}

int cmd_diff(const std::vector<std::string>& args) {
    std::vector<std::string> runs;
    double tol = 1.0;
    std::string by_s = "op";
    size_t top = 30;
    po::options_description d("sfumato diff");
    d.add_options()("runs", po::value<std::vector<std::string>>(&runs), "two runs: out dirs or summary.json files")(
        "tolerance", po::value<double>(&tol)->default_value(1.0), "allowed |delta| in percent of run A")(
        "by", po::value<std::string>(&by_s)->default_value("op"), "group kernels by op (name) | type | stream")(
        "top", po::value<size_t>(&top)->default_value(30), "rows to print (all go into the verdict)");
    po::positional_options_description pos;
    pos.add("runs", 2);
    po::variables_map vm;
    if (!parse_command(args, "sfumato diff A B [--tolerance PCT] [--by op|type|stream]", d, vm, &pos)) return kExitOk;
    if (runs.size() != 2) throw InputError("diff needs two runs (out dirs or summary.json files)");
    if (!(tol >= 0)) throw InputError("--tolerance must be a non-negative percentage");
    diff::By by;
    if (!diff::parse_by(by_s, by)) throw InputError("--by must be op, type or stream, not '" + by_s + "'");
    const auto a = diff::load_summary(runs[0]);
    const auto b = diff::load_summary(runs[1]);
    const diff::Result r = diff::compare(a, b, by, tol);

    std::printf("diff A=%s (%s) vs B=%s (%s), by %s, tolerance %.3g%%\n", runs[0].c_str(),
                a.value("chip", "?").c_str(), runs[1].c_str(), b.value("chip", "?").c_str(), by_s.c_str(), tol);
    std::printf("  %-36s %-14s %12s %12s %12s %9s\n", by_s.c_str(), by == diff::By::Op ? "type" : "", "A cycles",
                "B cycles", "delta", "delta %");
    print_row({"total", "", r.total_a, r.total_b});
    for (size_t i = 0; i < r.rows.size() && i < top; ++i) print_row(r.rows[i]);
    if (r.rows.size() > top) std::printf("  ... %zu more\n", r.rows.size() - top);
    for (const auto& x : r.only_a) std::printf("  only in A: %s (%llu cycles)\n", x.key.c_str(), static_cast<unsigned long long>(x.a));
    for (const auto& x : r.only_b) std::printf("  only in B: %s (%llu cycles)\n", x.key.c_str(), static_cast<unsigned long long>(x.b));
    if (r.within) {
        std::printf("verdict: SAME within %.3g%% (total %+.3f%%, %zu %ss compared)\n", tol, r.total_pct, r.rows.size(), by_s.c_str());
        return kExitOk;
    }
    std::printf("verdict: DIFFERENT beyond %.3g%%: total %+.3f%%, %zu of %zu %ss beyond, %zu only in A, %zu only in B\n", tol,
                r.total_pct, r.beyond, r.rows.size(), by_s.c_str(), r.only_a.size(), r.only_b.size());
    return kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("diff", "compare two runs: total and per-op cycle deltas, exit 1 beyond a tolerance", cmd_diff);

}  // namespace sfumato::cli
