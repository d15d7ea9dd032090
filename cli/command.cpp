#include "cli/command.h"
#include "cli/distributed.h"

#include <cstdio>
#include <exception>
#include <iostream>
#include <map>

#include "cli/interrupt.h"
#include "cli/installation.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {
struct Entry {
    std::string summary;
    CommandFn fn;
};
std::map<std::string, Entry>& registry() {
    static std::map<std::string, Entry> r;
    return r;
}
// To stdout when asked for (--help), to stderr as part of an error.
void usage(FILE* out) {
    std::fprintf(out,
                 "usage: sfumato <command> [options]   (sfumato <command> --help)\n"
                 "       sfumato --version | --help-all (every command's options)\n\ncommands:\n");
    for (const auto& [name, e] : registry()) std::fprintf(out, "  %-10s %s\n", name.c_str(), e.summary.c_str());
}
}  // namespace

CommandRegistrar::CommandRegistrar(const char* name, const char* summary, CommandFn fn) {
    registry()[name] = {summary, std::move(fn)};
}

const CommandFn* find_command(const std::string& name) {
    auto it = registry().find(name);
    return it == registry().end() ? nullptr : &it->second.fn;
}

// Every command's --help after the command list: the text the man page is made of
// (cmake/man_page.cmake), so the two cannot differ.
int help_all() {
    usage(stdout);
    for (const auto& [name, e] : registry()) {
        std::printf("\n== sfumato %s: %s\n\n", name.c_str(), e.summary.c_str());
        std::fflush(stdout);
        const int code = e.fn({"--help"});
        std::cout.flush();
        if (code != kExitOk) {
            std::fprintf(stderr, "sfumato --help-all: '%s --help' exited with %d\n", name.c_str(), code);
            return kExitFailure;
        }
    }
    return kExitOk;
}

int dispatch(int argc, char** argv) {
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? kExitBadInput : kExitOk;
    }
    if (std::string(argv[1]) == "--version") {
        std::printf("%s\npresets: %s\n", version_string().c_str(), preset_dir().c_str());
        return kExitOk;
    }
    if (std::string(argv[1]) == "--help-all") {
        try {
            return help_all();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "sfumato --help-all: %s\n", e.what());
            return kExitFailure;
        }
    }
    auto it = registry().find(argv[1]);
    if (it == registry().end()) {
        std::fprintf(stderr, "sfumato: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return kExitBadInput;
    }
    if (const std::string why = split_refusal(argv[1]); !why.empty()) {
        std::fprintf(stderr, "sfumato %s: error: %s\n", argv[1], why.c_str());
        return kExitBadInput;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    install_signal_handlers();
    try {
        const int code = it->second.fn(args);
        // A signal that came after the outputs were complete still ends with its code.
        return stop_signal() ? kExitSignalBase + stop_signal() : code;
    } catch (const SimError& e) {
        std::fprintf(stderr, "sfumato %s: error: %s\n", argv[1], e.what());
        return e.code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sfumato %s: internal error: %s\n", argv[1], e.what());
        return kExitFailure;
    }
}

}  // namespace sfumato::cli
