// Graph IR helpers: symbolic dimension arithmetic, constant storage
// conversions, topological order, node removal and value compaction.
#include "runtime/graph/ir.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "sim/error.h"

namespace sfumato::graph {

namespace {

// A constant in its device type. int64 constants live on the device as int32 (node_op.h) and are
// saturated to it: the values beyond int32 constants hold are ONNX's INT64_MAX/MIN "to the
// end" bounds of Slice (e.g. PyTorch's x[:, 1:]), which keep their meaning clamped. (Graph
// inputs are not saturated: an int64 input beyond int32 is an error.)
std::vector<uint8_t> const_device_bytes(const ref::HostTensor& h, isa::DType d) {
    if (h.type != ref::ElemType::Int64 || d != isa::DType::INT32) return ref::to_device_bytes(h, d);
    ref::HostTensor c = h;
    const double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    for (double& v : c.data) v = std::max(lo, std::min(hi, v));
    return ref::to_device_bytes(c, d);
}

}  // namespace

Shape make_shape(const std::vector<int64_t>& s) {
    Shape r;
    for (int64_t d : s) r.push_back(Dim::of(d));
    return r;
}

bool all_known(const Shape& s) {
    for (const Dim& d : s)
        if (!d.known()) return false;
    return true;
}

std::vector<int64_t> concrete(const Shape& s, const std::string& what) {
    std::vector<int64_t> r;
    for (const Dim& d : s) {
        if (!d.known())
            throw InputError(what + ": dimension '" + d.str() + "' of shape " + shape_str(s) +
                             " is not known");
        r.push_back(d.v);
    }
    return r;
}

std::string shape_str(const Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + s[i].str();
    return r + "]";
}

namespace {
std::string paren(const Dim& d) {
    const std::string s = d.str();
    return s.find_first_of("+-*/") == std::string::npos ? s : "(" + s + ")";
}
}  // namespace

// Dimension arithmetic on known sizes; a result past int64 is a bad model, not undefined behaviour.
int64_t dim_checked(int64_t a, int64_t b, char op) {
    int64_t r = 0;
    const bool over = op == '+'   ? __builtin_add_overflow(a, b, &r)
                      : op == '-' ? __builtin_sub_overflow(a, b, &r)
                                  : __builtin_mul_overflow(a, b, &r);
    if (over)
        throw InputError("a tensor dimension overflows 64 bits (" + std::to_string(a) + " " + op + " " +
                         std::to_string(b) + ")");
    return r;
}

Dim dim_add(const Dim& a, const Dim& b) {
    if (a.known() && b.known()) return Dim::of(dim_checked(a.v, b.v, '+'));
    if (a.known() && a.v == 0) return b;
    if (b.known() && b.v == 0) return a;
    return Dim::symbol(a.str() + "+" + b.str());
}

Dim dim_sub(const Dim& a, const Dim& b) {
    if (a.known() && b.known()) return Dim::of(dim_checked(a.v, b.v, '-'));
    if (b.known() && b.v == 0) return a;
    return Dim::symbol(a.str() + "-" + paren(b));
}

Dim dim_mul(const Dim& a, const Dim& b) {
    if (a.known() && b.known()) return Dim::of(dim_checked(a.v, b.v, '*'));
    if (a.known() && a.v == 1) return b;
    if (b.known() && b.v == 1) return a;
    return Dim::symbol(paren(a) + "*" + paren(b));
}

Dim dim_div(const Dim& a, const Dim& b) {
    if (a.known() && b.known()) return Dim::of(b.v == 0 ? 0 : a.v / b.v);
    if (b.known() && b.v == 1) return a;
    return Dim::symbol(paren(a) + "/" + paren(b));
}

Dim dim_ceil_div(const Dim& a, const Dim& b) {
    if (a.known() && b.known()) {
        if (b.v == 0) return Dim::of(0);
        const int64_t q = a.v / b.v;  // rounds to zero; step up when the true quotient is positive
        return Dim::of(a.v % b.v != 0 && (a.v < 0) == (b.v < 0) ? q + 1 : q);
    }
    if (b.known() && b.v == 1) return a;
    return Dim::symbol("ceil(" + a.str() + "/" + b.str() + ")");
}

Dim dim_product(const Shape& s, size_t begin, size_t end) {
    Dim p = Dim::of(1);
    for (size_t i = begin; i < s.size() && i < end; ++i) p = dim_mul(p, s[i]);
    return p;
}

size_t elem_size(ref::ElemType t) {
    switch (t) {
        case ref::ElemType::Float:
        case ref::ElemType::Int32:
        case ref::ElemType::Uint32: return 4;
        case ref::ElemType::Double:
        case ref::ElemType::Int64:
        case ref::ElemType::Uint64: return 8;
        case ref::ElemType::Float16:
        case ref::ElemType::Bfloat16:
        case ref::ElemType::Int16:
        case ref::ElemType::Uint16: return 2;
        case ref::ElemType::Int8:
        case ref::ElemType::Uint8:
        case ref::ElemType::Bool: return 1;
        default: return 0;
    }
}

uint64_t RawTensor::numel() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

namespace {
// One stored element as a double.
double load_elem(ref::ElemType t, const char* p) {
    switch (t) {
        case ref::ElemType::Float: {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
        case ref::ElemType::Double: {
            double d;
            std::memcpy(&d, p, 8);
            return d;
        }
        case ref::ElemType::Float16: {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return isa::f16_to_f32(h);
        }
        case ref::ElemType::Bfloat16: {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return isa::bf16_to_f32(h);
        }
        case ref::ElemType::Int8: return static_cast<int8_t>(*p);
        case ref::ElemType::Uint8: return static_cast<uint8_t>(*p);
        case ref::ElemType::Bool: return *p ? 1.0 : 0.0;
        case ref::ElemType::Int16: {
            int16_t x;
            std::memcpy(&x, p, 2);
            return x;
        }
        case ref::ElemType::Uint16: {
            uint16_t x;
            std::memcpy(&x, p, 2);
            return x;
        }
        case ref::ElemType::Int32: {
            int32_t x;
            std::memcpy(&x, p, 4);
            return x;
        }
        case ref::ElemType::Uint32: {
            uint32_t x;
            std::memcpy(&x, p, 4);
            return x;
        }
        case ref::ElemType::Int64: {
            int64_t x;
            std::memcpy(&x, p, 8);
            return static_cast<double>(x);
        }
        case ref::ElemType::Uint64: {
            uint64_t x;
            std::memcpy(&x, p, 8);
            return static_cast<double>(x);
        }
        default: return 0;
    }
}
void store_elem(ref::ElemType t, char* p, double v) {
    switch (t) {
        case ref::ElemType::Float: {
            const float f = static_cast<float>(v);
            std::memcpy(p, &f, 4);
            break;
        }
        case ref::ElemType::Double: std::memcpy(p, &v, 8); break;
        case ref::ElemType::Float16: {
            const uint16_t h = isa::f32_to_f16(static_cast<float>(v));
            std::memcpy(p, &h, 2);
            break;
        }
        case ref::ElemType::Bfloat16: {
            const uint16_t h = isa::f32_to_bf16(static_cast<float>(v));
            std::memcpy(p, &h, 2);
            break;
        }
        case ref::ElemType::Int8: *p = static_cast<char>(static_cast<int8_t>(v)); break;
        case ref::ElemType::Uint8:
        case ref::ElemType::Bool: *p = static_cast<char>(static_cast<uint8_t>(v)); break;
        case ref::ElemType::Int16: {
            const int16_t x = static_cast<int16_t>(v);
            std::memcpy(p, &x, 2);
            break;
        }
        case ref::ElemType::Uint16: {
            const uint16_t x = static_cast<uint16_t>(v);
            std::memcpy(p, &x, 2);
            break;
        }
        case ref::ElemType::Int32: {
            const int32_t x = static_cast<int32_t>(v);
            std::memcpy(p, &x, 4);
            break;
        }
        case ref::ElemType::Uint32: {
            const uint32_t x = static_cast<uint32_t>(v);
            std::memcpy(p, &x, 4);
            break;
        }
        case ref::ElemType::Int64: {
            // Saturating: INT64_MAX/MIN (ONNX's "to the end") are just outside int64 as doubles.
            const int64_t x = v >= 9.2e18    ? std::numeric_limits<int64_t>::max()
                              : v <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                             : static_cast<int64_t>(v);
            std::memcpy(p, &x, 8);
            break;
        }
        case ref::ElemType::Uint64: {
            const uint64_t x = static_cast<uint64_t>(v);
            std::memcpy(p, &x, 8);
            break;
        }
        default: break;
    }
}
}  // namespace

ref::HostTensor RawTensor::to_host() const {
    ref::HostTensor t(type, shape);
    const size_t es = elem_size(type);
    for (uint64_t i = 0; i < t.data.size(); ++i) t.data[i] = load_elem(type, bytes.data() + i * es);
    return t;
}

std::vector<uint8_t> RawTensor::to_device(isa::DType d) const {
    // The common case (fp32 weights to an fp32/fp16/bf16 device tensor) converts
    // directly.
    if (type == ref::ElemType::Float &&
        (d == isa::DType::FP32 || d == isa::DType::FP16 || d == isa::DType::BF16)) {
        const uint64_t n = numel();
        const uint32_t es = isa::dtype_size(d);
        std::vector<uint8_t> out(n * es);
        for (uint64_t i = 0; i < n; ++i) {
            float f;
            std::memcpy(&f, bytes.data() + i * 4, 4);
            isa::store_from_f32(d, out.data() + i * es, f);
        }
        return out;
    }
    return const_device_bytes(to_host(), d);
}

RawTensor raw_from_host(const ref::HostTensor& t) {
    RawTensor r;
    r.type = t.type;
    r.shape = t.shape;
    const size_t es = elem_size(t.type);
    if (es == 0)
        throw InputError(std::string("element type ") + ref::elem_type_name(t.type) + " cannot be stored");
    r.bytes.resize(t.data.size() * es);
    for (size_t i = 0; i < t.data.size(); ++i) store_elem(t.type, r.bytes.data() + i * es, t.data[i]);
    return r;
}

void check_float_type(ref::ElemType t) {
    if (t != ref::ElemType::Float && t != ref::ElemType::Float16 && t != ref::ElemType::Bfloat16)
        throw InputError(std::string("raw_from_floats: ") + ref::elem_type_name(t) + " is not a float type");
}

RawTensor raw_from_floats(const std::vector<float>& v, const std::vector<int64_t>& shape, ref::ElemType t) {
    check_float_type(t);
    RawTensor r;
    r.type = t;
    r.shape = shape;
    const size_t es = elem_size(t);
    r.bytes.resize(v.size() * es);
    char* p = r.bytes.data();
    switch (t) {
        case ref::ElemType::Float: std::memcpy(p, v.data(), v.size() * 4); break;
        case ref::ElemType::Float16:
            for (size_t i = 0; i < v.size(); ++i) {
                const uint16_t h = isa::f32_to_f16(v[i]);
                std::memcpy(p + 2 * i, &h, 2);
            }
            break;
        case ref::ElemType::Bfloat16:
            for (size_t i = 0; i < v.size(); ++i) {
                const uint16_t h = isa::f32_to_bf16(v[i]);
                std::memcpy(p + 2 * i, &h, 2);
            }
            break;
        default: break;
    }
    return r;
}

namespace {
bool float_type(ref::ElemType t) {
    return t == ref::ElemType::Float || t == ref::ElemType::Float16 || t == ref::ElemType::Bfloat16;
}
}  // namespace

ConstValue::ConstValue(ref::ElemType t, std::vector<int64_t> shape, std::function<RawTensor()> make)
    : m_type(t), m_shape(std::move(shape)), m_lazy(true) {
    m_memo->make = std::move(make);
}

const RawTensor* ConstValue::raw() const {
    if (!m_lazy) return m_raw.get();
    std::lock_guard<std::mutex> lock(m_memo->m);
    if (!m_memo->raw) {
        RawTensor r = m_memo->make();
        if (r.type != m_type || r.shape != m_shape || r.bytes.size() != numel() * elem_size(m_type))
            throw std::logic_error("ConstValue: a lazily made value is not of its declared type and shape");
        m_memo->raw = std::make_shared<const RawTensor>(std::move(r));
        m_memo->make = nullptr;
    }
    return m_memo->raw.get();
}

bool ConstValue::made() const {
    if (!m_lazy) return true;
    std::lock_guard<std::mutex> lock(m_memo->m);
    return m_memo->raw != nullptr;
}

std::vector<float> ConstValue::floats() const {
    std::vector<float> out(numel());
    if (m_src && float_type(m_type) && float_type(m_src->type())) {
        out = m_src->floats();
        if (m_type == ref::ElemType::Float16)
            for (float& f : out) f = isa::f16_to_f32(isa::f32_to_f16(f));
        if (m_type == ref::ElemType::Bfloat16)
            for (float& f : out) f = isa::bf16_to_f32(isa::f32_to_bf16(f));
        return out;
    }
    const RawTensor* r = raw();
    if (r && r->type == ref::ElemType::Float) {
        std::memcpy(out.data(), r->bytes.data(), out.size() * 4);
        return out;
    }
    const auto h = host();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(h->data[i]);
    return out;
}

std::shared_ptr<const ConstValue> ConstValue::converted(std::shared_ptr<const ConstValue> v,
                                                        ref::ElemType t) {
    if (v->type() == t) return v;
    return std::make_shared<const ConstValue>(std::move(v), t);
}

uint64_t ConstValue::numel() const {
    uint64_t n = 1;
    for (int64_t d : shape()) n *= static_cast<uint64_t>(d);
    return n;
}

std::shared_ptr<const ref::HostTensor> ConstValue::host() const {
    if (m_host) return m_host;
    if (numel() > kHostMemo) return host_uncached();
    {
        std::lock_guard<std::mutex> lock(m_memo->m);
        if (m_memo->host) return m_memo->host;
    }
    auto h = host_uncached();
    std::lock_guard<std::mutex> lock(m_memo->m);
    if (!m_memo->host) m_memo->host = h;
    return m_memo->host;
}

std::shared_ptr<const ref::HostTensor> ConstValue::host_uncached() const {
    if (m_src) {
        auto h = std::make_shared<ref::HostTensor>(*m_src->host());
        h->type = m_type;
        ref::round_to_type(*h);
        return h;
    }
    return std::make_shared<const ref::HostTensor>(raw()->to_host());
}

std::vector<uint8_t> ConstValue::to_device(isa::DType d) const {
    // Rounding to the stored type and storing in the device type: a float source converts
    // straight to the device type (rounding fp32 -> fp16 once equals rounding twice).
    if (m_src) {
        isa::DType mine;
        if (float_type(m_type) && float_type(m_src->type()) && ref::device_dtype(m_type, mine) && mine == d)
            return m_src->to_device(d);
        return const_device_bytes(*host(), d);
    }
    if (const RawTensor* r = raw()) return r->to_device(d);
    return const_device_bytes(*m_host, d);
}

int Graph::find_value(const std::string& n) const {
    for (size_t i = 0; i < values.size(); ++i)
        if (values[i].name == n) return static_cast<int>(i);
    return -1;
}

int Graph::add_value(Value v) {
    values.push_back(std::move(v));
    return static_cast<int>(values.size() - 1);
}

std::string Graph::unique_name(const std::string& prefix) const {
    if (m_seen_values > values.size() || m_seen_nodes > nodes.size()) {
        m_taken.clear();
        m_seen_values = m_seen_nodes = 0;
    }
    for (; m_seen_values < values.size(); ++m_seen_values) m_taken.insert(values[m_seen_values].name);
    for (; m_seen_nodes < nodes.size(); ++m_seen_nodes) m_taken.insert(nodes[m_seen_nodes].name);
    std::string s = prefix;
    for (int i = 1; m_taken.count(s); ++i) s = prefix + "_" + std::to_string(i);
    m_taken.insert(s);  // handed out: never again, even before it is used
    return s;
}

std::vector<std::vector<int>> Graph::consumers() const {
    std::vector<std::vector<int>> c(values.size());
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int v : nodes[i].inputs)
            if (v >= 0) c[static_cast<size_t>(v)].push_back(static_cast<int>(i));
    return c;
}

std::string node_label(const Node& n) { return "node '" + n.name + "' (" + n.op_type + ")"; }

void Graph::rebuild_producers() {
    for (Value& v : values) v.producer = -1;
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int o : nodes[i].outputs) {
            if (o < 0) continue;
            Value& v = val(o);
            if (v.producer >= 0)
                throw InputError(node_label(nodes[i]) + ": output '" + v.name + "' is already produced by " +
                                 node_label(nodes[static_cast<size_t>(v.producer)]));
            if (v.graph_input || v.initializer)
                throw InputError(node_label(nodes[i]) + ": output '" + v.name +
                                 "' is also a graph input or initializer");
            v.producer = static_cast<int>(i);
        }
}

