// Host references of the graph's pass-through ops: Identity, sfumato's Copy,
// and Dropout at inference (the output is the input; the optional mask is all
// true).
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::ref {

namespace {

std::vector<HostTensor> identity(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.empty() || !in[0]) throw InputError("node '" + n.name + "': Identity needs an input");
    return {*in[0]};
}

std::vector<HostTensor> dropout(const RefNode& n, const std::vector<const HostTensor*>& in) {
    if (in.empty() || !in[0]) throw InputError("node '" + n.name + "': Dropout needs an input");
    if (in.size() > 2 && in[2] && !in[2]->data.empty() && in[2]->data[0] != 0)
        throw InputError("node '" + n.name + "': Dropout in training mode is not supported");
    HostTensor mask(ElemType::Bool, in[0]->shape);
    std::fill(mask.data.begin(), mask.data.end(), 1.0);
    return {*in[0], mask};
}

}  // namespace

SFUMATO_REGISTER_REF(identity, "Identity", identity);
SFUMATO_REGISTER_REF(copy, "Copy", identity);
SFUMATO_REGISTER_REF(dropout, "Dropout", dropout);

}  // namespace sfumato::ref
