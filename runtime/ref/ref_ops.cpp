#include "runtime/ref/ref_ops.h"

#include "sim/error.h"

namespace sfumato::ref {

namespace {
std::map<std::string, RefFn>& registry() {
    static std::map<std::string, RefFn> r;
    return r;
}
}  // namespace

void register_ref(const std::string& op_type, RefFn fn) { registry()[op_type] = std::move(fn); }

const RefFn* find_ref(const std::string& op_type) {
    auto it = registry().find(op_type);
    return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> ref_op_types() {
    std::vector<std::string> v;
    for (const auto& [k, f] : registry()) v.push_back(k);
    return v;
}

std::vector<HostTensor> run_ref(const RefNode& node, const std::vector<const HostTensor*>& in) {
    const RefFn* f = find_ref(node.op_type);
    if (!f) throw InputError("node '" + node.name + "': unsupported operator '" + node.op_type + "' (no host reference)");
    return (*f)(node, in);
}

}  // namespace sfumato::ref
