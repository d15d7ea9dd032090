// Contract: the graph-node face of an operator. From a node (ONNX op type, attributes, input
// shapes/dtypes/strides/formats and, where known at plan time, constant input values) and the
// DeviceInfo, an operator plans its host tiling once and then describes its kernel launches on
// tensors the caller has already placed in device memory: no allocation, no upload, no host
// copy inside the operator. The graph executor, workload replay and the standalone face
// (`sfumato kernel OP`, runtime/ops/standalone.h) all go through it.
//
// Registration is one line per ONNX op type (SFUMATO_REGISTER_NODE_OP), in the op family's
// file. A factory that cannot handle a node (dtype, attribute value, rank) throws
// UnsupportedError naming the node, the op and what is unsupported; passes use this to probe
// (a fusion is kept only if the fused node's factory accepts it).
//
// Conventions shared with runtime/graph:
// - int64 tensors (indices, shapes) live on the device as int32 (TensorRef::elem keeps Int64),
//   bool as uint8 (0/1), double as fp32.
// - A TensorRef's strides are in elements; empty = contiguous row-major; a 0 stride repeats the
//   element (a broadcast view, never materialised).
// - Fused nodes keep the anchor's ONNX op type and carry extra attributes: `activation`
//   (string: Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Clip, HardSigmoid, HardSwish) with
//   `activation_alpha` / `activation_beta` (floats), and `fused_nodes` (strings: the original
//   node names, for reports). sfumato-only op types: `ElementwiseChain` (attribute `program`,
//   strings, one ONNX elementwise op per step, applied left to right; inputs: the chain's
//   tensor operands in order of use; `fp32` int: compute every step of a 2-byte chain in fp32)
//   and `FusedAttention` (inputs Q, K, V [, mask]; attributes
//   `scale` float, `causal` int).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"
#include "sim/device_if.h"
#include "sim/error.h"

namespace sfumato::ops {

// How a tensor's elements are laid out in device memory. NZ is the framework's FRACTAL_NZ for
// the last two dims (16 x C0 fractals, C0 = 32 B / element size); NC1HWC0 splits channels of
// an NCHW tensor into C1 groups of C0.
enum class Format : uint8_t { ND, NZ, NC1HWC0 };
const char* format_name(Format f);

struct TensorRef {
    std::vector<int64_t> shape;
    isa::DType dtype = isa::DType::FP16;       // how it is stored on the device
    ref::ElemType elem = ref::ElemType::Float16;  // the ONNX type it stands for
    Format format = Format::ND;
    std::vector<int64_t> strides;  // elements; empty = contiguous; 0 = broadcast
    uint64_t addr = 0;             // device address of element 0 (set before launches())
    bool present = true;           // false: an omitted optional input

    uint64_t numel() const;
    // Bytes a contiguous tensor of this shape, dtype and format occupies (fractal padding
    // included).
    uint64_t storage_bytes() const;
    bool contiguous() const;
};
// A contiguous ND tensor of an ONNX element type (device dtype from ref::device_dtype; throws
// UnsupportedError for types the chip cannot hold).
TensorRef make_tensor(const std::vector<int64_t>& shape, ref::ElemType elem);

struct NodeDesc {
    std::string name;
    std::string op_type;
    int opset = 17;
    ref::Attrs attrs;
    std::vector<TensorRef> inputs;
    // Per input: its value when known at plan time (initializer or folded constant), else null.
    // Ops that need a value to plan (Reshape's shape, Slice's starts, Pad's pads, Clip's
    // bounds, ...) read it here and throw UnsupportedError when it is not constant.
    std::vector<std::shared_ptr<const ref::HostTensor>> constants;
    // Outputs the ONNX node lists (trailing optional outputs may be left off); 0 = the op's
    // default (its required outputs). An op's outputs() returns this many; a listed but unnamed
    // output arrives in launches() with present = false.
    int num_outputs = 0;

    const ref::HostTensor* constant(size_t i) const {
        return i < constants.size() ? constants[i].get() : nullptr;
    }
    bool has_input(size_t i) const { return i < inputs.size() && inputs[i].present; }
};

// The node cannot run as given (dtype, attribute, rank). Bad input: exit 2.
class UnsupportedError : public InputError {
public:
    UnsupportedError(const NodeDesc& n, const std::string& what)
        : InputError("node '" + n.name + "' (" + n.op_type + "): " + what) {}
};

class INodeOp {
public:
    virtual ~INodeOp() = default;
    // Shape, dtype, elem and format of every output (addresses unset).
    virtual std::vector<TensorRef> outputs() const = 0;
    // The format input i must be in; the graph's format pass inserts a conversion when its
    // producer writes another (and counts it).
    virtual Format input_format(size_t i) const { return Format::ND; }
    // Output `out` is input view_of(out) reinterpreted (reshape family on a contiguous input):
    // no kernel, no memory. -1 = a real output.
    virtual int view_of(size_t out) const { return -1; }
    // Device scratch the launches need (the caller places it).
    virtual uint64_t workspace_bytes() const { return 0; }
    // The kernels, launched in this order on one stream. Each KernelDesc carries the op's
    // flops, compulsory GM bytes and compute lower bound for its roofline.
    virtual std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                             uint64_t workspace) const = 0;
    // The form the tiling chose (e.g. "broadcast: stride-0 read"), for traces and reports.
    virtual std::string describe() const { return ""; }
};

using NodeOpFactory = std::function<std::unique_ptr<INodeOp>(const NodeDesc& node, const DeviceInfo& dev)>;

void register_node_op(const std::string& op_type, NodeOpFactory f);
bool has_node_op(const std::string& op_type);
std::vector<std::string> node_op_types();
// Plans the node; throws UnsupportedError "node 'N' (T): unsupported operator" when no operator
// of that type exists, or the factory's own UnsupportedError.
std::unique_ptr<INodeOp> make_node_op(const NodeDesc& node, const DeviceInfo& dev);

struct NodeOpRegistrar {
    NodeOpRegistrar(const char* op_type, NodeOpFactory f) { register_node_op(op_type, std::move(f)); }
};
#define SFUMATO_REGISTER_NODE_OP(var, op_type, factory) \
    static ::sfumato::ops::NodeOpRegistrar sfumato_node_op_##var(op_type, factory)

}  // namespace sfumato::ops
