// Input checks the host reference operators share: an error naming the node and its operator, and
// an input that must be present. (One definition for the reference sources, which may be
// compiled together in one translation unit, SFUMATO_UNITY.)
#pragma once
#include <string>
#include <vector>

#include "runtime/ref/host_tensor.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

// InputError "node 'NAME' (OP): what".
[[noreturn]] inline void fail(const RefNode& n, const std::string& what) {
    throw InputError("node '" + n.name + "' (" + n.op_type + "): " + what);
}

// Input i, which the operator needs (`what` names it in the error).
inline const HostTensor& need(const RefNode& n, const std::vector<const HostTensor*>& in, size_t i, const char* what) {
    if (i >= in.size() || !in[i]) fail(n, "missing input " + std::to_string(i) + " (" + what + ")");
    return *in[i];
}
// Input i, unnamed.
inline const HostTensor& need(const RefNode& n, const std::vector<const HostTensor*>& in, size_t i) {
    if (i >= in.size() || !in[i]) fail(n, "missing input " + std::to_string(i));
    return *in[i];
}

}  // namespace sfumato::ref
