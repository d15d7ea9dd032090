// The update items of a training step (train.h): one optimizer node per trained weight, its fp32
// states (and, under mixed precision, the weight's fp32 master copy) placed in the optimizer-state
// block. Plain SGD on the weights themselves is the elementwise SgdUpdate; everything else is a
// fused kernel of runtime/ops/optim/fused_update.cpp.
#include "runtime/graph/train_builder.h"

namespace sfumato::graph {

const char* optimizer_name(TrainOptions::Optimizer o) {
    switch (o) {
        case TrainOptions::Optimizer::Sgd: return "sgd";
        case TrainOptions::Optimizer::Momentum: return "momentum";
        case TrainOptions::Optimizer::AdamW: return "adamw";
        default: return "lamb";
    }
}

bool parse_optimizer(const std::string& s, TrainOptions::Optimizer& out) {
    for (auto o : {TrainOptions::Optimizer::Sgd, TrainOptions::Optimizer::Momentum, TrainOptions::Optimizer::AdamW,
                   TrainOptions::Optimizer::Lamb})
        if (s == optimizer_name(o)) return out = o, true;
    return false;
}

namespace {

ref::OptimizerRule::Kind kind_of(TrainOptions::Optimizer o) {
    switch (o) {
        case TrainOptions::Optimizer::Sgd: return ref::OptimizerRule::Kind::Sgd;
        case TrainOptions::Optimizer::Momentum: return ref::OptimizerRule::Kind::Momentum;
        case TrainOptions::Optimizer::AdamW: return ref::OptimizerRule::Kind::AdamW;
        default: return ref::OptimizerRule::Kind::Lamb;
    }
}

}  // namespace

ref::Attrs TrainOptions::update_attrs(int64_t t, double inv_scale) const {
    ref::Attrs a;
    a.set("lr", ref::Attr::of_float(lr));
    a.set("step", ref::Attr::of_int(t));
    a.set("inv_scale", ref::Attr::of_float(inv_scale));
    a.set("momentum", ref::Attr::of_float(momentum));
    a.set("beta1", ref::Attr::of_float(beta1));
    a.set("beta2", ref::Attr::of_float(beta2));
    if (epsilon >= 0) a.set("epsilon", ref::Attr::of_float(epsilon));
    if (weight_decay >= 0) a.set("weight_decay", ref::Attr::of_float(weight_decay));
    return a;
}

ref::OptimizerRule TrainOptions::rule(int64_t t, double inv_scale) const {
    return ref::OptimizerRule::of(kind_of(optimizer), update_attrs(t, inv_scale));
}

namespace detail {

int Builder::state_tensor(const Shape& shape, std::shared_ptr<const ref::HostTensor> value) {
    TrainTensor st;
    st.kind = TrainTensor::Kind::State;
    st.ref = ops::make_tensor(shape, ElemType::Float);
    st.bytes = st.ref.storage_bytes();
    st.offset = m_tp.state_bytes;
    st.value = std::move(value);
    m_tp.state_bytes = align_up(m_tp.state_bytes + st.bytes, 512);
    if (st.value) m_tp.master_bytes += st.bytes;
    return add_tensor(std::move(st));
}

TrainItem Builder::update_item(int w, int g) {
    TrainItem u;
    const bool plain = m_o.optimizer == TrainOptions::Optimizer::Sgd && !m_o.master;
    static const char* const kOps[] = {"SgdMasterUpdate", "MomentumUpdate", "AdamWUpdate", "LambUpdate"};
    u.desc.op_type = plain ? "SgdUpdate" : kOps[static_cast<int>(m_o.optimizer)];
    u.name = m_p.tensors[static_cast<size_t>(w)].name + "/" + optimizer_name(m_o.optimizer);
    u.desc.name = u.name;
    u.desc.attrs = plain ? attrs_of({{"lr", ref::Attr::of_float(m_o.lr)}}) : m_o.update_attrs(m_o.step, 1.0);
    u.desc.attrs.set_owner(u.name);
    ops::TensorRef wr = pref(w);
    wr.strides.clear();
    u.desc.inputs = {wr, m_tp.tensors[static_cast<size_t>(g)].ref};
    u.in = {fwd(w), g};
    const int states = plain ? 0 : ref::OptimizerRule::states(m_o.rule(1, 1).kind);
    for (int k = 0; k < states; ++k) u.in.push_back(state_tensor(wr.shape));
    if (m_o.master) {
        const PlanTensor& pt = m_p.tensors[static_cast<size_t>(w)];
        if (!pt.weight)
            throw InputError("train-step: weight '" + pt.name + "' has no stored value for its fp32 master copy");
        auto v = std::make_shared<ref::HostTensor>(*pt.weight->host());
        v->type = ElemType::Float;
        ref::round_to_type(*v);
        v->shape = wr.shape;
        u.in.push_back(state_tensor(wr.shape, std::move(v)));
    }
    for (size_t k = 2; k < u.in.size(); ++k) u.desc.inputs.push_back(m_tp.tensors[static_cast<size_t>(u.in[k])].ref);
    u.op = ops::make_node_op(u.desc, m_dev);
    u.out = {fwd(w)};
    m_tp.workspace_bytes = std::max(m_tp.workspace_bytes, u.op->workspace_bytes());
    return u;
}

}  // namespace detail

}  // namespace sfumato::graph
