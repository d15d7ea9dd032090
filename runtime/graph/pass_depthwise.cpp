// depthwise: a depthwise Conv (one input and one output channel per group, a constant W) whose
// channels fill whole C0 blocks runs as a grouped Conv of C0 channels per group with a
// block-diagonal weight: W'[o][j] = W[o][0] where j = o mod C0, zeros elsewhere (the vendor's
// depthwise weight format, C1HWNCoC0, holds the same C0 x C0 diagonal per channel block).
// Same values: every added product has a zero weight, so the fp32 accumulator sums the same
// terms plus exact zeros. What changes is the work: one channel per group is padded to a whole
// C0 block in X (C0 times the activation bytes converted and loaded) and a 16-row output
// fractal for one useful row, where C0 channels per group are one packed NC1HWC0 block with
// nothing padded, so the input converts at its own size and the cube does 1/C0 of the MACs.
// Runs after fuse_conv (BatchNormalization is folded into W first); every rewrite is probed.
#include "runtime/graph/passes.h"

namespace sfumato::graph {

namespace {

// C0 of the value's device type (32 B of channels), or 0.
int64_t c0_of(const Value& v) {
    isa::DType dt;
    if (!ref::device_dtype(v.elem, dt)) return 0;
    return 32 / static_cast<int64_t>(isa::dtype_size(dt));
}

// The block-diagonal [C, C0, kh, kw] weight of a depthwise [C, 1, kh, kw] one.
ref::HostTensor block_diagonal(const ref::HostTensor& w, int64_t c0) {
    std::vector<int64_t> shape = w.shape;
    shape[1] = c0;
    ref::HostTensor out(w.type, shape);
    const size_t taps = w.data.size() / static_cast<size_t>(w.shape[0]);
    for (size_t o = 0; o < static_cast<size_t>(w.shape[0]); ++o) {
        const size_t j = o % static_cast<size_t>(c0);
        for (size_t t = 0; t < taps; ++t)
            out.data[(o * static_cast<size_t>(c0) + j) * taps + t] = w.data[o * taps + t];
    }
    return out;
}

// Whether node n is a depthwise Conv of C channels, C a multiple of C0, W constant.
bool candidate(const Graph& g, const Node& n) {
    if (n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
    const Value &x = g.val(n.inputs[0]), &w = g.val(n.inputs[1]);
    if (!w.constant || !x.has_shape || x.shape.size() < 3 || !x.shape[1].known()) return false;
    const std::vector<int64_t>& ws = w.constant->shape();
    const int64_t c = x.shape[1].v, group = n.attrs.get_int("group", 1), c0 = c0_of(x);
    return c0 > 0 && group == c && c >= c0 && c % c0 == 0 && ws.size() == x.shape.size() && ws[0] == c &&
           ws[1] == 1;
}

}  // namespace

void pass_depthwise(Graph& g, const PassContext& c, PassReport& r) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!candidate(g, g.nodes[i])) continue;
        const Node before = g.nodes[i];
        const Value& x = g.val(before.inputs[0]);
        const int64_t ch = x.shape[1].v, c0 = c0_of(x);
        const std::shared_ptr<const ref::HostTensor> w = g.val(before.inputs[1]).constant->host();
        const std::string w_name = g.val(before.inputs[1]).name + "_c0diag";
        const int diag = add_constant(g, w_name, block_diagonal(*w, c0));  // (moves the values)
        g.nodes[i].inputs[1] = diag;
        g.nodes[i].attrs.set("group", ref::Attr::of_int(ch / c0));
        g.nodes[i].attrs.set("diagonal", ref::Attr::of_int(1));  // FLOPs: the useful products only
        if (!c.accepts(g, g.nodes[i])) {
            g.nodes[i] = before;  // the operator refuses it: as it was (the new constant is unread)
            continue;
        }
        ++r.changes;
        ++r.patterns["depthwise Conv -> groups of C0 channels"];
        r.notes.push_back(before.name + ": " + std::to_string(ch) + " groups of 1 -> " + std::to_string(ch / c0) +
                          " groups of " + std::to_string(c0) + " channels (block-diagonal W)");
    }
}

}  // namespace sfumato::graph
