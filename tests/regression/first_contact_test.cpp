// Defaults a newcomer meets first: a hand-written kernel runs on every core of its kind, one
// shape syntax is accepted everywhere (the older spellings too), and the default trace keeps
// instruction detail only up to its event budget, says so, and never changes a cycle. Expected
// block counts come from the preset's parameters; the trace bound from the budget given.
#include <catch2/catch.hpp>
#include <map>

#include "models/chip/chip_params.h"
#include "runtime/ops/host_memory.h"
#include "sim/config.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

nlohmann::json run_op(const std::string& dir, const std::string& cmd) {
    const CliResult r = run_cli(cmd + " --out " + dir);
    INFO(cmd << "\n" << r.output);
    REQUIRE(r.code == 0);
    return read_json(dir + "/summary.json");
}

uint64_t cycles_of(const nlohmann::json& s) { return s["ops"][0]["cycles"].get<uint64_t>(); }

// The tiny preset's cores and pipe queue depth, from its parameters.
struct TinyCores {
    uint32_t aic = 0, aiv = 0, queue_depth = 0;
};
TinyCores tiny() {
    Config c;
    c.load_ini(config("tiny"));
    const ChipParams p(c);
    return {p.cube_cores.get(), p.cube_cores.get() * p.aiv_per_aic.get(), p.core.queue_depth.get()};
}

size_t trace_events(const std::string& dir) {
    const auto t = read_json(dir + "/trace.json");
    return (t.is_object() ? t["traceEvents"] : t).size();
}

// Pipe tracks of the cores (chip.aicN / chip.aivN / chip.coreN processes) in a trace.
size_t pipe_tracks(const std::string& dir) {
    const auto t = read_json(dir + "/trace.json");
    const auto& ev = t.is_object() ? t["traceEvents"] : t;
    std::map<int, std::string> proc;
    for (const auto& e : ev)
        if (e["ph"] == "M" && e["name"] == "process_name") proc[e["pid"].get<int>()] = e["args"]["name"];
    size_t n = 0;
    for (const auto& e : ev)
        if (e["ph"] == "M" && e["name"] == "thread_name" && proc[e["pid"].get<int>()].rfind("chip.", 0) == 0) ++n;
    return n;
}

// Instruction events the trace can still receive once the budget is reached: an instruction
// already queued in a pipe when the level drops still reports its slice and flag arrow, at most
// queue_depth + 1 per pipe.
size_t in_flight_bound(const std::string& dir) {
    return pipe_tracks(dir) * (tiny().queue_depth + 1) * 2;
}

}  // namespace

TEST_CASE("defaults: kernel add --n and kernel empty run one block per core of their kind") {
    const TinyCores t = tiny();
    const uint32_t aiv = t.aiv, aic = t.aic;
    const std::string d = temp_dir("first_blocks");
    const std::string add = "kernel add --n 262144 --config " + config("tiny") + " --mode timing --trace off";
    const auto dflt = run_op(d + "/add", add);
    CHECK(dflt["ops"][0]["block_dim"] == aiv);
    // The same run as asking for every vector core, and faster than one block (the old default).
    CHECK(cycles_of(dflt) == cycles_of(run_op(d + "/all", add + " --block-dim " + std::to_string(aiv))));
    CHECK(cycles_of(dflt) < cycles_of(run_op(d + "/one", add + " --block-dim 1")));

    const std::string empty = "kernel empty --config " + config("tiny") + " --mode timing --trace off";
    CHECK(run_op(d + "/mix", empty)["ops"][0]["block_dim"] == aic);
    CHECK(run_op(d + "/vec", empty + " --kind vector")["ops"][0]["block_dim"] == aiv);
    CHECK(run_op(d + "/cube", empty + " --kind cube")["ops"][0]["block_dim"] == aic);
}

TEST_CASE("shapes: dims joined by x everywhere, the comma form and old option names still accepted") {
    const std::string d = temp_dir("first_shapes");
    const std::string tail = " --config " + config("tiny") + " --mode timing --trace off";
    const auto mm_new = run_op(d + "/mm_new", "kernel bmatmul --shape-a 3x20x30 --shape-b 30x40" + tail);
    const auto mm_old = run_op(d + "/mm_old", "kernel bmatmul --a-shape 3,20,30 --b-shape 30,40" + tail);
    CHECK(cycles_of(mm_new) == cycles_of(mm_old));
    CHECK(mm_new["ops"][0]["flops"] == mm_old["ops"][0]["flops"]);
    CHECK(cycles_of(run_op(d + "/sm_new", "kernel softmax --shape 4x6x64 --axis 1" + tail)) ==
          cycles_of(run_op(d + "/sm_old", "kernel softmax --shape 4,6,64 --axis 1" + tail)));
    CHECK(cycles_of(run_op(d + "/add_new", "kernel add --shape-a 64x32 --shape-b 1x32" + tail)) ==
          cycles_of(run_op(d + "/add_old", "kernel add --shape-a 64,32 --shape-b 1,32" + tail)));
    // Both spellings of one operand at once is an error naming them; so is a malformed shape.
    CliResult r = run_cli("kernel bmatmul --shape-a 3x20x30 --a-shape 3,20,30 --shape-b 30x40" + tail);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("--shape-a") && Catch::Contains("--a-shape"));
    r = run_cli("kernel softmax --shape 4xx64" + tail);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("4xx64"));
}

