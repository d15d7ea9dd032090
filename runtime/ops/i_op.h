// Contract: an operator of the operator library, as `sfumato kernel` and workload replay use it.
// An op is built from named string arguments (validated, errors name the argument), plans its
// tiling on the host for the device it will run on, prepares its inputs on the device (random
// data from a fixed seed in functional mode), describes its kernel launches (in order, one
// stream), and checks the
// device's outputs against a host reference. Registered by name with one line
// (SFUMATO_REGISTER_OP), so the CLI and replay know every op without a list to maintain.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/rt/runtime.h"
#include "sim/device_if.h"

namespace sfumato::ops {

using OpArgs = std::map<std::string, std::string>;

struct OpArgSpec {
    std::string name;
    std::string default_value;  // "" = required
    std::string help;
};

struct CheckResult {
    bool checked = false;  // false in timing mode (no data)
    bool passed = true;
    double max_abs_err = 0, max_rel_err = 0;
};

class IOp {
public:
    virtual ~IOp() = default;
    virtual void prepare(rt::Runtime& rt) = 0;
    virtual std::vector<KernelDesc> kernels() const = 0;
    virtual CheckResult check(rt::Runtime& rt) = 0;
    virtual void release(rt::Runtime& rt) = 0;
};

struct OpSpec {
    std::string name;
    std::string summary;
    std::vector<OpArgSpec> args;
    std::function<std::unique_ptr<IOp>(const OpArgs& args, const DeviceInfo& dev)> make;
};

void register_op(OpSpec spec);
const OpSpec* find_op(const std::string& name);
std::vector<std::string> op_names();
// Builds an op, filling defaults; unknown or missing arguments throw InputError naming them.
std::unique_ptr<IOp> make_op(const std::string& name, const OpArgs& args, const DeviceInfo& dev);

// Argument helpers for op factories (errors name the op and argument).
uint64_t arg_u64(const OpArgs& a, const std::string& op, const std::string& key, uint64_t lo, uint64_t hi);
std::string arg_str(const OpArgs& a, const std::string& key);

// Small arguments (merged over the defaults) that tests run an op with, e.g. the sweep that
// holds functional and timing cycles equal for every registered op. One line per op:
// SFUMATO_OP_SAMPLE(var, "name", {{"n", "1000"}}).
void register_op_sample(const std::string& name, OpArgs args);
const OpArgs* op_sample(const std::string& name);  // null when the op has none

struct OpSampleRegistrar {
    OpSampleRegistrar(const char* name, OpArgs args) { register_op_sample(name, std::move(args)); }
};
#define SFUMATO_OP_SAMPLE(var, name, ...) \
    static ::sfumato::ops::OpSampleRegistrar sfumato_op_sample_##var(name, __VA_ARGS__)

struct OpRegistrar {
    explicit OpRegistrar(OpSpec spec) { register_op(std::move(spec)); }
};
#define SFUMATO_REGISTER_OP(var, ...) static ::sfumato::ops::OpRegistrar sfumato_op_##var(__VA_ARGS__)

}  // namespace sfumato::ops
