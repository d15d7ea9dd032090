// Shape inference driver: the registry, InferCtx helpers, numpy broadcasting,
// and plan-time evaluation of shape arithmetic through the host references.
#include "runtime/graph/infer.h"

#include <map>

#include "runtime/graph/upgrade.h"
#include "runtime/ref/broadcast.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::graph {

namespace {
std::map<std::string, InferFn>& registry() {
    static std::map<std::string, InferFn> r;
    return r;
}
}  // namespace

void register_infer(const std::string& op_type, InferFn f) { registry()[op_type] = std::move(f); }
bool has_infer(const std::string& op_type) { return registry().count(op_type) != 0; }

const Value& InferCtx::in(size_t i) const {
    if (!has(i)) fail("required input " + std::to_string(i) + " is missing");
    return m_g.val(m_n.inputs[i]);
}

const Shape& InferCtx::shape(size_t i) const {
    const Value& v = in(i);
    if (!v.has_shape) throw ShapeUnknown{};
    return v.shape;
}

const ref::HostTensor* InferCtx::constant(size_t i) {
    if (!has(i)) return nullptr;
    const Value& v = in(i);
    if (!v.constant) return nullptr;
    auto& c = m_consts[i];
    if (!c) c = v.constant->host();
    return c.get();
}

bool InferCtx::const_ints(size_t i, std::vector<int64_t>& out) {
    const ref::HostTensor* t = constant(i);
    if (!t) return false;
    out = ref::int_values(*t);  // saturating: INT64_MAX "to the end" survives its double
    return true;
}

void InferCtx::set(size_t o, ref::ElemType elem, const Shape& shape) {
    if (!has_output(o)) return;
    Value& v = m_g.val(m_n.outputs[o]);
    v.elem = elem;
    v.shape = shape;
    v.has_shape = true;
    for (const Dim& d : shape)
        if (d.known() && d.v < 0) fail("computed a negative dimension for output '" + v.name + "'");
    // Its size in bytes must be countable in 64 bits (planning multiplies dimensions freely).
    int64_t n = 8;  // the widest element, in bytes
    for (const Dim& d : shape)
        if (d.known() && d.v > 0 && __builtin_mul_overflow(n, d.v, &n))
            fail("output '" + v.name + "' of shape " + shape_str(shape) +
                 " has more elements than 64-bit byte addresses can count");
}

void InferCtx::set_elem(size_t o, ref::ElemType elem) {
    if (!has_output(o)) return;
    Value& v = m_g.val(m_n.outputs[o]);
    v.elem = elem;
    v.has_shape = false;
    v.shape.clear();
}

void InferCtx::need_inputs(size_t lo, size_t hi) const {
    size_t n = m_n.inputs.size();
    while (n > 0 && m_n.inputs[n - 1] < 0) --n;
    if (n < lo || n > hi)
        fail("takes " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
             " inputs, got " + std::to_string(n));
    for (size_t i = 0; i < lo; ++i)
        if (!has(i)) fail("required input " + std::to_string(i) + " is missing");
}

void InferCtx::same_type(size_t a, size_t b) const {
    if (!has(a) || !has(b)) return;
    if (elem(a) != elem(b))
        fail("input " + std::to_string(b) + " '" + in(b).name + "' is " + ref::elem_type_name(elem(b)) +
             " but input " + std::to_string(a) + " '" + in(a).name + "' is " + ref::elem_type_name(elem(a)) +
             " (types must match)");
}

void InferCtx::need_float(size_t i) const {
    if (!ref::is_float(elem(i)))
        fail("input " + std::to_string(i) + " '" + in(i).name + "' is " + ref::elem_type_name(elem(i)) +
             ", expected a floating-point type");
}

int64_t InferCtx::axis(int64_t a, size_t rank, const char* what) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r)
        fail(std::string(what) + " " + std::to_string(a) + " is out of range for rank " +
             std::to_string(rank));
    return a < 0 ? a + r : a;
}

void InferCtx::fail(const std::string& msg) const { throw InputError(node_label(m_n) + ": " + msg); }

