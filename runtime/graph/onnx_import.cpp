// ONNX ModelProto -> Graph (see onnx_import.h). Protobuf types stay in this
// file, the zoo and tensor_io.cpp.
#include "runtime/graph/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/error.h"

namespace sfumato::graph {

namespace {

template <class Field, class Conv>
void pack(std::string& out, const Field& f, size_t es, Conv conv) {
    out.resize(static_cast<size_t>(f.size()) * es);
    for (int i = 0; i < f.size(); ++i) conv(out.data() + static_cast<size_t>(i) * es, f.Get(i));
}

}  // namespace

RawTensor raw_from_proto(onnx::TensorProto& t, const std::string& what) {
    RawTensor r;
    r.type = static_cast<ref::ElemType>(t.data_type());
    for (int64_t d : t.dims()) {
        if (d < 0) throw InputError(what + ": negative dimension " + std::to_string(d));
        r.shape.push_back(d);
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
        throw InputError(what +
                         ": external data is not supported (store the "
                         "weights inside the model)");
    const size_t es = elem_size(r.type);
    if (es == 0)
        throw InputError(what + ": element type " + ref::elem_type_name(r.type) + " (" +
                         std::to_string(t.data_type()) + ") is not supported");
    // Its byte count must be countable: a shape whose product wraps 64 bits would match any data.
    uint64_t n = 1;
    for (int64_t d : r.shape)
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > (UINT64_MAX >> 4))
            throw InputError(what + ": shape " + ref::shape_str(r.shape) + " has more elements than 64 bits count");
    using ET = ref::ElemType;
    if (t.has_raw_data()) {
        r.bytes.swap(*t.mutable_raw_data());
    } else {
        switch (r.type) {
            case ET::Float:
                pack(r.bytes, t.float_data(), 4, [](char* p, float v) { std::memcpy(p, &v, 4); });
                break;
            case ET::Double:
                pack(r.bytes, t.double_data(), 8, [](char* p, double v) { std::memcpy(p, &v, 8); });
                break;
            case ET::Int64:
                pack(r.bytes, t.int64_data(), 8, [](char* p, int64_t v) { std::memcpy(p, &v, 8); });
                break;
            case ET::Uint32:
            case ET::Uint64:
                pack(r.bytes, t.uint64_data(), es, [es](char* p, uint64_t v) { std::memcpy(p, &v, es); });
                break;
            default:  // int32_data holds int32 and every narrower type (fp16/bf16 as
                      // their bits)
                pack(r.bytes, t.int32_data(), es, [es](char* p, int32_t v) {
                    const uint32_t u = static_cast<uint32_t>(v);
                    std::memcpy(p, &u, es);  // little endian: the low bytes
                });
                break;
        }
    }
    if (r.bytes.size() != n * es)
        throw InputError(what + ": holds " + std::to_string(r.bytes.size() / es) + " values, its shape " +
                         ref::shape_str(r.shape) + " needs " + std::to_string(n) + " (truncated or corrupt)");
    return r;
}

namespace {

ref::Attr convert_attr(onnx::AttributeProto& a, const std::string& owner) {
    using A = onnx::AttributeProto;
    ref::Attr r;
    switch (a.type()) {
        case A::FLOAT: return ref::Attr::of_float(a.f());
        case A::INT: return ref::Attr::of_int(a.i());
        case A::STRING: return ref::Attr::of_string(a.s());
        case A::FLOATS:
            return ref::Attr::of_floats(std::vector<double>(a.floats().begin(), a.floats().end()));
        case A::INTS: return ref::Attr::of_ints(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        case A::STRINGS:
            r.kind = ref::Attr::Kind::Strings;
            r.strings.assign(a.strings().begin(), a.strings().end());
            return r;
        case A::TENSOR:
            r.kind = ref::Attr::Kind::Tensor;
            r.t = std::make_shared<const ref::HostTensor>(
                raw_from_proto(*a.mutable_t(), owner + ": attribute '" + a.name() + "'").to_host());
            return r;
        default:
            // Untyped attributes of old writers: infer from the field that is set.
            if (a.type() == A::UNDEFINED) {
                if (a.ints_size())
                    return ref::Attr::of_ints(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
                if (a.floats_size())
                    return ref::Attr::of_floats(std::vector<double>(a.floats().begin(), a.floats().end()));
                if (a.has_s()) return ref::Attr::of_string(a.s());
                if (a.has_f()) return ref::Attr::of_float(a.f());
                if (a.has_i()) return ref::Attr::of_int(a.i());
            }
            throw InputError(owner + ": attribute '" + a.name() + "' of type " + std::to_string(a.type()) +
                             " (graphs, sparse tensors, type protos) is not supported");
    }
}

// A Constant node's value as a host tensor.
ref::HostTensor constant_value(const Node& n) {
    const ref::Attrs& a = n.attrs;
    if (const ref::Attr* t = a.find("value"); t && t->kind == ref::Attr::Kind::Tensor) return *t->t;
    if (a.has("value_float")) {
        ref::HostTensor h(ref::ElemType::Float, {});
        h.data[0] = a.get_float("value_float", 0);
        return h;
    }
    if (a.has("value_floats")) {
        const auto f = a.get_floats("value_floats", {});
        ref::HostTensor h(ref::ElemType::Float, {static_cast<int64_t>(f.size())});
        h.data = f;
        return h;
    }
    if (a.has("value_int")) {
        ref::HostTensor h(ref::ElemType::Int64, {});
        h.data[0] = static_cast<double>(a.get_int("value_int", 0));
        return h;
    }
    if (a.has("value_ints")) {
        const auto v = a.ints("value_ints");
        ref::HostTensor h(ref::ElemType::Int64, {static_cast<int64_t>(v.size())});
        for (size_t i = 0; i < v.size(); ++i) h.data[i] = static_cast<double>(v[i]);
        return h;
    }
    throw InputError(node_label(n) +
                     ": Constant without a supported value attribute (value, "
                     "value_float(s), value_int(s))");
}

void read_type(const onnx::TypeProto& t, Value& v, const std::string& what) {
    if (!t.has_tensor_type())
        throw InputError(what + ": only tensor types are supported (not sequences, maps or optionals)");
    const auto& tt = t.tensor_type();
    v.elem = static_cast<ref::ElemType>(tt.elem_type());
    if (!tt.has_shape()) return;
    v.has_shape = true;
    v.shape.clear();
    int unnamed = 0;
    for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() >= 0)
            v.shape.push_back(Dim::of(d.dim_value()));
        else if (d.has_dim_param() && !d.dim_param().empty())
            v.shape.push_back(Dim::symbol(d.dim_param()));
        else
            v.shape.push_back(Dim::symbol(v.name + ":" + std::to_string(unnamed++)));
    }
}

}  // namespace

Graph import_model(onnx::ModelProto& m, const std::string& source, const DeferredInitializers* deferred) {
    Graph g;
    g.opset = 0;
    for (const auto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") g.opset = static_cast<int>(o.version());
    if (g.opset == 0) {
        if (m.opset_import_size() == 0 && m.ir_version() <= 3)
            g.opset = 1;  // very old models omit it
        else
            throw InputError(source + ": the model imports no opset of the default ONNX domain");
    }
    if (g.opset < kMinOpset || g.opset > kMaxOpset)
        throw InputError(source + ": opset " + std::to_string(g.opset) + " is not supported (" +
                         std::to_string(kMinOpset) + "-" + std::to_string(kMaxOpset) + ")");
    if (!m.has_graph()) throw InputError(source + ": the model has no graph (truncated file?)");
    onnx::GraphProto& gp = *m.mutable_graph();
    g.name = gp.name().empty() ? "model" : gp.name();

    std::map<std::string, int> ids;
    auto define = [&](Value v, const std::string& what) {
        if (v.name.empty()) throw InputError(source + ": " + what + " has an empty name");
        if (ids.count(v.name)) {
            Value& old = g.val(ids[v.name]);
            // Old IR versions list initializers among the inputs: the initializer
            // wins.
            if (v.initializer && old.graph_input && !old.initializer) {
                old.initializer = true;
                old.graph_input = false;
                old.constant = v.constant;
                if (old.elem == ref::ElemType::Undefined) old.elem = v.elem;
                old.shape = v.shape;
                old.has_shape = true;
                return ids[v.name];
            }
            throw InputError(source + ": " + what + " '" + v.name + "' is defined twice");
        }
        const int id = g.add_value(std::move(v));
        ids[g.val(id).name] = id;
        return id;
    };
    for (const auto& in : gp.input()) {
        Value v;
        v.name = in.name();
        read_type(in.type(), v, "graph input '" + in.name() + "'");
        v.graph_input = true;
        g.inputs.push_back(define(std::move(v), "graph input"));
    }
    for (auto& init : *gp.mutable_initializer()) {
        Value v;
        v.name = init.name();
        const auto later = deferred ? deferred->find(init.name()) : DeferredInitializers::const_iterator{};
        if (deferred && later != deferred->end()) {
            const auto type = static_cast<ref::ElemType>(init.data_type());
            std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
            v.elem = type;
            v.shape = make_shape(dims);
            v.constant = std::make_shared<const ConstValue>(type, std::move(dims), later->second);
        } else {
            RawTensor r = raw_from_proto(init, "initializer '" + init.name() + "'");
            v.elem = r.type;
            v.shape = make_shape(r.shape);
            v.constant = std::make_shared<const ConstValue>(std::move(r));
        }
        v.has_shape = true;
        v.initializer = true;
        define(std::move(v), "initializer");
    }
    // Inputs that turned out to be initializers are not graph inputs.
    std::vector<int> real_inputs;
    for (int id : g.inputs)
        if (g.val(id).graph_input) real_inputs.push_back(id);
    g.inputs = real_inputs;

    // Node outputs first, so nodes may refer to values defined later (order is
    // fixed by topo_sort).
    std::vector<Node> nodes;
    for (int i = 0; i < gp.node_size(); ++i) {
        onnx::NodeProto& np = *gp.mutable_node(i);
        Node n;
        n.op_type = np.op_type();
        n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
        n.name = np.name().empty() ? n.op_type + "_" + std::to_string(i) : np.name();
        n.opset = g.opset;
        n.attrs.set_owner(n.name);
        for (auto& a : *np.mutable_attribute()) n.attrs.set(a.name(), convert_attr(a, node_label(n)));
        for (const auto& o : np.output()) {
            if (o.empty()) {
                n.outputs.push_back(-1);
                continue;
            }
            Value v;
            v.name = o;
            n.outputs.push_back(define(std::move(v), node_label(n) + ": output"));
        }
        nodes.push_back(std::move(n));
    }
    for (int i = 0; i < gp.node_size(); ++i) {
        Node& n = nodes[static_cast<size_t>(i)];
        for (const auto& in : gp.node(i).input()) {
            if (in.empty()) {
                n.inputs.push_back(-1);
                continue;
            }
            auto it = ids.find(in);
            if (it == ids.end())
                throw InputError(node_label(n) + ": input '" + in +
                                 "' is not produced by any node, not a graph input and "
                                 "not an initializer");
            n.inputs.push_back(it->second);
        }
    }
    for (const auto& out : gp.output()) {
        auto it = ids.find(out.name());
        if (it == ids.end())
            throw InputError(source + ": graph output '" + out.name() + "' is not produced by any node");
        Value& v = g.val(it->second);
        Value declared;
        declared.name = v.name;
        read_type(out.type(), declared, "graph output '" + out.name() + "'");
        if (v.elem == ref::ElemType::Undefined) v.elem = declared.elem;
        v.graph_output = true;
        g.outputs.push_back(it->second);
    }
    if (g.outputs.empty()) throw InputError(source + ": the graph has no outputs");

    // Constant nodes become constants.
    for (Node& n : nodes) {
        if (n.op_type != "Constant" || !n.domain.empty()) continue;
        if (n.outputs.size() != 1 || n.outputs[0] < 0)
            throw InputError(node_label(n) + ": expects one output");
        Value& v = g.val(n.outputs[0]);
        ref::HostTensor t = constant_value(n);
        v.elem = t.type;
        v.shape = make_shape(t.shape);
        v.has_shape = true;
        v.constant = std::make_shared<const ConstValue>(std::move(t));
        n.op_type.clear();  // dropped below
    }
    for (Node& n : nodes)
        if (!n.op_type.empty()) g.nodes.push_back(std::move(n));
    g.topo_sort();
    g.compact_values();
    return g;
}

Graph import_onnx_bytes(const std::string& bytes, const std::string& source) {
    onnx::ModelProto m;
    if (bytes.empty()) throw InputError(source + ": empty file, not an ONNX model");
    if (!m.ParseFromString(bytes))
        throw InputError(source + ": not a valid ONNX model (truncated or corrupt protobuf)");
    return import_model(m, source);
}

Graph import_onnx_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot open model '" + path + "'");
    std::ostringstream ss;
    ss << f.rdbuf();
    return import_onnx_bytes(ss.str(), path);
}

}  // namespace sfumato::graph
