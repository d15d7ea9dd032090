// The energy model (models/power) without a simulation: idle power is the static model, dynamic
// energy is linear in the events (twice the work, twice the energy), the voltage scales dynamic
// energy by V^2 and leakage by V, and bad coefficients are named.
#include "models/power/energy_model.h"

#include <catch2/catch.hpp>
#include <memory>

#include "models/chip/chip_params.h"

using namespace sfumato;
using namespace sfumato::power;

namespace {
struct Loaded {
    Config c;
    std::unique_ptr<ChipParams> p;
    explicit Loaded(const std::string& preset, const std::vector<std::string>& sets = {}) {
        c.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        for (const auto& s : sets) c.apply_override(s);
        p = std::make_unique<ChipParams>(c);
    }
};
Events some_events() {
    Events e;
    e[Event::CubeBusy] = 1e6;
    e[Event::VectorBusy] = 3e5;
    e[Event::ScalarBusy] = 2e5;
    e[Event::Mte1Busy] = 4e5;
    e[Event::L1GmBytes] = 6e7;
    e[Event::UbGmBytes] = 3e7;
    e[Event::L0cGmBytes] = 1e7;
    e[Event::AicActive] = 2e7;
    e[Event::AivActive] = 4e7;
    e[Event::L2Bytes] = 3e8;
    e[Event::HbmActivates] = 5e4;
    e[Event::HbmReadBytes] = 1e8;
    e[Event::HbmWriteBytes] = 5e7;
    e[Event::HbmRefreshes] = 1e5;
    e[Event::HostLinkBytes] = 1e7;
    return e;
}
}  // namespace

TEST_CASE("energy model: idle power is the static model, computed from its parameters") {
    Loaded l("ascend910b-like");
    const PowerParams& pp = l.p->power;
    const EnergyModel m(pp, chip_shape(*l.p));
    const double aic = l.p->cube_cores, aiv = l.p->vector_cores();
    const double l2_mib = static_cast<double>(l.p->mem.l2.size_bytes) / (1 << 20);
    const double expect = aic * pp.aic_leakage_w + aiv * pp.aiv_leakage_w + l2_mib * pp.l2_leakage_w_per_mib +
                          l.p->mem.hbm.stacks * pp.hbm_background_w_per_stack + pp.uncore_w;
    const Breakdown idle = m.energy(Events{}, 2.0);
    CHECK(idle.dynamic() == 0.0);
    CHECK(idle.total() == Approx(2.0 * expect).epsilon(1e-12));
    CHECK(m.static_power().static_j() == Approx(expect).epsilon(1e-12));
    // Idle is below the part's published maximum.
    CHECK(expect < pp.envelope_w);
}

TEST_CASE("energy model: dynamic energy is linear in the events (twice the work, twice the energy)") {
    Loaded l("ascend910b-like");
    const EnergyModel m(l.p->power, chip_shape(*l.p));
    Events e = some_events(), e2;
    for (size_t i = 0; i < kNumEvents; ++i) e2.n[i] = 2 * e.n[i];
    const Breakdown a = m.dynamic(e), b = m.dynamic(e2);
    CHECK(a.dynamic() > 0);
    CHECK(b.dynamic() == Approx(2 * a.dynamic()).epsilon(1e-12));
    // Each event class lands in its component: the cube's energy is busy cycles x MACs per cycle x pJ/MAC.
    const double macs = static_cast<double>(l.p->core.cube_m0) * l.p->core.cube_n0 * l.p->core.cube_k0_16bit;
    CHECK(a.cube == Approx(1e6 * macs * l.p->power.cube_mac_pj * 1e-12));
    CHECK(a.hbm == Approx((5e4 * l.p->power.hbm_activate_pj + 1e8 * 8 * l.p->power.hbm_read_pj_per_bit +
                           5e7 * 8 * l.p->power.hbm_write_pj_per_bit + 1e5 * l.p->power.hbm_refresh_pj) *
                          1e-12));
    // The breakdown's items add up to its total.
    double sum = 0;
    for (const auto& [name, j] : m.energy(e, 1e-3).items()) sum += j;
    CHECK(sum == Approx(m.energy(e, 1e-3).total()).epsilon(1e-12));
}

