// Issue 10's acceptance on bad operator arguments: a broadcast shape mismatch, an unsupported
// dtype and an axis out of range exit 2 with a message naming the argument (or the node
// attribute it becomes), for every operator family's `sfumato kernel` form.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

TEST_CASE("op arguments: broadcast mismatch, unsupported dtype, axis out of range exit 2 naming the argument") {
    struct Bad {
        const char* args;
        const char* names;  // what the message must name
    };
    const Bad bad[] = {
        // broadcast shape mismatch
        {"add --shape-a 4x3 --shape-b 4x5", "shape-b"},
        {"mul --shape-a 4x3 --shape-b 2x3", "shape-b"},
        {"where --shape-a 4x3 --shape-b 5x3", "shape-b"},
        {"expand --shape 3x4 --to 5x4", "cannot broadcast"},
        {"bmatmul --a-shape 2,4,8 --b-shape 3,8,4", "do not broadcast"},
        // unsupported dtype
        {"add --n 64 --dtype fp64", "'dtype'"},
        {"relu --n 64 --dtype int64", "'dtype'"},
        {"gelu --n 64 --dtype int32", "'dtype'"},
        {"cast --n 64 --to fp64", "'to'"},
        {"softmax --rows 4 --cols 8 --dtype fp64", "'dtype'"},
        {"layernorm --rows 4 --cols 8 --dtype int8", "'dtype'"},
        {"maxpool --n 1 --c 1 --h 8 --w 8 --kernel 3 --dtype int64", "'dtype'"},
        {"gemm --m 4 --n 4 --k 4 --dtype int8", "'dtype'"},
        {"conv2d --n 1 --c 2 --h 8 --w 8 --k 2 --r 3 --s 3 --dtype fp64", "'dtype'"},
        {"attention --seq 64 --dtype fp32", "'dtype'"},
        // axis out of range
        {"softmax --shape 4,8 --axis 2", "'axis'"},
        {"softmax --shape 4,8 --axis -3", "'axis'"},
        {"argmax --shape 4,8 --axis 5", "'axis'"},
        {"reduce --shape 4,8 --axes 3", "'axes'"},
        {"gather --shape 4x8 --indices 3 --axis 4", "'axis'"},
        {"split --shape 6x8 --axis 2", "'axis'"},
        {"concat --shapes 4x3,4x5 --axis 3", "'axis'"},
        {"slice --shape 8x8 --starts 0 --ends 4 --axes 5", "axes"},
        {"transpose --shape 4x3 --perm 0,2", "'perm'"},
    };
    const std::string dir = temp_dir("op_bad_args");
    for (const Bad& c : bad) {
        INFO(c.args);
        const CliResult r = run_cli(std::string("kernel ") + c.args + " --config " + config("tiny") + " --trace off --out " +
                                    dir + "/x");
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK(r.output.find(c.names) != std::string::npos);
    }
}
