#include "traces/node_json.h"

#include "sim/error.h"

namespace sfumato::workload {

using nlohmann::json;

namespace {

json host_tensor_json(const ref::HostTensor& t) {
    return {{"elem", static_cast<int>(t.type)}, {"shape", t.shape}, {"data", t.data}};
}

json tensor_json(const ops::TensorRef& t, const BufferOf& buffer_of) {
    if (!t.present) return nullptr;
    json o = {{"shape", t.shape},
              {"dtype", isa::dtype_name(t.dtype)},
              {"elem", static_cast<int>(t.elem)},
              {"format", ops::format_name(t.format)}};
    if (!t.strides.empty()) o["strides"] = t.strides;
    if (auto b = buffer_of(t.addr)) {
        o["buffer"] = b->first;
        o["offset"] = b->second;
    }
    return o;
}

json attr_json(const ref::Attr& a) {
    using K = ref::Attr::Kind;
    switch (a.kind) {
        case K::Int: return {{"int", a.i}};
        case K::Float: return {{"float", a.f}};
        case K::String: return {{"string", a.s}};
        case K::Ints: return {{"ints", a.ints}};
        case K::Floats: return {{"floats", a.floats}};
        case K::Strings: return {{"strings", a.strings}};
        case K::Tensor:
            if (a.t && a.t->numel() <= kMaxConstElems) return {{"tensor", host_tensor_json(*a.t)}};
            return nullptr;
    }
    return nullptr;
}

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& msg) {
    throw InputError(where + ": field 'node." + field + "': " + msg);
}

ref::HostTensor host_tensor_from(const json& j, const std::string& where, const std::string& field) {
    if (!j.is_object() || !j.contains("shape") || !j.contains("data") || !j.contains("elem"))
        bad(where, field, "must be a tensor {elem, shape, data}");
    try {
        ref::HostTensor t(static_cast<ref::ElemType>(j["elem"].get<int>()), j["shape"].get<std::vector<int64_t>>());
        t.data = j["data"].get<std::vector<double>>();
        if (t.data.size() != t.numel()) bad(where, field, "data does not match the shape");
        return t;
    } catch (const json::exception& e) {
        bad(where, field, e.what());
    }
}

ops::TensorRef tensor_from(const json& j, const std::string& where, const std::string& field, Placement& at) {
    ops::TensorRef t;
    if (j.is_null()) {
        t.present = false;
        return t;
    }
    try {
        t.shape = j.at("shape").get<std::vector<int64_t>>();
        for (int64_t d : t.shape) {
            if (d < 0) bad(where, field + ".shape", "dimensions must be non-negative");
        }
        if (j.contains("dtype") && !isa::parse_dtype(j["dtype"].get<std::string>(), t.dtype))
            bad(where, field + ".dtype", "unknown dtype '" + j["dtype"].get<std::string>() + "'");
        t.elem = static_cast<ref::ElemType>(j.value("elem", static_cast<int>(ref::elem_type_of(t.dtype))));
        const std::string f = j.value("format", "ND");
        if (f == ops::format_name(ops::Format::ND)) t.format = ops::Format::ND;
        else if (f == ops::format_name(ops::Format::NZ)) t.format = ops::Format::NZ;
        else if (f == ops::format_name(ops::Format::NC1HWC0)) t.format = ops::Format::NC1HWC0;
        else bad(where, field + ".format", "must be ND, NZ or NC1HWC0");
        if (j.contains("strides")) t.strides = j["strides"].get<std::vector<int64_t>>();
        if (j.contains("buffer")) {
            at.buffer = j["buffer"].get<std::string>();
            at.offset = j.value("offset", uint64_t{0});
        }
    } catch (const json::exception& e) {
        bad(where, field, e.what());
    }
    return t;
}

}  // namespace