TEST_CASE("energy model: voltage scales core dynamic energy by V^2 and leakage by V, HBM not at all") {
    Loaded lo("ascend910b-like"), hi("ascend910b-like", {"chip.power.voltage_v=0.96"});
    const EnergyModel a(lo.p->power, chip_shape(*lo.p)), b(hi.p->power, chip_shape(*hi.p));
    const Events e = some_events();
    const double r = 0.96 / 0.80;
    CHECK(b.dynamic(e).cube == Approx(a.dynamic(e).cube * r * r));
    CHECK(b.dynamic(e).core_clock == Approx(a.dynamic(e).core_clock * r * r));
    CHECK(b.dynamic(e).hbm == Approx(a.dynamic(e).hbm));
    CHECK(b.static_power().leakage == Approx(a.static_power().leakage * r));
    CHECK(b.static_power().hbm_background == Approx(a.static_power().hbm_background));
}

TEST_CASE("energy model: a coupled core is priced as one AIC and one AIV") {
    Loaded l("ascend910-like");
    const EnergyModel m(l.p->power, chip_shape(*l.p));
    Events e;
    e[Event::AicActive] = 1e6;
    CHECK(m.dynamic(e).core_clock ==
          Approx(1e6 * (l.p->power.aic_clock_pj + l.p->power.aiv_clock_pj) * 1e-12));
    CHECK(m.static_power().leakage >
          l.p->cube_cores * (l.p->power.aic_leakage_w + l.p->power.aiv_leakage_w) * 0.999);
}

TEST_CASE("energy model: negative or absurd coefficients and unknown keys are named") {
    CHECK_THROWS_WITH(Loaded("tiny", {"chip.power.cube_mac_pj=-1"}),
                      Catch::Contains("chip.power.cube_mac_pj"));
    CHECK_THROWS_WITH(Loaded("tiny", {"chip.power.hbm_read_pj_per_bit=1e9"}),
                      Catch::Contains("chip.power.hbm_read_pj_per_bit"));
    CHECK_THROWS_WITH(Loaded("tiny", {"chip.power.voltage_v=0"}), Catch::Contains("chip.power.voltage_v"));
    Loaded l("tiny", {"chip.power.bogus=1"});
    CHECK_THROWS_WITH(l.c.check_unused(), Catch::Contains("chip.power.bogus"));
}

TEST_CASE("energy model: the cube is priced per MAC of its input type") {
    Loaded l("ascend910b-like");
    const PowerParams& pp = l.p->power;
    const EnergyModel m(pp, chip_shape(*l.p));
    const double mn = static_cast<double>(l.p->core.cube_m0) * l.p->core.cube_n0;
    Events e;
    e[Event::CubeBusy] = 1000;
    e[Event::CubeBusyFp32] = 300;
    e[Event::CubeBusyInt8] = 200;
    const double expect = (500 * mn * l.p->core.cube_k0_16bit * pp.cube_mac_pj +
                           300 * mn * l.p->core.cube_k0_fp32 * pp.cube_mac_fp32_pj +
                           200 * mn * l.p->core.cube_k0_int8 * pp.cube_mac_int8_pj) * 1e-12;
    CHECK(m.dynamic(e).cube == Approx(expect).epsilon(1e-12));
}

TEST_CASE("energy model: the vector unit is priced per busy cycle of its op class") {
    Loaded l("ascend910b-like");
    const PowerParams& pp = l.p->power;
    const EnergyModel m(pp, chip_shape(*l.p));
    // The same busy cycles: a transcendental-heavy kernel and a simple-op one differ by the
    // coefficients' ratio, exactly.
    Events simple, trans;
    simple[Event::VectorBusy] = 1e6;
    trans[Event::VectorBusy] = 1e6;
    trans[Event::VectorBusyTranscendental] = 1e6;
    CHECK(m.dynamic(simple).vector == Approx(1e6 * pp.vector_cycle_pj * 1e-12).epsilon(1e-12));
    CHECK(m.dynamic(trans).vector / m.dynamic(simple).vector ==
          Approx(pp.vector_transcendental_cycle_pj / pp.vector_cycle_pj).epsilon(1e-12));
    // A mix: every class at its own price, the rest simple.
    Events mix;
    mix[Event::VectorBusy] = 1000;
    mix[Event::VectorBusyTranscendental] = 100;
    mix[Event::VectorBusyReduce] = 200;
    mix[Event::VectorBusyMove] = 300;
    CHECK(m.dynamic(mix).vector ==
          Approx((400 * pp.vector_cycle_pj + 100 * pp.vector_transcendental_cycle_pj + 200 * pp.vector_reduce_cycle_pj +
                  300 * pp.vector_move_cycle_pj) *
                 1e-12)
              .epsilon(1e-12));
    // The same work (repeats): a transcendental op takes transcendental_cycles_per_repeat cycles a
    // repeat, so on the same elements it costs more than a simple op (the presets' coefficients).
    Events exp_work, add_work;
    const double repeats = 1e5;
    exp_work[Event::VectorBusy] = repeats * l.p->core.vec_transcendental_cycles_per_repeat;
    exp_work[Event::VectorBusyTranscendental] = exp_work[Event::VectorBusy];
    add_work[Event::VectorBusy] = repeats * l.p->core.vec_cycles_per_repeat;
    CHECK(m.dynamic(exp_work).vector > m.dynamic(add_work).vector);
    // Class cycles beyond the total (concurrent kernels' shares) never price negative simple cycles.
    Events over;
    over[Event::VectorBusy] = 10;
    over[Event::VectorBusyMove] = 20;
    CHECK(m.dynamic(over).vector == Approx(20 * pp.vector_move_cycle_pj * 1e-12));
}