TEST_CASE("trace: the default keeps instruction detail up to its budget, says so, and changes no cycle") {
    const std::string d = temp_dir("first_trace");
    const std::string add = "kernel add --n 1048576 --tile 256 --config " + config("tiny") + " --mode timing";
    const size_t budget = 5000;
    const CliResult r = run_cli(add + " --trace-budget " + std::to_string(budget) + " --out " + d + "/auto");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("trace: instruction detail for the first " + std::to_string(budget) + " events") &&
                             Catch::Contains("--trace instr"));
    const auto full = run_op(d + "/instr", add + " --trace instr");
    const auto off = run_op(d + "/off", add + " --trace off");
    const auto bounded = read_json(d + "/auto/summary.json");
    CHECK(cycles_of(bounded) == cycles_of(full));
    CHECK(cycles_of(bounded) == cycles_of(off));
    // Past the budget only ops and tasks are added: at most what a --trace task run holds.
    run_op(d + "/task", add + " --trace task");
    const size_t n_auto = trace_events(d + "/auto"), n_full = trace_events(d + "/instr"), n_task = trace_events(d + "/task");
    INFO("auto " << n_auto << " events, instr " << n_full << ", task " << n_task);
    CHECK(n_auto >= budget);
    CHECK(n_auto <= budget + n_task + in_flight_bound(d + "/auto"));
    CHECK(n_full > 2 * n_auto);
    // Under the budget the default is the full instruction trace: no line, the same events.
    const CliResult small = run_cli("kernel add --n 4096 --config " + config("tiny") + " --mode timing --out " + d + "/small");
    REQUIRE(small.code == 0);
    CHECK_THAT(small.output, !Catch::Contains("trace: instruction detail"));
    run_op(d + "/small_instr", "kernel add --n 4096 --config " + config("tiny") + " --mode timing --trace instr");
    CHECK(trace_events(d + "/small") == trace_events(d + "/small_instr"));
}

TEST_CASE("trace: a training step's default trace is bounded and says so") {
    const std::string d = temp_dir("first_train");
    const std::string step = "train-step \"zoo:mlp?in=16&hidden=32&layers=2&classes=8\" --system " + config("system-tiny") +
                             " --set system.chips_per_server=2 --batch 4 --precision fp32 --mode timing";
    // A budget of half what the full instruction trace holds.
    REQUIRE(run_cli(step + " --trace instr --out " + d + "/instr").code == 0);
    const size_t budget = trace_events(d + "/instr") / 2;
    const CliResult r = run_cli(step + " --trace-budget " + std::to_string(budget) + " --out " + d + "/auto");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("trace: instruction detail for the first " + std::to_string(budget) + " events"));
    REQUIRE(run_cli(step + " --trace task --out " + d + "/task").code == 0);
    CHECK(trace_events(d + "/auto") <= budget + trace_events(d + "/task") + in_flight_bound(d + "/auto"));
}

TEST_CASE("host memory: a functional matmul larger than host memory stops before allocating, naming it and --mode timing") {
    // 65535^3 fp16 -> fp32 in functional mode: A and B (2 bytes an element) on the host, their
    // uploaded copies and device image, C (4 bytes) in the image and copied back, and the
    // reference's A and B as doubles: 36 bytes per 65535^2, about 144 GiB.
    const double x = 65535.0 * 65535.0;
    const double need_gib = (2 * 4 * x + 4 * x + 2 * 4 * x + 2 * x * 8) / (1ull << 30);
    const double avail_gib = static_cast<double>(ops::host_memory_available()) / (1ull << 30);
    if (avail_gib == 0 || avail_gib >= need_gib) {
        WARN("host memory unknown or above " << need_gib << " GiB: nothing to check here");
        return;
    }
    const std::string d = temp_dir("first_hostmem");
    const CliResult r = run_cli("kernel matmul --m 65535 --n 65535 --k 65535 --config " + config("ascend910b-like") + " --out " + d);
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("GiB of host memory") && Catch::Contains("--mode timing"));
    CHECK_THAT(r.output, !Catch::Contains("bad_alloc"));
}
