// The graph executor's IR: values (tensors with an ONNX element type, a shape
// whose dimensions are known sizes or symbols, and, for weights and plan-time
// constants, their data) and nodes (an ONNX op type, its opset, attributes,
// input and output values). Nodes are kept in topological order. Passes rewrite
// a Graph in place; import, shape inference, the reference interpreter and
// planning read it. Nothing here knows protobuf or the chip. Simplified: one
// graph (no subgraphs: If/Loop are unsupported operators); symbolic dimensions
// are names or expressions of names, not a solver.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "isa/dtype.h"
#include "runtime/ref/attrs.h"
#include "runtime/ref/host_tensor.h"

namespace sfumato::graph {

// A dimension: a known size, or a symbol (an input's dim_param such as "N", or
// an expression of symbols such as "N*128").
struct Dim {
    int64_t v = -1;   // >= 0 when known
    std::string sym;  // when not known

    static Dim of(int64_t v) { return Dim{v, {}}; }
    static Dim symbol(std::string s) { return Dim{-1, std::move(s)}; }
    bool known() const { return v >= 0; }
    std::string str() const { return known() ? std::to_string(v) : (sym.empty() ? "?" : sym); }
    bool operator==(const Dim& o) const {
        return known() ? v == o.v : (!o.known() && sym == o.sym && !sym.empty());
    }
    bool operator!=(const Dim& o) const { return !(*this == o); }
};
using Shape = std::vector<Dim>;

Shape make_shape(const std::vector<int64_t>& s);
bool all_known(const Shape& s);
// The sizes of a shape whose dimensions are all known (throws InputError
// otherwise, naming what).
std::vector<int64_t> concrete(const Shape& s, const std::string& what);
std::string shape_str(const Shape& s);
// Arithmetic on dimensions: known op known is known; otherwise a symbolic
// expression.
Dim dim_add(const Dim& a, const Dim& b);
// a op b for op '+', '-' or '*' on plain integers (negative allowed); InputError past 64 bits.
int64_t dim_checked(int64_t a, int64_t b, char op);
Dim dim_sub(const Dim& a, const Dim& b);
Dim dim_mul(const Dim& a, const Dim& b);
Dim dim_div(const Dim& a, const Dim& b);  // floor division
Dim dim_ceil_div(const Dim& a, const Dim& b);
// Product of all dimensions (a known value or an expression).
Dim dim_product(const Shape& s, size_t begin = 0, size_t end = SIZE_MAX);

// A constant tensor's data as the model stores it: little-endian bytes of its
// ONNX element type (weights can be large: they are converted to doubles only
// when a host computation needs them).
struct RawTensor {
    ref::ElemType type = ref::ElemType::Float;
    std::vector<int64_t> shape;
    std::string bytes;  // numel * element size

