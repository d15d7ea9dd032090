#include <catch2/catch.hpp>
#include <fstream>

#include "sim/config.h"

using namespace sfumato;

TEST_CASE("config: defaults, overrides, suffixes and ranges") {
    Config c;
    c.apply_override("chip.ub.size=32KiB");
    ParamScope s(c, "chip");
    Param<uint64_t> ub(s.sub("ub"), "size", 1024, "B", "UB bytes", {1, 1ull << 30});
    Param<uint32_t> cores(s, "cores", 2, "", "cores", {1, 64});
    CHECK(ub.get() == 32 * 1024);
    CHECK(cores.get() == 2);
    CHECK_NOTHROW(c.check_unused());
}

TEST_CASE("config: unknown key is named") {
    Config c;
    c.apply_override("chip.bogus=1");
    ParamScope s(c, "chip");
    Param<uint32_t> cores(s, "cores", 2, "", "cores", {1, 64});
    try {
        c.check_unused();
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        CHECK(e.key() == "chip.bogus");
    }
}

TEST_CASE("config: out-of-range value is named") {
    Config c;
    c.apply_override("chip.cores=0");
    ParamScope s(c, "chip");
    try {
        Param<uint32_t> cores(s, "cores", 2, "", "cores", {1, 64});
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        CHECK(e.key() == "chip.cores");
        CHECK(std::string(e.what()).find("outside") != std::string::npos);
    }
}

TEST_CASE("config: INI sections prefix keys and choices are validated") {
    const std::string path = "config_test_tmp.ini";
    {
        std::ofstream f(path);
        f << "[chip]\narch = coupled\n[chip.ub]\nsize = 64KiB\n";
    }
    Config c;
    c.load_ini(path);
    ParamScope s(c, "chip");
    ChoiceParam arch(s, "arch", "split", "arch", {"split", "coupled"});
    Param<uint64_t> ub(s.sub("ub"), "size", 1024, "B", "UB", {1, 1ull << 30});
    CHECK(arch.get() == "coupled");
    CHECK(ub.get() == 65536);
    Config bad;
    bad.apply_override("chip.arch=weird");
    CHECK_THROWS_AS(ChoiceParam(ParamScope(bad, "chip"), "arch", "split", "arch", {"split", "coupled"}), ConfigError);
    std::remove(path.c_str());
}

TEST_CASE("config: a line that is not INI is named with its number") {
    Config c;
    const auto error_of = [&](const std::string& text) {
        try {
            c.load_ini_text(text, "t.ini");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(error_of("[chip]\n# comment\ncores = 2\n\n  [chip.ub]  \nsize=1 # trailing\n").empty());
    const std::string e = error_of("[chip]\ncores = 2\njust words\n");
    CHECK(e.find("t.ini") != std::string::npos);
    CHECK(e.find("line 3") != std::string::npos);
    CHECK(e.find("'just words'") != std::string::npos);
    // Boost's own message for this line substituted it into itself forever (a fuzz finding).
    CHECK(error_of("%invalid_line%%%").find("line 1") != std::string::npos);
}

TEST_CASE("config: the hash follows the effective values") {
    auto make = [](const char* v) {
        Config c;
        if (v) c.apply_override(std::string("a.x=") + v);
        Param<uint32_t> x(ParamScope(c, "a"), "x", 3, "", "x", {0, 10});
        return c.hash();
    };
    CHECK(make(nullptr) == make("3"));
    CHECK(make(nullptr) != make("4"));
}

TEST_CASE("config: a key declared only where the configuration does not read it is named, with why") {
    Config c;
    c.apply_override("chip.gm.latency=5");
    c.apply_override("chip.hbm.stacks=2");
    ParamScope s(c, "chip");
    // The chosen model reads chip.hbm.*; chip.gm.* belongs to the other one.
    Param<uint32_t> latency(s.sub("gm").unused_because("chip.mem.model = detailed"), "latency", 100, "cycle", "gm latency", {0, 1000});
    Param<uint32_t> stacks(s.sub("hbm"), "stacks", 1, "", "stacks", {1, 64});
    CHECK(stacks.get() == 2);
    try {
        c.check_unused();
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        CHECK(e.key() == "chip.gm.latency");
        CHECK(std::string(e.what()).find("not read") != std::string::npos);
        CHECK(std::string(e.what()).find("chip.mem.model = detailed") != std::string::npos);
    }
    // Not part of the effective configuration, but listed with the reason.
    CHECK(c.effective().count("chip.gm.latency") == 0);
    CHECK(c.effective().count("chip.hbm.stacks") == 1);
    bool listed = false;
    for (const auto& d : c.decls()) listed = listed || (d.key == "chip.gm.latency" && d.unused_reason == "chip.mem.model = detailed");
    CHECK(listed);
    // Read by a second declaration that does read it: fine.
    Param<uint32_t> again(s.sub("gm"), "latency", 100, "cycle", "gm latency", {0, 1000});
    CHECK_NOTHROW(c.check_unused());
}
