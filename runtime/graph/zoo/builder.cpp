// Builder (see builder.h).
#include "runtime/graph/zoo/builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sfumato::graph::zoo {

Builder::Builder(const std::string& name, int opset, uint32_t seed) : m_rng(seed) {
    m_model.set_ir_version(8);
    m_model.set_producer_name("sfumato-zoo");
    auto* o = m_model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_g = m_model.mutable_graph();
    m_g->set_name(name);
}

std::string Builder::fresh(const std::string& base) {
    const int n = m_names[base]++;
    return n == 0 ? base : base + "_" + std::to_string(n);
}

std::string Builder::input(const std::string& name, int elem, const std::vector<int64_t>& dims,
                           const std::vector<std::string>& syms) {
    auto* in = m_g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    size_t s = 0;
    for (int64_t d : dims) {
        auto* dim = tt->mutable_shape()->add_dim();
        if (d >= 0)
            dim->set_dim_value(d);
        else
            dim->set_dim_param(s < syms.size() ? syms[s++] : "N");
    }
    m_names[name]++;
    return name;
}

void Builder::output(const std::string& name, int elem) {
    auto* out = m_g->add_output();
    out->set_name(name);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

std::vector<float> WeightGen::values() const {
    // SplitMix64: the same values every build, and fast enough for a 100 M-parameter model
    // (mt19937 per value took most of a zoo build).
    uint64_t st = seed;
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) {
        uint64_t z = (st += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x = lo + static_cast<float>(z >> 40) * scale;
    }
    return v;
}

std::string Builder::weight(const std::string& name, const std::vector<int64_t>& dims, double bound) {
    int64_t n = 1, fan = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
        n *= dims[i];
        if (i > 0) fan *= dims[i];
    }
    if (dims.size() == 1) fan = dims[0];
    if (bound <= 0) bound = std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(1, fan)));
    WeightGen g;
    g.seed = (static_cast<uint64_t>(m_rng()) << 32) | m_rng();  // from the builder's generator
    g.count = n;
    g.dims = dims;
    g.scale = static_cast<float>(2.0 * bound / 16777216.0);
    g.lo = static_cast<float>(-bound);
    if (!m_defer) return constant(name, dims, g.values());
    const std::string nm = fresh(name);
    auto* t = m_g->add_initializer();
    t->set_name(nm);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    m_deferred[nm] = g;
    return nm;
}

std::string Builder::constant(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<float>& values) {
    const std::string nm = fresh(name);
    auto* t = m_g->add_initializer();
    t->set_name(nm);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    std::string raw(values.size() * 4, '\0');
    std::memcpy(raw.data(), values.data(), raw.size());
    t->set_raw_data(std::move(raw));
    return nm;
}

std::string Builder::ints(const std::string& name, const std::vector<int64_t>& values) {
    const std::string nm = fresh(name);
    auto* t = m_g->add_initializer();
    t->set_name(nm);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return nm;
}

std::vector<std::string> Builder::node(const std::string& op, const std::vector<std::string>& in,
                                       const std::vector<A>& attrs, int n_out, const std::string& name) {
    auto* n = m_g->add_node();
    n->set_op_type(op);
    const std::string nm = fresh(name.empty() ? op : name);
    n->set_name(nm);
    for (const auto& i : in) n->add_input(i);
    std::vector<std::string> outs;
    for (int k = 0; k < n_out; ++k) {
        outs.push_back(n_out == 1 ? nm + "_out" : nm + "_out" + std::to_string(k));
        n->add_output(outs.back());
    }
    for (const A& a : attrs) {
        auto* p = n->add_attribute();
        p->set_name(a.name);
        switch (a.k) {
            case A::K::I:
                p->set_type(onnx::AttributeProto::INT);
                p->set_i(a.i);
                break;
            case A::K::F:
                p->set_type(onnx::AttributeProto::FLOAT);
                p->set_f(static_cast<float>(a.f));
                break;
            case A::K::Is:
                p->set_type(onnx::AttributeProto::INTS);
                for (int64_t v : a.is) p->add_ints(v);
                break;
            case A::K::Fs:
                p->set_type(onnx::AttributeProto::FLOATS);
                for (float v : a.fs) p->add_floats(v);
                break;
            case A::K::S:
                p->set_type(onnx::AttributeProto::STRING);
                p->set_s(a.s);
                break;
        }
    }
    return outs;
}

}  // namespace sfumato::graph::zoo
