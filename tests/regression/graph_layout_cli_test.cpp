// The layout pass end to end through `sfumato run`: a small ResNet-18 and ResNet-50 keep their
// activations in NC1HWC0 from one operator to the next (every Conv one kernel, TransData only at
// the graph's boundaries, as many as the pass report says) and compute the same outputs as with
// the pass off, both checked against the host reference interpreter.
#include <catch2/catch.hpp>
#include <map>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

struct LayoutRun {
    std::string check;            // the "check ... vs reference" line
    std::map<std::string, int> kernels_per_node;
    int transdata = 0;
    nlohmann::json layout;        // the pass report's entry (null with the pass off)
};

LayoutRun run_model(const std::string& model, const std::string& passes, const std::string& tag) {
    const std::string dir = temp_dir("layout_" + tag);
    const CliResult r = run_cli("run \"" + model + "\" --config " + config("tiny") +
                                " --reference --passes " + passes + " --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    LayoutRun out;
    const size_t at = r.output.find("check ");
    REQUIRE(at != std::string::npos);
    out.check = r.output.substr(at, r.output.find('\n', at) - at);
    CHECK(out.check.find("passed") != std::string::npos);
    const auto s = read_json(dir + "/summary.json");
    for (const auto& op : s["ops"]) {
        ++out.kernels_per_node[op["node"].get<std::string>()];
        if (op["type"].get<std::string>() == "TransData") ++out.transdata;
    }
    for (const auto& p : s["passes"])
        if (p["name"] == "layout") out.layout = p;
    return out;
}

}  // namespace

TEST_CASE("layout pass: small ResNets keep NC1HWC0 between operators, outputs as without the pass") {
    for (const char* model :
         {"zoo:resnet18?image=32&width=8&classes=10", "zoo:resnet50?image=32&width=8&classes=10"}) {
        INFO(model);
        const LayoutRun on = run_model(model, "all", "on");
        const LayoutRun off = run_model(model, "all,-layout", "off");
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
        // With it: one kernel per Conv; the TransData steps are the input's and the last block's.
        for (const auto& [node, k] : on.kernels_per_node)
            if (node.find("conv") != std::string::npos || node.find("downsample") != std::string::npos)
                CHECK(k == 1);
        REQUIRE(on.layout.is_object());
        const auto& pat = on.layout["patterns"];
        CHECK(pat["conversions before (each Conv's X)"].get<int>() == convs);
        CHECK(pat["conversions after"].get<int>() == on.transdata);
        CHECK(on.transdata == 2);
        CHECK(pat["conversions saved"].get<int>() == convs - 2);
    }
}
