// Finding and loading configuration files as a library (sim/config_files.h): a system file's chip
// preset (system.chip, relative to the system file) loads first and the system file over it, then
// --config files and --set overrides; an override of system.chip names the preset relative to the
// working directory; names resolve to presets in the preset directory; missing files are named.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "sim/config_files.h"
#include "sim/error.h"
#include "tests/support.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {
void write(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
}
// A key's raw value ("-" when no file or override gave it).
std::string read(Config& c, const std::string& key) { return c.consume(key).value_or("-"); }
}  // namespace

TEST_CASE("config files: a system file's chip preset loads first, then the system file, configs and sets",
          "[config][system]") {
    const std::string dir = temp_dir("config_files");
    std::filesystem::create_directories(dir + "/presets");
    std::filesystem::create_directories(dir + "/sys");
    write(dir + "/sys/chip.ini", "[a]\nx = 1\ny = 1\nz = 1\n");
    write(dir + "/presets/other.ini", "[a]\nx = 7\n");
    write(dir + "/sys/system.ini", "[system]\nchip = chip.ini\n[a]\ny = 2\n");
    write(dir + "/extra.ini", "[a]\nz = 3\n");

    CHECK(system_chip_file(dir + "/sys/system.ini", {}, dir + "/presets") == dir + "/sys/chip.ini");
    // An override names the chip preset relative to the working directory, or a preset by name.
    CHECK(system_chip_file(dir + "/sys/system.ini", {"system.chip=other"}, dir + "/presets") == dir + "/presets/other.ini");
    CHECK(system_chip_file("", {}, dir + "/presets").empty());
    CHECK(resolve_config_file("configs/other.ini", dir + "/presets") == dir + "/presets/other.ini");

    Config c;
    load_system_config(c, dir + "/sys/system.ini", {dir + "/extra.ini"}, {"a.x=5"}, dir + "/presets");
    CHECK(read(c, "a.x") == "5");  // the chip's 1, overridden
    CHECK(read(c, "a.y") == "2");  // the system file over the chip preset
    CHECK(read(c, "a.z") == "3");  // a --config file over both
    CHECK(read(c, "system.chip") == "chip.ini");

    Config d;
    load_system_config(d, dir + "/sys/system.ini", {}, {"system.chip=other"}, dir + "/presets");
    CHECK(read(d, "a.x") == "7");   // the preset the override names
    CHECK(read(d, "a.z") == "-");  // the system file's chip was not loaded
}

TEST_CASE("config files: a missing system file or chip preset is named", "[config][system]") {
    const std::string dir = temp_dir("config_files_missing");
    write(dir + "/system.ini", "[system]\nchip = nowhere.ini\n");
    Config c;
    CHECK_THROWS_WITH(load_system_config(c, dir + "/absent.ini", {}, {}, dir),
                      Catch::Contains("system config '" + dir + "/absent.ini' does not exist"));
    CHECK_THROWS_AS(load_system_config(c, dir + "/system.ini", {}, {}, dir), ConfigError);
    CHECK_THROWS_WITH(system_chip_file(dir + "/system.ini", {}, dir), Catch::Contains("nowhere.ini"));
    CHECK_THROWS_WITH(resolve_config_file("absent", dir), Catch::Contains("neither a file nor a preset in " + dir));
}
