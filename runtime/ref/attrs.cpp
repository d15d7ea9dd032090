#include "runtime/ref/attrs.h"

#include "sim/error.h"

namespace sfumato::ref {

namespace {
const char* kind_name(Attr::Kind k) {
    switch (k) {
        case Attr::Kind::Int: return "int";
        case Attr::Kind::Float: return "float";
        case Attr::Kind::String: return "string";
        case Attr::Kind::Ints: return "ints";
        case Attr::Kind::Floats: return "floats";
        case Attr::Kind::Strings: return "strings";
        default: return "tensor";
    }
}
}  // namespace

const Attr* Attrs::find(const std::string& name) const {
    auto it = m_map.find(name);
    return it == m_map.end() ? nullptr : &it->second;
}

const Attr& Attrs::need(const std::string& name, Attr::Kind k) const {
    const Attr* a = find(name);
    if (!a) throw InputError("node '" + m_owner + "': missing attribute '" + name + "'");
    // ONNX writers sometimes store a float attribute as an int and the reverse; accept the
    // numeric forms and the single/list forms where the value is unambiguous.
    const bool ok = a->kind == k || (k == Attr::Kind::Float && a->kind == Attr::Kind::Int) ||
                    (k == Attr::Kind::Floats && a->kind == Attr::Kind::Ints);
    if (!ok)
        throw InputError("node '" + m_owner + "': attribute '" + name + "' is " + kind_name(a->kind) + ", expected " +
                         kind_name(k));
    return *a;
}

int64_t Attrs::get_int(const std::string& name, int64_t dflt) const { return has(name) ? int_(name) : dflt; }

double Attrs::get_float(const std::string& name, double dflt) const {
    if (!has(name)) return dflt;
    const Attr& a = need(name, Attr::Kind::Float);
    return a.kind == Attr::Kind::Int ? static_cast<double>(a.i) : a.f;
}

std::string Attrs::get_string(const std::string& name, const std::string& dflt) const {
    return has(name) ? need(name, Attr::Kind::String).s : dflt;
}

std::vector<int64_t> Attrs::get_ints(const std::string& name, const std::vector<int64_t>& dflt) const {
    return has(name) ? ints(name) : dflt;
}

std::vector<double> Attrs::get_floats(const std::string& name, const std::vector<double>& dflt) const {
    if (!has(name)) return dflt;
    const Attr& a = need(name, Attr::Kind::Floats);
    if (a.kind == Attr::Kind::Ints) return std::vector<double>(a.ints.begin(), a.ints.end());
    return a.floats;
}

int64_t Attrs::int_(const std::string& name) const { return need(name, Attr::Kind::Int).i; }

std::vector<int64_t> Attrs::ints(const std::string& name) const { return need(name, Attr::Kind::Ints).ints; }

}  // namespace sfumato::ref