void Graph::topo_sort() {
    m_seen_values = m_seen_nodes = SIZE_MAX;
    rebuild_producers();
    const size_t n = nodes.size();
    std::vector<int> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<size_t> order;
    order.reserve(n);
    // Iterative DFS keeps the original order where it is already topological.
    for (size_t root = 0; root < n; ++root) {
        if (state[root]) continue;
        std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
        state[root] = 1;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            const auto& ins = nodes[node].inputs;
            if (next < ins.size()) {
                const int v = ins[next++];
                if (v < 0) continue;
                const int p = val(v).producer;
                if (p < 0) continue;
                if (state[static_cast<size_t>(p)] == 1)
                    throw InputError(node_label(nodes[node]) + ": the graph has a cycle through input '" +
                                     val(v).name + "'");
                if (state[static_cast<size_t>(p)] == 0) {
                    state[static_cast<size_t>(p)] = 1;
                    stack.push_back({static_cast<size_t>(p), 0});
                }
                continue;
            }
            state[node] = 2;
            order.push_back(node);
            stack.pop_back();
        }
    }
    std::vector<Node> sorted;
    sorted.reserve(n);
    for (size_t i : order) sorted.push_back(std::move(nodes[i]));
    nodes = std::move(sorted);
    rebuild_producers();
}

