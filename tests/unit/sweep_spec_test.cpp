// The sweep spec reader and point expansion (sweep/spec.h): value lists and ranges, grid and
// zip order, how a point's command line is built, and every malformed spec rejected with an
// InputError naming the file and line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "sweep/spec.h"

using namespace sfumato;
using namespace sfumato::sweep;

namespace {

std::string cfg() { return std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini"; }

Spec parse(const std::string& body) { return parse_spec("[sweep]\ncommand = kernel add --n 64\n" + body, "s.ini"); }

std::string error_of(const std::string& text) {
    try {
        parse_spec(text, "s.ini");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("sweep spec: value lists, quotes and ranges") {
    CHECK(parse_values("1, 2 ,3", "w") == std::vector<std::string>{"1", "2", "3"});
    CHECK(parse_values("\"a,b\", c", "w") == std::vector<std::string>{"a,b", "c"});
    CHECK(parse_values("64..256*2", "w") == std::vector<std::string>{"64", "128", "256"});
    CHECK(parse_values("1..7+3", "w") == std::vector<std::string>{"1", "4", "7"});
    CHECK(parse_values("5..5, 9", "w") == std::vector<std::string>{"5", "9"});
    CHECK(parse_values("1..3", "w") == std::vector<std::string>{"1", "2", "3"});
    CHECK_THROWS_WITH(parse_values("4..2", "w"), Catch::Contains("empty range"));
    CHECK_THROWS_WITH(parse_values("", "w"), Catch::Contains("empty list"));
    CHECK_THROWS_WITH(parse_values("1,,2", "w"), Catch::Contains("empty value"));
    CHECK_THROWS_WITH(parse_values("1..4+0", "w"), Catch::Contains("positive step"));
    CHECK_THROWS_WITH(parse_values("1..4*1", "w"), Catch::Contains("factor"));
    CHECK_THROWS_WITH(parse_values("1..b", "w"), Catch::Contains("integers"));
    CHECK_THROWS_WITH(parse_values("-2..x", "w"), Catch::Contains("integers"));
    CHECK(parse_values("../a.json, b..c", "w") == std::vector<std::string>{"../a.json", "b..c"});  // not ranges
    CHECK(parse_values("1..3", "w", false) == std::vector<std::string>{"1..3"});
    CHECK_THROWS_WITH(parse_values("\"x", "w"), Catch::Contains("unterminated"));
    CHECK(split_command("kernel  add --name 'a b' \"c\"", "w") == std::vector<std::string>{"kernel", "add", "--name", "a b", "c"});
}

TEST_CASE("sweep spec: grid is row major (last key fastest), zip lists move together") {
    const Spec s = parse("[grid]\nchip.a = 1, 2\narg.m = 10, 20, 30\n[zip]\nchip.b = x, y\narg.block_dim = 1, 2\n");
    REQUIRE(s.num_points() == 2 * 3 * 2);
    CHECK(s.dims() == std::vector<int>{0, 1, 2, 2});
    const auto pts = expand(s);
    REQUIRE(pts.size() == 12);
    // point 7 = (a index 1, m index 0, zip index 1)
    const Point& p = pts[7];
    REQUIRE(p.params.size() == 4);
    CHECK(p.params[0] == std::pair<std::string, std::string>{"chip.a", "2"});
    CHECK(p.params[1] == std::pair<std::string, std::string>{"arg.m", "10"});
    CHECK(p.params[2] == std::pair<std::string, std::string>{"chip.b", "y"});
    CHECK(p.params[3] == std::pair<std::string, std::string>{"arg.block_dim", "2"});
    // The command's words, arguments appended (underscores dashed), then configs, then --set.
    CHECK(p.args == std::vector<std::string>{"kernel", "add", "--n", "64", "--m", "10", "--block-dim", "2", "--set", "chip.a=2",
                                             "--set", "chip.b=y"});
    for (size_t i = 0; i < pts.size(); ++i) CHECK(pts[i].index == i);
}

TEST_CASE("sweep spec: an argument already on the command line is replaced, not repeated") {
    const Spec s = parse_spec("[sweep]\ncommand = kernel matmul --m 8 --n=8 --k 8\n[grid]\narg.m = 16\narg.n = 32\n", "s.ini");
    const Point p = make_point(s, 0);
    CHECK(p.args == std::vector<std::string>{"kernel", "matmul", "--m", "16", "--n=32", "--k", "8"});
}

TEST_CASE("sweep spec: config paths relative to the spec (with ..) are files, not ranges") {
    const std::string dir = std::string(SFUMATO_SOURCE_DIR) + "/examples/sweep";
    const Spec s = load_spec(dir + "/matmul_910b.ini");
    REQUIRE(s.configs.size() == 1);
    CHECK(s.configs[0] == std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini");
    CHECK(s.num_points() == 12);
}

TEST_CASE("sweep spec: configs resolve to absolute paths, a spec without parameters is one point") {
    const Spec s = parse_spec("[sweep]\ncommand = kernel add --n 64 ; comment\nconfig = " + cfg() + "\n", "s.ini");
    REQUIRE(s.configs.size() == 1);
    CHECK(std::filesystem::path(s.configs[0]).is_absolute());
    CHECK(s.num_points() == 1);
    const Point p = make_point(s, 0);
    CHECK(p.args == std::vector<std::string>{"kernel", "add", "--n", "64", "--config", s.configs[0]});
}

TEST_CASE("sweep spec: malformed specs name file, line and culprit") {
    const std::string head = "[sweep]\ncommand = kernel add --n 64\n";
    CHECK_THROWS_WITH(parse_spec(head + "[grid]\nchip.a = 3..1\n", "s.ini"), Catch::Contains("s.ini:4") && Catch::Contains("empty range"));
    CHECK_THAT(error_of(head + "[zip]\nchip.a = 1, 2\nchip.b = 1, 2, 3\n"),
               Catch::Contains("s.ini:5") && Catch::Contains("equal lengths") && Catch::Contains("'chip.b' has 3"));
    CHECK_THAT(error_of(head + "[grid]\nchip.a = 1\n[zip]\nchip.a = 2\n"), Catch::Contains("varied twice"));
    CHECK_THAT(error_of(head + "[grids]\n"), Catch::Contains("unknown section [grids]"));
    CHECK_THAT(error_of(head + "[sweep]\n"), Catch::Contains("appears twice"));
    CHECK_THAT(error_of(head + "comand = x\n"), Catch::Contains("unknown key 'comand'"));
    CHECK_THAT(error_of("[grid]\nchip.a = 1\n"), Catch::Contains("has no command"));
    CHECK_THAT(error_of("chip.a = 1\n"), Catch::Contains("outside a section"));
    CHECK_THAT(error_of("[sweep]\ncommand = kernel add --out x\n"), Catch::Contains("--out"));
    CHECK_THAT(error_of(head + "[grid]\narg.out = a, b\n"), Catch::Contains("arg.out"));
    CHECK_THAT(error_of(head + "[grid]\narg.set = a\n"), Catch::Contains("as config keys"));
    CHECK_THAT(error_of(head + "[grid]\narg. = a\n"), Catch::Contains("argument name"));
    CHECK_THAT(error_of(head + "config = no/such.ini\n"), Catch::Contains("s.ini:3") && Catch::Contains("no/such.ini"));
    CHECK_THAT(error_of(head + "timeout = -1\n"), Catch::Contains("timeout"));
    CHECK_THAT(error_of(head + "[slurm]\ncpus_per_task = 0\n"), Catch::Contains("cpus_per_task"));
    CHECK_THAT(error_of(head + "[slurm]\npartition = a$b\n"), Catch::Contains("not allowed"));
    CHECK_THAT(error_of(head + "[slurm]\nnodes = 2\n"), Catch::Contains("unknown key 'nodes' in [slurm]"));
    CHECK_THAT(error_of(head + "[grid]\nchip.a\n"), Catch::Contains("expected 'key = value'"));
    CHECK_THAT(error_of(head + "[grid]\nchip.a = 1..200000\n"), Catch::Contains("more than 100000"));
    CHECK_THAT(error_of(head + "[grid]\na = 1..1000\nb = 1..1000\nc = 1..2\n"), Catch::Contains("more than 1000000 points"));
    CHECK_THROWS_AS(load_spec("/no/such/spec.ini"), InputError);
}

TEST_CASE("sweep spec: [slurm] resources") {
    const Spec s = parse("[slurm]\npartition = debug\ntime = 0:10:00\nmem = 2G\ncpus_per_task = 2\nmax_parallel = 4\n"
                         "extra = --constraint=x --exclusive\npoll_seconds = 0.5\n");
    CHECK(s.slurm.partition == "debug");
    CHECK(s.slurm.time == "0:10:00");
    CHECK(s.slurm.mem == "2G");
    CHECK(s.slurm.cpus_per_task == 2);
    CHECK(s.slurm.max_parallel == 4);
    CHECK(s.slurm.extra == std::vector<std::string>{"--constraint=x", "--exclusive"});
    CHECK(s.slurm.poll_seconds == 0.5);
}

TEST_CASE("sweep spec: point directory names sort in point order") {
    CHECK(point_name(7, 12) == "p0007");
    CHECK(point_name(9999, 10000) == "p9999");
    CHECK(point_name(12, 10001) == "p00012");
    CHECK(point_name(10000, 10001) == "p10000");
}
