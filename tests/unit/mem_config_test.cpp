// Bad memory configurations are rejected with an error naming the key (exit 2 from the CLI).
#include <catch2/catch.hpp>
#include <cstdlib>

#include "models/mem/hbm_params.h"
#include "models/mem/i_address_map.h"
#include "models/mem/memory_system.h"
#include "sim/config.h"

using namespace sfumato;
using namespace sfumato::mem;

namespace {
std::string hbm_error(const std::string& key, const std::string& value) {
    Config cfg;
    cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini");
    cfg.set_raw(key, value, "test");
    try {
        read_hbm_params(ParamScope(cfg, "chip.hbm"));
    } catch (const ConfigError& e) {
        return e.key();
    }
    return "";
}
std::string l2_error(const std::string& key, const std::string& value) {
    Config cfg;
    cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini");
    cfg.set_raw(key, value, "test");
    try {
        read_l2_params(ParamScope(cfg, "chip.l2"));
    } catch (const ConfigError& e) {
        return e.key();
    }
    return "";
}
}  // namespace

TEST_CASE("mem config: the presets are valid and their peaks follow channels x width x rate") {
    for (const char* preset : {"tiny", "ascend910-like", "ascend910b-like"}) {
        Config cfg;
        cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
        const HbmParams p = read_hbm_params(ParamScope(cfg, "chip.hbm"));
        CHECK(hbm_peak_gbps(p) == Approx(p.stacks * p.channels_per_stack * p.bus_width_bits / 8.0 * p.data_rate_mtps / 1000.0));
        read_l2_params(ParamScope(cfg, "chip.l2"));
    }
    Config cfg;
    cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini");
    CHECK(hbm_peak_gbps(read_hbm_params(ParamScope(cfg, "chip.hbm"))) == Approx(1638.4));
}

TEST_CASE("mem config: bus width 0 and an address map short of the capacity and a non-power-of-two line name their key") {
    CHECK(hbm_error("chip.hbm.bus_width_bits", "0") == "chip.hbm.bus_width_bits");
    CHECK(hbm_error("chip.hbm.rows", "16384") == "chip.hbm.address_layout");
    CHECK(hbm_error("chip.hbm.address_layout", "Ro,Ba,Co,Ch") == "chip.hbm.address_layout");
    CHECK(hbm_error("chip.hbm.address_map", "nosuch") == "chip.hbm.address_map");
    CHECK(hbm_error("chip.hbm.scheduler", "nosuch") == "chip.hbm.scheduler");
    // The presets refresh per bank: the refresh time they read is tRFCSB.
    CHECK(hbm_error("chip.hbm.tRFCSB", "5000") == "chip.hbm.tRFCSB");
    // The write queue must hold more than a drain's start (910B-like: high watermark 64).
    CHECK(hbm_error("chip.hbm.write_queue_depth", "64") == "chip.hbm.write_queue_depth");
    CHECK(hbm_error("chip.hbm.write_queue_depth", "65").empty());
    CHECK(l2_error("chip.l2.line_bytes", "384") == "chip.l2.line_bytes");
    CHECK(l2_error("chip.l2.replacement", "nosuch") == "chip.l2.replacement");
    CHECK(l2_error("chip.l2.size_kib", "1000") == "chip.l2.size_kib");
}

TEST_CASE("mem config: the CLI exits 2 on a bad memory config and names the key") {
    const std::string base = std::string(SFUMATO_BINARY) + " membench --config " + SFUMATO_SOURCE_DIR +
                             "/configs/tiny.ini --bytes 64K --out /tmp/sfumato_mem_config_test";
    const std::pair<const char*, const char*> cases[] = {{"chip.hbm.bus_width_bits=0", "chip.hbm.bus_width_bits"},
                                                         {"chip.hbm.rows=4096", "chip.hbm.address_layout"},
                                                         {"chip.l2.line_bytes=96", "chip.l2.line_bytes"},
                                                         {"chip.mem.service=fast", "chip.mem.service"},
                                                         // 1 TiB in 1024 slices of 32-B lines, 4 ways: 2^23 sets a
                                                         // slice, whose index and the slice's exceed 32 bits together
                                                         {"chip.l2.size_kib=1073741824 --set chip.l2.line_bytes=32 --set chip.l2.ways=4 "
                                                          "--set chip.l2.slices=1024",
                                                          "chip.l2.size_kib"}};
    for (const auto& [set, key] : cases) {
        const std::string cmd = base + " --set " + set + " 2>&1 | grep -q \"'" + std::string(key) + "'\"";
        CHECK(std::system(cmd.c_str()) == 0);
        const int rc = std::system((base + " --set " + set + " >/dev/null 2>&1").c_str());
        CHECK(WEXITSTATUS(rc) == 2);
    }
}

TEST_CASE("mem config: replacement policies evict as named") {
    L2Geometry g;
    g.line_bytes = 128;
    g.sector_bytes = 32;
    g.sets = 1;
    g.ways = 2;
    g.slices = 1;
    L2Tags lru(g, make_replacement("lru", "k", 1, 2));
    L2Tags fifo(g, make_replacement("fifo", "k", 1, 2));
    for (L2Tags* t : {&lru, &fifo}) {
        L2Tags::Victim v;
        t->allocate(1, v);
        t->allocate(2, v);
        t->find(1, true);  // LRU: 2 is now least recently used; FIFO: 1 is still the oldest
        t->allocate(3, v);
        CHECK(v.evicted);
        CHECK(v.line_addr == (t == &lru ? 2u : 1u));
    }
}
