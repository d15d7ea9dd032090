#include "runtime/ops/i_op.h"

#include "sim/error.h"

namespace sfumato::ops {

namespace {

// Stamps the operator's name and full argument list on its launches, so a run can be recorded
// as a workload file and replayed.
class NamedOp : public IOp {
public:
    NamedOp(std::unique_ptr<IOp> op, std::string name, OpArgs args)
        : m_op(std::move(op)), m_name(std::move(name)), m_args(std::move(args)) {}
    void prepare(rt::Runtime& rt) override { m_op->prepare(rt); }
    std::vector<KernelDesc> kernels() const override {
        std::vector<KernelDesc> ks = m_op->kernels();
        for (KernelDesc& k : ks) {
            k.op = m_name;
            k.op_args = m_args;
        }
        return ks;
    }
    CheckResult check(rt::Runtime& rt) override { return m_op->check(rt); }
    void release(rt::Runtime& rt) override { m_op->release(rt); }

private:
    std::unique_ptr<IOp> m_op;
    std::string m_name;
    OpArgs m_args;
};

std::map<std::string, OpSpec>& registry() {
    static std::map<std::string, OpSpec> r;
    return r;
}
std::map<std::string, OpArgs>& samples() {
    static std::map<std::string, OpArgs> r;
    return r;
}
}  // namespace

void register_op_sample(const std::string& name, OpArgs args) { samples()[name] = std::move(args); }

const OpArgs* op_sample(const std::string& name) {
    auto it = samples().find(name);
    return it == samples().end() ? nullptr : &it->second;
}

void register_op(OpSpec spec) { registry()[spec.name] = std::move(spec); }

const OpSpec* find_op(const std::string& name) {
    auto it = registry().find(name);
    return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> op_names() {
    std::vector<std::string> n;
    for (const auto& [k, v] : registry()) n.push_back(k);
    return n;
}

std::unique_ptr<IOp> make_op(const std::string& name, const OpArgs& args, const DeviceInfo& dev) {
    const OpSpec* spec = find_op(name);
    if (!spec) {
        std::string known;
        for (const auto& n : op_names()) known += (known.empty() ? "" : ", ") + n;
        throw InputError("unknown operator '" + name + "' (known: " + known + ")");
    }
    OpArgs full;
    for (const auto& a : spec->args) {
        auto it = args.find(a.name);
        if (it != args.end()) full[a.name] = it->second;
        else if (!a.default_value.empty()) full[a.name] = a.default_value;
        else throw InputError("operator '" + name + "': missing argument '" + a.name + "'");
    }
    for (const auto& [k, v] : args) {
        if (!full.count(k)) throw InputError("operator '" + name + "': unknown argument '" + k + "'");
    }
    return std::make_unique<NamedOp>(spec->make(full, dev), name, full);
}

uint64_t arg_u64(const OpArgs& a, const std::string& op, const std::string& key, uint64_t lo, uint64_t hi) {
    const std::string& s = a.at(key);
    size_t pos = 0;
    uint64_t v = 0;
    try {
        if (!s.empty() && s[0] == '-') throw std::invalid_argument(s);
        v = std::stoull(s, &pos, 0);
    } catch (...) {
        throw InputError("operator '" + op + "': argument '" + key + "' = '" + s + "' is not an unsigned integer");
    }
    if (pos != s.size()) throw InputError("operator '" + op + "': argument '" + key + "' = '" + s + "' is not an unsigned integer");
    if (v < lo || v > hi)
        throw InputError("operator '" + op + "': argument '" + key + "' = " + s + " outside [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]");
    return v;
}

std::string arg_str(const OpArgs& a, const std::string& key) { return a.at(key); }

}  // namespace sfumato::ops
