// The backward planner of a training step (train.h), shared by its source files: train.cpp
// (the walk over the forward steps, tensors, buckets and the loss), train_conv.cpp (Gemm, Conv,
// pooling) and train_norm.cpp (normalisation, activations with bounds, Concat). Private to
// runtime/graph.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/graph/train.h"
#include "runtime/graph/train_memory.h"
#include "sim/error.h"

namespace sfumato::graph::detail {

using ref::ElemType;
using Shape = std::vector<int64_t>;

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

inline std::shared_ptr<const ref::HostTensor> ints(const std::vector<int64_t>& v) {
    auto t = std::make_shared<ref::HostTensor>(ElemType::Int64, Shape{static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t->data[i] = static_cast<double>(v[i]);
    return t;
}

class Builder {
public:
    // kept: per plan tensor, whether the backward without recomputation reads it (recompute only).
    Builder(const Plan& p, const DeviceInfo& dev, const TrainOptions& o, std::vector<bool> kept = {})
        : m_p(p), m_dev(dev), m_o(o), m_kept(std::move(kept)) {
        m_fwd.assign(p.tensors.size(), -1);
        m_producer.assign(p.tensors.size(), -1);
        for (size_t s = 0; s < p.steps.size(); ++s)
            for (int t : p.steps[s].out)
                if (t >= 0) m_producer[static_cast<size_t>(t)] = static_cast<int>(s);
        mark_needs();
    }

    TrainPlan build() {
        loss();
        for (size_t s = m_p.steps.size(); s-- > 0;) backward(m_p.steps[s]);
        close_bucket();
        if (m_tp.update.empty()) throw InputError("train-step: the model has no weight to train");
        m_tp.grad_bytes = m_gradblk;
        return std::move(m_tp);
    }

private:
    // Which plan tensors need a gradient: trained weights and whatever depends on them.
    void mark_needs() {
        m_needs.assign(m_p.tensors.size(), false);
        for (size_t i = 0; i < m_p.tensors.size(); ++i) {
            const PlanTensor& t = m_p.tensors[i];
            m_needs[i] = t.kind == PlanTensor::Kind::Weight && trainable(t);
        }
        for (const PlanStep& st : m_p.steps) {
            bool any = false;
            for (int t : st.in) {
                if (t < 0) continue;
                // A view the layout pass made (no step produces it) needs what its base needs.
                const PlanTensor& pt = m_p.tensors[static_cast<size_t>(t)];
                if (pt.kind == PlanTensor::Kind::View && m_producer[static_cast<size_t>(t)] < 0 && pt.base >= 0)
                    m_needs[static_cast<size_t>(t)] = m_needs[static_cast<size_t>(t)] || m_needs[static_cast<size_t>(pt.base)];
                if (m_needs[static_cast<size_t>(t)]) any = true;
            }
            if (!any) continue;
            // A comparison's or an integer cast's output carries no gradient (Less, Equal, Not, ...):
            // what is computed from it does not depend on the weights differentiably.
            for (int t : st.out)
                if (t >= 0 && ref::is_float(m_p.tensors[static_cast<size_t>(t)].ref.elem))
                    m_needs[static_cast<size_t>(t)] = true;
        }
    }
    static bool trainable(const PlanTensor& t) {
        return ref::is_float(t.ref.elem) && t.ref.numel() > 0 && t.ref.shape.size() >= 1;
    }
    bool needs(int t) const { return t >= 0 && m_needs[static_cast<size_t>(t)]; }
    bool is_weight(int t) const {
        return t >= 0 && m_p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::Weight;
    }
    const ops::TensorRef& pref(int t) const { return m_p.tensors[static_cast<size_t>(t)].ref; }

    [[noreturn]] void refuse(const PlanStep& st, const std::string& why) const {
        throw InputError("train-step: node '" + st.name + "' (" + st.op_type + "): " + why);
    }

    int add_tensor(TrainTensor t) {
        m_tp.tensors.push_back(std::move(t));
        return static_cast<int>(m_tp.tensors.size() - 1);
    }
    int fwd(int pt) {
        if (m_fwd[static_cast<size_t>(pt)] < 0 && m_o.recompute)
            m_fwd[static_cast<size_t>(pt)] = recompute(pt);
        if (m_fwd[static_cast<size_t>(pt)] < 0) {
            TrainTensor t;
            t.kind = TrainTensor::Kind::Forward;
            t.ref = pref(pt);
            t.plan = pt;
            m_fwd[static_cast<size_t>(pt)] = add_tensor(std::move(t));
        }
        return m_fwd[static_cast<size_t>(pt)];
    }
    // Recomputation: a cheap forward step's output (a vector kernel reading kept tensors) is made
    // again by the step's operator just before its first backward reader; a view of it becomes
    // a view of the recomputed tensor. -1: pt is kept from the forward.
    int recompute(int pt);
    bool cheap_step(int pt) const {
        const int s = m_producer[static_cast<size_t>(pt)];
        return s >= 0 && recomputable(m_p, m_p.steps[static_cast<size_t>(s)], pt, m_kept);
    }

    int arena_tensor(TrainTensor::Kind k, ops::TensorRef r) {
        TrainTensor t;
        t.kind = k;
        t.bytes = std::max<uint64_t>(r.storage_bytes(), 1);
        r.strides.clear();
        t.ref = std::move(r);
        return add_tensor(std::move(t));
    }
    int constant(const ref::HostTensor& v) {
        ops::TensorRef r = ops::make_tensor(v.shape, v.type);
        const int id = arena_tensor(TrainTensor::Kind::Const, r);
        m_tp.tensors[static_cast<size_t>(id)].value = std::make_shared<const ref::HostTensor>(v);
        return id;
    }
    int alias(int of, const Shape& shape) {
        TrainTensor t;
        t.kind = TrainTensor::Kind::Alias;
        t.ref = m_tp.tensors[static_cast<size_t>(of)].ref;
        t.ref.shape = shape;
        t.ref.strides.clear();
        t.alias = of;
        return add_tensor(std::move(t));
    }
    // A contiguous piece of train tensor `of` (materialised: not an alias), byte_offset into it.
    int alias_at(int of, const Shape& shape, uint64_t byte_offset) {
        const int a = alias(of, shape);
        m_tp.tensors[static_cast<size_t>(a)].offset = byte_offset;
        return a;
    }

    // One node of the operator library: inputs are train tensors (-1: omitted), `consts` their
    // plan-time values where the op needs them. The output goes to `dest` (a tensor of the
    // op's output shape) or a fresh gradient tensor; a view output aliases its input.
    int emit(const std::string& name, const std::string& op_type, int opset, ref::Attrs attrs,
             const std::vector<int>& ins, int dest = -1,
             std::vector<std::shared_ptr<const ref::HostTensor>> consts = {});

    static ref::Attrs attrs_of(std::initializer_list<std::pair<const char*, ref::Attr>> l) {
        ref::Attrs a;
        for (const auto& [k, v] : l) a.set(k, v);
        return a;
    }

    // The attributes of an elementwise chain computed in fp32 (a 2-byte tensor is rounded once, at
    // the end), as the vendor's and the frameworks' normalisation kernels compute whatever the
    // storage.
    static ref::Attrs fp32_chain(std::initializer_list<const char*> steps) {
        ref::Attr p;
        p.kind = ref::Attr::Kind::Strings;
        for (const char* s : steps) p.strings.emplace_back(s);
        ref::Attrs a = attrs_of({{"program", p}});
        a.set("fp32", ref::Attr::of_int(1));
        return a;
    }

    // Adds g to the gradient of plan tensor t (the sum when it already has one), in t's format
    // (train_layout.cpp: g converted or relabelled when it is in another).
    void accumulate(int t, int g, const std::string& name);
    int sum_item(int g) const;

    // train_layout.cpp: tensors in NC1HWC0 (the forward's layout pass kept them so).
    bool c0(int tt) const { return m_tp.tensors[static_cast<size_t>(tt)].ref.format == ops::Format::NC1HWC0; }
    // A train tensor reinterpreted with another ref (same bytes, no kernel).
    int relabel(int of, ops::TensorRef like);
    // NC1HWC0 train tensor tt as its storage, an ND [N, C1, spatial..., C0] tensor (a view) on
    // which ND kernels (reductions per channel, broadcasts of channel vectors) run; -1 when C is
    // not a multiple of C0 (padding channels would enter them). Back with relabel.
    int phys(int tt);
    Shape phys_shape(const ops::TensorRef& r) const;
    // Train tensor tt in ND (a TransData item, once per tensor; as it is when ND already).
    int nd(int tt, const std::string& name);
    // g in the format and shape of `like` (relabel, or a TransData item).
    int as_layout(int g, const ops::TensorRef& like, const std::string& name);
    int transdata(int tt, ops::Format f, const std::string& name);
    void global_average_pool(const PlanStep& st, int gy);

    // The gradient of weight w: an op writes it into the gradient block, then the bucket and the
    // update are planned.
    int weight_grad(int w);
    // Call after the item writing a weight gradient was emitted.
    // (may_close: the bucket may close here; false while another gradient of the same item is
    // still to be announced.)
    void weight_done(int w, bool may_close = true);
    // train_optimizer.cpp: the update of weight w from its gradient g (states placed).
    TrainItem update_item(int w, int g);
    int state_tensor(const Shape& shape, std::shared_ptr<const ref::HostTensor> value = nullptr);
    void close_bucket();

    // The loss gradient at the output (or, after a final Softmax, at its logits).
    void loss();

    int grad_of_outputs(const PlanStep& st) {
        if (st.out.empty()) return -1;
        auto it = m_grad.find(st.out[0]);
        return it == m_grad.end() ? -1 : it->second;
    }

    // dZ from dY through a fused activation (ReLU only).
    int through_activation(const PlanStep& st, int gy) {
        const std::string act = st.desc.attrs.get_string("activation", "");
        if (act.empty()) return gy;
        if (act == "Clip")
            return clip_grad(st.name + "/clip_grad", fwd(st.out[0]), gy,
                             st.desc.attrs.get_float("activation_alpha", -INFINITY),
                             st.desc.attrs.get_float("activation_beta", INFINITY));
        if (act != "Relu") refuse(st, "no backward for the fused activation " + act);
        return emit(st.name + "/relu_grad", "ReluGrad", 1, {}, {fwd(st.out[0]), gy});
    }

    void backward(const PlanStep& st);

    void gemm(const PlanStep& st, int gz);

    void conv(const PlanStep& st, int gz);

    // The weight gradient composed from data-movement kernels and Gemms (the fallback where the
    // weight-gradient kernel cannot run): per kernel offset (a, b) one Gemm of dZ^T (M, N*OH*OW)
    // with the offset's strided slice of the padded X^T (C, N*OH*OW), transposed; the offsets
    // concatenated.
    void conv_wgrad_composed(const PlanStep& st, int gz, int xn, int& z2, int wg);
    static constexpr int64_t kMaxWgradGroups = 16;
    void grouped_wgrad(const PlanStep& st, int gz, int wg);

    // MaxPool: per window offset (a, b), the input pixels x[i*s + a - p] that equal their
    // window's maximum y[i] take dy[i]; spread back to the input grid (zeros between, shifted
    // by the offset) and summed.
    void max_pool(const PlanStep& st, int gy);
    void average_pool(const PlanStep& st, int gy);
    void conv_transpose(const PlanStep& st, int gy);

    // train_norm.cpp
    int scalar(ElemType e, double v);  // a rank-0 constant of type e
    void batch_norm(const PlanStep& st, int gy);
    void batch_norm_fused(const PlanStep& st, int xv, int gy);  // NC1HWC0 X and dY, whole C0 blocks
    void clip(const PlanStep& st, int gy);
    int clip_grad(const std::string& name, int y, int gy, double lo, double hi);
    void concat(const PlanStep& st, int gy);

    // train_transformer.cpp
    // The gradient g of plan tensor t (of the output's shape): summed over the axes t was
    // broadcast along; a trained weight's goes to its gradient block, anything else accumulates.
    void give(int t, int g, const std::string& name);
    // g summed to shape `to` over broadcast axes (ReduceSum, keepdims); written to dest if given.
    int reduce_to(const std::string& name, int g, const Shape& to, int dest = -1);
    // A plan-time constant's value (a weight holding one value), null otherwise.
    std::shared_ptr<const ref::HostTensor> scalar_value(int pt) const;
    // A view of train tensor t with its last two dimensions swapped (strides, no kernel).
    int transposed(int t);
    void binary(const PlanStep& st, int gy);
    void layer_norm(const PlanStep& st, int gy);
    void softmax(const PlanStep& st, int gy);  // Softmax and LogSoftmax
    Shape softmax_axes(const PlanStep& st) const;  // the axes a Softmax normalises over
    void matmul_nd(const PlanStep& st, int gy);
    void gather(const PlanStep& st, int gy);
    bool constant_gather(const PlanStep& st, int gy);  // false: left to the embedding path
    void where(const PlanStep& st, int gy);
    void transpose(const PlanStep& st, int gy);
    void split(const PlanStep& st);
    void slice(const PlanStep& st, int gy);
    void pad(const PlanStep& st, int gy);

    // train_elementwise.cpp
    int where_zero(const std::string& name, int cond, int v, bool v_first);  // Where(cond, v, 0) or (cond, 0, v)
    void pow(const PlanStep& st, int gy);
    void prelu(const PlanStep& st, int gy);
    void max_min(const PlanStep& st, int gy);  // Max, Min, Sum
    void tile(const PlanStep& st, int gy);
    void global_max_pool(const PlanStep& st, int gy);
    void instance_norm(const PlanStep& st, int gy);
    void reduce(const PlanStep& st, int gy);

    const Plan& m_p;
    const DeviceInfo& m_dev;
    TrainOptions m_o;
    TrainPlan m_tp;
    std::vector<bool> m_kept;
    std::vector<int> m_fwd, m_producer;
    std::vector<bool> m_needs;
    std::map<int, int> m_grad, m_wgrad;
    std::map<std::pair<int, int>, int> m_converted;  // (train tensor, format) -> its TransData
    std::set<int> m_updated;
    Bucket m_cur;
    uint64_t m_gradblk = 0;
    const PlanStep* m_done_step = nullptr;
};

}  // namespace sfumato::graph::detail
