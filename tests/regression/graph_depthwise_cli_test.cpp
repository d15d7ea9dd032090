// The depthwise pass end to end through `sfumato run`: a small MobileNetV2's depthwise Convs run
// as groups of C0 channels with block-diagonal weights, computing the same outputs (identical
// error figures against the host reference) with the same kernels and FLOPs in fewer cycles.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

struct DwRun {
    std::string check;                  // the "check ... vs reference" line
    double inference_us = 0;            // summary.json
    std::map<std::string, double> flops;  // per node, summed over its kernels
    std::set<std::string> depthwise;    // nodes the pass rewrote (its notes)
    size_t kernels = 0;
};

DwRun run_model(const std::string& model, const std::string& passes, const std::string& tag) {
    const std::string dir = temp_dir("depthwise_" + tag);
    const CliResult r = run_cli("run \"" + model + "\" --config " + config("tiny") + " --reference --passes " +
                                passes + " --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    DwRun out;
    const size_t at = r.output.find("check ");
    REQUIRE(at != std::string::npos);
    out.check = r.output.substr(at, r.output.find('\n', at) - at);
    CHECK(out.check.find("passed") != std::string::npos);
    const auto s = read_json(dir + "/summary.json");
    out.kernels = s["ops"].size();
    for (const auto& op : s["ops"]) out.flops[op["node"].get<std::string>()] += op["flops"].get<double>();
    double sum_us = 0;
    for (const auto& op : s["ops"]) sum_us += op["time_us"].get<double>();
    out.inference_us = sum_us;
    for (const auto& p : s["passes"])
        if (p["name"] == "depthwise")
            for (const auto& note : p["notes"]) {
                const std::string n = note.get<std::string>();
                out.depthwise.insert(n.substr(0, n.find(':')));
            }
    return out;
}

}  // namespace

TEST_CASE("depthwise pass: a small MobileNetV2 runs its depthwise Convs as C0 groups, same outputs, fewer cycles") {
    const std::string model = "zoo:mobilenet_v2?image=32&classes=10&width_pct=50";
    // The layout pass off in both: it keeps the rewritten depthwise Convs (groups of whole C0
    // blocks) in NC1HWC0, the original ones not, which would change the kernels as well.
    const DwRun on = run_model(model, "all,-layout", "on");
    const DwRun off = run_model(model, "all,-layout,-depthwise", "off");
    CHECK(on.check == off.check);
    CHECK(on.kernels == off.kernels);
    // Every depthwise Conv of the model (its `.dw` nodes; at 50 % width their channels are
    // multiples of 16, whole fp16 C0 blocks) was rewritten, and none else.
    std::set<std::string> dw;
    for (const auto& [node, f] : off.flops)
        if (node.find(".dw") != std::string::npos) dw.insert(node);
    REQUIRE(!dw.empty());
    CHECK(on.depthwise == dw);
    CHECK(off.depthwise.empty());
    // The useful FLOPs are counted, not the zero products of the diagonal.
    for (const auto& [node, f] : off.flops) CHECK(on.flops.at(node) == f);
    // The cube no longer pads every channel to a C0 block: the depthwise kernels take less time.
    CHECK(on.inference_us < off.inference_us);
}
