// `sfumato report DIR -o report.html`: one self-contained HTML page (inline SVG, no network) for
// a run directory, a membench run or a sweep directory (report/report.h).
#include <cstdio>

#include "cli/command.h"
#include "cli/session.h"
#include "report/report.h"
#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {

int cmd_report(const std::vector<std::string>& args) {
    std::string dir, out;
    std::vector<std::string> figures;
    size_t bins = 120;
    po::options_description d("sfumato report");
    d.add_options()("dir", po::value<std::string>(&dir), "a run's --out directory, or a sweep's")(
        "output,o", po::value<std::string>(&out), "the HTML file to write")(
        "figure", po::value<std::vector<std::string>>(&figures)->composing(),
        "sweep: plot only figures whose name contains this (repeatable)")(
        "bins", po::value<size_t>(&bins)->default_value(120), "time bins of the memory timeline");
    po::positional_options_description pos;
    pos.add("dir", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato report DIR -o report.html [--figure NAME]...", d, vm, &pos)) return kExitOk;
    if (dir.empty()) throw InputError("report needs a directory (sfumato report DIR -o report.html)");
    if (out.empty()) throw InputError("report needs -o FILE.html");
    if (bins < 2 || bins > 100000) throw InputError("--bins must be in [2, 100000]");
    report::ReportOptions o;
    o.figures = figures;
    o.timeline_bins = bins;
    const std::string html = report::render_report(dir, o);
    write_text_atomically(out, html);
    std::printf("wrote %s (%zu bytes)\n", out.c_str(), html.size());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("report", "an HTML report (inline SVG plots) of a run, a membench run or a sweep", cmd_report);

}  // namespace sfumato::cli
