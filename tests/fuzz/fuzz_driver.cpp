// The two drivers of the fuzz targets (fuzz_target.h). Built with SFUMATO_LIBFUZZER, it is
// libFuzzer's entry point: SFUMATO_FUZZ_TARGET=name selects the target. Otherwise it is the
// replay program of the normal build: `fuzz_replay NAME DIR...` runs every file of the
// directories through target NAME, in name order, and fails on the first finding.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <typeinfo>
#include <vector>

#include "sim/error.h"
#include "tests/fuzz/fuzz_target.h"

namespace sfumato::fuzz {

namespace {

std::map<std::string, TargetFn>& registry() {
    static std::map<std::string, TargetFn> r;
    return r;
}

std::string g_current;  // the input being replayed (empty under libFuzzer)

[[noreturn]] void finding(const char* target, const std::string& what) {
    std::fprintf(stderr, "fuzz target '%s': FINDING: %s\n", target, what.c_str());
    if (!g_current.empty()) std::fprintf(stderr, "  input: %s\n", g_current.c_str());
    std::fflush(stderr);
    std::abort();
}

const char* g_target = "?";

}  // namespace

Registrar::Registrar(const char* name, TargetFn fn) { registry()[name] = fn; }

void fail(const std::string& what) { finding(g_target, what); }

void run_input(const char* target, TargetFn fn, const uint8_t* data, size_t size) {
    g_target = target;
    try {
        fn(data, size);
    } catch (const SimError& e) {
        if (e.code() != kExitBadInput)
            finding(target, "SimError with exit code " + std::to_string(e.code()) + ": " + e.what());
    } catch (const std::exception& e) {
        finding(target, std::string("undocumented exception ") + typeid(e).name() + ": " + e.what());
    } catch (...) {
        finding(target, "undocumented exception of unknown type");
    }
}

}  // namespace sfumato::fuzz

using namespace sfumato::fuzz;

// The SystemC library is linked in (through sim/) and wants an sc_main; no target elaborates.
extern "C" int sc_main(int, char**) { return 0; }

#ifdef SFUMATO_LIBFUZZER

namespace {
const char* g_name = nullptr;
TargetFn g_fn = nullptr;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_name = std::getenv("SFUMATO_FUZZ_TARGET");
    auto it = g_name ? registry().find(g_name) : registry().end();
    if (it == registry().end()) {
        std::fprintf(stderr, "sfumato_fuzz: set SFUMATO_FUZZ_TARGET to one of:");
        for (const auto& [n, f] : registry()) std::fprintf(stderr, " %s", n.c_str());
        std::fprintf(stderr, "\n");
        std::exit(2);
    }
    g_fn = it->second;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    run_input(g_name, g_fn, data, size);
    return 0;
}

#else

int main(int argc, char** argv) {
    if (argc < 2 || !registry().count(argv[1])) {
        std::fprintf(stderr, "usage: fuzz_replay TARGET DIR|FILE...   targets:");
        for (const auto& [n, f] : registry()) std::fprintf(stderr, " %s", n.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    const std::string name = argv[1];
    const TargetFn fn = registry()[name];
    std::vector<std::filesystem::path> files;
    for (int i = 2; i < argc; ++i) {  // directories and single seed files
        if (std::filesystem::is_regular_file(argv[i])) files.push_back(argv[i]);
        if (!std::filesystem::is_directory(argv[i])) continue;  // e.g. no regressions saved yet
        for (const auto& e : std::filesystem::directory_iterator(argv[i]))
            if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        g_current = f.string();
        run_input(name.c_str(), fn, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("fuzz target '%s': %zu inputs replayed, no finding\n", name.c_str(), files.size());
    return 0;
}

#endif
