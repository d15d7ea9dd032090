// The normalisation, reduction and argmax `sfumato kernel` forms end to end on the tiny chip:
// each checks against the host reference in functional mode and takes exactly as many cycles
// in timing mode; bad arguments exit 2 naming the argument.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {
uint64_t kernel_cycles(const nlohmann::json& s) {
    uint64_t c = 0;
    for (const auto& op : s["ops"]) c += op["cycles"].get<uint64_t>();
    return c;
}
}  // namespace

TEST_CASE("norm family: functional check passes and timing mode gives identical cycles", "[norm]") {
    const std::vector<std::string> forms = {
        "softmax --rows 37 --cols 300 --dtype fp16",
        "logsoftmax --shape 3,20,33 --axis 1 --dtype fp32",
        "layernorm --rows 20 --cols 200 --stats 2 --dtype bf16",
        "batchnorm --n 2 --c 5 --h 7 --w 9 --dtype fp16",
        "instancenorm --n 2 --c 3 --h 10 --w 10 --dtype fp32",
        "reduce --op mean --shape 4,6,50 --axes 0,2 --dtype fp16",
        "reduce --op logsumexp --shape 8,100 --axes 1 --dtype fp32",
        "argmax --shape 6,40,5 --axis 1 --select-last 1 --dtype fp16",
        "maxpool --n 2 --c 3 --h 17 --w 17 --kernel 3 --stride 2 --pad 1 --dtype fp16",
        "avgpool --n 1 --c 4 --h 9 --w 12 --kernel 2 --stride 2 --ceil 1 --dtype fp32",
    };
    for (const auto& f : forms) {
        INFO(f);
        const std::string fo = temp_dir("norm_f"), to = temp_dir("norm_t");
        const CliResult a = run_cli("kernel " + f + " --config " + config("tiny") + " --out " + fo);
        INFO(a.output);
        REQUIRE(a.code == 0);
        const CliResult b = run_cli("kernel " + f + " --config " + config("tiny") + " --mode timing --out " + to);
        REQUIRE(b.code == 0);
        const auto sf = read_json(fo + "/summary.json"), st = read_json(to + "/summary.json");
        CHECK(sf["check"]["passed"] == true);
        CHECK(sf["check"]["checked"] == true);
        CHECK(kernel_cycles(sf) > 0);
        CHECK(kernel_cycles(sf) == kernel_cycles(st));
        CHECK(sf["total_cycles"] == st["total_cycles"]);
    }
}

TEST_CASE("norm family: bad arguments exit 2 naming the argument", "[norm]") {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"softmax --rows 4 --cols 8 --axis 2", "'axis'"},
        {"softmax --rows 4 --cols 8 --dtype int8", "'dtype'"},
        {"reduce --op sum --shape 4,8 --axes 3", "'axes'"},
        {"reduce --op median --shape 4,8", "'op'"},
        {"argmax --shape 4,8 --axis -3", "'axis'"},
        {"layernorm --rows 4 --cols 8 --eps x", "'eps'"},
        {"maxpool --n 1 --c 1 --h 8 --w 8 --kernel 3 --pad 3", "'pad'"},
    };
    for (const auto& [args, name] : bad) {
        INFO(args);
        const CliResult r = run_cli("kernel " + args + " --config " + config("tiny"));
        CHECK(r.code == 2);
        CHECK(r.output.find(name) != std::string::npos);
    }
}
