// Energy and power through the CLI (models/power, docs/energy.md): the checks of issue 30 that
// can fail. Bounds come from the presets' parameters (chip.power.envelope_w, the static model),
// never from stored figures.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "tests/support.h"

using namespace sfumato::test;

namespace {
nlohmann::json run_summary(const std::string& name, const std::string& args) {
    const std::string dir = temp_dir(name);
    const auto r = run_cli(args + " --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    return read_json(dir + "/summary.json");
}
}  // namespace

TEST_CASE("energy: sfumato params lists every coefficient with its unit and source") {
    const auto r = run_cli("params --config " + config("ascend910b-like"));
    REQUIRE(r.code == 0);
    for (const char* k :
         {"chip.power.cube_mac_pj", "chip.power.hbm_read_pj_per_bit", "chip.power.aic_leakage_w",
          "chip.power.l2_leakage_w_per_mib", "chip.power.hbm_background_w_per_stack", "chip.power.voltage_v"})
        CHECK(r.output.find(k) != std::string::npos);
    CHECK(r.output.find("source:") != std::string::npos);
}

TEST_CASE("energy: a bad coefficient or an unknown power key exits 2 naming it") {
    const auto neg =
        run_cli("kernel add --n 1024 --config " + config("tiny") + " --set chip.power.l2_pj_per_byte=-3");
    CHECK(neg.code == 2);
    CHECK(neg.output.find("chip.power.l2_pj_per_byte") != std::string::npos);
    const auto unk =
        run_cli("kernel add --n 1024 --config " + config("tiny") + " --set chip.power.leakage_per_core=1");
    CHECK(unk.code == 2);
    CHECK(unk.output.find("chip.power.leakage_per_core") != std::string::npos);
}

TEST_CASE("energy: a sustained fp16 matmul on the 910B-like part stays within its published envelope") {
    // 8192^3, the size issue 30 names: 3.3 ms of the cube at full load, long enough to be sustained.
    const auto s = run_summary("energy_mm", "kernel matmul --m 8192 --n 8192 --k 8192 --config " +
                                                config("ascend910b-like") + " --mode timing --trace off");
    const auto& e = s["energy"];
    const double envelope = e["envelope_w"].get<double>(), idle = e["static_power_w"].get<double>();
    const double p = s["ops"][0]["power_w"].get<double>(), peak = e["peak_power_w"].get<double>();
    INFO("kernel power " << p << " W, peak " << peak << " W, static " << idle << " W");
    CHECK(p > idle);  // the cube at work draws more than the idle chip
    CHECK(p <= envelope);
    CHECK(peak <= envelope);
    CHECK(peak >= p * 0.999);  // the kernel's average is one of the windows the peak covers
}

TEST_CASE("energy: an HBM-bound stream on the 910B-like part stays within its published envelope") {
    const auto s = run_summary(
        "energy_add", "kernel add --n 16777216 --config " + config("ascend910b-like") + " --mode timing");
    const auto& e = s["energy"];
    REQUIRE(s["ops"][0]["bound"] == "memory");
    const double p = s["ops"][0]["power_w"].get<double>();
    INFO("kernel power " << p << " W, peak " << e["peak_power_w"].get<double>() << " W");
    CHECK(s["ops"][0]["energy_events"]["hbm_read_bytes"].get<double>() > 0);  // its HBM traffic is its own
    CHECK(p <= e["envelope_w"].get<double>());
    CHECK(e["peak_power_w"].get<double>() <= e["envelope_w"].get<double>());
    CHECK(s["ops"][0]["power_w"].get<double>() > e["static_power_w"].get<double>());
}

TEST_CASE("energy: the run's figures add up: components to total, ops and the time outside them to the run") {
    const auto s = run_summary(
        "energy_sum", "run \"zoo:resnet18?image=32&width=8\" --config " + config("tiny") + " --mode timing");
    const auto& e = s["energy"];
    double sum = 0;
    for (const auto& [k, v] : e["by_component_j"].items()) sum += v.get<double>();
    CHECK(sum == Approx(e["total_j"].get<double>()).epsilon(1e-12));
    CHECK(e["static_j"].get<double>() ==
          Approx(e["static_power_w"].get<double>() * s["total_time_us"].get<double>() * 1e-6).epsilon(1e-9));
    // Every event is a kernel's or counted outside kernels: the ops' events and the outside's
    // sum to the chip's (each counted independently: the tasks' counters and the stats tree).
    REQUIRE(s["ops"].size() > 5);
    for (const auto& [ev, total] : e["events"].items()) {
        double ops = e["outside_kernels"]["events"].value(ev, 0.0);
        for (const auto& op : s["ops"]) ops += op["energy_events"].value(ev, 0.0);
        INFO(ev);
        CHECK(ops == Approx(total.get<double>()).epsilon(1e-9).margin(1e-6));
    }
    double dyn = e["outside_kernels"]["dynamic_j"].get<double>();
    for (const auto& op : s["ops"]) dyn += op["dynamic_energy_j"].get<double>();
    CHECK(dyn == Approx(e["dynamic_j"].get<double>()).epsilon(1e-9));
}

TEST_CASE("energy: the chip's power is a counter track in trace.json, and idle time draws the static power") {
    const std::string dir = temp_dir("energy_trace");
    REQUIRE(run_cli("kernel add --n 65536 --config " + config("tiny") + " --mode timing --trace task --out " +
                    dir)
                .code == 0);
    const auto trace = read_json(dir + "/trace.json");
    const auto s = read_json(dir + "/summary.json");
    const double idle = s["energy"]["static_power_w"].get<double>();
    size_t samples = 0;
    double lowest = 1e30;
    const auto& evs = trace.is_array() ? trace : trace["traceEvents"];
    for (const auto& ev : evs)
        if (ev.value("ph", "") == "C" && ev.value("name", "") == "chip power W") {
            ++samples;
            for (const auto& [k, v] : ev["args"].items()) lowest = std::min(lowest, v.get<double>());
        }
    CHECK(samples > 1);
    // Before the kernel the chip only uploads: at least the static power, never below it.
    CHECK(lowest >= idle * (1 - 1e-5));  // the trace prints 6 significant digits
    CHECK(s["energy"]["peak_power_w"].get<double>() > idle);
}

TEST_CASE("energy: twice the work doubles the dynamic energy of the kernel") {
    // Both sizes far above the tiny preset's 1 MiB L2, so both stream from HBM.
    const std::string base = "kernel add --config " + config("tiny") + " --mode timing --n ";
    const auto s1 = run_summary("energy_x1", base + "1048576");
    const auto one = s1["ops"][0];
    const auto two = run_summary("energy_x2", base + "2097152")["ops"][0];
    const double l2 = s1["device"]["l2_bytes"].get<double>();
    auto ev = [](const nlohmann::json& op, const char* k) { return op["energy_events"].value(k, 0.0); };
    CHECK(ev(two, "vector_busy_cycles") == 2 * ev(one, "vector_busy_cycles"));  // exactly twice the repeats
    for (const char* k : {"hbm_read_bytes", "ub_gm_bytes"}) {
        INFO(k);
        CHECK(ev(two, k) == Approx(2 * ev(one, k)).epsilon(0.01));
    }
    // Writes: the write-back L2 keeps up to its size of the output dirty past the kernel's end
    // (written back outside it), so the kernel's own write-backs double within the L2's size.
    CHECK(std::abs(ev(two, "hbm_write_bytes") - 2 * ev(one, "hbm_write_bytes")) <= l2);
    // The cores' clock energy follows the kernel's time, which grows a little more than twice
    // (refresh and row misses of the longer stream): the whole within 10 %.
    const double d1 = one["dynamic_energy_j"].get<double>(), d2 = two["dynamic_energy_j"].get<double>();
    CHECK(d2 / d1 == Approx(2.0).epsilon(0.10));
}

TEST_CASE("energy: functional and timing modes agree, and runs are deterministic") {
    const std::string base = "kernel matmul --m 256 --n 256 --k 512 --config " + config("tiny");
    const auto f = run_summary("energy_fn", base + " --mode functional");
    const auto t = run_summary("energy_tm", base + " --mode timing");
    const auto t2 = run_summary("energy_tm2", base + " --mode timing");
    CHECK(f["ops"][0]["energy_j"] == t["ops"][0]["energy_j"]);
    CHECK(f["energy"]["events"]["cube_busy_cycles"] == t["energy"]["events"]["cube_busy_cycles"]);
    CHECK(t["energy"] == t2["energy"]);
    CHECK(t["ops"][0]["energy_j"] == t2["ops"][0]["energy_j"]);
}

TEST_CASE(
    "energy: a sweep over the HBM data rate tabulates energy and its report plots energy against time") {
    const std::string dir = temp_dir("energy_sweep");
    {
        std::ofstream(dir + "/spec.ini")
            << "[sweep]\ncommand = kernel add --n 262144 --mode timing --trace off\nconfig = " +
                   config("tiny") + "\n[grid]\nchip.hbm.data_rate_mtps = 1000, 2000\n";
    }
    const auto r = run_cli("sweep " + dir + "/spec.ini -j 2 --out " + dir + "/o");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const std::string csv = read_text(dir + "/o/sweep.csv");
    for (const char* col :
         {"energy.total_j", "energy.average_power_w", "energy.peak_power_w", ".energy_j", ".power_w"})
        CHECK(csv.find(col) != std::string::npos);
    const auto rep = run_cli("report " + dir + "/o -o " + dir + "/r.html");
    REQUIRE(rep.code == 0);
    const std::string html = read_text(dir + "/r.html");
    const size_t at = html.find("id=\"sweep-energy-delay\"");
    REQUIRE(at != std::string::npos);
    CHECK(html.find("data-expected-marks=\"2\"", at) < html.find("</svg>", at));  // one mark per point
}

TEST_CASE("energy: a model run reports energy per inference, and its report plots power over time") {
    const std::string dir = temp_dir("energy_run");
    const auto r = run_cli("run \"zoo:resnet18?image=32&width=8\" --config " + config("tiny") +
                           " --mode timing --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("J per inference") != std::string::npos);
    const auto s = read_json(dir + "/summary.json");
    const auto& e = s["energy"];
    // One inference: the kernels' dynamic energy plus static power over the inference's time.
    CHECK(e["per_inference_j"].get<double>() >
          e["dynamic_j"].get<double>() - e["outside_kernels"]["dynamic_j"].get<double>());
    CHECK(e["per_inference_j"].get<double>() < e["total_j"].get<double>());
    REQUIRE(run_cli("report " + dir + " -o " + dir + "/r.html").code == 0);
    CHECK(read_text(dir + "/r.html").find("id=\"power-timeline\"") != std::string::npos);
}

TEST_CASE("energy: an fp32 matmul's cube cycles are priced as fp32 MACs") {
    const std::string base = "kernel matmul --m 256 --n 256 --k 512 --config " + config("tiny") + " --mode timing --dtype ";
    const auto f16 = run_summary("energy_f16", base + "fp16")["ops"][0];
    const auto f32 = run_summary("energy_f32", base + "fp32")["ops"][0];
    auto ev = [](const nlohmann::json& op, const char* k) { return op["energy_events"].value(k, 0.0); };
    CHECK(ev(f16, "cube_busy_cycles_fp32") == 0);
    REQUIRE(ev(f32, "cube_busy_cycles") > 0);
    CHECK(ev(f32, "cube_busy_cycles_fp32") == ev(f32, "cube_busy_cycles"));  // every cube cycle ran fp32 inputs
}

TEST_CASE("energy: the vector unit's busy cycles are priced by op class (exp against relu)") {
    // Coefficients set here, so the expectations derive from them: simple, reduce and move ops at
    // 100 pJ a busy cycle, transcendental ones at 300.
    const std::string set = " --set chip.power.vector_cycle_pj=100 --set chip.power.vector_reduce_cycle_pj=100"
                            " --set chip.power.vector_move_cycle_pj=100 --set chip.power.vector_transcendental_cycle_pj=300";
    const std::string base = " --n 65536 --config " + config("tiny") + " --mode timing";
    const auto ex = run_summary("energy_vexp", "kernel exp" + base + set);
    const auto re = run_summary("energy_vrelu", "kernel relu" + base + set);
    auto ev = [](const nlohmann::json& s, const char* k) { return s["energy"]["events"].value(k, 0.0); };
    const double busy_e = ev(ex, "vector_busy_cycles"), trans_e = ev(ex, "vector_busy_cycles_transcendental");
    const double busy_r = ev(re, "vector_busy_cycles");
    REQUIRE(trans_e > 0);
    CHECK(trans_e <= busy_e);
    CHECK(ev(re, "vector_busy_cycles_transcendental") == 0);
    // Every busy cycle at its class's price (the core voltage is the nominal one in the preset).
    const double vj_e = ex["energy"]["by_component_j"]["vector"].get<double>();
    const double vj_r = re["energy"]["by_component_j"]["vector"].get<double>();
    CHECK(vj_e == Approx((100 * (busy_e - trans_e) + 300 * trans_e) * 1e-12).epsilon(1e-9));
    CHECK(vj_r == Approx(100 * busy_r * 1e-12).epsilon(1e-9));
    // Per busy cycle the transcendental-heavy kernel costs more by the coefficients' ratio on its
    // transcendental share.
    CHECK(vj_e / busy_e / (vj_r / busy_r) == Approx(1 + 2 * trans_e / busy_e).epsilon(1e-9));
    // The kernel's own events carry the split (attributed by its span).
    CHECK(ex["ops"][0]["energy_events"].value("vector_busy_cycles_transcendental", 0.0) == trans_e);
    // Energy observes: the coefficients change no cycle.
    const auto plain = run_summary("energy_vexp0", "kernel exp" + base);
    CHECK(plain["total_cycles"] == ex["total_cycles"]);
}

TEST_CASE("energy: a collective prices every link's bytes by kind, and the system adds chips and links") {
    const std::string dir = temp_dir("energy_coll");
    const std::string cmd = "collective all_reduce --bytes 1048576 --system " + config("system-tiny") +
                            " --set system.servers=2 --set system.chips_per_server=2 --mode timing --trace off";
    const auto r = run_cli(cmd + " --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("energy over the run") != std::string::npos);
    const auto s = read_json(dir + "/summary.json");
    const auto& e = s["energy"];
    const auto& f = e["fabric"];
    // The links' wire bytes as summary.json lists them, by kind (a NIC channel goes to or from the
    // switch); the defaults' coefficients from `sfumato params`.
    double chip_link = 0, nic = 0, up = 0;
    for (const auto& l : s["links"]) {
        const std::string name = l["link"].get<std::string>();
        const double w = l["wire_bytes"].get<double>();
        if (name.find("switch") == std::string::npos) chip_link += w;
        else nic += w;
        if (name.size() > 6 && name.compare(name.size() - 6, 6, "switch") == 0) up += w;
    }
    REQUIRE(chip_link > 0);
    REQUIRE(up > 0);
    CHECK(f["wire_bytes"]["chip_link"].get<double>() == chip_link);
    CHECK(f["wire_bytes"]["nic"].get<double>() == nic);
    CHECK(f["wire_bytes"]["switch"].get<double>() == up);
    // Doubling one kind's price doubles that kind's energy and nothing else; no cycle moves.
    const std::string dir2 = temp_dir("energy_coll2");
    const auto r2 = run_cli(cmd + " --set system.power.chip_link_pj_per_bit=10 --out " + dir2);
    REQUIRE(r2.code == 0);
    const auto s2 = read_json(dir2 + "/summary.json");
    CHECK(s2["total_cycles"] == s["total_cycles"]);
    const auto& f2 = s2["energy"]["fabric"];
    CHECK(f2["by_kind_j"]["chip_link"].get<double>() == Approx(chip_link * 8 * 10 * 1e-12).epsilon(1e-12));
    CHECK(f2["by_kind_j"]["nic"] == f["by_kind_j"]["nic"]);
    // The system is its chips plus its links; each chip's share of the links adds up to theirs.
    double chips = 0, chip_links = 0;
    for (const auto& c : e["chips"]) {
        chips += c["total_j"].get<double>();
        chip_links += c["links"]["dynamic_j"].get<double>() + c["links"]["static_j"].get<double>();
        CHECK(c["total_with_links_j"].get<double>() >= c["total_j"].get<double>());
    }
    CHECK(e["total_j"].get<double>() == Approx(chips + f["total_j"].get<double>()).epsilon(1e-12));
    CHECK(chip_links == Approx(f["total_j"].get<double>()).epsilon(1e-12));
    // stats.h5 holds the links' dynamic energy by kind.
    const auto st = run_cli("stats " + dir + "/stats.h5 links/power/dynamic_j");
    REQUIRE(st.code == 0);
    const size_t at = st.output.find("links/power/dynamic_j");
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(st.output.substr(at + std::string("links/power/dynamic_j").size())) ==
          Approx(f["dynamic_j"].get<double>()).epsilon(1e-6));
    // The switch ports: one per NIC, at switch_port_w, over the run.
    const double seconds = s["total_time_us"].get<double>() * 1e-6;
    CHECK(f["static_power_w"].get<double>() > 0);
    CHECK(f["static_j"].get<double>() == Approx(f["static_power_w"].get<double>() * seconds).epsilon(1e-9));
}

TEST_CASE("energy: a serving run reports energy per output token") {
    const std::string dir = temp_dir("energy_serve");
    const auto r = run_cli("serve tiny --config " + config("tiny") +
                           " --set serve.block_size=64 --trace off --mode timing"
                           " --generate n=8,rate=20000,prompt=32,output=8,seed=1 --out " + dir);
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(r.output.find("J per output token") != std::string::npos);
    const auto s = read_json(dir + "/summary.json");
    const auto& e = s["energy"];
    const auto& m = s["serve"]["metrics"];
    REQUIRE(m["served"].get<size_t>() == 8);
    // 8 requests of 8 output tokens: the kernels' dynamic energy and the static power over the
    // serving time, per token.
    const double seconds = m["duration_s"].get<double>();
    const double kernels = e["dynamic_j"].get<double>() - e["outside_kernels"]["dynamic_j"].get<double>();
    CHECK(e["per_output_token_j"].get<double>() ==
          Approx((kernels + e["static_power_w"].get<double>() * seconds) / 64).epsilon(1e-9));
}

TEST_CASE(
    "energy: each local buffer's energy is its bytes at its price, and a vector kernel touches only the UB") {
    // Prices set here, so the expectations derive from them; the core voltage is the preset's nominal.
    const double l1 = 1.5, l0ab = 0.7, l0c = 0.9, ub = 1.1;
    auto set = [](const char* k, double v) {
        return std::string(" --set chip.power.") + k + "=" + std::to_string(v);
    };
    const std::string prices = set("l1_pj_per_byte", l1) + set("l0ab_pj_per_byte", l0ab) +
                               set("l0c_pj_per_byte", l0c) + set("ub_pj_per_byte", ub);
    const std::string cfg = " --config " + config("ascend910b-like") + " --mode timing";
    const auto add = run_summary("energy_buf_add", "kernel add --n 262144" + cfg + prices);
    const auto& ae = add["energy"];
    auto ev = [](const nlohmann::json& e, const char* k) { return e["events"].value(k, 0.0); };
    auto comp = [](const nlohmann::json& e, const char* k) { return e["by_component_j"][k].get<double>(); };
    // A vector add on a split chip: GM -> UB -> GM only.
    REQUIRE(ev(ae, "ub_gm_bytes") > 0);
    CHECK(ev(ae, "l1_gm_bytes") == 0);
    CHECK(ev(ae, "l0c_gm_bytes") == 0);
    CHECK(comp(ae, "l1") == 0);
    CHECK(comp(ae, "l0a_l0b") == 0);
    CHECK(comp(ae, "l0c") == 0);
    CHECK(comp(ae, "ub") == Approx(ev(ae, "ub_gm_bytes") * ub * 1e-12).epsilon(1e-12));
    // The add reads 2 x n fp16 and writes n: every byte through the UB once.
    CHECK(ev(ae, "ub_gm_bytes") == 3.0 * 262144 * 2);

    const std::string mm = "kernel matmul --m 512 --n 512 --k 512 --out-dtype fp32" + cfg;
    const std::string dir = temp_dir("energy_buf_mm");
    REQUIRE(run_cli(mm + prices + " --out " + dir).code == 0);
    const auto s = read_json(dir + "/summary.json");
    const auto& e = s["energy"];
    const double mte1 = ev(e, "mte1_busy_cycles") * 256, cube = ev(e, "cube_busy_cycles");
    REQUIRE(cube > 0);
    REQUIRE(ev(e, "l1_gm_bytes") > 0);
    REQUIRE(ev(e, "l0c_gm_bytes") > 0);
    CHECK(ev(e, "l0c_gm_bytes") == 512.0 * 512 * 4);  // the fp32 output, drained once by FixPipe
    // A 16x16x16 cube cycle: 1 KiB of L0A/L0B fractals read, a 1 KiB fp32 accumulator read and written.
    CHECK(comp(e, "l1") == Approx((mte1 + ev(e, "l1_gm_bytes")) * l1 * 1e-12).epsilon(1e-12));
    CHECK(comp(e, "l0a_l0b") == Approx((mte1 + cube * 1024) * l0ab * 1e-12).epsilon(1e-12));
    CHECK(comp(e, "l0c") == Approx((cube * 2048 + ev(e, "l0c_gm_bytes")) * l0c * 1e-12).epsilon(1e-12));
    CHECK(comp(e, "ub") == Approx(ev(e, "ub_gm_bytes") * ub * 1e-12).epsilon(1e-12));
    // stats.h5 holds the same breakdown.
    for (const char* k : {"l1", "l0a_l0b", "l0c", "ub"}) {
        const std::string stat = std::string("chip/power/") + k + "_j";
        const auto st = run_cli("stats " + dir + "/stats.h5 " + stat);
        REQUIRE(st.code == 0);
        const size_t at = st.output.find(stat);
        REQUIRE(at != std::string::npos);
        INFO(k);
        CHECK(std::stod(st.output.substr(at + stat.size())) == Approx(comp(e, k)).epsilon(1e-6));
    }
    // Doubling the L0C price doubles the L0C energy only, and moves no cycle.
    const auto s2 = run_summary("energy_buf_mm2", mm + prices + set("l0c_pj_per_byte", 2 * l0c));
    CHECK(s2["total_cycles"] == s["total_cycles"]);
    CHECK(comp(s2["energy"], "l0c") == Approx(2 * comp(e, "l0c")).epsilon(1e-12));
    for (const char* k : {"l1", "l0a_l0b", "ub", "cube", "l2", "hbm"})
        CHECK(comp(s2["energy"], k) == comp(e, k));
}
