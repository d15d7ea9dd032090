// Shared by the `sfumato serve` regression tests: a run that must succeed and serve every
// request, and the plots of a report page.
#pragma once
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <string>
#include <utility>

#include "tests/support.h"

namespace sfumato::test {

// `sfumato BASE ARGS --out OUT`: exit 0 and no request rejected; summary.json's serve section.
inline nlohmann::json serve_ok(const std::string& base, const std::string& args, const std::string& out) {
    const CliResult r = run_cli(base + " " + args + " --out " + out);
    INFO(base << " " << args << "\n" << r.output);
    REQUIRE(r.code == 0);
    const nlohmann::json s = read_json(out + "/summary.json")["serve"];
    REQUIRE(s["metrics"]["rejected"].get<size_t>() == 0);
    return s;
}

// Per <svg class="plot"> of a report page (report/svg_plot.h): its id -> the marks it declares
// (data-expected-marks) and the marks drawn in it.
inline std::map<std::string, std::pair<size_t, size_t>> report_plots(const std::string& html) {
    std::map<std::string, std::pair<size_t, size_t>> m;
    const std::regex open(R"re(<svg class="plot" id="([^"]*)" data-expected-marks="(\d+)")re");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), open); it != std::sregex_iterator(); ++it) {
        const size_t start = static_cast<size_t>(it->position());
        const std::string body = html.substr(start, html.find("</svg>", start) - start);
        size_t marks = 0;
        for (size_t p = body.find("class=\"mark\""); p != std::string::npos;
             p = body.find("class=\"mark\"", p + 1))
            ++marks;
        m[(*it)[1]] = {std::stoul((*it)[2]), marks};
    }
    return m;
}

}  // namespace sfumato::test
