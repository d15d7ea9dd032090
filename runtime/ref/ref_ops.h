// Contract: host references of operators, in ONNX semantics, computed in double on HostTensors.
// One function per op type, registered with one line (SFUMATO_REGISTER_REF), in a file per op
// family (runtime/ref/*.cpp). The operator library checks its kernels against these, and the
// graph executor's reference interpreter runs whole models with them. A reference takes the
// node's attributes and inputs (absent optional inputs are null) and returns every output;
// bad attributes or shapes throw InputError naming the node and the attribute.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

struct RefNode {
    std::string name;     // node name, for messages
    std::string op_type;  // ONNX op type (or one of sfumato's fused types)
    int opset = 17;
    Attrs attrs;
    int num_outputs = 0;  // outputs the node lists (0 = unknown; Split without sizes needs it)
};

using RefFn = std::function<std::vector<HostTensor>(const RefNode& node, const std::vector<const HostTensor*>& in)>;

void register_ref(const std::string& op_type, RefFn fn);
const RefFn* find_ref(const std::string& op_type);
std::vector<std::string> ref_op_types();
// Runs the reference of node.op_type; throws InputError "node 'N': unsupported operator 'T'"
// when there is none.
std::vector<HostTensor> run_ref(const RefNode& node, const std::vector<const HostTensor*>& in);

struct RefRegistrar {
    RefRegistrar(const char* op_type, RefFn fn) { register_ref(op_type, std::move(fn)); }
};
#define SFUMATO_REGISTER_REF(var, op_type, fn) static ::sfumato::ref::RefRegistrar sfumato_ref_##var(op_type, fn)

}  // namespace sfumato::ref
