// `sfumato sweep` through the CLI (local backend) on the tiny preset: the gathered table
// (sweep.h5 and sweep.csv) holds, for every point, the figures of running that point alone;
// a rerun runs nothing; a point failing at run time is listed with its error while the others
// complete; a bad spec exits 2 before any point runs.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sweep/gather.h"
#include "tests/support.h"
#include "traces/hdf5_table.h"

using namespace sfumato;
using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

std::string write_spec(const std::string& dir, const std::string& body) {
    const std::string path = dir + "/spec.ini";
    std::ofstream(path) << body;
    return path;
}

// RFC 4180 CSV (quoted cells may hold commas, quotes and newlines) as rows of cells.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    std::vector<std::vector<std::string>> rows(1);
    std::string cur;
    bool q = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (q && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
            cur += '"';
            ++i;
        } else if (c == '"') {
            q = !q;
        } else if (c == ',' && !q) {
            rows.back().push_back(cur);
            cur.clear();
        } else if (c == '\n' && !q) {
            rows.back().push_back(cur);
            cur.clear();
            rows.emplace_back();
        } else {
            cur += c;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

std::string cell(const TableColumn& c, size_t r) { return c.csv_cell(r); }

// Shell words of a point's command line (args of point.json), quoted for run_cli.
std::string shell_args(const nlohmann::json& args) {
    std::string s;
    for (const auto& a : args) s += " '" + a.get<std::string>() + "'";
    return s;
}

}  // namespace

TEST_CASE("sweep cli: the -j 2 table equals each point run alone, a rerun runs nothing new, failing points are listed") {
    const std::string dir = temp_dir("sweep_cli");
    // 3 x 2 grid over a config key and an argument, plus a zipped pair: 12 points; the unified
    // buffer of 1 KiB is too small for add's tiling, so those points fail at run time.
    const std::string spec = write_spec(dir,
                                        "[sweep]\n"
                                        "command = kernel add --n 4096 --mode timing\n"
                                        "config = " + config("tiny") + "\n"
                                        "[grid]\n"
                                        "chip.hbm.data_rate_mtps = 1600, 2400, 3200\n"
                                        "arg.n = 4096, 16384\n"
                                        "[zip]\n"
                                        "chip.aicore.ub.size = 1024, 32768\n"
                                        "arg.block_dim = 1, 2\n");
    const std::string out = dir + "/out";
    const auto r = run_cli("sweep " + spec + " -j 2 --out " + out);
    INFO(r.output);
    CHECK(r.code == 1);  // some points failed
    CHECK_THAT(r.output, Catch::Contains("12 points, 6 done, 6 not done (12 run now, 0 complete from before)"));
    CHECK_THAT(r.output, Catch::Contains("UB of 1024 bytes is too small"));

    const Table t = read_table_h5(out + "/sweep.h5", "/sweep");
    REQUIRE(t.rows() == 12);
    const auto csv = read_csv(out + "/sweep.csv");
    REQUIRE(csv.size() == 13);
    REQUIRE(csv[0].size() == t.columns.size());
    for (size_t i = 0; i < t.columns.size(); ++i) CHECK(csv[0][i] == t.columns[i].name);
    const TableColumn* status = t.find("status");
    const TableColumn* error = t.find("error");
    const TableColumn* exit_code = t.find("exit_code");
    const TableColumn* ub = t.find("chip.aicore.ub.size");
    REQUIRE(status);
    REQUIRE(error);
    REQUIRE(ub);
    REQUIRE(t.find("total_cycles"));
    REQUIRE(t.find("add.cycles"));
    const std::vector<std::string> figures = sweep::figure_columns(t);
    CHECK(figures.front() == "total_cycles");

    size_t compared = 0;
    std::set<int64_t> cycles_seen;  // distinct total cycles over the points
    for (size_t r = 0; r < t.rows(); ++r) {
        const std::string name = t.find("name")->texts[r];
        INFO("point " << name);
        // The CSV row holds the h5 row's cells.
        for (size_t i = 0; i < t.columns.size(); ++i)
            CHECK(csv[r + 1][i] == (t.columns[i].kind == TableColumn::Kind::Text ? t.columns[i].texts[r] : cell(t.columns[i], r)));
        if (ub->texts[r] == "1024") {
            CHECK(status->texts[r] == "failed");
            CHECK(exit_code->ints[r] == 2);
            CHECK_THAT(error->texts[r], Catch::Contains("UB of 1024 bytes is too small"));
            continue;
        }
        REQUIRE(status->texts[r] == "done");
        // Run the point alone, as the user would, and compare every figure.
        const nlohmann::json pj = read_json(out + "/points/" + name + "/point.json");
        const std::string alone = dir + "/alone_" + name;
        const auto a = run_cli(shell_args(pj["args"]) + " --out " + alone);
        REQUIRE(a.code == 0);
        const auto figs = sweep::summary_figures(read_json(alone + "/summary.json"));
        REQUIRE(figs.size() == figures.size());
        for (const auto& [k, v] : figs) {
            const TableColumn* c = t.find(k);
            REQUIRE(c);
            if (c->kind == TableColumn::Kind::Int) CHECK(c->ints[r] == v.get<int64_t>());
            else if (c->kind == TableColumn::Kind::Float) CHECK(c->floats[r] == v.get<double>());
            else CHECK(c->texts[r] == v.get<std::string>());
        }
        // Columns with a failed point's empty cells are floating point (NaN there).
        CHECK(t.find("total_cycles")->kind == TableColumn::Kind::Float);
        cycles_seen.insert(static_cast<int64_t>(t.find("total_cycles")->floats[r]));
        ++compared;
    }
    CHECK(compared == 6);
    CHECK(cycles_seen.size() > 1);  // the parameters reach the points

    // Rerun: the complete points are skipped and nothing new runs (status files untouched);
    // the failed points run again (and fail again).
    const auto mtime = fs::last_write_time(out + "/points/p0001/status.json");
    const auto again = run_cli("sweep " + spec + " -j 2 --out " + out);
    INFO(again.output);
    CHECK(again.code == 1);
    CHECK_THAT(again.output, Catch::Contains("6 run now, 6 complete from before"));
    CHECK(fs::last_write_time(out + "/points/p0001/status.json") == mtime);
    const Table t2 = read_table_h5(out + "/sweep.h5", "/sweep");
    for (const auto& k : figures) {
        const TableColumn* c1 = t.find(k);
        const TableColumn* c2 = t2.find(k);
        REQUIRE(c2);
        for (size_t r = 0; r < t.rows(); ++r) CHECK(c1->csv_cell(r) == c2->csv_cell(r));
    }
}

