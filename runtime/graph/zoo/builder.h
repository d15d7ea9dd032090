// A small helper for writing ONNX models with the protobuf API: inputs with
// symbolic dims, initializers with seeded random values (uniform in
// +-1/sqrt(fan_in), PyTorch's default init scale, so activations stay of order
// one through deep networks), nodes with attributes.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace sfumato::graph::zoo {

// ONNX element types the zoo's graphs use.
constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;

struct A {  // one attribute
    enum class K { I, F, Is, Fs, S };
    std::string name;
    K k = K::I;
    int64_t i = 0;
    double f = 0;
    std::vector<int64_t> is;
    std::vector<float> fs;
    std::string s;
};
inline A attr(const std::string& n, A::K k) {
    A a;
    a.name = n;
    a.k = k;
    return a;
}
inline A ai(const std::string& n, int64_t v) {
    A a = attr(n, A::K::I);
    a.i = v;
    return a;
}
inline A af(const std::string& n, double v) {
    A a = attr(n, A::K::F);
    a.f = v;
    return a;
}
inline A ais(const std::string& n, std::vector<int64_t> v) {
    A a = attr(n, A::K::Is);
    a.is = std::move(v);
    return a;
}
inline A as(const std::string& n, const std::string& v) {
    A a = attr(n, A::K::S);
    a.s = v;
    return a;
}

// A weight's generator: `count` values uniform in [lo, lo + 2^24 * scale) from a SplitMix64
// sequence started at `seed`.
struct WeightGen {
    uint64_t seed = 0;
    int64_t count = 0;  // the product of dims
    std::vector<int64_t> dims;
    float lo = 0, scale = 0;
    std::vector<float> values() const;
};

class Builder {
public:
    Builder(const std::string& name, int opset, uint32_t seed);
    // A graph input; dims < 0 are symbolic, named by `syms` in order ("N", "S",
    // ...).
    std::string input(const std::string& name, int elem, const std::vector<int64_t>& dims,
                      const std::vector<std::string>& syms = {});
    void output(const std::string& name, int elem);
    // fp32 weight, uniform in +-bound (bound 0: 1/sqrt(fan_in), fan_in = product
    // of dims but the first).
    std::string weight(const std::string& name, const std::vector<int64_t>& dims, double bound = 0);
    std::string constant(const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values);
    std::string ints(const std::string& name, const std::vector<int64_t>& values);
    std::string scalar(const std::string& name, float v) { return constant(name, {}, {v}); }
    // A node; returns its outputs' names (n_out of them).
    std::vector<std::string> node(const std::string& op, const std::vector<std::string>& in,
                                  const std::vector<A>& attrs = {}, int n_out = 1,
                                  const std::string& name = "");
    std::string op(const std::string& op, const std::vector<std::string>& in,
                   const std::vector<A>& attrs = {}, const std::string& name = "") {
        return node(op, in, attrs, 1, name)[0];
    }
    onnx::ModelProto& model() { return m_model; }
    // From now on weight() leaves its initializers without data and records their generators
    // instead (deferred(), by initializer name): the importer makes the values when they are
    // first asked for. The model itself is then incomplete: for import only, not to be written.
    void defer_weights() { m_defer = true; }
    const std::map<std::string, WeightGen>& deferred() const { return m_deferred; }
    std::mt19937& rng() { return m_rng; }

private:
    std::string fresh(const std::string& base);
    onnx::ModelProto m_model;
    onnx::GraphProto* m_g;
    std::mt19937 m_rng;
    std::map<std::string, int> m_names;
    bool m_defer = false;
    std::map<std::string, WeightGen> m_deferred;
};

using Params = std::map<std::string, int64_t>;
// Builders (zoo_*.cpp).
void build_mlp(Builder& b, const Params& p);
void build_resnet(Builder& b, const Params& p);  // p["depth"] = 18 or 50
void build_mobilenet_v2(Builder& b, const Params& p);
void build_squeezenet(Builder& b, const Params& p);
void build_bert(Builder& b, const Params& p);
void build_gpt2(Builder& b, const Params& p);

}  // namespace sfumato::graph::zoo
