// The links' energy (models/power/link_energy.h) without a simulation: every channel's wire bytes
// priced per bit by its kind, each channel charged to the chip that drives it, the switch ports'
// static power per NIC, and bad coefficients named.
#include "models/power/link_energy.h"

#include <catch2/catch.hpp>
#include <memory>

using namespace sfumato;
using namespace sfumato::power;

namespace {
struct LoadedSystem {
    Config c;
    std::unique_ptr<SystemParams> p;
    Topology t;
    explicit LoadedSystem(const std::string& preset, const std::vector<std::string>& sets = {}) {
        c.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        for (const auto& s : sets) c.apply_override(s);
        p = std::make_unique<SystemParams>(c);
        t = build_topology(*p);
    }
};
bool all(uint32_t) { return true; }
}  // namespace

TEST_CASE("link energy: wire bits priced by link kind, each channel charged to the chip driving it") {
    LoadedSystem s("system-2x8x910b-like");
    const LinkPowerParams& pp = s.p->power;
    // Every channel carried 1000 + its index bytes.
    std::vector<uint64_t> wire(s.t.channels.size());
    double chip_link = 0, nic = 0, up = 0;
    uint32_t nics = 0;
    for (size_t i = 0; i < wire.size(); ++i) {
        wire[i] = 1000 + i;
        const ChannelSpec::Kind k = s.t.channels[i].kind;
        (k == ChannelSpec::Kind::ChipLink ? chip_link : nic) += static_cast<double>(wire[i]);
        if (k == ChannelSpec::Kind::NicUp) up += static_cast<double>(wire[i]), ++nics;
    }
    REQUIRE(chip_link > 0);
    REQUIRE(nics == s.p->chips() * s.p->nics_per_chip);
    const double seconds = 2e-3;
    const LinkEnergy e = link_energy(pp, s.t, wire, all, seconds);
    CHECK(e.chip_link_j == Approx(chip_link * 8 * pp.chip_link_pj_per_bit * 1e-12).epsilon(1e-12));
    CHECK(e.nic_j == Approx(nic * 8 * pp.nic_pj_per_bit * 1e-12).epsilon(1e-12));
    // The switch once per crossing: on the uplinks' bytes.
    CHECK(e.switch_j == Approx(up * 8 * pp.switch_pj_per_bit * 1e-12).epsilon(1e-12));
    CHECK(e.static_w == Approx(nics * pp.switch_port_w.get()));
    CHECK(e.static_j == Approx(nics * pp.switch_port_w * seconds));
    // The chips' shares add up to the system's, and a chip's share is its outgoing channels'
    // (and its NICs' downlinks).
    double sum_dyn = 0, sum_static = 0;
    for (uint32_t c = 0; c < s.t.chips; ++c) sum_dyn += e.chip_dynamic_j[c], sum_static += e.chip_static_w[c];
    CHECK(sum_dyn == Approx(e.dynamic()).epsilon(1e-12));
    CHECK(sum_static == Approx(e.static_w).epsilon(1e-12));
    double chip3 = 0;
    for (size_t i = 0; i < wire.size(); ++i) {
        const ChannelSpec& c = s.t.channels[i];
        const double bits = static_cast<double>(wire[i]) * 8;
        if (c.kind == ChannelSpec::Kind::ChipLink && c.src == 3) chip3 += bits * pp.chip_link_pj_per_bit;
        if (c.kind == ChannelSpec::Kind::NicUp && c.src == 3) chip3 += bits * (pp.nic_pj_per_bit + pp.switch_pj_per_bit);
        if (c.kind == ChannelSpec::Kind::NicDown && c.dst == 3) chip3 += bits * pp.nic_pj_per_bit;
    }
    CHECK(e.chip_dynamic_j[3] == Approx(chip3 * 1e-12).epsilon(1e-12));
    // Twice the bytes, twice the dynamic energy; the static part does not move.
    for (auto& w : wire) w *= 2;
    const LinkEnergy e2 = link_energy(pp, s.t, wire, all, seconds);
    CHECK(e2.dynamic() == Approx(2 * e.dynamic()).epsilon(1e-12));
    CHECK(e2.static_j == Approx(e.static_j));
}

TEST_CASE("link energy: only the chips counted here (a split run's) contribute") {
    LoadedSystem s("system-8x910b-like");
    std::vector<uint64_t> wire(s.t.channels.size(), 4096);
    const LinkEnergy whole = link_energy(s.p->power, s.t, wire, all, 1e-3);
    const LinkEnergy lo = link_energy(s.p->power, s.t, wire, [](uint32_t c) { return c < 4; }, 1e-3);
    const LinkEnergy hi = link_energy(s.p->power, s.t, wire, [](uint32_t c) { return c >= 4; }, 1e-3);
    CHECK(lo.total() + hi.total() == Approx(whole.total()).epsilon(1e-12));
    CHECK(lo.chip_dynamic_j[5] == 0.0);
    // One server whose chips all have direct links: its NICs' routes never cross the switch, so no
    // switch port is counted; two such servers need it.
    CHECK(whole.static_w == 0.0);
    LoadedSystem two("system-8x910b-like", {"system.servers=2"});
    const LinkEnergy joined =
        link_energy(two.p->power, two.t, std::vector<uint64_t>(two.t.channels.size(), 4096), all, 1e-3);
    CHECK(joined.static_w == Approx(two.p->chips() * two.p->nics_per_chip * two.p->power.switch_port_w));
    // A system without NICs has no switch.
    LoadedSystem n("system-8x910b-like", {"system.nic.per_chip=0"});
    const LinkEnergy none = link_energy(n.p->power, n.t, std::vector<uint64_t>(n.t.channels.size(), 4096), all, 1e-3);
    CHECK(none.static_w == 0.0);
    CHECK(none.switch_j == 0.0);
    CHECK(none.chip_link_j == Approx(whole.chip_link_j));
}

TEST_CASE("link energy: negative or absurd coefficients and unknown keys are named") {
    CHECK_THROWS_WITH(LoadedSystem("system-tiny", {"system.power.chip_link_pj_per_bit=-1"}),
                      Catch::Contains("system.power.chip_link_pj_per_bit"));
    CHECK_THROWS_WITH(LoadedSystem("system-tiny", {"system.power.switch_port_w=1e9"}),
                      Catch::Contains("system.power.switch_port_w"));
    LoadedSystem l("system-8x910b-like", {"system.power.bogus=1"});
    CHECK_THROWS_WITH(l.c.check_unused(), Catch::Contains("system.power.bogus"));
}
