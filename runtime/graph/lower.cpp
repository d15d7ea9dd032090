// Lowering (see planning.h): graph nodes -> plan steps bound to operators, plan
// tensors with device dtypes and formats, views, format conversions.
#include <algorithm>
#include <map>

#include "runtime/graph/infer.h"
#include "runtime/graph/layout.h"
#include "runtime/graph/planning.h"

namespace sfumato::graph {

namespace {

constexpr uint64_t kMaxPlanConstant = 1u << 16;  // constant inputs handed to factories as values

using ops::Format;

class Lowering {
public:
    Lowering(Plan& p, const DeviceInfo& dev, const CompileOptions& opt)
        : m_p(p), m_g(p.graph), m_dev(dev), m_training(opt.training) {
        m_views.name = "views";
        m_views.enabled = opt.on("views");
        m_format.name = "format";
        m_format.enabled = opt.on("format");
        m_layout.name = "layout";
        m_layout.enabled = opt.on("layout");
    }

    void run() {
        if (m_layout.enabled) m_choice = choose_layout(m_g, m_dev, m_training);
        for (int id : m_g.inputs) m_p.inputs.push_back(value_tensor(id, nullptr));
        for (size_t i = 0; i < m_g.nodes.size(); ++i) lower_node(m_g.nodes[i], i);
        for (int id : m_g.outputs) {
            int t = value_tensor(id, nullptr);
            const Format f = m_p.tensors[static_cast<size_t>(t)].ref.format;
            if (f != Format::ND) t = convert(t, Format::ND, "graph output", f == Format::NC1HWC0);
            m_p.tensors[static_cast<size_t>(t)].graph_output = true;
            m_p.outputs.push_back(t);
        }
        m_p.passes.push_back(std::move(m_views));
        m_p.passes.push_back(std::move(m_format));
        if (m_layout.enabled && m_convs > 0) layout_summary();
        m_p.passes.push_back(std::move(m_layout));
    }

private:
    PlanTensor& T(int t) { return m_p.tensors[static_cast<size_t>(t)]; }

    isa::DType device_type(const Value& v, const std::string& who) {
        isa::DType d;
        if (!ref::device_dtype(v.elem, d))
            throw UnsupportedOp(who, who + ": value '" + v.name + "' of type " + ref::elem_type_name(v.elem) +
                                         " has no device representation");
        return d;
    }

    int new_tensor(PlanTensor t) {
        m_p.tensors.push_back(std::move(t));
        return static_cast<int>(m_p.tensors.size() - 1);
    }

    // The plan tensor holding value v in ND (weights and graph inputs are created
    // on first use).
    int value_tensor(int v, const Node* user) {
        auto it = m_of_value.find(v);
        if (it != m_of_value.end()) return it->second;
        const Value& val = m_g.val(v);
        const std::string who = user ? node_label(*user) : "graph output '" + val.name + "'";
        if (!val.has_shape || !all_known(val.shape))
            throw InputError(who + ": the shape of '" + val.name + "' is not known (" + shape_str(val.shape) +
                             ")");
        PlanTensor t;
        t.name = val.name;
        t.value = v;
        t.ref.shape = concrete(val.shape, who);
        t.ref.elem = val.elem;
        t.ref.dtype = device_type(val, user ? user->op_type : "graph");
        if (val.constant) {
            t.kind = PlanTensor::Kind::Weight;
            t.weight = val.constant;
        } else if (val.graph_input && val.external) {
            t.kind = PlanTensor::Kind::External;
            t.graph_input = true;
            t.def_step = -1;
        } else if (val.graph_input) {
            t.kind = PlanTensor::Kind::Activation;
            t.graph_input = true;
            t.def_step = -1;
        } else {
            throw InputError(who + ": value '" + val.name + "' is used before it is produced");
        }
        const int id = new_tensor(std::move(t));
        m_of_value[v] = id;
        return id;
    }

    ops::TensorRef absent() {
        ops::TensorRef r;
        r.present = false;
        return r;
    }

