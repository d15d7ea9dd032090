// The layout pass end to end through `sfumato run`: a small ResNet-18 and ResNet-50 keep their
// activations in NC1HWC0 from one operator to the next (every Conv one kernel, GlobalAveragePool
// on NC1HWC0 too, one TransData for the image input, as the pass report says) and compute the
// same outputs as with the pass off, both checked against the host reference interpreter, and
// the same kernels and cycles in timing mode as in functional mode; on a split part and on a
// coupled one (the 910-like preset, whose Convs drain NC1HWC0 through UB).
#include <catch2/catch.hpp>
#include <map>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

struct LayoutRun {
    std::string check;            // the "check ... vs reference" line
    std::string total;            // the "total: ..." line
    std::map<std::string, int> kernels_per_node;
    int transdata = 0;
    std::vector<std::string> transdata_nodes;
    int conv_conversions = 0;     // 0-FLOP kernels of Conv nodes (each converts its X or W)
    nlohmann::json layout;        // the pass report's entry (null with the pass off)
};

std::string line_of(const std::string& out, const std::string& start) {
    const size_t at = out.find(start);
    REQUIRE(at != std::string::npos);
    return out.substr(at, out.find('\n', at) - at);
}

// The `total:` line (kernels, cycles, load and inference time) of a timing-mode run.
std::string timing_total(const std::string& model, const std::string& preset = "tiny") {
    const CliResult r = run_cli("run \"" + model + "\" --config " + config(preset) + " --mode timing");
    INFO(r.output);
    REQUIRE(r.code == 0);
    return line_of(r.output, "total: ");
}

LayoutRun run_model(const std::string& model, const std::string& passes, const std::string& tag,
                    const std::string& preset = "tiny") {
    const std::string dir = temp_dir("layout_" + tag);
    const CliResult r = run_cli("run \"" + model + "\" --config " + config(preset) +
                                " --reference --passes " + passes + " --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    LayoutRun out;
    out.check = line_of(r.output, "check ");
    out.total = line_of(r.output, "total: ");
    CHECK(out.check.find("passed") != std::string::npos);
    const auto s = read_json(dir + "/summary.json");
    for (const auto& op : s["ops"]) {
        ++out.kernels_per_node[op["node"].get<std::string>()];
        if (op["type"].get<std::string>() == "Conv" && op["flops"].get<double>() == 0) ++out.conv_conversions;
        if (op["type"].get<std::string>() == "TransData") {
            ++out.transdata;
            out.transdata_nodes.push_back(op["node"].get<std::string>());
        }
    }
    for (const auto& p : s["passes"])
        if (p["name"] == "layout") out.layout = p;
    return out;
}

}  // namespace

TEST_CASE("layout pass: small ResNets keep NC1HWC0 between operators, outputs as without the pass") {
    struct Case {
        const char *model, *preset;
    };
    for (const Case c : {Case{"zoo:resnet18?image=32&width=8&classes=10", "tiny"},
                         Case{"zoo:resnet50?image=32&width=8&classes=10", "tiny"},
                         Case{"zoo:resnet18?image=32&width=8&classes=10", "ascend910-like"}}) {
        const std::string model = c.model;
        INFO(model << " on " << c.preset);
        const LayoutRun on = run_model(model, "all", std::string("on_") + c.preset, c.preset);
        const LayoutRun off = run_model(model, "all,-layout", std::string("off_") + c.preset, c.preset);
        // The same values (identical error figures against the reference).
        CHECK(on.check == off.check);
        // Without the pass every Conv converts its X in a kernel of its own (two launches).
        int convs = 0;
        for (const auto& [node, k] : off.kernels_per_node)
            if (node.find("conv") != std::string::npos || node.find("downsample") != std::string::npos) {
                ++convs;
                CHECK(k == 2);
            }
        REQUIRE(convs >= 20);
        CHECK(off.transdata == 0);
        // With it: one kernel per Conv; the one TransData step is the image input's: the last
        // block and GlobalAveragePool stay NC1HWC0, and the pooled [1, 64 or 256, 1, 1] (whole
        // C0 blocks) goes back to ND as a view.
        for (const auto& [node, k] : on.kernels_per_node)
            if (node.find("conv") != std::string::npos || node.find("downsample") != std::string::npos)
                CHECK(k == 1);
        REQUIRE(on.layout.is_object());
        const auto& pat = on.layout["patterns"];
        CHECK(pat["conversions before (each Conv's X)"].get<int>() == convs);
        CHECK(pat["conversions after"].get<int>() == on.transdata);
        REQUIRE(on.transdata_nodes.size() == 1);
        CHECK(on.transdata_nodes[0].rfind("input", 0) == 0);
        CHECK(pat["GlobalAveragePool in NC1HWC0"].get<int>() == 1);
        CHECK(pat["NC1HWC0->ND as a view (same bytes)"].get<int>() == 1);
        CHECK(pat["conversions saved"].get<int>() == convs - on.transdata);
        // Timing mode runs the same kernels in the same cycles.
        CHECK(timing_total(model, c.preset) == on.total);
        // No Conv launches a conversion kernel of its own; without the pass each one did.
        CHECK(on.conv_conversions == 0);
        CHECK(off.conv_conversions == convs);
    }
}

TEST_CASE(
    "layout pass: a small MobileNetV2 runs in NC1HWC0 throughout (depthwise and Clip(0, 6) Convs too)") {
    const std::string model = "zoo:mobilenet_v2?image=32&classes=10&width_pct=50";
    const LayoutRun on = run_model(model, "all", "mnv2_on");
    const LayoutRun off = run_model(model, "all,-layout", "mnv2_off");
    CHECK(on.check == off.check);
    REQUIRE(on.layout.is_object());
    const auto& pat = on.layout["patterns"];
    const int convs = pat["conversions before (each Conv's X)"].get<int>();
    // Off, every Conv converts its X in a kernel of its own; on, none does, and the one
    // TransData is the image input's.
    CHECK(off.conv_conversions == convs);
    CHECK(on.conv_conversions == 0);
    REQUIRE(on.transdata_nodes.size() == 1);
    CHECK(on.transdata_nodes[0].rfind("input", 0) == 0);
    CHECK(pat["Conv in NC1HWC0"].get<int>() == convs);
    CHECK(pat["conversions saved"].get<int>() == convs - on.transdata);
    CHECK(timing_total(model) == on.total);
}
