// The layering of DESIGN.md as a test: isa/ is pure C++ (no SystemC, nothing outside isa/);
// runtime/ never includes models/; models/ never includes runtime/.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>

namespace fs = std::filesystem;

namespace {
std::vector<std::string> violations(const std::string& dir, const std::function<bool(const std::string&)>& bad) {
    std::vector<std::string> v;
    const std::regex inc(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
    for (const auto& e : fs::recursive_directory_iterator(std::string(SFUMATO_SOURCE_DIR) + "/" + dir)) {
        if (!e.is_regular_file()) continue;
        const auto ext = e.path().extension();
        if (ext != ".h" && ext != ".cpp") continue;
        std::ifstream f(e.path());
        std::string line;
        while (std::getline(f, line)) {
            std::smatch m;
            if (std::regex_search(line, m, inc) && bad(m[1].str())) v.push_back(e.path().string() + ": " + m[1].str());
        }
    }
    return v;
}
bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

TEST_CASE("layering: isa/ is pure C++") {
    auto v = violations("isa", [](const std::string& h) {
        return starts(h, "systemc") || starts(h, "sysc/") || starts(h, "tlm") || starts(h, "sim/") || starts(h, "models/") ||
               starts(h, "runtime/") || starts(h, "traces/");
    });
    INFO(Catch::Detail::stringify(v));
    CHECK(v.empty());
}

TEST_CASE("layering: runtime/ and models/ never include each other") {
    auto r = violations("runtime", [](const std::string& h) { return starts(h, "models/"); });
    auto m = violations("models", [](const std::string& h) { return starts(h, "runtime/"); });
    INFO(Catch::Detail::stringify(r) << Catch::Detail::stringify(m));
    CHECK(r.empty());
    CHECK(m.empty());
}

TEST_CASE("layering: sim/ is the framework alone") {
    auto v = violations("sim", [](const std::string& h) {
        return starts(h, "models/") || starts(h, "runtime/") || starts(h, "traces/") || starts(h, "cli/");
    });
    INFO(Catch::Detail::stringify(v));
    CHECK(v.empty());
}

TEST_CASE("layering: only cli/ wires runtime and models together") {
    auto r = violations("runtime", [](const std::string& h) { return starts(h, "cli/"); });
    auto m = violations("models", [](const std::string& h) { return starts(h, "cli/"); });
    auto t = violations("traces", [](const std::string& h) { return starts(h, "cli/") || starts(h, "models/"); });
    INFO(Catch::Detail::stringify(r) << Catch::Detail::stringify(m) << Catch::Detail::stringify(t));
    CHECK(r.empty());
    CHECK(m.empty());
    CHECK(t.empty());
}

TEST_CASE("layering: sweep/ and report/ never include the simulator's models, runtime or cli") {
    auto bad = [](const std::string& h) {
        return starts(h, "models/") || starts(h, "runtime/") || starts(h, "cli/") || starts(h, "systemc") || starts(h, "sysc/");
    };
    auto s = violations("sweep", bad);
    auto r = violations("report", bad);
    INFO(Catch::Detail::stringify(s) << Catch::Detail::stringify(r));
    CHECK(s.empty());
    CHECK(r.empty());
}