void Graph::erase_nodes(const std::vector<bool>& dead) {
    std::vector<Node> kept;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (i >= dead.size() || !dead[i]) kept.push_back(std::move(nodes[i]));
    nodes = std::move(kept);
    compact_values();
}

void Graph::compact_values() {
    m_seen_values = m_seen_nodes = SIZE_MAX;  // unique_name rebuilds its set
    std::vector<bool> used(values.size(), false);
    for (int v : inputs) used[static_cast<size_t>(v)] = true;
    for (int v : outputs) used[static_cast<size_t>(v)] = true;
    for (const Node& n : nodes) {
        for (int v : n.inputs)
            if (v >= 0) used[static_cast<size_t>(v)] = true;
        for (int v : n.outputs)
            if (v >= 0) used[static_cast<size_t>(v)] = true;
    }
    std::vector<int> remap(values.size(), -1);
    std::vector<Value> kept;
    for (size_t i = 0; i < values.size(); ++i) {
        if (!used[i]) continue;
        remap[i] = static_cast<int>(kept.size());
        kept.push_back(std::move(values[i]));
    }
    values = std::move(kept);
    auto fix = [&](std::vector<int>& ids) {
        for (int& v : ids)
            if (v >= 0) v = remap[static_cast<size_t>(v)];
    };
    fix(inputs);
    fix(outputs);
    for (Node& n : nodes) {
        fix(n.inputs);
        fix(n.outputs);
    }
    rebuild_producers();
}

}  // namespace sfumato::graph
