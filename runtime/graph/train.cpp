// Backward planning of a training step (see train.h).
#include "runtime/graph/train.h"

#include <algorithm>
#include <map>
#include <set>

#include "runtime/ref/conv_shape.h"
#include "sim/error.h"

namespace sfumato::graph {

namespace {

using ref::ElemType;
using Shape = std::vector<int64_t>;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::shared_ptr<const ref::HostTensor> ints(const std::vector<int64_t>& v) {
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
            for (int t : st.in)
                if (t >= 0 && m_needs[static_cast<size_t>(t)]) any = true;
            if (!any) continue;
            for (int t : st.out)
                if (t >= 0) m_needs[static_cast<size_t>(t)] = true;
        }
    }
    static bool trainable(const PlanTensor& t) {
        return ref::is_float(t.ref.elem) && t.ref.numel() > 0 && t.ref.shape.size() >= 1;
    }
    bool needs(int t) const { return t >= 0 && m_needs[static_cast<size_t>(t)]; }
    bool is_weight(int t) const { return t >= 0 && m_p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::Weight; }
    const ops::TensorRef& pref(int t) const { return m_p.tensors[static_cast<size_t>(t)].ref; }

    [[noreturn]] void refuse(const PlanStep& st, const std::string& why) const {
        throw InputError("train-step: node '" + st.name + "' (" + st.op_type + "): " + why);
    }