TEST_CASE("sweep cli: a spec of complete points runs nothing on rerun") {
    const std::string dir = temp_dir("sweep_cli_rerun");
    const std::string spec = write_spec(dir, "[sweep]\ncommand = kernel add --n 2048 --mode timing\nconfig = " + config("tiny") +
                                                 "\n[grid]\narg.block_dim = 1, 2\n");
    const auto r1 = run_cli("sweep " + spec + " --out " + dir + "/o -j 2");
    INFO(r1.output);
    REQUIRE(r1.code == 0);
    const auto r2 = run_cli("sweep " + spec + " --out " + dir + "/o -j 2");
    INFO(r2.output);
    CHECK(r2.code == 0);
    CHECK_THAT(r2.output, Catch::Contains("all 2 points are complete; nothing to run"));
    CHECK_THAT(r2.output, Catch::Contains("0 run now, 2 complete from before"));
    // A changed spec (another value) runs only the new point.
    std::ofstream(spec) << "[sweep]\ncommand = kernel add --n 2048 --mode timing\nconfig = " + config("tiny") +
                               "\n[grid]\narg.block_dim = 1, 2, 4\n";
    const auto r3 = run_cli("sweep " + spec + " --out " + dir + "/o -j 2");
    INFO(r3.output);
    CHECK(r3.code == 0);
    CHECK_THAT(r3.output, Catch::Contains("1 run now, 2 complete from before"));
}

