// Errors a simulation can end with. Model code throws; the CLI maps each kind to a message and
// an exit code (model code never calls exit()).
#pragma once
#include <stdexcept>
#include <string>

namespace sfumato {

enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,      // a check failed, or an internal error
    kExitBadInput = 2,     // bad config, unknown key, out-of-range value, malformed input file
    kExitRace = 3,         // --check-races found an unordered pair of accesses
    kExitDeadlock = 4,     // no process can make progress, or the run passed --max-cycles
    // 128 + N: stopped by signal N (SIGINT 130, SIGTERM 143) before finishing (the CLI's handler).
    kExitSignalBase = 128,
};

class SimError : public std::runtime_error {
public:
    SimError(int code, const std::string& msg) : std::runtime_error(msg), m_code(code) {}
    int code() const { return m_code; }

private:
    int m_code;
};

// Bad configuration: names the key.
class ConfigError : public SimError {
public:
    ConfigError(const std::string& key, const std::string& msg)
        : SimError(kExitBadInput, "config key '" + key + "': " + msg), m_key(key) {}
    const std::string& key() const { return m_key; }

private:
    std::string m_key;
};

// Bad user input other than config (malformed file, unsupported operator, bad argument).
class InputError : public SimError {
public:
    explicit InputError(const std::string& msg) : SimError(kExitBadInput, msg) {}
};

// An output file or directory cannot be written (read-only or full file system, no permission):
// like bad input, the user must pick another place. Nothing partial is left behind.
class OutputError : public SimError {
public:
    explicit OutputError(const std::string& msg) : SimError(kExitBadInput, msg) {}
};

// A model detected a fault in what it runs (buffer overrun, misalignment): names the
// component path and the instruction.
class ModelError : public SimError {
public:
    ModelError(const std::string& where, const std::string& msg, int code = kExitFailure)
        : SimError(code, where + ": " + msg) {}
};

// A program (a kernel or an assembly file) asked the hardware for something it cannot do:
// a buffer overrun, a misaligned address, a pipe or flag the core does not have. That is bad
// input (exit 2), not an internal error: names the core and the instruction.
class ProgramError : public ModelError {
public:
    ProgramError(const std::string& where, const std::string& msg) : ModelError(where, msg, kExitBadInput) {}
};

}  // namespace sfumato
