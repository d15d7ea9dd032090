// Graph-node face of the elementwise operators: every op type of runtime/ops/ew/onnx_ew.h
// (binary with numpy broadcasting, variadic Max/Min/Sum/Mean, comparisons, logical ops, Where,
// unary activations, Clip, PRelu, Cast/CastLike and sfumato's ElementwiseChain) is one
// EwNodeOp: shapes and types from the node, a plan (runtime/ops/ew/plan.h) and one vector
// kernel. Legacy forms (opset < 7 `broadcast`/`axis`, per-channel PRelu slopes) become
// reshaped operands.
#include <memory>

#include "runtime/ops/ew/kernel.h"
#include "runtime/ops/ew/node.h"
#include "runtime/ref/broadcast.h"

namespace sfumato::ops::ew {

namespace {

class EwNodeOp : public INodeOp {
public:
    EwNodeOp(const NodeDesc& n, const DeviceInfo& dev) : m_dev(dev) {
        m_name = n.name;
        m_type = n.op_type;
        EwNode en{n.name, n.op_type, n.opset, n.attrs};
        std::vector<ref::ElemType> elems;
        std::vector<EwIn> ins(n.inputs.size());
        std::vector<std::vector<int64_t>> shapes;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            const TensorRef& t = n.inputs[i];
            EwIn& x = ins[i];
            x.present = t.present;
            if (!t.present) continue;
            const bool c0_ok = t.format == Format::NC1HWC0 && t.contiguous() && t.shape.size() >= 2;
            if (t.format != Format::ND && !c0_ok)
                throw UnsupportedError(n, "input " + std::to_string(i) + " in format " +
                                              format_name(t.format));
            if (t.format == Format::NC1HWC0) m_c0 = true;
            isa::DType d;
            if (!ref::device_dtype(t.elem, d))
                throw UnsupportedError(n, std::string("input type ") + ref::elem_type_name(t.elem) + " has no device representation");
            x.shape = t.shape;
            x.strides = t.strides;
            x.storage = t.dtype;
            x.elem = t.elem;
            x.constant = n.constant(i);
            elems.push_back(t.elem);
        }
        if (elems.empty()) throw UnsupportedError(n, "needs an input");
        legacy_shapes(n, ins);
        for (const EwIn& x : ins)
            if (x.present) shapes.push_back(x.shape);
        m_out.shape = ref::broadcast_shapes(n.name, shapes);
        if ((m_type == "PRelu" || m_type == "Clip") && !ins.empty() && m_out.shape != ins[0].shape)
            throw UnsupportedError(n, "input 1 " + ref::shape_str(ins[1].shape) + " does not broadcast to input 0 " +
                                          ref::shape_str(ins[0].shape));
        if (m_c0) physical_c0(n, ins);
        m_out.elem = ew_output_elem(en, elems);
        if (!ref::device_dtype(m_out.elem, m_out.dtype))
            throw UnsupportedError(n, std::string("output type ") + ref::elem_type_name(m_out.elem) + " has no device representation");
        if (m_c0 && isa::dtype_size(m_out.dtype) != static_cast<uint32_t>(32 / m_phys[3]))
            throw UnsupportedError(n, "NC1HWC0 operands and an output of another element size (C0 "
                                      "would change)");
        m_empty = ref::numel_of(m_out.shape) == 0;
        if (!m_empty) {
            const std::vector<int64_t>& shape = m_c0 ? m_phys : m_out.shape;
            m_plan = std::make_shared<Plan>(make_ew_plan(en, ins, shape, m_out.dtype, m_out.elem, dev));
            for (size_t i = 0; i < n.inputs.size(); ++i) m_names.push_back("input " + std::to_string(i));
        }
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_empty) return {};
        auto p = std::make_shared<Plan>(*m_plan);
        for (size_t i = 0; i < in.size() && i < p->in_addr.size(); ++i) p->in_addr[i] = in[i].addr;
        p->out_addr = out.at(0).addr;
        KernelDesc k;
        k.name = m_name + " [" + p->short_form() + "]";
        k.type = m_type;
        k.kind = KernelKind::Vector;
        k.block_dim = p->block_dim;
        k.body = [p](isa::IInstrSink& s) { ew_kernel(s, *p); };
        const uint64_t n = ref::numel_of(p->out_shape);
        uint64_t bytes = n * isa::dtype_size(p->out_storage);
        for (const OperandPlan& o : p->in)
            if (o.form != Form::Absent && o.form != Form::Imm) bytes += o.numel * isa::dtype_size(o.storage);
        k.bytes = bytes;
        // Work: one operation per output element and vector step; the vector lower bound
        // charges each step's repeats (256 B each) on every core in use.
        double rep_bytes = 0;
        for (const Step& s : p->prog.steps) {
            const auto& r = p->prog.regs;
            const uint32_t w = std::max(isa::dtype_size(r[static_cast<size_t>(s.dst)].dt),
                                        s.a >= 0 ? isa::dtype_size(r[static_cast<size_t>(s.a)].dt) : 1u);
            rep_bytes += static_cast<double>(n) * w;
        }
        k.flops = static_cast<double>(n) * static_cast<double>(std::max<size_t>(1, p->prog.steps.size()));
        const double vb = m_dev.vector_bytes_per_cycle > 0 ? m_dev.vector_bytes_per_cycle : 256.0;
        // At the chip's peak: every vector core (KernelDesc::min_compute_cycles).
        k.min_compute_cycles = rep_bytes / (vb * std::max<uint32_t>(1, m_dev.vector_cores));
        return {k};
    }