    ops::NodeDesc desc_of(const Node& n, const std::vector<int>& ins) {
        ops::NodeDesc d;
        d.name = n.name;
        d.op_type = n.op_type;
        d.opset = n.opset;
        d.attrs = n.attrs;
        d.num_outputs = static_cast<int>(n.outputs.size());
        if (m_y_c0 && n.op_type == "Conv") d.attrs.set("y_format", ref::Attr::of_string("NC1HWC0"));
        if (!n.fused.empty()) {
            ref::Attr a;
            a.kind = ref::Attr::Kind::Strings;
            a.strings = n.fused;
            d.attrs.set("fused_nodes", a);
        }
        for (size_t i = 0; i < ins.size(); ++i) {
            if (ins[i] < 0) {
                d.inputs.push_back(absent());
                d.constants.push_back(nullptr);
                continue;
            }
            const PlanTensor& t = T(ins[i]);
            d.inputs.push_back(t.ref);
            const Value& v = m_g.val(n.inputs[i]);
            d.constants.push_back(v.constant && v.constant->numel() <= kMaxPlanConstant ? v.constant->host()
                                                                                        : nullptr);
        }
        return d;
    }

    std::shared_ptr<ops::INodeOp> make(const ops::NodeDesc& d) {
        try {
            return std::shared_ptr<ops::INodeOp>(ops::make_node_op(d, m_dev));
        } catch (const ops::UnsupportedError& e) {
            throw UnsupportedOp(d.op_type, e.what());
        }
    }

    // A tensor holding t's data in format f: a weight converted at load, or a
    // TransData step.
    // `layout`: a boundary conversion of the layout pass (else the format pass's).
    int convert(int t, Format f, const std::string& why, bool layout = false) {
        const auto key = std::make_pair(t, static_cast<int>(f));
        auto it = m_converted.find(key);
        if (it != m_converted.end()) return it->second;
        const std::string name = std::string(ops::format_name(T(t).ref.format)) + "->" + ops::format_name(f);
        PlanTensor c = T(t);
        c.name = T(t).name + "@" + ops::format_name(f);
        c.ref.format = f;
        c.ref.strides.clear();
        c.graph_input = c.graph_output = false;
        int id;
        PassReport& rep = layout ? m_layout : m_format;
        if (T(t).kind == PlanTensor::Kind::Weight) {
            id = new_tensor(std::move(c));
            ++m_format.patterns["weight " + name + " at load"];
        } else if (layout && same_bytes_as_nd(T(t).ref) && f == Format::ND) {
            // [N, C1, 1, C0] of whole C0 blocks is [N, C]: the way back is a view.
            c.kind = PlanTensor::Kind::View;
            c.value = -1;
            c.base = t;
            c.weight.reset();
            c.def_step = T(t).def_step;
            id = new_tensor(std::move(c));
            ++m_nd_views;
            ++rep.patterns["NC1HWC0->ND as a view (same bytes)"];
            rep.notes.push_back(name + " for " + why + ": a view (one pixel, whole C0 blocks)");
        } else {
            PlanStep s;
            s.name = m_g.unique_name(T(t).name + "_transdata_" + ops::format_name(f));
            s.op_type = "TransData";
            s.desc.name = s.name;
            s.desc.op_type = "TransData";
            s.desc.attrs.set_owner(s.name);
            s.desc.attrs.set("dst_format", ref::Attr::of_string(ops::format_name(f)));
            s.desc.inputs = {T(t).ref};
            s.desc.constants = {nullptr};
            s.op = make(s.desc);
            const auto outs = s.op->outputs();
            c.kind = PlanTensor::Kind::Activation;
            c.value = -1;
            c.ref = outs.at(0);
            c.weight.reset();
            id = new_tensor(std::move(c));
            s.in = {t};
            s.out = {id};
            s.form = s.op->describe();
            s.kernels = s.op->launches(s.desc.inputs, outs, 0).size();
            s.out_elems = {T(t).ref.elem};
            T(id).def_step = static_cast<int>(m_p.steps.size());
            m_p.steps.push_back(std::move(s));
            if (&rep == &m_layout) {
                ++m_boundaries;
                ++rep.patterns["TransData " + name + " (boundary)"];
            } else {
                ++rep.changes;
                ++rep.patterns[name];
            }
            rep.notes.push_back(name + " for " + why);
        }
        m_converted[key] = id;
        return id;
    }

    // An NC1HWC0 tensor whose bytes are those of its ND form: one pixel per channel and whole
    // C0 blocks of channels (layout.h, nd_view_of_c0).
    static bool same_bytes_as_nd(const ops::TensorRef& r) {
        if (r.format != Format::NC1HWC0 || r.shape.size() < 2) return false;
        for (size_t d = 2; d < r.shape.size(); ++d)
            if (r.shape[d] != 1) return false;
        return r.shape[1] % static_cast<int64_t>(32 / isa::dtype_size(r.dtype)) == 0;
    }

