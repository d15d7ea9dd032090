// The HTML report's pieces without a browser (report/): number formats, parameter values,
// SVG plots declaring and drawing the same number of marks, the page's self-check hooks, and
// the sweep page built from a sweep table (one plot per varying figure and dimension, one
// mark per completed point). tests/report/report_chromium_test.sh renders real pages.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <tuple>

#include "report/html_page.h"
#include "report/report.h"
#include "report/svg_plot.h"
#include "report/timeline.h"
#include "sim/error.h"
#include "traces/hdf5_table.h"

using namespace sfumato;
using namespace sfumato::report;

namespace {

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
}

// The data-expected-marks of every <svg class="plot"> and the marks inside it.
std::vector<std::pair<size_t, size_t>> plot_marks(const std::string& html) {
    std::vector<std::pair<size_t, size_t>> v;
    const std::regex open(R"re(<svg class="plot" id="[^"]*" data-expected-marks="(\d+)")re");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), open); it != std::sregex_iterator(); ++it) {
        const size_t start = static_cast<size_t>(it->position());
        const size_t end = html.find("</svg>", start);
        v.emplace_back(std::stoul((*it)[1]), count(html.substr(start, end - start), "class=\"mark\""));
    }
    return v;
}

}  // namespace

TEST_CASE("report: numbers and parameter values") {
    CHECK(format_number(1234567) == "1.23M");
    CHECK(format_number(12345) == "12.3k");
    CHECK(format_number(0.000123) == "1.23e-04");
    CHECK(format_number(0) == "0");
    CHECK(format_number(NAN) == "-");
    double v = 0;
    CHECK(parse_param_number("128KiB", v));
    CHECK(v == 131072);
    CHECK(parse_param_number("2400", v));
    CHECK(v == 2400);
    CHECK(parse_param_number("1.5", v));
    CHECK(v == 1.5);
    CHECK_FALSE(parse_param_number("fp16", v));
    CHECK_FALSE(parse_param_number("10x", v));
    CHECK_FALSE(parse_param_number("", v));
}

TEST_CASE("report: a plot declares the marks it draws (non-positive values left out on log axes)") {
    Plot p("p", "t <&>", Axis{"x", true}, Axis{"y", true});
    Series a;
    a.label = "a";
    a.x = {1, 10, 0, 100};
    a.y = {5, 50, 7, -1};
    Series hollow;
    hollow.x = {1, 2};
    hollow.y = {1, 2};
    hollow.hollow = true;
    p.add(a);
    p.add(hollow);
    p.add(RefLine{1, 1, 100, 100, "roof", true});
    CHECK(p.expected_marks() == 2);
    const std::string svg = p.svg();
    const auto m = plot_marks(svg);
    REQUIRE(m.size() == 1);
    CHECK(m[0] == std::pair<size_t, size_t>{2, 2});
    CHECK(svg.find("t &lt;&amp;&gt;") != std::string::npos);

    const std::string bars = bar_chart("b", "bars", "u", {{"g1", {{"x", 0.5}, {"y", 0}}}, {"g2", {{"x", NAN}, {"y", 2}}}});
    const auto bm = plot_marks(bars);
    REQUIRE(bm.size() == 1);
    CHECK(bm[0] == std::pair<size_t, size_t>{3, 3});  // the NaN bar is not drawn nor expected
}

TEST_CASE("report: the page carries its self-check and error hooks") {
    HtmlPage page("a <b>");
    page.paragraph("x & y");
    page.table({"k", "v"}, {{"a", "12.5"}, {"b", "line1\nline2"}});
    page.plot(bar_chart("b", "bars", "u", {{"g", {{"x", 1}}}}));
    CHECK(page.plots() == 1);
    const std::string html = page.render();
    CHECK(html.find("<title>a &lt;b&gt;</title>") != std::string::npos);
    CHECK(html.find("<p>x &amp; y</p>") != std::string::npos);
    CHECK(html.find("<td class=\"num\">12.5</td>") != std::string::npos);
    CHECK(html.find("<pre>line1\nline2</pre>") != std::string::npos);
    CHECK(html.find("id=\"selfcheck\" data-status=\"pending\"") != std::string::npos);
    CHECK(html.find("id=\"errors\" data-count=\"0\"") != std::string::npos);
    CHECK(html.find("http") == html.find("http://www.w3.org/2000/svg"));  // no other URL: nothing fetched
}

