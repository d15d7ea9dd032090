// ONNX-style node attributes (int, float, string, ints, floats, strings, tensor), shared by the
// graph IR, the operator library's graph-node face and the host references. Getters name the
// node and the attribute in their errors.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ref/host_tensor.h"

namespace sfumato::ref {

struct Attr {
    enum class Kind : uint8_t { Int, Float, String, Ints, Floats, Strings, Tensor } kind = Kind::Int;
    int64_t i = 0;
    double f = 0.0;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    std::shared_ptr<const HostTensor> t;

    static Attr of_int(int64_t v) { Attr a; a.kind = Kind::Int; a.i = v; return a; }
    static Attr of_float(double v) { Attr a; a.kind = Kind::Float; a.f = v; return a; }
    static Attr of_string(std::string v) { Attr a; a.kind = Kind::String; a.s = std::move(v); return a; }
    static Attr of_ints(std::vector<int64_t> v) { Attr a; a.kind = Kind::Ints; a.ints = std::move(v); return a; }
    static Attr of_floats(std::vector<double> v) { Attr a; a.kind = Kind::Floats; a.floats = std::move(v); return a; }
};

class Attrs {
public:
    Attrs() = default;
    explicit Attrs(std::string owner) : m_owner(std::move(owner)) {}
    void set_owner(std::string owner) { m_owner = std::move(owner); }
    const std::string& owner() const { return m_owner; }

    void set(const std::string& name, Attr a) { m_map[name] = std::move(a); }
    bool has(const std::string& name) const { return m_map.count(name) != 0; }
    const Attr* find(const std::string& name) const;
    // Typed getters with a default; a present attribute of the wrong kind throws InputError
    // naming the owner (node) and the attribute.
    int64_t get_int(const std::string& name, int64_t dflt) const;
    double get_float(const std::string& name, double dflt) const;
    std::string get_string(const std::string& name, const std::string& dflt) const;
    std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& dflt) const;
    std::vector<double> get_floats(const std::string& name, const std::vector<double>& dflt) const;
    // Required forms: a missing attribute throws InputError.
    int64_t int_(const std::string& name) const;
    std::vector<int64_t> ints(const std::string& name) const;
    const std::map<std::string, Attr>& all() const { return m_map; }

private:
    const Attr& need(const std::string& name, Attr::Kind k) const;
    std::string m_owner;
    std::map<std::string, Attr> m_map;
};

}  // namespace sfumato::ref