    int add_tensor(TrainTensor t) {
        m_tp.tensors.push_back(std::move(t));
        return static_cast<int>(m_tp.tensors.size() - 1);
    }
    int fwd(int pt) {
        if (m_fwd[static_cast<size_t>(pt)] < 0 && m_o.recompute) m_fwd[static_cast<size_t>(pt)] = recompute(pt);
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
    int recompute(int pt) {
        const PlanTensor& t = m_p.tensors[static_cast<size_t>(pt)];
        if (t.kind == PlanTensor::Kind::View) {
            int root = pt;
            uint64_t off = 0;
            while (m_p.tensors[static_cast<size_t>(root)].kind == PlanTensor::Kind::View) {
                off += m_p.tensors[static_cast<size_t>(root)].view_offset;
                root = m_p.tensors[static_cast<size_t>(root)].base;
            }
            if (off != 0 || !cheap_step(root)) return -1;
            return alias(fwd(root), t.ref.shape);
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
    // A step worth recomputing: a vector kernel (pooling, activation, elementwise) whose inputs
    // the backward keeps anyway (weights, or tensors it reads itself), so not keeping its output
    // saves that output's bytes from the forward to its first backward reader.
    bool cheap_step(int pt) const {
        static const std::set<std::string> cheap = {"MaxPool", "AveragePool", "GlobalAveragePool", "Relu", "LeakyRelu",
                                                    "Sigmoid", "Clip", "Add", "Sub", "Mul"};
        const PlanTensor& t = m_p.tensors[static_cast<size_t>(pt)];
        const int s = m_producer[static_cast<size_t>(pt)];
        if (t.kind != PlanTensor::Kind::Activation || t.graph_output || s < 0) return false;
        const PlanStep& st = m_p.steps[static_cast<size_t>(s)];
        if (st.view || !st.op || !cheap.count(st.op_type) || st.out.size() != 1 || st.fused.size() > 1) return false;
        if (!st.desc.attrs.get_string("activation", "").empty()) return false;
        for (int i : st.in) {
            if (i < 0 || is_weight(i)) continue;
            int r = i;
            while (m_p.tensors[static_cast<size_t>(r)].kind == PlanTensor::Kind::View) r = m_p.tensors[static_cast<size_t>(r)].base;
            if (static_cast<size_t>(r) >= m_kept.size() || !m_kept[static_cast<size_t>(r)]) return false;
        }
        return true;
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

    // One node of the operator library: inputs are train tensors (-1: omitted), `consts` their
    // plan-time values where the op needs them. The output goes to `dest` (a tensor of the
    // op's output shape) or a fresh gradient tensor; a view output aliases its input.
    int emit(const std::string& name, const std::string& op_type, int opset, ref::Attrs attrs, const std::vector<int>& ins,
             int dest = -1, std::vector<std::shared_ptr<const ref::HostTensor>> consts = {}) {
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
            if (ins[i] >= 0 && !consts[i] && m_tp.tensors[static_cast<size_t>(ins[i])].kind == TrainTensor::Kind::Const)
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
        if (outs.size() != 1) throw InputError("train-step: " + name + " (" + op_type + ") has " + std::to_string(outs.size()) + " outputs");
        if (it.op->view_of(0) >= 0) {
            const int v = ins[static_cast<size_t>(it.op->view_of(0))];
            if (dest >= 0) throw InputError("train-step: " + name + " is a view, it cannot write its destination");
            return alias(v, outs[0].shape);
        }
        if (dest >= 0) {
            const ops::TensorRef& d = m_tp.tensors[static_cast<size_t>(dest)].ref;
            if (d.numel() != outs[0].numel() || d.dtype != outs[0].dtype)
                throw InputError("train-step: " + name + " (" + op_type + ") gives " + ref::shape_str(outs[0].shape) +
                                 ", its destination is " + ref::shape_str(d.shape));
        } else {
            dest = arena_tensor(TrainTensor::Kind::Grad, outs[0]);
        }
        it.out = {dest};
        m_tp.workspace_bytes = std::max(m_tp.workspace_bytes, it.op->workspace_bytes());
        m_tp.backward.push_back(std::move(it));
        return dest;
    }

    static ref::Attrs attrs_of(std::initializer_list<std::pair<const char*, ref::Attr>> l) {
        ref::Attrs a;
        for (const auto& [k, v] : l) a.set(k, v);
        return a;
    }

    // Adds g to the gradient of plan tensor t (the sum when it already has one).
    void accumulate(int t, int g, const std::string& name) {
        if (!needs(t) || is_weight(t)) return;
        auto it = m_grad.find(t);
        if (it == m_grad.end()) {
            m_grad[t] = g;
            return;
        }
        m_grad[t] = emit(name + "/sum", "Add", 14, {}, {it->second, g});
    }

    // The gradient of weight w: an op writes it into the gradient block, then the bucket and the
    // update are planned.
    int weight_grad(int w) {
        if (m_wgrad.count(w)) throw InputError("train-step: weight '" + m_p.tensors[static_cast<size_t>(w)].name + "' is used twice");
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
    void weight_done(int w) {
        const int g = m_wgrad.at(w);
        TrainItem u;
        u.name = m_p.tensors[static_cast<size_t>(w)].name + "/sgd";
        u.desc.name = u.name;
        u.desc.op_type = "SgdUpdate";
        u.desc.attrs.set_owner(u.name);
        u.desc.attrs.set("lr", ref::Attr::of_float(m_o.lr));
        ops::TensorRef wr = pref(w), gr = m_tp.tensors[static_cast<size_t>(g)].ref;
        wr.strides.clear();
        u.desc.inputs = {wr, gr};
        u.op = ops::make_node_op(u.desc, m_dev);
        u.in = {fwd(w), g};
        u.out = {fwd(w)};
        m_tp.workspace_bytes = std::max(m_tp.workspace_bytes, u.op->workspace_bytes());
        m_cur.updates.push_back(m_tp.update.size());
        m_tp.update.push_back(std::move(u));
        m_updated.insert(w);
        const Bucket& b = m_cur;
        const uint64_t end = m_tp.tensors[static_cast<size_t>(g)].offset + m_tp.tensors[static_cast<size_t>(g)].bytes;
        m_cur.bytes = end - b.offset;
        if (m_cur.bytes >= m_o.bucket_bytes) close_bucket();
    }
    void close_bucket() {
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
    void loss() {
        if (m_p.outputs.size() != 1) throw InputError("train-step: the model must have one output, it has " + std::to_string(m_p.outputs.size()));
        int y = m_p.outputs[0];
        const PlanStep* last = nullptr;
        for (const PlanStep& st : m_p.steps)
            for (int o : st.out)
                if (o == y) last = &st;
        int at = y;
        if (last && last->op_type == "Softmax" && !last->view) {
            const int64_t axis = last->desc.attrs.get_int("axis", -1);
            const int64_t rank = static_cast<int64_t>(pref(y).shape.size());
            if (axis != -1 && axis != rank - 1) refuse(*last, "a final Softmax over the last axis only");
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

    int grad_of_outputs(const PlanStep& st) {
        if (st.out.empty()) return -1;
        auto it = m_grad.find(st.out[0]);
        return it == m_grad.end() ? -1 : it->second;
    }

    // dZ from dY through a fused activation (ReLU only).
    int through_activation(const PlanStep& st, int gy) {
        const std::string act = st.desc.attrs.get_string("activation", "");
        if (act.empty()) return gy;
        if (act != "Relu") refuse(st, "no backward for the fused activation " + act);
        return emit(st.name + "/relu_grad", "ReluGrad", 1, {}, {fwd(st.out[0]), gy});
    }

    void backward(const PlanStep& st) {
        if (&st == m_done_step) return;
        const int gy = grad_of_outputs(st);
        if (gy < 0) return;  // nothing downstream needs it
        const std::string& op = st.op_type;
        const int x = st.in.empty() ? -1 : st.in[0];
        if (st.view || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" ||
            op == "Dropout") {
            if (needs(x)) accumulate(x, alias(gy, pref(x).shape), st.name);
            return;
        }
        if (op == "Relu") {
            accumulate(x, emit(st.name + "/grad", "ReluGrad", 1, {}, {fwd(st.out[0]), gy}), st.name);
        } else if (op == "Add") {
            for (int i : st.in) {
                if (!needs(i)) continue;
                if (pref(i).shape != pref(st.out[0]).shape) refuse(st, "a broadcasting Add has no backward here");
                if (is_weight(i)) refuse(st, "an Add of a weight has no backward here (fold it into the Conv/Gemm bias)");
                accumulate(i, gy, st.name);
            }
        } else if (op == "Gemm" || op == "MatMul") {
            gemm(st, through_activation(st, gy));
        } else if (op == "Conv") {
            conv(st, through_activation(st, gy));
        } else if (op == "GlobalAveragePool") {
            const Shape& xs = pref(x).shape;
            if (xs.size() != 4) refuse(st, "4-D input only");
            ref::HostTensor k(pref(x).elem, {1, 1, xs[2], xs[3]});
            for (double& v : k.data) v = 1.0 / static_cast<double>(xs[2] * xs[3]);
            ref::round_to_type(k);
            accumulate(x, emit(st.name + "/grad", "Mul", 14, {}, {gy, constant(k)}), st.name);
        } else if (op == "MaxPool") {
            max_pool(st, gy);
        } else {
            refuse(st, "no backward for this op in train-step");
        }
    }

    void gemm(const PlanStep& st, int gz) {
        const bool is_gemm = st.op_type == "Gemm";
        const ref::Attrs& at = st.desc.attrs;
        if (is_gemm && (at.get_int("transA", 0) != 0 || at.get_float("alpha", 1.0) != 1.0))
            refuse(st, "transA and alpha other than 1 have no backward here");
        const bool tb = is_gemm && at.get_int("transB", 0) != 0;
        const int a = st.in[0], b = st.in[1];
        if (pref(a).shape.size() != 2 || pref(b).shape.size() != 2) refuse(st, "2-D operands only");
        auto g = [&](bool ta, bool tbb) {
            return attrs_of({{"transA", ref::Attr::of_int(ta)}, {"transB", ref::Attr::of_int(tbb)}});
        };
        if (needs(a)) {  // dA = dZ B'^T
            accumulate(a, emit(st.name + "/dA", "Gemm", 13, g(false, !tb), {gz, fwd(b)}), st.name);
        }
        if (needs(b)) {  // dB = A^T dZ (transB: dZ^T A)
            const int wg = is_weight(b) ? weight_grad(b) : -1;
            const int r = tb ? emit(st.name + "/dB", "Gemm", 13, g(true, false), {gz, fwd(a)}, wg)
                             : emit(st.name + "/dB", "Gemm", 13, g(true, false), {fwd(a), gz}, wg);
            if (wg >= 0) weight_done(b);
            else accumulate(b, r, st.name);
        }
        if (st.in.size() > 2 && needs(st.in[2])) {  // dC = sum over rows
            const int c = st.in[2];
            if (!is_weight(c) || at.get_float("beta", 1.0) != 1.0) refuse(st, "C must be a weight with beta 1");
            const Shape& cs = pref(c).shape;
            const int64_t n = pref(st.out[0]).shape[1];
            if (!(cs == Shape{n} || cs == Shape{1, n})) refuse(st, "C must be a row of N values");
            const int wg = weight_grad(c);
            emit(st.name + "/dC", "ReduceSum", 11,
                 attrs_of({{"axes", ref::Attr::of_ints({0})}, {"keepdims", ref::Attr::of_int(cs.size() == 2)}}), {gz}, wg);
            weight_done(c);
        }
    }

    void conv(const PlanStep& st, int gz) {
        const ref::Attrs& at = st.desc.attrs;
        const int x = st.in[0], w = st.in[1];
        const Shape &xs = pref(x).shape, &ws = pref(w).shape, &ys = pref(st.out[0]).shape;
        if (xs.size() != 4) refuse(st, "2-D convolutions only");
        if (at.get_int("group", 1) != 1) refuse(st, "grouped convolutions have no backward here");
        for (int64_t d : at.get_ints("dilations", {1, 1}))
            if (d != 1) refuse(st, "dilated convolutions have no backward here");
        if (at.get_string("auto_pad", "NOTSET") != "NOTSET") refuse(st, "auto_pad has no backward here");
        const Shape s = at.get_ints("strides", {1, 1});
        Shape p = at.get_ints("pads", {0, 0, 0, 0});
        if (p[0] != p[2] || p[1] != p[3]) refuse(st, "asymmetric pads have no backward here");
        if (needs(x)) {  // dX = ConvTranspose(dZ, W)
            Shape op(2);
            for (size_t d = 0; d < 2; ++d) op[d] = xs[2 + d] - ((ys[2 + d] - 1) * s[d] - 2 * p[d] + ws[2 + d]);
            if (op[0] < 0 || op[1] < 0 || op[0] >= s[0] || op[1] >= s[1]) refuse(st, "no ConvTranspose gives X's size");
            ref::Attrs a = attrs_of({{"strides", ref::Attr::of_ints(s)},
                                     {"pads", ref::Attr::of_ints(p)},
                                     {"kernel_shape", ref::Attr::of_ints({ws[2], ws[3]})},
                                     {"output_padding", ref::Attr::of_ints(op)}});
            accumulate(x, emit(st.name + "/dX", "ConvTranspose", 11, a, {gz, fwd(w)}), st.name);
        }
        int z2 = -1;  // dZ^T as (M, N*OH*OW), made by the composed weight gradient
        const bool bias = st.in.size() > 2 && needs(st.in[2]);
        if (needs(w)) {
            const int wg = weight_grad(w);
            // dW[m, c, a, b] = sum over n, i, j of dZ[n, m, i, j] X[n, c, i*s + a - p, j*s + b - p]:
            // the weight-gradient convolution kernel (img2col of X on the cube, whole rows).
            bool done = false;
            try {
                const ref::Attrs a = attrs_of({{"kernel_shape", ref::Attr::of_ints({ws[2], ws[3]})},
                                               {"strides", ref::Attr::of_ints(s)},
                                               {"pads", ref::Attr::of_ints(p)},
                                               {"dilations", ref::Attr::of_ints({1, 1})}});
                emit(st.name + "/dW", "Conv2DBackpropFilter", 1, a, {fwd(x), gz}, wg);
                done = true;
            } catch (const ops::UnsupportedError&) {
            }
            if (!done) conv_wgrad_composed(st, gz, z2, wg);
            weight_done(w);
        }
        if (bias) {  // dB = dZ summed over N, OH and OW (whole rows, fp32 partial sums)
            const int b = st.in[2];
            const int wg = weight_grad(b);
            emit(st.name + "/dB", "ReduceSum", 11,
                 attrs_of({{"axes", ref::Attr::of_ints({0, 2, 3})}, {"keepdims", ref::Attr::of_int(0)}}), {gz}, wg);
            weight_done(b);
        }
    }

    // The weight gradient composed from data-movement kernels and Gemms (the fallback where the
    // weight-gradient kernel cannot run): per kernel offset (a, b) one Gemm of dZ^T (M, N*OH*OW)
    // with the offset's strided slice of the padded X^T (C, N*OH*OW), transposed; the offsets
    // concatenated.
    void conv_wgrad_composed(const PlanStep& st, int gz, int& z2, int wg) {
        const ref::Attrs& at = st.desc.attrs;
        const int x = st.in[0], w = st.in[1];
        const Shape &xs = pref(x).shape, &ws = pref(w).shape, &ys = pref(st.out[0]).shape;
        const Shape s = at.get_ints("strides", {1, 1});
        const Shape p = at.get_ints("pads", {0, 0, 0, 0});
        const int64_t n = xs[0], c = xs[1], m = ys[1], oh = ys[2], ow = ys[3];
        if (z2 < 0) {
            const int zt = emit(st.name + "/dzT", "Transpose", 13, attrs_of({{"perm", ref::Attr::of_ints({1, 0, 2, 3})}}), {gz});
            z2 = alias(zt, {m, n * oh * ow});
        }
        const int xt = emit(st.name + "/xT", "Transpose", 13, attrs_of({{"perm", ref::Attr::of_ints({1, 0, 2, 3})}}), {fwd(x)});
        int xpad = xt;
        if (p[0] || p[1]) {
            const Shape pp = {0, 0, p[0], p[1], 0, 0, p[2], p[3]};
            ref::HostTensor zero(pref(x).elem, {});
            xpad = emit(st.name + "/xT_pad", "Pad", 13, {}, {xt, constant(*ints(pp)), constant(zero)}, -1,
                        {nullptr, ints(pp), std::make_shared<const ref::HostTensor>(zero)});
        }
        const ref::Attrs tb = attrs_of({{"transA", ref::Attr::of_int(0)}, {"transB", ref::Attr::of_int(1)}});
        const int64_t kh = ws[2], kw = ws[3];
        if (kh == 1 && kw == 1 && s[0] == 1 && s[1] == 1) {
            emit(st.name + "/dW", "Gemm", 13, tb, {z2, alias(xpad, {c, n * oh * ow})}, wg);
        } else {
            std::vector<int> parts;
            const Shape axes = {2, 3};
            for (int64_t a = 0; a < kh; ++a)
                for (int64_t b = 0; b < kw; ++b) {
                    const std::string nm = st.name + "/dW" + std::to_string(a) + "_" + std::to_string(b);
                    const Shape starts = {a, b}, ends = {a + (oh - 1) * s[0] + 1, b + (ow - 1) * s[1] + 1};
                    const int sl = emit(nm + "/x", "Slice", 13, {},
                                        {xpad, constant(*ints(starts)), constant(*ints(ends)), constant(*ints(axes)), constant(*ints(s))},
                                        -1, {nullptr, ints(starts), ints(ends), ints(axes), ints(s)});
                    const int g = emit(nm, "Gemm", 13, tb, {z2, alias(sl, {c, n * oh * ow})});
                    parts.push_back(alias(g, {1, m, c}));
                }
            // (kh*kw, M, C) -> (M, C, kh*kw): W's layout.
            const int cat = emit(st.name + "/dWcat", "Concat", 13, attrs_of({{"axis", ref::Attr::of_int(0)}}), parts);
            emit(st.name + "/dW", "Transpose", 13, attrs_of({{"perm", ref::Attr::of_ints({1, 2, 0})}}), {cat}, wg);
        }
    }

    // MaxPool: per window offset (a, b), the input pixels x[i*s + a - p] that equal their
    // window's maximum y[i] take dy[i]; spread back to the input grid (zeros between, shifted
    // by the offset) and summed.
    void max_pool(const PlanStep& st, int gy) {
        const ref::Attrs& at = st.desc.attrs;
        const int x = st.in[0];
        if (!needs(x)) return;
        const Shape& xs = pref(x).shape;
        const Shape& ys = pref(st.out[0]).shape;
        if (xs.size() != 4) refuse(st, "2-D pooling only");
        if (st.out.size() > 1 && st.out[1] >= 0) refuse(st, "the Indices output has no backward here");
        const Shape k = at.ints("kernel_shape");
        const Shape s = at.get_ints("strides", {1, 1});
        const Shape p = at.get_ints("pads", {0, 0, 0, 0});
        for (int64_t d : at.get_ints("dilations", {1, 1}))
            if (d != 1) refuse(st, "dilated pooling has no backward here");
        if (at.get_string("auto_pad", "NOTSET") != "NOTSET") refuse(st, "auto_pad has no backward here");
        // The MaxPool backward kernel (whole rows, one pass); the composition below where it
        // cannot run.
        try {
            accumulate(x, emit(st.name + "/grad", "MaxPoolGrad", 1, at, {fwd(x), fwd(st.out[0]), gy}), st.name);
            return;
        } catch (const ops::UnsupportedError&) {
        }
        const ElemType e = pref(x).elem;
        // x padded with -inf-like values so every window offset is a plain strided slice.
        const Shape ext = {xs[2] + p[0] + p[2] + s[0] * 2, xs[3] + p[1] + p[3] + s[1] * 2};
        ref::HostTensor lowest(e, {});
        lowest.data[0] = -60000.0;  // below any activation (fp16's range ends at 65504)
        const Shape pads = {0, 0, p[0], p[1], 0, 0, ext[0] - xs[2] - p[0], ext[1] - xs[3] - p[1]};
        const int xp = emit(st.name + "/pad", "Pad", 13, {}, {fwd(x), constant(*ints(pads)), constant(lowest)}, -1,
                            {nullptr, ints(pads), std::make_shared<const ref::HostTensor>(lowest)});
        int sum = -1;
        for (int64_t a = 0; a < k[0]; ++a)
            for (int64_t b = 0; b < k[1]; ++b) {
                const std::string nm = st.name + "/win" + std::to_string(a) + std::to_string(b);
                const Shape starts = {a, b}, ends = {a + (ys[2] - 1) * s[0] + 1, b + (ys[3] - 1) * s[1] + 1}, axes = {2, 3};
                const int xw = emit(nm + "/x", "Slice", 13, {},
                                    {xp, constant(*ints(starts)), constant(*ints(ends)), constant(*ints(axes)), constant(*ints(s))},
                                    -1, {nullptr, ints(starts), ints(ends), ints(axes), ints(s)});
                const int eq = emit(nm + "/eq", "Equal", 13, {}, {xw, fwd(st.out[0])});
                ref::HostTensor zero(e, {});
                const int zc = constant(zero);
                const int m = emit(nm + "/sel", "Where", 16, {}, {eq, gy, zc});
                // Spread onto the input grid in blocks of s: x position i*s + d (d = offset - pad)
                // is block i + q, sub-position r (d = q*s + r, 0 <= r < s). [N,C,OH,OW] ->
                // [N,C,OH,1,OW,1] -> pad the sub-positions to [N,C,OH,s,OW,s] -> shift the blocks
                // by q (crop or pad whole blocks) to ceil(H/s) blocks -> [N,C,H',W'] (-> crop to H, W).
                // Whole blocks keep every row of the intermediate tensors a multiple of s long.
                const int64_t d[2] = {a - p[0], b - p[1]};
                int64_t r[2], q[2], blocks[2];
                for (int i = 0; i < 2; ++i) {
                    r[i] = ((d[i] % s[i]) + s[i]) % s[i];
                    q[i] = (d[i] - r[i]) / s[i];
                    blocks[i] = (xs[2 + i] + s[i] - 1) / s[i];
                }
                ref::HostTensor zero_pad(e, {});
                auto pad = [&](int t, const Shape& pads, const std::string& what) {
                    return emit(nm + "/" + what, "Pad", 13, {}, {t, constant(*ints(pads)), constant(zero_pad)}, -1,
                                {nullptr, ints(pads), std::make_shared<const ref::HostTensor>(zero_pad)});
                };
                auto slice = [&](int t, const Shape& st0, const Shape& en, const Shape& ax, const std::string& what) {
                    return emit(nm + "/" + what, "Slice", 13, {}, {t, constant(*ints(st0)), constant(*ints(en)), constant(*ints(ax))}, -1,
                                {nullptr, ints(st0), ints(en), ints(ax)});
                };
                const int m6 = alias(m, {ys[0], ys[1], ys[2], 1, ys[3], 1});
                int t6 = pad(m6, {0, 0, 0, r[0], 0, r[1], 0, 0, 0, s[0] - 1 - r[0], 0, s[1] - 1 - r[1]}, "up");
                // Blocks: crop the ones shifted off the front or past the end, then pad.
                const int64_t crop_front[2] = {std::max<int64_t>(-q[0], 0), std::max<int64_t>(-q[1], 0)};
                const int64_t keep[2] = {std::min(ys[2], blocks[0] - q[0]) - crop_front[0], std::min(ys[3], blocks[1] - q[1]) - crop_front[1]};
                if (crop_front[0] || crop_front[1] || keep[0] + crop_front[0] < ys[2] || keep[1] + crop_front[1] < ys[3])
                    t6 = slice(t6, {crop_front[0], crop_front[1]}, {crop_front[0] + keep[0], crop_front[1] + keep[1]}, {2, 4}, "blocks");
                const int64_t before[2] = {std::max<int64_t>(q[0], 0), std::max<int64_t>(q[1], 0)};
                const int64_t after[2] = {blocks[0] - before[0] - keep[0], blocks[1] - before[1] - keep[1]};
                if (before[0] || before[1] || after[0] || after[1])
                    t6 = pad(t6, {0, 0, before[0], 0, before[1], 0, 0, 0, after[0], 0, after[1], 0}, "place");
                int g = alias(t6, {ys[0], ys[1], blocks[0] * s[0], blocks[1] * s[1]});
                if (blocks[0] * s[0] != xs[2] || blocks[1] * s[1] != xs[3]) g = slice(g, {0, 0}, {xs[2], xs[3]}, axes, "crop");
                sum = sum < 0 ? g : emit(nm + "/sum", "Add", 14, {}, {sum, g});
            }
        accumulate(x, sum, st.name);
    }

    const Plan& m_p;
    const DeviceInfo& m_dev;
    TrainOptions m_o;
    TrainPlan m_tp;
    std::vector<bool> m_kept;
    std::vector<int> m_fwd, m_producer;
    std::vector<bool> m_needs;
    std::map<int, int> m_grad, m_wgrad;
    std::set<int> m_updated;
    Bucket m_cur;
    uint64_t m_gradblk = 0;
    const PlanStep* m_done_step = nullptr;
};

}  // namespace

size_t TrainPlan::kernel_count() const {
    size_t n = 0;
    for (const auto* list : {&backward, &update})
        for (const TrainItem& it : *list) n += it.op ? 1 : 0;
    return n;
}

TrainPlan build_train_plan(const Plan& fwd, const DeviceInfo& dev, const TrainOptions& o) {
    if (!o.recompute) return Builder(fwd, dev, o).build();
    // Which forward tensors the backward reads when nothing is recomputed: a cheap step is
    // recomputed only from those.
    TrainOptions keep = o;
    keep.recompute = false;
    const TrainPlan base = Builder(fwd, dev, keep).build();
    std::vector<bool> kept(fwd.tensors.size(), false);
    for (const TrainTensor& t : base.tensors) {
        if (t.kind != TrainTensor::Kind::Forward) continue;
        int r = t.plan;
        while (fwd.tensors[static_cast<size_t>(r)].kind == PlanTensor::Kind::View) r = fwd.tensors[static_cast<size_t>(r)].base;
        kept[static_cast<size_t>(r)] = true;
    }
    return Builder(fwd, dev, o, std::move(kept)).build();
}

std::set<std::string> train_passes() { return {"fold", "dce", "fuse_conv", "views"}; }

}  // namespace sfumato::graph