TEST_CASE("energy model: each local buffer's energy is its bytes at its own price") {
    Loaded l("ascend910b-like");
    const PowerParams& pp = l.p->power;
    const EnergyModel m(pp, chip_shape(*l.p));
    const double m0 = l.p->core.cube_m0, n0 = l.p->core.cube_n0, k0 = l.p->core.cube_k0_16bit;
    const Events e = some_events();
    const double cube = e[Event::CubeBusy], mte1 = e[Event::Mte1Busy] * pp.mte1_bytes_per_cycle;
    // MTE1 reads L1 and writes L0A/L0B; a cube cycle reads an L0A and an L0B fractal (16-bit) and
    // reads and writes an fp32 accumulator of L0C; GM bytes land in their own buffer.
    const double l1_b = mte1 + e[Event::L1GmBytes];
    const double l0ab_b = mte1 + cube * (m0 * k0 + k0 * n0) * 2;
    const double l0c_b = cube * m0 * n0 * 4 * 2 + e[Event::L0cGmBytes];
    const double ub_b = e[Event::UbGmBytes];
    const Breakdown b = m.dynamic(e);
    CHECK(b.l1 == Approx(l1_b * pp.l1_pj_per_byte * 1e-12).epsilon(1e-12));
    CHECK(b.l0ab == Approx(l0ab_b * pp.l0ab_pj_per_byte * 1e-12).epsilon(1e-12));
    CHECK(b.l0c == Approx(l0c_b * pp.l0c_pj_per_byte * 1e-12).epsilon(1e-12));
    CHECK(b.ub == Approx(ub_b * pp.ub_pj_per_byte * 1e-12).epsilon(1e-12));
    CHECK(b.buffers() == Approx(b.l1 + b.l0ab + b.l0c + b.ub).epsilon(1e-12));
    // Changing one buffer's price moves that component only.
    const char* keys[] = {"l1_pj_per_byte", "l0ab_pj_per_byte", "l0c_pj_per_byte", "ub_pj_per_byte"};
    for (int k = 0; k < 4; ++k) {
        Loaded l2("ascend910b-like", {std::string("chip.power.") + keys[k] + "=3.0"});
        const Breakdown c = EnergyModel(l2.p->power, chip_shape(*l2.p)).dynamic(e);
        const double got[4] = {c.l1, c.l0ab, c.l0c, c.ub}, was[4] = {b.l1, b.l0ab, b.l0c, b.ub};
        const double bytes[4] = {l1_b, l0ab_b, l0c_b, ub_b};
        for (int j = 0; j < 4; ++j) {
            if (j == k)
                CHECK(got[j] == Approx(bytes[j] * 3.0 * 1e-12).epsilon(1e-12));
            else
                CHECK(got[j] == was[j]);
        }
        CHECK(c.cube == b.cube);
        CHECK(c.vector == b.vector);
        CHECK(c.l2 == b.l2);
    }
    // UB traffic alone (a vector kernel's copies) costs nothing in L1 or the L0s.
    Events ub_only;
    ub_only[Event::UbGmBytes] = 1e6;
    ub_only[Event::VectorBusy] = 1e4;
    const Breakdown u = m.dynamic(ub_only);
    CHECK(u.ub > 0);
    CHECK(u.l1 == 0.0);
    CHECK(u.l0ab == 0.0);
    CHECK(u.l0c == 0.0);
    // The old single coefficient is gone: setting it is an unknown key.
    Loaded old("tiny", {"chip.power.buffer_pj_per_byte=1"});
    CHECK_THROWS_WITH(old.c.check_unused(), Catch::Contains("chip.power.buffer_pj_per_byte"));
}