Shape broadcast_shapes(const InferCtx& ctx, const Shape& a, const Shape& b) {
    const size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t i = 0; i < r; ++i) {
        const Dim* da = i + a.size() >= r ? &a[i + a.size() - r] : nullptr;
        const Dim* db = i + b.size() >= r ? &b[i + b.size() - r] : nullptr;
        if (!da) {
            out[i] = *db;
            continue;
        }
        if (!db) {
            out[i] = *da;
            continue;
        }
        if (*da == *db)
            out[i] = *da;
        else if (da->known() && da->v == 1)
            out[i] = *db;
        else if (db->known() && db->v == 1)
            out[i] = *da;
        else if (!da->known() && !db->known())
            out[i] = *da;  // equal at run time or an error then
        else if (!da->known())
            out[i] = *db;
        else if (!db->known())
            out[i] = *da;
        else
            ctx.fail("input shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast");
    }
    return out;
}

std::vector<ref::HostTensor> eval_constant_node(const Graph& g, const Node& n) {
    std::vector<std::shared_ptr<const ref::HostTensor>> hold;
    std::vector<const ref::HostTensor*> ins;
    for (int v : n.inputs) {
        if (v < 0) {
            ins.push_back(nullptr);
            continue;
        }
        const Value& val = g.val(v);
        if (!val.constant) throw InputError(node_label(n) + ": input '" + val.name + "' is not constant");
        hold.push_back(val.constant->host());
        ins.push_back(hold.back().get());
    }
    ref::RefNode rn{n.name, n.op_type, n.opset, n.attrs, static_cast<int>(n.outputs.size())};
    std::vector<ref::HostTensor> out = ref::run_ref(rn, ins);
    for (size_t o = 0; o < out.size() && o < n.outputs.size(); ++o) {
        if (n.outputs[o] < 0) continue;
        out[o].type =
            g.val(n.outputs[o]).elem == ref::ElemType::Undefined ? out[o].type : g.val(n.outputs[o]).elem;
        ref::round_to_type(out[o]);
    }
    return out;
}

namespace {

bool small_int_output(const Graph& g, const Node& n, uint64_t limit) {
    for (int o : n.outputs) {
        if (o < 0) continue;
        const Value& v = g.val(o);
        if (!ref::is_integer(v.elem) || !v.has_shape || !all_known(v.shape)) return false;
        uint64_t numel = 1;
        for (const Dim& d : v.shape) numel *= static_cast<uint64_t>(d.v);
        if (numel > limit) return false;
    }
    return true;
}

bool all_inputs_constant(const Graph& g, const Node& n) {
    for (int v : n.inputs)
        if (v >= 0 && !g.val(v).constant) return false;
    return true;
}

}  // namespace

void infer_shapes(Graph& g, const InferOptions& opt) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (g.nodes[i].opset < 11 && g.nodes[i].domain.empty()) {
            // Rewriting may insert nodes before i: infer those first.
            const size_t added = upgrade_node(g, i);
            if (added) {
                g.rebuild_producers();
                --i;
                continue;
            }
        }
        Node& n = g.nodes[i];
        for (int o : n.outputs)
            if (o >= 0 && !g.val(o).initializer) g.val(o).constant.reset();
        auto it = registry().find(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type);
        if (!n.domain.empty() || it == registry().end())
            throw UnsupportedOp(n.op_type, node_label(n) + ": unsupported operator" +
                                               (n.domain.empty() ? "" : " (domain '" + n.domain + "')"));
        InferCtx ctx(g, n);
        try {
            it->second(ctx);
        } catch (const InferCtx::ShapeUnknown&) {
            for (size_t o = 0; o < n.outputs.size(); ++o)
                if (n.outputs[o] >= 0 && g.val(n.outputs[o]).elem == ref::ElemType::Undefined)
                    ctx.set_elem(o, n.inputs.empty() || n.inputs[0] < 0 ? ref::ElemType::Float
                                                                        : g.val(n.inputs[0]).elem);
            continue;
        }
        // Shape arithmetic at plan time.
        if (all_inputs_constant(g, n) && small_int_output(g, n, opt.max_shape_const) &&
            ref::find_ref(n.op_type)) {
            std::vector<ref::HostTensor> out = eval_constant_node(g, n);
            for (size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
                if (n.outputs[o] < 0) continue;
                Value& v = g.val(n.outputs[o]);
                if (out[o].shape != concrete(v.shape, node_label(n)))
                    throw InputError(node_label(n) + ": reference computed shape " +
                                     ref::shape_str(out[o].shape) + ", inference " + shape_str(v.shape));
                v.constant = std::make_shared<const ConstValue>(std::move(out[o]));
            }
        }
    }
    for (int o : g.outputs)
        if (g.val(o).elem == ref::ElemType::Undefined)
            throw InputError("graph output '" + g.val(o).name + "' has no type");
}

}  // namespace sfumato::graph
