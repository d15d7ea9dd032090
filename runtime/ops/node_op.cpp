#include "runtime/ops/node_op.h"

#include <map>

namespace sfumato::ops {

const char* format_name(Format f) {
    switch (f) {
        case Format::NZ: return "NZ";
        case Format::NC1HWC0: return "NC1HWC0";
        default: return "ND";
    }
}

uint64_t TensorRef::numel() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

bool TensorRef::contiguous() const { return strides.empty() || strides == ref::contiguous_strides(shape); }

uint64_t TensorRef::storage_bytes() const {
    const uint64_t es = isa::dtype_size(dtype);
    const uint64_t c0 = 32 / es;
    auto up = [](uint64_t a, uint64_t b) { return (a + b - 1) / b * b; };
    switch (format) {
        case Format::NZ: {
            if (shape.empty()) return up(1, 16) * up(1, c0) * es;
            const uint64_t rows = shape.size() >= 2 ? static_cast<uint64_t>(shape[shape.size() - 2]) : 1;
            const uint64_t cols = static_cast<uint64_t>(shape.back());
            uint64_t batch = 1;
            for (size_t i = 0; i + 2 < shape.size(); ++i) batch *= static_cast<uint64_t>(shape[i]);
            return batch * up(rows, 16) * up(cols, c0) * es;
        }
        case Format::NC1HWC0: {
            if (shape.size() < 2) return numel() * es;
            uint64_t hw = 1;
            for (size_t i = 2; i < shape.size(); ++i) hw *= static_cast<uint64_t>(shape[i]);
            return static_cast<uint64_t>(shape[0]) * up(static_cast<uint64_t>(shape[1]), c0) * hw * es;
        }
        default: return numel() * es;
    }
}

TensorRef make_tensor(const std::vector<int64_t>& shape, ref::ElemType elem) {
    TensorRef t;
    t.shape = shape;
    t.elem = elem;
    if (!ref::device_dtype(elem, t.dtype))
        throw InputError(std::string("element type ") + ref::elem_type_name(elem) + " has no device representation");
    return t;
}

namespace {
std::map<std::string, NodeOpFactory>& node_ops() {
    static std::map<std::string, NodeOpFactory> r;
    return r;
}
}  // namespace

void register_node_op(const std::string& op_type, NodeOpFactory f) { node_ops()[op_type] = std::move(f); }

bool has_node_op(const std::string& op_type) { return node_ops().count(op_type) != 0; }

std::vector<std::string> node_op_types() {
    std::vector<std::string> v;
    for (const auto& [k, f] : node_ops()) v.push_back(k);
    return v;
}

std::unique_ptr<INodeOp> make_node_op(const NodeDesc& node, const DeviceInfo& dev) {
    auto it = node_ops().find(node.op_type);
    if (it == node_ops().end()) throw UnsupportedError(node, "unsupported operator");
    return it->second(node, dev);
}

}  // namespace sfumato::ops