TEST_CASE("sweep cli: a bad spec exits 2 before any point runs") {
    const std::string dir = temp_dir("sweep_cli_bad");
    const std::string head = "[sweep]\ncommand = kernel add --n 2048 --mode timing\nconfig = " + config("tiny") + "\n";
    struct Case {
        std::string body, message;
    };
    const std::vector<Case> cases = {
        {"[grid]\nchip.hbm.data_rate_mtps = 1600\nchip.aicore.ub.sizee = 1024, 2048\n", "config key 'chip.aicore.ub.sizee': unknown key"},
        {"[grid]\narg.nn = 1, 2\n", "unrecognised option '--nn'"},
        {"[grid]\nchip.hbm.data_rate_mtps = 1, 1600\n", "chip.hbm.data_rate_mtps"},  // out of range
        {"[grid]\narg.n = 8..4\n", "empty range"},
        {"[zip]\narg.n = 1, 2\narg.block_dim = 1\n", "equal lengths"},
    };
    for (const auto& c : cases) {
        const std::string spec = write_spec(dir, head + c.body);
        fs::remove_all(dir + "/o");
        const auto r = run_cli("sweep " + spec + " --out " + dir + "/o");
        INFO(c.body << r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains(c.message));
        CHECK_FALSE(fs::exists(dir + "/o"));  // nothing ran, nothing was written
    }
    const auto nocmd = run_cli("sweep " + write_spec(dir, "[sweep]\ncommand = params\n") + " --out " + dir + "/o");
    CHECK(nocmd.code == 2);
    CHECK_THAT(nocmd.output, Catch::Contains("cannot be swept"));
    CHECK(run_cli("sweep " + dir + "/missing.ini --out " + dir + "/o").code == 2);
    CHECK(run_cli("sweep " + write_spec(dir, head) + " --out " + dir + "/o --backend pbs").code == 2);
}

TEST_CASE("sweep cli: --list prints every point's command line") {
    const std::string dir = temp_dir("sweep_cli_list");
    const std::string spec = write_spec(dir, "[sweep]\ncommand = kernel add --n 2048\n[grid]\narg.n = 64..256*2\n");
    const auto r = run_cli("sweep " + spec + " --list");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("p0000  sfumato kernel add --n 64\n"));
    CHECK_THAT(r.output, Catch::Contains("p0002  sfumato kernel add --n 256\n"));
}

TEST_CASE("sweep cli: a point over the spec's time limit is killed and recorded, an interrupted sweep leaves its running point for the rerun") {
    const std::string dir = temp_dir("sweep_cli_timeout");
    // On the tiny preset a 65535 x 2048 x 2048 matmul takes far more than 5 s of wall time, a 64-row
    // one a fraction of a second; the limit is 5 s.
    const std::string slow = "kernel matmul --m 65535 --n 2048 --k 2048 --mode timing --trace off";
    const std::string spec = write_spec(dir, "[sweep]\ncommand = " + slow + "\nconfig = " + config("tiny") +
                                                 "\ntimeout = 5\n[grid]\narg.m = 65535, 64\n");
    const auto r = run_cli("sweep " + spec + " -j 2 --out " + dir + "/o");
    INFO(r.output);
    CHECK(r.code == 1);
    const Table t = read_table_h5(dir + "/o/sweep.h5", "/sweep");
    REQUIRE(t.rows() == 2);
    CHECK(t.find("status")->texts[0] == "timeout");
    CHECK_THAT(t.find("error")->texts[0], Catch::Contains("killed after the time limit"));
    CHECK(t.find("status")->texts[1] == "done");

    // SIGINT while the slow point runs: exit 130, the point is left for the rerun (not recorded).
    const std::string spec2 = write_spec(dir, "[sweep]\ncommand = " + slow + "\nconfig = " + config("tiny") +
                                                  "\n[grid]\narg.m = 64, 65535\n");
    const std::string out2 = dir + "/o2";
    const std::string sh = "cd " + dir + " && (" + SFUMATO_BINARY + " sweep " + spec2 + " -j 1 --out " + out2 +
                           " > int.txt 2>&1 & pid=$!; for i in $(seq 300); do [ -e " + out2 +
                           "/points/p0000/status.json ] && break; sleep 0.1; done; sleep 0.3; kill -INT $pid; wait $pid;"
                           " echo rc=$? >> int.txt)";
    REQUIRE(std::system(sh.c_str()) == 0);
    std::ifstream f(dir + "/int.txt");
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    INFO(text);
    CHECK_THAT(text, Catch::Contains("rc=130"));
    CHECK_THAT(text, Catch::Contains("interrupted; rerun the same command to continue"));
    CHECK(fs::exists(out2 + "/points/p0000/status.json"));
    CHECK_FALSE(fs::exists(out2 + "/points/p0001/status.json"));
    const Table t2 = read_table_h5(out2 + "/sweep.h5", "/sweep");
    CHECK(t2.find("status")->texts[0] == "done");
    CHECK(t2.find("status")->texts[1] == "not run");
}