TEST_CASE("report: a sweep page has one plot per varying figure and dimension, one mark per done point") {
    const auto dir = std::filesystem::temp_directory_path() / ("sfumato_report_sweep_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // 2 x 3 grid over a and b (b zipped with c), one point failed.
    Table t;
    using K = TableColumn::Kind;
    t.columns.push_back({"point", K::Int, {0, 1, 2, 3, 4, 5}, {}, {}, ""});
    t.columns.push_back({"name", K::Text, {}, {}, {"p0000", "p0001", "p0002", "p0003", "p0004", "p0005"}, ""});
    t.columns.push_back({"status", K::Text, {}, {}, {"done", "done", "failed", "done", "done", "done"}, ""});
    t.columns.push_back({"exit_code", K::Int, {0, 0, 2, 0, 0, 0}, {}, {}, ""});
    t.columns.push_back({"chip.a", K::Text, {}, {}, {"1", "1", "1", "2", "2", "2"}, ""});
    t.columns.push_back({"arg.b", K::Text, {}, {}, {"64KiB", "128KiB", "256KiB", "64KiB", "128KiB", "256KiB"}, ""});
    t.columns.push_back({"arg.c", K::Text, {}, {}, {"x", "y", "z", "x", "y", "z"}, ""});
    t.columns.push_back({"total_cycles", K::Float, {}, {10, 20, NAN, 11, 21, 31}, {}, ""});
    t.columns.push_back({"constant", K::Float, {}, {5, 5, NAN, 5, 5, 5}, {}, ""});
    t.columns.push_back({"op.bound", K::Text, {}, {}, {"memory", "memory", "", "compute", "memory", "memory"}, ""});
    t.columns.push_back({"wall_seconds", K::Float, {}, {1, 2, 3, 4, 5, 6}, {}, ""});
    t.columns.push_back({"error", K::Text, {}, {}, {"", "", "UB too small", "", "", ""}, ""});
    t.attrs["params"] = "chip.a\narg.b\narg.c";
    t.attrs["param_dims"] = "0,1,1";
    write_table_h5((dir / "sweep.h5").string(), "/sweep", t);
    CHECK(detect_report_kind(dir.string()) == ReportKind::Sweep);
    const std::string html = render_report(dir.string(), ReportOptions{});
    const auto m = plot_marks(html);
    // total_cycles varies, `constant` does not, op.bound is text: 1 figure x 2 dimensions.
    REQUIRE(m.size() == 2);
    for (const auto& [want, got] : m) {
        CHECK(want == 5);
        CHECK(got == 5);
    }
    CHECK(html.find("total_cycles vs chip.a") != std::string::npos);
    CHECK(html.find("total_cycles vs arg.b") != std::string::npos);
    CHECK(html.find("arg.b (with arg.c)") != std::string::npos);
    CHECK(html.find("UB too small") != std::string::npos);  // the failed point is listed
    std::filesystem::remove_all(dir);

    const auto empty = std::filesystem::temp_directory_path() / ("sfumato_report_empty_" + std::to_string(::getpid()));
    std::filesystem::create_directories(empty);
    CHECK_THROWS_AS(render_report(empty.string(), ReportOptions{}), InputError);
    CHECK_THROWS_AS(render_report((empty / "nope").string(), ReportOptions{}), InputError);
    std::ofstream(empty / "summary.json") << "{not json";
    CHECK_THROWS_AS(render_report(empty.string(), ReportOptions{}), InputError);
    std::filesystem::remove_all(empty);
}

TEST_CASE("report: a serving run's CDFs cover its served requests, its time series every step or time bins") {
    const auto dir = std::filesystem::temp_directory_path() / ("sfumato_report_serve_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "summary.json") << R"({"serve": {"setup": {"policy": "continuous"},
        "metrics": {"served": 3, "rejected": 1, "duration_s": 0.004, "steps": 3,
                    "ttft_ms": {"mean": 2, "p50": 2, "p90": 3, "p99": 3, "max": 3}}}})";
    // Four requests: one rejected (no latencies), one with a single output token (no TPOT).
    std::ofstream(dir / "requests.csv")
        << "request_id,arrival_s,scheduled_s,first_token_s,finish_s,ttft_ms,tpot_ms,e2e_ms,max_itl_ms,prompt_tokens,"
           "output_tokens,preemptions,prefix_hit_tokens,rejected\n"
           "a,0,0,0.001,0.003,1,1,3,1,16,3,0,0,\n"
           "\"b,\"\"x\"\"\",0,0,0.003,0.003,3,0,3,0,16,1,0,0,\n"
           "c,0.001,0.001,0.003,0.004,2,0.5,3,0.5,16,3,0,0,\n"
           "d,0.001,-1,-1,0.001,-1,-1,-1,0,16,4,0,0,\"needs 9 KV blocks, the pool has 8\"\n";
    std::ofstream(dir / "steps.csv")
        << "instance,step,begin_s,seconds,sequences,prefill_tokens,decode_tokens,waiting,kv_used_blocks,kv_pool_blocks,"
           "preempted,swapped_out_tokens,swapped_in_tokens\n"
           "0,0,0,0.001,1,16,0,1,1,8,0,0,0\n0,1,0.001,0.002,2,16,1,0,2,8,0,0,0\n1,0,0.0005,0.001,1,16,0,0,4,8,0,0,0\n";
    std::string html = render_report(dir.string(), ReportOptions{});
    auto m = plot_marks(html);
    // ttft, tpot, e2e CDFs, then waiting, batch and KV series.
    REQUIRE(m.size() == 6);
    CHECK(m[0] == std::pair<size_t, size_t>{3, 3});
    CHECK(m[1] == std::pair<size_t, size_t>{2, 2});
    CHECK(m[2] == std::pair<size_t, size_t>{3, 3});
    for (size_t i = 3; i < 6; ++i) CHECK(m[i] == std::pair<size_t, size_t>{3, 3});
    CHECK(html.find("3.000 ms: 100.0 % of the requests") != std::string::npos);  // the CDFs end at 1
    CHECK(html.find("1.000 ms: 33.3 % of the requests") != std::string::npos);
    CHECK(html.find("instance 1") != std::string::npos);  // two instances: a curve each
    CHECK(html.find("step at 0.500 ms: 50") != std::string::npos);  // instance 1's KV use: 4 of 8 blocks

    // 5000 steps of one instance: drawn as time bins, each the step-time weighted mean.
    std::ofstream steps(dir / "steps.csv");
    steps << "instance,step,begin_s,seconds,sequences,prefill_tokens,decode_tokens,waiting,kv_used_blocks,kv_pool_blocks,"
             "preempted,swapped_out_tokens,swapped_in_tokens\n";
    // Alternating steps of 1 ms with 2 sequences and 3 ms with 6: each pair's weighted mean is 5.
    for (int k = 0; k < 5000; ++k)
        steps << "0," << k << "," << (k / 2) * 0.004 + (k % 2) * 0.001 << "," << (k % 2 ? 0.003 : 0.001) << ","
              << (k % 2 ? 6 : 2) << ",0,0,0,1,8,0,0,0\n";
    steps.close();
    std::ofstream(dir / "summary.json") << R"({"serve": {"metrics": {"served": 3, "duration_s": 10}}})";
    ReportOptions o;
    o.timeline_bins = 50;  // 0.2 s bins: 50 whole pairs each
    html = render_report(dir.string(), o);
    m = plot_marks(html);
    REQUIRE(m.size() == 6);
    for (size_t i = 3; i < 6; ++i) CHECK(m[i] == std::pair<size_t, size_t>{50, 50});
    CHECK(html.find("time bins") != std::string::npos);
    CHECK(html.find("ms: 5 (step-time weighted mean)") != std::string::npos);
    CHECK(html.find("ms: 4.") == std::string::npos);  // no bin off the weighted mean
    std::filesystem::remove_all(dir);
}

TEST_CASE("report: a system's memory timeline keeps each chip's counters apart") {
    // Two chips' memory processes, each with one HBM channel named alike and an L2 hit rate;
    // the samples interleave in time. Chip 0 moves 10 GB/s throughout; chip 1 30 GB/s until
    // 30 us, then 20. Both end at 100 us (the last samples).
    auto counter = [](int pid, const char* name, double ts, double v) {
        return nlohmann::json{{"ph", "C"}, {"pid", pid}, {"tid", 0}, {"name", name}, {"ts", ts}, {"args", {{"value", v}}}};
    };
    auto process = [](int pid, const char* name) {
        return nlohmann::json{{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", name}}}};
    };
    nlohmann::json ev = nlohmann::json::array();
    ev.push_back(process(3, "chip0 memory"));
    ev.push_back(process(4, "chip1 memory"));
    const char* ch = "hbm ch0 GB/s";
    for (const auto& [pid, ts, v] : {std::tuple{3, 0.0, 10.0}, std::tuple{4, 0.0, 30.0}, std::tuple{4, 30.0, 20.0},
                                     std::tuple{3, 50.0, 10.0}, std::tuple{3, 100.0, 0.0}, std::tuple{4, 100.0, 0.0}})
        ev.push_back(counter(pid, ch, ts, v));
    ev.push_back(counter(3, "l2 hit rate", 0.0, 0.5));
    ev.push_back(counter(4, "l2 hit rate", 0.0, 0.25));
    const std::vector<TimelineSeries> tl = memory_timeline(nlohmann::json{{"traceEvents", ev}}, 10);
    REQUIRE(tl.size() == 4);
    CHECK(tl[0].title == "chip0: HBM bandwidth (all channels)");
    CHECK(tl[1].title == "chip0: L2 hit rate");
    CHECK(tl[2].title == "chip1: HBM bandwidth (all channels)");
    CHECK(tl[3].title == "chip1: L2 hit rate");
    for (size_t k = 0; k < 10; ++k) {
        INFO("bin " << k);
        CHECK(tl[0].value[k] == Approx(10.0));
        CHECK(tl[2].value[k] == Approx(k < 3 ? 30.0 : 20.0));
        CHECK(tl[1].value[k] == Approx(0.5));
        CHECK(tl[3].value[k] == Approx(0.25));
    }
    // One chip (a lone chip's "memory" process): the titles stay as they were.
    nlohmann::json one = nlohmann::json::array({process(1, "memory"), counter(1, ch, 0.0, 10.0), counter(1, ch, 100.0, 0.0)});
    const std::vector<TimelineSeries> t1 = memory_timeline(one, 10);
    REQUIRE(t1.size() == 1);
    CHECK(t1[0].title == "HBM bandwidth (all channels)");
    CHECK(t1[0].value[9] == Approx(10.0));
}