    // The layout pass's choice for node `idx`: its data inputs to NC1HWC0, or every NC1HWC0
    // input back to ND. Returns which inputs the layout fixed.
    std::vector<char> apply_layout(const Node& n, size_t idx, std::vector<int>& ins) {
        std::vector<char> fixed(ins.size(), 0);
        const bool c0 = m_layout.enabled && m_choice.x_c0[idx];
        std::vector<size_t> data;
        if (c0) data = layout_data_inputs(m_g, n);
        for (size_t i = 0; i < ins.size(); ++i) {
            if (ins[i] < 0 || T(ins[i]).kind == PlanTensor::Kind::Weight) continue;
            const bool want = std::find(data.begin(), data.end(), i) != data.end();
            const Format have = T(ins[i]).ref.format;
            const std::string why = node_label(n) + " input " + std::to_string(i);
            if (want && have != Format::NC1HWC0) ins[i] = convert(ins[i], Format::NC1HWC0, why, true);
            if (!want && have == Format::NC1HWC0) ins[i] = convert(ins[i], Format::ND, why, true);
            fixed[i] = want ? 1 : 0;
        }
        m_y_c0 = m_layout.enabled && m_choice.y_c0[idx];
        if (c0 || m_y_c0) {
            ++m_layout.changes;
            ++m_layout.patterns[n.op_type + (m_y_c0 ? " in NC1HWC0" : " X in NC1HWC0, Y ND")];
            if (n.op_type == "Conv" && c0) ++m_conv_x_c0;
        }
        if (n.op_type == "Conv") ++m_convs;
        return fixed;
    }

    // Conversions of Conv inputs without the pass (each Conv converts its X in its own kernel)
    // and with it (boundary TransData steps, and Convs still converting their own X).
    void layout_summary() {
        const int after = m_boundaries + (m_convs - m_conv_x_c0);
        m_layout.patterns["conversions before (each Conv's X)"] = m_convs;
        m_layout.patterns["conversions after"] = after;
        m_layout.patterns["conversions saved"] = m_convs - after;
        m_layout.notes.insert(
            m_layout.notes.begin(),
            std::to_string(m_convs) + " Conv X conversions -> " + std::to_string(m_boundaries) +
                " boundary TransData + " + std::to_string(m_convs - m_conv_x_c0) +
                " in-kernel: " + std::to_string(m_convs - after) + " saved" +
                (m_nd_views ? " (" + std::to_string(m_nd_views) + " back to ND as a view)" : ""));
    }

