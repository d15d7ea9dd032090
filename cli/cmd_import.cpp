// `sfumato import kineto TRACE.json[.gz] -o WORKLOAD.json` and `sfumato import op-summary
// FILE.csv -o WORKLOAD.json`: profiler traces as workload files (traces/import.h). Prints what
// was read, how much of the measured time the mapped operators hold, and every skipped
// operator with the reason; exits 2 only when nothing usable remains.
#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "sim/error.h"
#include "traces/atomic_file.h"
#include "traces/import.h"

namespace sfumato::cli {

namespace {

std::string report_text(const import::Report& r, size_t max_skips) {
    char buf[512];
    std::string s;
    std::snprintf(buf, sizeof buf, "  %zu events read; %zu operators mapped to %zu kernel tasks; %zu views/bookkeeping ops cost nothing\n",
                  r.events, r.ops_mapped, r.tasks, r.ops_free);
    s += buf;
    if (r.measured_us > 0) {
        std::snprintf(buf, sizeof buf, "  measured time: %.1f us in the trace, %.1f us (%.1f%%) in mapped operators\n", r.measured_us,
                      r.mapped_us, 100.0 * r.mapped_us / r.measured_us);
        s += buf;
    }
    for (const auto& n : r.notes) s += "  note: " + n + "\n";
    if (!r.skipped.empty()) s += "  skipped (what, why, count, measured time):\n";
    for (size_t i = 0; i < r.skipped.size() && i < max_skips; ++i) {
        const auto& k = r.skipped[i];
        std::snprintf(buf, sizeof buf, "    %-40s %-60s x%-5zu %10.1f us\n", k.what.c_str(), k.why.c_str(), k.count, k.measured_us);
        s += buf;
    }
    if (r.skipped.size() > max_skips) s += "    ... " + std::to_string(r.skipped.size() - max_skips) + " more\n";
    return s;
}

int cmd_import(const std::vector<std::string>& args) {
    const char* usage = "usage: sfumato import kineto TRACE.json[.gz] -o WORKLOAD.json [--steps N] [--all-skips]\n"
                        "       sfumato import op-summary OP_SUMMARY.csv -o WORKLOAD.json\n";
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::cout << usage;
        return args.empty() ? kExitBadInput : kExitOk;
    }
    const std::string kind = args[0];
    if (kind != "kineto" && kind != "op-summary") throw InputError("import: unknown format '" + kind + "'\n" + usage);
    std::string in, out;
    size_t max_skips = 40, steps = 0;
    for (size_t i = 1; i < args.size(); ++i) {
        if ((args[i] == "-o" || args[i] == "--out") && i + 1 < args.size()) out = args[++i];
        else if (args[i] == "--all-skips") max_skips = SIZE_MAX;
        else if (args[i] == "--steps" && i + 1 < args.size() && kind == "kineto") {
            const std::string& v = args[++i];
            if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoul(v) == 0)
                throw InputError("import: --steps takes a positive number of profiler steps, not '" + v + "'");
            steps = std::stoul(v);
        }
        else if (in.empty() && !args[i].empty() && args[i][0] != '-') in = args[i];
        else throw InputError("import: unexpected argument '" + args[i] + "'\n" + usage);
    }
    if (in.empty() || out.empty()) throw InputError(std::string("import: give the trace and -o WORKLOAD.json\n") + usage);
    const import::Imported im = kind == "kineto" ? import::import_kineto(in, steps) : import::import_op_summary(in);
    const std::string text = report_text(im.report, max_skips);
    if (im.w.tasks.empty())
        throw InputError("import " + kind + " " + in + ": nothing usable remains\n" + text);
    write_text_atomically(out, workload::to_json(im.w) + "\n");
    std::printf("import %s %s -> %s\n%s", kind.c_str(), in.c_str(), out.c_str(), text.c_str());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("import", "turn a profiler trace (PyTorch/Kineto JSON, vendor op summary CSV) into a workload file", cmd_import);

}  // namespace sfumato::cli
