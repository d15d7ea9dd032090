// Backward planning of a training step (see train.h): the walk over the forward steps, the
// training tensors, the weight gradients' buckets and updates, and the loss.
#include "runtime/graph/train_builder.h"
#include "runtime/ops/ew/onnx_ew.h"

namespace sfumato::graph {

namespace detail {

// Recomputation: a cheap forward step's output (a vector kernel reading kept tensors) is made
// again by the step's operator just before its first backward reader; a view of it becomes
// a view of the recomputed tensor. -1: pt is kept from the forward.
int Builder::recompute(int pt) {
    const PlanTensor& t = m_p.tensors[static_cast<size_t>(pt)];
    if (t.kind == PlanTensor::Kind::View) {
        int root = pt;
        uint64_t off = 0;
        while (m_p.tensors[static_cast<size_t>(root)].kind == PlanTensor::Kind::View) {
            off += m_p.tensors[static_cast<size_t>(root)].view_offset;
            root = m_p.tensors[static_cast<size_t>(root)].base;
        }
        if (off != 0 || !cheap_step(root)) return -1;
        const int r = fwd(root);
        // A view the layout pass made reads its NC1HWC0 base as ND (same bytes).
        if (m_tp.tensors[static_cast<size_t>(r)].ref.format != t.ref.format) return relabel(r, t.ref);
        return alias(r, t.ref.shape);
    }
    if (!cheap_step(pt)) return -1;
    const PlanStep& st = m_p.steps[static_cast<size_t>(m_producer[static_cast<size_t>(pt)])];
    std::vector<int> ins;
    for (int i : st.in) ins.push_back(i >= 0 ? fwd(i) : -1);
    ops::TensorRef r = t.ref;
    const int dest = arena_tensor(TrainTensor::Kind::Recompute, r);
    emit(st.name + "/recompute", st.op_type, st.desc.opset, st.desc.attrs, ins, dest, st.desc.constants);
    return dest;
}

// One node of the operator library: inputs are train tensors (-1: omitted), `consts` their
// plan-time values where the op needs them. The output goes to `dest` (a tensor of the
// op's output shape) or a fresh gradient tensor; a view output aliases its input.
int Builder::emit(const std::string& name, const std::string& op_type, int opset, ref::Attrs attrs,
                  const std::vector<int>& ins, int dest,
                  std::vector<std::shared_ptr<const ref::HostTensor>> consts) {
    TrainItem it;
    it.name = name;
    it.desc.name = name;
    it.desc.op_type = op_type;
    it.desc.opset = opset;
    attrs.set_owner(name);
    it.desc.attrs = std::move(attrs);
    consts.resize(ins.size());
    for (size_t i = 0; i < ins.size(); ++i) {
        // A constant operand's value is known at plan time (an elementwise op folds a scalar).
        if (ins[i] >= 0 && !consts[i] &&
            m_tp.tensors[static_cast<size_t>(ins[i])].kind == TrainTensor::Kind::Const)
            consts[i] = m_tp.tensors[static_cast<size_t>(ins[i])].value;
        if (ins[i] < 0) {
            ops::TensorRef r;
            r.present = false;
            it.desc.inputs.push_back(r);
            continue;
        }
        it.desc.inputs.push_back(m_tp.tensors[static_cast<size_t>(ins[i])].ref);
    }
    it.desc.constants = consts;
    it.op = ops::make_node_op(it.desc, m_dev);
    it.in = ins;
    const std::vector<ops::TensorRef> outs = it.op->outputs();
    if (outs.size() != 1)
        throw InputError("train-step: " + name + " (" + op_type + ") has " + std::to_string(outs.size()) +
                         " outputs");
    if (it.op->view_of(0) >= 0) {
        const int v = ins[static_cast<size_t>(it.op->view_of(0))];
        if (dest >= 0)
            throw InputError("train-step: " + name + " is a view, it cannot write its destination");
        return alias(v, outs[0].shape);
    }
    if (dest >= 0) {
        const ops::TensorRef& d = m_tp.tensors[static_cast<size_t>(dest)].ref;
        if (d.numel() != outs[0].numel() || d.dtype != outs[0].dtype)
            throw InputError("train-step: " + name + " (" + op_type + ") gives " +
                             ref::shape_str(outs[0].shape) + ", its destination is " +
                             ref::shape_str(d.shape));
    } else {
        dest = arena_tensor(TrainTensor::Kind::Grad, outs[0]);
    }
    it.out = {dest};
    m_tp.workspace_bytes = std::max(m_tp.workspace_bytes, it.op->workspace_bytes());
    m_tp.backward.push_back(std::move(it));
    return dest;
}

// The gradient of weight w: an op writes it into the gradient block, then the bucket and the
// update are planned.
int Builder::weight_grad(int w) {
    if (m_wgrad.count(w))
        throw InputError("train-step: weight '" + m_p.tensors[static_cast<size_t>(w)].name +
                         "' is used twice");
    TrainTensor t;
    t.kind = TrainTensor::Kind::WeightGrad;
    t.ref = pref(w);
    t.ref.strides.clear();
    t.plan = w;
    t.bytes = t.ref.storage_bytes();
    if (!m_cur.grads.empty() && m_cur.dtype != t.ref.dtype) close_bucket();
    t.offset = m_gradblk;
    m_gradblk = align_up(m_gradblk + t.bytes, 512);
    const int id = add_tensor(std::move(t));
    m_wgrad[w] = id;
    if (m_cur.grads.empty()) {
        m_cur.offset = m_tp.tensors[static_cast<size_t>(id)].offset;
        m_cur.dtype = pref(w).dtype;
    }
    m_cur.grads.push_back(id);
    m_tp.parameters += pref(w).numel();
    return id;
}

// Call after the item writing a weight gradient was emitted.
void Builder::weight_done(int w, bool may_close) {
    const int g = m_wgrad.at(w);
    TrainItem u = update_item(w, g);
    m_cur.updates.push_back(m_tp.update.size());
    m_tp.update.push_back(std::move(u));
    m_updated.insert(w);
    const Bucket& b = m_cur;
    const uint64_t end =
        m_tp.tensors[static_cast<size_t>(g)].offset + m_tp.tensors[static_cast<size_t>(g)].bytes;
    m_cur.bytes = end - b.offset;
    if (may_close && m_cur.bytes >= m_o.bucket_bytes) close_bucket();
}

void Builder::close_bucket() {
    if (m_cur.grads.empty()) return;
    const int last = m_cur.grads.back();
    const TrainTensor& t = m_tp.tensors[static_cast<size_t>(last)];
    m_cur.bytes = t.offset + t.bytes - m_cur.offset;
    m_cur.bytes = align_up(m_cur.bytes, isa::dtype_size(m_cur.dtype));
    m_tp.backward.back().completes_bucket = static_cast<int>(m_tp.buckets.size());
    m_tp.buckets.push_back(std::move(m_cur));
    m_cur = Bucket{};
}

// The loss gradient at the output (or, after a final Softmax, at its logits).
void Builder::loss() {
    if (m_p.outputs.size() != 1)
        throw InputError("train-step: the model must have one output, it has " +
                         std::to_string(m_p.outputs.size()));
    int y = m_p.outputs[0];
    const PlanStep* last = nullptr;
    for (const PlanStep& st : m_p.steps)
        for (int o : st.out)
            if (o == y) last = &st;
    int at = y;
    // A final Softmax over the last axis: the cross-entropy against one-hot rows. Over another
    // axis (or several, before opset 13) it is an ordinary step under the squared error.
    const int64_t rank = static_cast<int64_t>(pref(y).shape.size());
    if (last && last->op_type == "Softmax" && !last->view && softmax_axes(*last) == Shape{rank - 1}) {
        m_tp.softmax_ce = true;
        at = last->in[0];
        m_done_step = last;
    }
    if (!ref::is_float(pref(y).elem)) throw InputError("train-step: the output is not a float tensor");
    m_tp.output = y;
    ops::TensorRef tr = pref(y);
    tr.strides.clear();
    m_tp.target = arena_tensor(TrainTensor::Kind::Target, tr);
    ref::Attrs a = attrs_of({{"scale", ref::Attr::of_float(m_o.loss_scale)}});
    const int g = emit("loss/grad", "LossGrad", 1, a, {fwd(y), m_tp.target});
    if (m_tp.softmax_ce && pref(at).shape != pref(y).shape) refuse(*last, "input and output shapes differ");
    accumulate(at, g, "loss");
}

// The backward item that wrote gradient g as the sum of two (accumulate's Add), if nothing
// else reads g: -1 otherwise.
int Builder::sum_item(int g) const {
    int at = -1;
    for (size_t i = 0; i < m_tp.backward.size(); ++i) {
        const TrainItem& it = m_tp.backward[i];
        for (int t : it.in)
            if (t == g) return -1;
        if (!it.out.empty() && it.out[0] == g) at = static_cast<int>(i);
    }
    if (at < 0) return -1;
    const TrainItem& it = m_tp.backward[static_cast<size_t>(at)];
    const std::string& n = it.name;
    const bool sum = it.desc.op_type == "Add" && it.in.size() == 2 && it.out.size() == 1 && n.size() > 4 &&
                     n.compare(n.size() - 4, 4, "/sum") == 0 && it.completes_bucket < 0;
    return sum ? at : -1;
}

void Builder::backward(const PlanStep& st) {
    if (&st == m_done_step) return;
    if (st.op_type == "Split" && !st.view) return split(st);
    const int gy = grad_of_outputs(st);
    if (gy < 0) return;  // nothing downstream needs it
    const std::string& op = st.op_type;
    const int x = st.in.empty() ? -1 : st.in[0];
    if (st.view || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
        op == "Identity" || op == "Dropout") {
        if (needs(x)) accumulate(x, alias(gy, pref(x).shape), st.name);
        return;
    }
    // ReluGrad from the ReLU's output y: when the ReLU's gradient is the sum of its readers' (a
    // residual Add's two paths), the Add that made it becomes ReluGrad(y, a, b), one pass
    // instead of two (the sum written and read back); the gradient through the ReLU.
    auto relu_grad = [&]() {
        if (const int s = sum_item(gy); s >= 0) {
            TrainItem& it = m_tp.backward[static_cast<size_t>(s)];
            const std::vector<int> ab = it.in;
            TrainItem f = it;
            f.name = f.desc.name = st.name + "/grad";
            f.desc.op_type = "ReluGrad";
            f.desc.opset = 1;
            f.desc.attrs = ref::Attrs();
            f.desc.attrs.set_owner(f.name);
            f.in = {fwd(st.out[0]), ab[0], ab[1]};
            f.desc.inputs.clear();
            for (int t : f.in) f.desc.inputs.push_back(m_tp.tensors[static_cast<size_t>(t)].ref);
            f.desc.constants.assign(3, nullptr);
            try {
                f.op = ops::make_node_op(f.desc, m_dev);
                if (f.op->outputs().at(0).numel() == m_tp.tensors[static_cast<size_t>(gy)].ref.numel()) {
                    it = std::move(f);
                    return gy;
                }
            } catch (const ops::UnsupportedError&) {
            }
        }
        return emit(st.name + "/grad", "ReluGrad", 1, {}, {fwd(st.out[0]), gy});
    };
    if (op == "Relu") {
        accumulate(x, relu_grad(), st.name);
    } else if (op == "ElementwiseChain" && st.in.size() == 2 && st.desc.attrs.find("program") &&
               st.desc.attrs.find("program")->strings == std::vector<std::string>{"Add", "Relu"}) {
        // A residual Add + Relu (pass fuse_conv in training): both operands take ReluGrad(y, dy).
        const int g = relu_grad();
        give(st.in[0], g, st.name + "/dA");
        give(st.in[1], g, st.name + "/dB");
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
        binary(st, gy);
    } else if (op == "MatMul" && (pref(st.in[0]).shape.size() > 2 || pref(st.in[1]).shape.size() > 2)) {
        if (!st.desc.attrs.get_string("activation", "").empty()) refuse(st, "a fused activation on a batched MatMul");
        matmul_nd(st, gy);
    } else if (op == "Gemm" || op == "MatMul") {
        gemm(st, through_activation(st, gy));
    } else if (op == "Conv") {
        conv(st, through_activation(st, gy));
    } else if (op == "ConvTranspose") {
        conv_transpose(st, gy);
    } else if (op == "GlobalAveragePool") {
        global_average_pool(st, gy);
    } else if (op == "TransData") {  // a layout boundary: the gradient goes back in x's format
        accumulate(x, gy, st.name);
    } else if (op == "MaxPool") {
        max_pool(st, gy);
    } else if (op == "AveragePool") {
        average_pool(st, gy);
    } else if (op == "BatchNormTraining") {
        batch_norm(st, gy);
    } else if (op == "Clip") {
        clip(st, gy);
    } else if (op == "Concat") {
        concat(st, gy);
    } else if (op == "LayerNormalization") {
        layer_norm(st, gy);
    } else if (op == "Softmax" || op == "LogSoftmax") {
        softmax(st, gy);
    } else if (op == "Gelu") {
        const ref::Attrs a = attrs_of(
            {{"approximate", ref::Attr::of_string(st.desc.attrs.get_string("approximate", "none"))}});
        accumulate(x, emit(st.name + "/grad", "GeluGrad", 1, a, {fwd(x), gy}), st.name);
    } else if (ops::ew::has_activation_grad(op)) {
        // Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Elu, ...: f'(x) dy, one vector kernel.
        if (needs(x)) {
            ref::Attrs a = st.desc.attrs;
            a.set("activation", ref::Attr::of_string(op));
            accumulate(x, emit(st.name + "/grad", "ActivationGrad", 1, a, {fwd(x), gy}), st.name);
        }
    } else if (op == "Neg") {
        if (needs(x)) accumulate(x, emit(st.name + "/grad", "Neg", 13, {}, {gy}), st.name);
    } else if (op == "Gather") {
        gather(st, gy);
    } else if (op == "Where") {
        where(st, gy);
    } else if (op == "Transpose") {
        transpose(st, gy);
    } else if (op == "Slice") {
        slice(st, gy);
    } else if (op == "Pad") {
        pad(st, gy);
    } else if (op == "Pow") {
        pow(st, gy);
    } else if (op == "PRelu") {
        prelu(st, gy);
    } else if (op == "Max" || op == "Min" || op == "Sum") {
        max_min(st, gy);
    } else if (op == "Tile") {
        tile(st, gy);
    } else if (op == "GlobalMaxPool") {
        global_max_pool(st, gy);
    } else if (op == "InstanceNormalization") {
        instance_norm(st, gy);
    } else if (op == "Expand") {
        give(x, gy, st.name);
    } else if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
               op == "ReduceSumSquare" || op == "ReduceL2" || op == "ReduceLogSumExp" || op == "ReduceL1") {
        reduce(st, gy);
    } else if (op == "Cast") {
        if (needs(x)) {
            const ref::Attrs a = attrs_of({{"to", ref::Attr::of_int(static_cast<int64_t>(pref(x).elem))}});
            give(x, emit(st.name + "/grad", "Cast", 13, a, {gy}), st.name);
        }
    } else {
        refuse(st, "no backward for this op in train-step");
    }
}

}  // namespace detail

using detail::Builder;

size_t TrainPlan::kernel_count() const {
    size_t n = 0;
    for (const auto* list : {&backward, &update})
        for (const TrainItem& it : *list) n += it.op ? 1 : 0;
    return n;
}

size_t TrainPlan::update_launches() const {
    const bool plain = !update.empty() && update[0].desc.op_type == "SgdUpdate";
    if (!plain) return update.size();
    size_t n = 0;
    for (const Bucket& b : buckets) n += b.updates.empty() ? 0 : 1;
    return n;
}

TrainPlan build_train_plan(const Plan& fwd, const DeviceInfo& dev, const TrainOptions& o) {
    if (!o.recompute) return Builder(fwd, dev, o).build();
    // A cheap step is recomputed only from tensors the backward reads without recomputation.
    TrainOptions keep = o;
    keep.recompute = false;
    std::vector<bool> kept = read_by_backward(fwd, Builder(fwd, dev, keep).build());
    return Builder(fwd, dev, o, std::move(kept)).build();
}

std::set<std::string> train_passes(bool layout) {
    std::set<std::string> p = {"fold", "dce", "fuse_layernorm", "fuse_conv", "views"};
    if (layout) p.insert("layout");
    return p;
}

}  // namespace sfumato::graph