    void lower_node(const Node& n, size_t idx) {
        bool all_const = !n.outputs.empty();
        for (int o : n.outputs)
            if (o >= 0 && !m_g.val(o).constant) all_const = false;
        if (all_const) return;  // computed at plan time

        std::vector<int> ins;
        for (int v : n.inputs) ins.push_back(v < 0 ? -1 : value_tensor(v, &n));
        const std::vector<char> fixed = apply_layout(n, idx, ins);
        PlanStep s;
        s.name = n.name;
        s.op_type = n.op_type;
        s.fused = n.fused.empty() ? std::vector<std::string>{n.name} : n.fused;
        s.desc = desc_of(n, ins);
        s.op = make(s.desc);
        // Formats: conversions where the op asks for another format than its
        // producer wrote (with the format pass off, only non-ND producers are
        // converted, to ND).
        for (int round = 0; round < 3; ++round) {
            bool changed = false;
            for (size_t i = 0; i < ins.size(); ++i) {
                if (ins[i] < 0 || fixed[i]) continue;
                const Format have = T(ins[i]).ref.format;
                Format want = s.op->input_format(i);
                if (!m_format.enabled) want = Format::ND;
                if (want == have) continue;
                if (have == Format::ND && T(ins[i]).kind != PlanTensor::Kind::Weight) {
                    // A format an op prefers for a computed ND tensor (a Conv's W fed as an
                    // input): a TransData when the device can convert it, else kept ND (the op
                    // takes ND too).
                    try {
                        ins[i] = convert(ins[i], want, node_label(n) + " input " + std::to_string(i));
                    } catch (const InputError&) {
                        continue;
                    }
                } else {
                    ins[i] = convert(ins[i], want, node_label(n) + " input " + std::to_string(i));
                }
                changed = true;
            }
            if (!changed) break;
            s.desc = desc_of(n, ins);
            s.op = make(s.desc);
        }
        const std::vector<ops::TensorRef> outs = s.op->outputs();
        for (size_t o = 0; o < n.outputs.size(); ++o) {
            const int v = n.outputs[o];
            if (v < 0) {
                s.out.push_back(-1);  // an unnamed optional output: present = false in launches()
                s.out_elems.push_back(ref::ElemType::Undefined);
                continue;
            }
            const Value& val = m_g.val(v);
            if (o >= outs.size())
                throw UnsupportedOp(n.op_type, node_label(n) + ": output " + std::to_string(o) + " ('" +
                                                   val.name + "') is not computed by the operator");
            const std::vector<int64_t> want = concrete(val.shape, node_label(n));
            if (outs[o].shape != want)
                throw InputError(node_label(n) + ": the operator computes output " + std::to_string(o) +
                                 " as " + ref::shape_str(outs[o].shape) + ", shape inference as " +
                                 ref::shape_str(want));
            PlanTensor t;
            t.name = val.name;
            t.value = v;
            t.ref = outs[o];
            t.def_step = static_cast<int>(m_p.steps.size());
            const int view = s.op->view_of(o);
            if (view >= 0 && m_views.enabled && ins.at(static_cast<size_t>(view)) >= 0) {
                t.kind = PlanTensor::Kind::View;
                t.base = ins[static_cast<size_t>(view)];
                t.ref.format = T(t.base).ref.format;
            }
            m_of_value[v] = new_tensor(std::move(t));
            s.out.push_back(m_of_value[v]);
            s.out_elems.push_back(val.elem);
        }
        s.in = ins;
        bool any_view = false, all_views = true;
        for (size_t o = 0; o < n.outputs.size(); ++o) {
            if (n.outputs[o] < 0) continue;
            const bool is_view = s.op->view_of(o) >= 0;
            any_view = any_view || is_view;
            all_views = all_views && is_view;
        }
        if (any_view && !m_views.enabled) {
            // Views off: the reshape becomes a copy into its own memory.
            copy_instead(s, n);
        } else if (any_view && all_views) {
            s.view = true;
            s.kernels = 0;
            ++m_views.changes;
            ++m_views.patterns[n.op_type];
        } else {
            s.form = s.op->describe();
            if (const uint64_t ws = s.op->workspace_bytes()) {
                PlanTensor w;
                w.name = n.name + "#workspace";
                w.kind = PlanTensor::Kind::Workspace;
                w.ref.shape = {static_cast<int64_t>(ws)};
                w.ref.dtype = isa::DType::UINT8;
                w.ref.elem = ref::ElemType::Uint8;
                w.def_step = static_cast<int>(m_p.steps.size());
                s.workspace = new_tensor(std::move(w));
            }
            s.kernels = s.op->launches(s.desc.inputs, outs, 0).size();
        }
        m_p.steps.push_back(std::move(s));
    }

    void copy_instead(PlanStep& s, const Node& n) {
        const size_t view_in = static_cast<size_t>(s.op->view_of(0));
        ops::NodeDesc d;
        d.name = n.name;
        d.op_type = "Copy";
        d.attrs.set_owner(n.name);
        d.inputs = {T(s.in.at(view_in)).ref};
        d.constants = {nullptr};
        s.desc = d;
        s.op = make(d);
        s.in = {s.in.at(view_in)};
        s.out.resize(1);
        s.form = "copy (views pass off)";
        s.kernels = s.op->launches(d.inputs, s.op->outputs(), 0).size();
        ++m_views.patterns[n.op_type + " copied"];
    }

    Plan& m_p;
    Graph& m_g;
    const DeviceInfo& m_dev;
    bool m_training = false;
    std::map<int, int> m_of_value;
    std::map<std::pair<int, int>, int> m_converted;
    PassReport m_views, m_format, m_layout;
    LayoutChoice m_choice;
    bool m_y_c0 = false;  // the node being lowered writes NC1HWC0 (a Conv's y_format)
    int m_convs = 0, m_conv_x_c0 = 0, m_boundaries = 0, m_nd_views = 0;
};

}  // namespace

void lower(Plan& plan, const DeviceInfo& dev, const CompileOptions& opt) { Lowering(plan, dev, opt).run(); }

}  // namespace sfumato::graph