    uint64_t numel() const;
    ref::HostTensor to_host() const;
    // The values as the device stores them in dtype d (ref::device_dtype
    // conventions).
    std::vector<uint8_t> to_device(isa::DType d) const;
};
size_t elem_size(ref::ElemType t);  // storage bytes of an ONNX element type (0 = unsupported)
RawTensor raw_from_host(const ref::HostTensor& t);
// A float tensor from floats, stored as type t (Float, Float16 or Bfloat16).
RawTensor raw_from_floats(const std::vector<float>& v, const std::vector<int64_t>& shape, ref::ElemType t);
// Throws InputError unless t is one raw_from_floats stores.
void check_float_type(ref::ElemType t);

// A constant value: small ones as a HostTensor, large weights as raw bytes (or
// both), or bytes a function makes on first use (a pass's result over large weights, a zoo
// model's generated weights: a timing-mode run never asks for their values).
class ConstValue {
public:
    explicit ConstValue(ref::HostTensor t) : m_host(std::make_shared<const ref::HostTensor>(std::move(t))) {}
    explicit ConstValue(RawTensor r) : m_raw(std::make_shared<const RawTensor>(std::move(r))) {}
    // `src` rounded to type t, converted only when its values are asked for (a timing-mode run
    // never converts the weights of a model it runs in fp16).
    ConstValue(std::shared_ptr<const ConstValue> src, ref::ElemType t) : m_src(std::move(src)), m_type(t) {}
    // Type t and shape `shape`, its bytes made by `make` when first asked for (once; `make` must
    // return that type and shape, checked then).
    ConstValue(ref::ElemType t, std::vector<int64_t> shape, std::function<RawTensor()> make);
    ref::ElemType type() const { return m_src || m_lazy ? m_type : m_host ? m_host->type : m_raw->type; }
    const std::vector<int64_t>& shape() const {
        return m_src ? m_src->shape() : m_lazy ? m_shape : m_host ? m_host->shape : m_raw->shape;
    }
    uint64_t numel() const;
    // The values as doubles (converted from raw bytes on each call when held raw; kept after
    // the first call for constants of at most kHostMemo elements).
    std::shared_ptr<const ref::HostTensor> host() const;
    std::vector<uint8_t> to_device(isa::DType d) const;
    // Float values as floats (fast path for weights; any element type converts).
    std::vector<float> floats() const;
    // The same values in another element type (rounded once, lazily).
    static std::shared_ptr<const ConstValue> converted(std::shared_ptr<const ConstValue> v, ref::ElemType t);
    // Whether a lazily made value has been made (tests; always true for the other forms).
    bool made() const;
    static constexpr uint64_t kHostMemo = 1u << 16;

private:
    const RawTensor* raw() const;  // m_raw, or the lazy value made now
    std::shared_ptr<const ref::HostTensor> host_uncached() const;
    struct Memo {
        std::mutex m;
        std::function<RawTensor()> make;
        std::shared_ptr<const RawTensor> raw;
        std::shared_ptr<const ref::HostTensor> host;
    };
    std::shared_ptr<const ref::HostTensor> m_host;
    std::shared_ptr<const RawTensor> m_raw;
    std::shared_ptr<const ConstValue> m_src;
    ref::ElemType m_type = ref::ElemType::Undefined;
    std::vector<int64_t> m_shape;  // lazy form
    bool m_lazy = false;
    std::shared_ptr<Memo> m_memo = std::make_shared<Memo>();  // the lazy form's function and result; host() of small values
};

struct Value {
    std::string name;
    ref::ElemType elem = ref::ElemType::Undefined;
    Shape shape;
    bool has_shape = false;                      // rank (and dimensions, possibly symbolic) known
    std::shared_ptr<const ConstValue> constant;  // weights and plan-time constants
    bool initializer = false;                    // a weight of the model
    bool graph_input = false, graph_output = false;
    // A graph input the caller keeps in device memory across runs (weights shared by several
    // plans, a KV cache written in place): the plan neither allocates nor uploads it, and
    // Executor::bind() gives its address before load().
    bool external = false;
    int producer = -1;  // node index, -1 for inputs and constants
};

struct Node {
    std::string name;
    std::string op_type;
    std::string domain;  // "" = ai.onnx
    int opset = 17;
    ref::Attrs attrs;
    std::vector<int> inputs;         // value ids; -1 = an omitted optional input
    std::vector<int> outputs;        // value ids; -1 = an omitted optional output
    std::vector<std::string> fused;  // original node names folded into this one (for reports)
};

class Graph {
public:
    std::string name;
    int opset = 17;  // default-domain opset the model imports
    std::vector<Value> values;
    std::vector<Node> nodes;
    std::vector<int> inputs;  // graph inputs (not initializers)
    std::vector<int> outputs;

    int find_value(const std::string& name) const;  // -1 if none
    int add_value(Value v);
    // A fresh value name with this prefix.
    std::string unique_name(const std::string& prefix) const;
    // Per value: the nodes reading it (an index per use).
    std::vector<std::vector<int>> consumers() const;
    // Recomputes Value::producer from the nodes; throws InputError when two nodes
    // write a value.
    void rebuild_producers();
    // Orders nodes so every input is produced before use; throws InputError
    // naming a node on a cycle.
    void topo_sort();
    // Drops nodes flagged in `dead` and values nothing refers to any more (ids
    // are remapped).
    void erase_nodes(const std::vector<bool>& dead);
    void compact_values();

    const Value& val(int id) const { return values.at(static_cast<size_t>(id)); }
    // Names handed out or seen (unique_name keeps it up to date as the vectors grow).
    Value& val(int id) { return values.at(static_cast<size_t>(id)); }
    const Value* input_of(const Node& n, size_t i) const {
        return i < n.inputs.size() && n.inputs[i] >= 0 ? &val(n.inputs[i]) : nullptr;
    }

private:
    mutable std::unordered_set<std::string> m_taken;
    mutable size_t m_seen_values = 0, m_seen_nodes = 0;
};

// "node 'NAME' (OP)": how errors name a node.
std::string node_label(const Node& n);

}  // namespace sfumato::graph
