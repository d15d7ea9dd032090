// Every operator `sfumato kernel` knows, run at its small sample shape (SFUMATO_OP_SAMPLE in
// the op's file) in functional and in timing mode on the tiny preset: the functional run's
// check passes, and both modes take exactly the same cycles, kernel by kernel. A registered
// op without a sample fails here, so a new op cannot skip the sweep.
#include <catch2/catch.hpp>

#include "runtime/ops/i_op.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

std::string dashed(std::string s) {
    for (char& c : s)
        if (c == '_') c = '-';
    return s;
}

}  // namespace

TEST_CASE("op sweep: every registered op, functional and timing modes give the same cycles") {
    const std::string dir = temp_dir("op_sweep");
    const std::vector<std::string> names = ops::op_names();
    REQUIRE(names.size() > 2);
    for (const std::string& op : names) {
        const ops::OpArgs* sample = ops::op_sample(op);
        INFO("operator " << op);
        REQUIRE(sample);  // add SFUMATO_OP_SAMPLE(var, "op", {...}) next to the op's registration
        std::string args;
        for (const auto& [k, v] : *sample) args += " --" + dashed(k) + " " + v;
        std::vector<nlohmann::json> runs;
        for (const char* mode : {"functional", "timing"}) {
            const std::string out = dir + "/" + op + "_" + mode;
            const CliResult r = run_cli("kernel " + op + args + " --config " + config("tiny") + " --trace off --mode " + mode +
                                        " --out " + out);
            INFO(mode << ": " << r.output);
            REQUIRE(r.code == 0);
            runs.push_back(read_json(out + "/summary.json"));
        }
        CHECK(runs[0]["check"]["checked"] == true);
        CHECK(runs[0]["check"]["passed"] == true);
        CHECK(runs[0]["total_cycles"] == runs[1]["total_cycles"]);
        REQUIRE(runs[0]["ops"].size() == runs[1]["ops"].size());
        for (size_t k = 0; k < runs[0]["ops"].size(); ++k) CHECK(runs[0]["ops"][k]["cycles"] == runs[1]["ops"][k]["cycles"]);
    }
}
