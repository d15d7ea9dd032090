// The sweep's result table (traces/table.h, traces/hdf5_table.h), the figures taken from a
// summary.json (sweep/gather.h), and the Slurm backend's text handling (sweep/slurm_backend.h:
// array ranges, the sbatch script, squeue and scontrol output).
#include <H5Cpp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>

#include "sim/error.h"
#include "sweep/gather.h"
#include "sweep/slurm_backend.h"
#include "traces/hdf5_table.h"
#include "traces/table.h"

using namespace sfumato;
using namespace sfumato::sweep;

namespace {

Table sample() {
    Table t;
    t.columns.push_back({"point", TableColumn::Kind::Int, {0, 1, 2}, {}, {}, ""});
    t.columns.push_back({"cycles", TableColumn::Kind::Float, {}, {0.1, std::numeric_limits<double>::quiet_NaN(), 1e300}, {}, "cycle"});
    t.columns.push_back({"error", TableColumn::Kind::Text, {}, {}, {"", "a,b \"q\"\nline", "naïve"}, ""});
    t.attrs["params"] = "cycles";
    t.attrs["empty"] = "";
    return t;
}

}  // namespace

TEST_CASE("table: CSV quotes what needs it, NaN is an empty cell, doubles read back exactly") {
    const std::string csv = table_csv(sample());
    CHECK(csv == "point,cycles,error\n0,0.1,\n1,,\"a,b \"\"q\"\"\nline\"\n2,1e+300,naïve\n");
    for (double v : {0.1, 1.0 / 3.0, 123456789.125, 5e-324})
        CHECK(std::strtod(shortest_double(v).c_str(), nullptr) == v);
    Table bad = sample();
    bad.columns[1].floats.pop_back();
    CHECK_THROWS(table_csv(bad));
}