json node_to_json(const ops::NodeLaunch& n, const BufferOf& buffer_of) {
    json j = {{"op_type", n.node.op_type}, {"name", n.node.name}, {"opset", n.node.opset}};
    if (n.node.num_outputs) j["num_outputs"] = n.node.num_outputs;
    json attrs = json::object();
    for (const auto& [k, a] : n.node.attrs.all()) {
        json v = attr_json(a);
        if (!v.is_null()) attrs[k] = std::move(v);
    }
    j["attrs"] = std::move(attrs);
    j["inputs"] = json::array();
    for (const auto& t : n.in) j["inputs"].push_back(tensor_json(t, buffer_of));
    j["outputs"] = json::array();
    for (const auto& t : n.out) j["outputs"].push_back(tensor_json(t, buffer_of));
    json consts = json::object();
    for (size_t i = 0; i < n.node.constants.size(); ++i) {
        const auto& c = n.node.constants[i];
        if (c && c->numel() <= kMaxConstElems) consts[std::to_string(i)] = host_tensor_json(*c);
    }
    if (!consts.empty()) j["constants"] = std::move(consts);
    if (n.workspace_bytes) {
        json w = {{"bytes", n.workspace_bytes}};
        if (auto b = buffer_of(n.workspace)) {
            w["buffer"] = b->first;
            w["offset"] = b->second;
        }
        j["workspace"] = std::move(w);
    }
    return j;
}

NodeJson node_from_json(const json& j, const std::string& where) {
    NodeJson r;
    if (!j.is_object()) bad(where, "", "must be an object");
    try {
        r.node.op_type = j.at("op_type").get<std::string>();
        r.node.name = j.value("name", r.node.op_type);
        r.node.opset = j.value("opset", 17);
        r.node.num_outputs = j.value("num_outputs", 0);
        r.node.attrs.set_owner(r.node.name);
        if (j.contains("attrs")) {
            if (!j["attrs"].is_object()) bad(where, "attrs", "must be an object");
            for (const auto& [k, v] : j["attrs"].items()) {
                ref::Attr a;
                if (!v.is_object() || v.size() != 1) bad(where, "attrs." + k, "must be {kind: value}");
                const std::string kind = v.begin().key();
                const json& x = v.begin().value();
                if (kind == "int") a = ref::Attr::of_int(x.get<int64_t>());
                else if (kind == "float") a = ref::Attr::of_float(x.get<double>());
                else if (kind == "string") a = ref::Attr::of_string(x.get<std::string>());
                else if (kind == "ints") a = ref::Attr::of_ints(x.get<std::vector<int64_t>>());
                else if (kind == "floats") a = ref::Attr::of_floats(x.get<std::vector<double>>());
                else if (kind == "strings") {
                    a.kind = ref::Attr::Kind::Strings;
                    a.strings = x.get<std::vector<std::string>>();
                } else if (kind == "tensor") {
                    a.kind = ref::Attr::Kind::Tensor;
                    a.t = std::make_shared<const ref::HostTensor>(host_tensor_from(x, where, "attrs." + k));
                } else {
                    bad(where, "attrs." + k, "unknown attribute kind '" + kind + "'");
                }
                r.node.attrs.set(k, std::move(a));
            }
        }
        auto tensors = [&](const char* f, std::vector<ops::TensorRef>& out, std::vector<Placement>& at) {
            if (!j.contains(f)) return;
            if (!j[f].is_array()) bad(where, f, "must be an array");
            for (size_t i = 0; i < j[f].size(); ++i) {
                Placement p;
                out.push_back(tensor_from(j[f][i], where, std::string(f) + "[" + std::to_string(i) + "]", p));
                at.push_back(std::move(p));
            }
        };
        tensors("inputs", r.node.inputs, r.in_at);
        tensors("outputs", r.out, r.out_at);
        if (j.contains("constants")) {
            if (!j["constants"].is_object()) bad(where, "constants", "must be an object");
            r.node.constants.resize(r.node.inputs.size());
            for (const auto& [k, v] : j["constants"].items()) {
                if (k.empty() || k.size() > 6 || k.find_first_not_of("0123456789") != std::string::npos)
                    bad(where, "constants." + k, "keys are input positions");
                const size_t i = std::stoul(k);
                if (i >= r.node.inputs.size()) bad(where, "constants." + k, "names no input");
                r.node.constants[i] = std::make_shared<const ref::HostTensor>(host_tensor_from(v, where, "constants." + k));
            }
        }
        if (j.contains("workspace")) {
            const json& w = j["workspace"];
            r.workspace_bytes = w.at("bytes").get<uint64_t>();
            if (w.contains("buffer")) {
                r.workspace_at.buffer = w["buffer"].get<std::string>();
                r.workspace_at.offset = w.value("offset", uint64_t{0});
            }
        }
    } catch (const json::exception& e) {
        bad(where, "", e.what());
    }
    return r;
}

}  // namespace sfumato::workload