    std::string describe() const override {
        if (m_empty) return "empty output: no kernel";
        return m_plan->short_form() + " | " + m_plan->describe(m_names);
    }

    const Plan* plan() const { return m_plan.get(); }

private:
    // NC1HWC0 operands (the graph's layout pass keeps them between operators): every tensor
    // operand NC1HWC0 of the output's shape, or a scalar; the kernel then runs over the storage
    // [N, C1, pixels, C0], padding channels included (they hold zeros, and the layout pass only
    // lets ops that map zeros to zeros run in this layout, so they stay zeros).
    void physical_c0(const NodeDesc& n, std::vector<EwIn>& ins) {
        const std::vector<int64_t>& s = m_out.shape;
        int64_t l = 1;
        for (size_t d = 2; d < s.size(); ++d) l *= s[d];
        const TensorRef* first = nullptr;
        for (const TensorRef& t : n.inputs)
            if (t.present && t.format == Format::NC1HWC0) first = first ? first : &t;
        const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(first->dtype));
        m_phys = {s[0], (s[1] + cb - 1) / cb, l, cb};
        for (size_t i = 0; i < ins.size(); ++i) {
            if (!ins[i].present) continue;
            const TensorRef& t = n.inputs[i];
            const bool same = isa::dtype_size(t.dtype) == isa::dtype_size(first->dtype);
            if (t.format == Format::NC1HWC0 && t.shape == s && same) {
                ins[i].shape = m_phys;
                ins[i].strides.clear();
                ins[i].constant = nullptr;
            } else if (t.format == Format::ND && t.numel() == 1) {
                ins[i].shape = {};
                ins[i].strides.clear();
            } else {
                throw UnsupportedError(n, "input " + std::to_string(i) + " " + ref::shape_str(t.shape) +
                                              " (" + format_name(t.format) +
                                              ") with NC1HWC0 operands: only NC1HWC0 of the output's " +
                                              "shape or scalars");
            }
        }
        m_out.format = Format::NC1HWC0;
    }

    // Opset < 7 forms expressed as numpy broadcasting.
    void legacy_shapes(const NodeDesc& n, std::vector<EwIn>& ins) const {
        if (n.opset >= 7 || ins.size() < 2 || !ins[0].present || !ins[1].present) return;
        const size_t ra = ins[0].shape.size();
        if (m_type == "PRelu") {
            std::vector<int64_t>& s = ins[1].shape;
            if (s.size() == 1 && ra >= 2 && s[0] == ins[0].shape[1] && s[0] != 1) {
                s.resize(ra - 1, 1);
                ins[1].strides.clear();
            }
            return;
        }
        if (!n.attrs.get_int("broadcast", 0) || !n.attrs.has("axis")) return;
        const int64_t axis = ref::normalize_axis(n.name, "axis", n.attrs.get_int("axis", 0), static_cast<int64_t>(ra));
        const int64_t trail = static_cast<int64_t>(ra) - axis - static_cast<int64_t>(ins[1].shape.size());
        if (trail < 0) throw UnsupportedError(n, "attribute 'axis' leaves no room for input 1");
        ins[1].shape.resize(ins[1].shape.size() + static_cast<size_t>(trail), 1);
        ins[1].strides.clear();
    }

    DeviceInfo m_dev;
    std::string m_name, m_type;
    TensorRef m_out;
    bool m_empty = false;
    bool m_c0 = false;              // NC1HWC0 operands: the plan runs over m_phys
    std::vector<int64_t> m_phys;    // [N, C1, pixels, C0]
    std::shared_ptr<const Plan> m_plan;
    std::vector<std::string> m_names;
};

std::unique_ptr<INodeOp> make(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<EwNodeOp>(n, d); }

}  // namespace

const Plan* ew_plan_of(const INodeOp& op) {
    const auto* e = dynamic_cast<const EwNodeOp*>(&op);
    return e ? e->plan() : nullptr;
}

// One registration per op type (the list lives in onnx_ew.cpp).
namespace {
struct RegisterAll {
    RegisterAll() {
        for (const std::string& t : ew_op_types())
            if (t != "Identity") register_node_op(t, make);
    }
} register_all;
}  // namespace

}  // namespace sfumato::ops::ew