TEST_CASE("table: HDF5 compound dataset round trip (types, NaN, UTF-8, attributes)") {
    const auto dir = std::filesystem::temp_directory_path() / ("sfumato_table_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "t.h5").string();
    const Table t = sample();
    write_table_h5(path, "/sweep", t);
    const Table r = read_table_h5(path, "/sweep");
    REQUIRE(r.columns.size() == 3);
    CHECK(r.rows() == 3);
    CHECK(r.columns[0].kind == TableColumn::Kind::Int);
    CHECK(r.columns[0].ints == t.columns[0].ints);
    CHECK(r.columns[1].kind == TableColumn::Kind::Float);
    CHECK(r.columns[1].floats[0] == 0.1);
    CHECK(std::isnan(r.columns[1].floats[1]));
    CHECK(r.columns[1].floats[2] == 1e300);
    CHECK(r.columns[2].texts == t.columns[2].texts);
    CHECK(r.attrs.at("params") == "cycles");
    CHECK(r.attrs.at("empty").empty());
    CHECK_THROWS_AS(read_table_h5(path, "/nope"), InputError);
    CHECK_THROWS_AS(read_table_h5((dir / "missing.h5").string(), "/sweep"), InputError);
    std::filesystem::remove_all(dir);
}

TEST_CASE("table: as a group of column datasets with units (the layout of stats.h5's tables)") {
    const auto dir = std::filesystem::temp_directory_path() / ("sfumato_tablecols_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "c.h5").string();
    Table t = sample();
    t.attrs["description"] = "three rows";
    {
        H5::H5File f(path, H5F_ACC_TRUNC);
        H5::Group g = f.createGroup("/tbl");
        write_table_columns(g, t);
    }
    H5::H5File f(path, H5F_ACC_RDONLY);
    H5::DataSet ints = f.openDataSet("/tbl/point");
    CHECK(ints.getTypeClass() == H5T_INTEGER);
    std::vector<int64_t> iv(3);
    ints.read(iv.data(), H5::PredType::NATIVE_INT64);
    CHECK(iv == t.columns[0].ints);
    H5::DataSet fl = f.openDataSet("/tbl/cycles");
    std::vector<double> fv(3);
    fl.read(fv.data(), H5::PredType::NATIVE_DOUBLE);
    CHECK(fv[2] == 1e300);
    std::string unit;
    fl.openAttribute("unit").read(fl.openAttribute("unit").getStrType(), unit);
    CHECK(unit == "cycle");
    CHECK(f.openDataSet("/tbl/error").getTypeClass() == H5T_STRING);
    std::string desc;
    H5::Group g = f.openGroup("/tbl");
    g.openAttribute("description").read(g.openAttribute("description").getStrType(), desc);
    CHECK(desc == "three rows");
    f.close();
    std::filesystem::remove_all(dir);
}

TEST_CASE("sweep gather: the figures of a summary (headline first, per op, host figures left out)") {
    const nlohmann::json s = {{"version", "x"},
                              {"wall_seconds", 3.5},
                              {"total_cycles", 1000},
                              {"total_time_us", 1.0},
                              {"check", {{"passed", true}, {"max_abs_err", 0.5}}},
                              {"graph", {{"compile_s", 0.01}, {"kernels", 5}}},
                              {"ops",
                               {{{"name", "add"}, {"cycles", 400}, {"time_us", 0.4}, {"flops", 800}, {"bytes", 1200},
                                 {"bound", "memory"}, {"roofline_fraction", 0.5}, {"pipe_util", {{"vector", 0.25}}}},
                                {{"name", "add"}, {"cycles", 10}, {"time_us", 0.0}}}}};
    const auto f = summary_figures(s);
    std::map<std::string, nlohmann::json> m(f.begin(), f.end());
    REQUIRE(f.size() >= 2);
    CHECK(f[0].first == "total_cycles");
    CHECK(f[1].first == "total_time_us");
    CHECK(m.count("wall_seconds") == 0);
    CHECK(m.count("version") == 0);
    CHECK(m.at("check.passed") == 1);
    CHECK(m.at("graph.kernels") == 5);
    CHECK(m.count("graph.compile_s") == 0);  // a host timing
    CHECK(m.at("add.cycles") == 400);
    CHECK(m.at("add.tflops").get<double>() == Approx(800 / (0.4 * 1e6)));
    CHECK(m.at("add.gbps").get<double>() == Approx(1200 / (0.4 * 1e3)));
    CHECK(m.at("add.bound") == "memory");
    CHECK(m.at("add.util.vector") == 0.25);
    CHECK(m.at("add#2.cycles") == 10);
    CHECK(m.count("add#2.tflops") == 0);  // no time, no rate
}

TEST_CASE("sweep slurm: array ranges, the job script and the queue's text") {
    CHECK(array_ranges({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
    CHECK(array_ranges({3}) == "3");
    CHECK(array_ranges({}).empty());

    Spec spec = parse_spec("[sweep]\ncommand = kernel add --n 64\n[grid]\narg.n = 1..12\n[slurm]\nmax_parallel = 2\ntime = 5\n", "s.ini");
    const std::string script = sbatch_script(spec, "/opt/sf mato", "/o", "/w", {1, 2, 3, 11}, 12, "job");
    CHECK_THAT(script, Catch::Contains("#SBATCH --array=1-3,11%2\n"));
    CHECK_THAT(script, Catch::Contains("#SBATCH --output=/o/slurm/%A_%a.out\n"));
    CHECK_THAT(script, Catch::Contains("#SBATCH --time=5\n"));
    CHECK_THAT(script, Catch::Contains("exec '/opt/sf mato' sweep --run-point \"/o/points/$(printf 'p%04d' \"$SLURM_ARRAY_TASK_ID\")\""));
    CHECK_THROWS_AS(sbatch_script(spec, "/b", "/o dir", "/w", {0}, 12, "job"), InputError);

    const QueueCount q = parse_squeue("12_3 RUNNING\n12_[4-5] PENDING\n12_1 COMPLETING\n12_2 SUSPENDED\n");
    CHECK(q.running == 2);
    CHECK(q.pending == 1);
    CHECK(q.other == 1);
    CHECK(parse_squeue("").total() == 0);

    const auto tasks = parse_scontrol_tasks(
        "JobId=13 ArrayJobId=12 ArrayTaskId=2 JobName=x JobState=CANCELLED Reason=None ExitCode=0:15\n"
        "JobId=12 ArrayJobId=12 ArrayTaskId=4-6%2 JobState=PENDING Reason=JobArrayTaskLimit ExitCode=0:0\n"
        "JobId=99 JobName=not-an-array JobState=RUNNING\n");
    REQUIRE(tasks.size() == 4);
    CHECK(tasks[0].index == 2);
    CHECK(tasks[0].state == "CANCELLED");
    CHECK(tasks[0].exit_code == "0:15");
    CHECK(tasks[1].index == 4);
    CHECK(tasks[3].index == 6);
    CHECK(tasks[3].reason == "JobArrayTaskLimit");
}
