// Shape inference of the LLM operators (contract: docs/llm.md, "Operators"):
// RmsNorm, Rope, SwiGlu, PagedAttention, Sample. Each checks input counts, float types
// and the dims the op ties together, and names the node on a mismatch.
#include "runtime/graph/infer.h"
#include "runtime/ref/llm_shapes.h"

namespace sfumato::graph {

namespace {

// RmsNorm(x [.., H], weight [H], residual [.., H]?) -> y [.., H], residual_out
// [.., H].
void rms_norm(InferCtx& c) {
    c.need_inputs(2, 3);
    c.need_float(0);
    c.need_float(1);
    const Shape& x = c.shape(0);
    if (x.empty()) c.fail("x must have rank >= 1");
    const Shape& w = c.shape(1);
    if (w.size() != 1 || (w[0].known() && x.back().known() && w[0].v != x.back().v))
        c.fail("weight must be [H] with H = x's last dimension " + x.back().str());
    if (c.has(2)) {
        c.same_type(0, 2);
        if (c.shape(2).size() != x.size()) c.fail("residual must have x's shape");
    } else if (c.has_output(1)) {
        c.fail("residual_out needs the residual input");
    }
    c.set(0, c.elem(0), x);
    c.set(1, c.elem(0), x);
}

// Rope(x [T, N, D], positions [T], cos_sin [P, R]) -> [T, N, D].
void rope(InferCtx& c) {
    c.need_inputs(3, 3);
    c.need_float(0);
    c.need_float(2);
    const Shape& x = c.shape(0);
    if (x.size() != 3) c.fail("x must be [T, N, D]");
    const ref::ElemType pt = c.elem(1);
    if (pt != ref::ElemType::Int64 && pt != ref::ElemType::Int32) c.fail("positions must be int64 or int32");
    if (c.shape(1).size() != 1) c.fail("positions must be [T]");
    if (c.shape(2).size() != 2) c.fail("cos_sin must be [P, R]");
    const std::string style = c.attrs().get_string("style", "half");
    if (style != "half" && style != "interleaved")
        c.fail("attribute 'style' = '" + style + "' (valid: half, interleaved)");
    c.set(0, c.elem(0), x);
}

// SwiGlu(gate_up [.., 2I]) -> [.., I].
void swiglu(InferCtx& c) {
    c.need_inputs(1, 1);
    c.need_float(0);
    Shape s = c.shape(0);
    if (s.empty()) c.fail("gate_up must have rank >= 1");
    if (s.back().known()) {
        if (s.back().v % 2) c.fail("gate_up's last dimension " + s.back().str() + " is odd");
        s.back() = Dim::of(s.back().v / 2);
    } else {
        s.back() = Dim::symbol("(" + s.back().str() + ")/2");
    }
    c.set(0, c.elem(0), s);
}

std::vector<int64_t> known(const InferCtx& c, size_t i) {
    std::vector<int64_t> v;
    for (const Dim& d : c.shape(i)) v.push_back(d.known() ? d.v : -1);
    return v;
}

// PagedAttention(q [T, NH, D], k, v [T, NKV, D], k_cache, v_cache [NB, BS, NKV,
// D]) -> o [T, NH, D].
void paged_attention(InferCtx& c) {
    c.need_inputs(5, 5);
    for (size_t i = 0; i < 5; ++i) c.need_float(i);
    for (size_t i = 1; i < 5; ++i) c.same_type(0, i);
    const Shape& q = c.shape(0);
    bool all_known = true;
    for (size_t i = 0; i < 5; ++i)
        for (const Dim& d : c.shape(i)) all_known = all_known && d.known();
    if (all_known) {
        try {
            ref::paged_layout(c.node().name, c.attrs(), known(c, 0), known(c, 1), known(c, 2), known(c, 3),
                              known(c, 4));
        } catch (const InputError& e) {
            c.fail(e.what());
        }
    } else if (q.size() != 3) {
        c.fail("q must be [T, num_heads, head_dim]");
    }
    c.set(0, c.elem(0), q);
}

// Sample(logits [B, V]) -> ids [B] (int64).
void sample(InferCtx& c) {
    c.need_inputs(1, 1);
    c.need_float(0);
    const Shape& x = c.shape(0);
    if (x.size() != 2) c.fail("logits must be [B, V]");
    if (c.attrs().get_int("top_k", 1) < 1) c.fail("attribute 'top_k' must be >= 1");
    c.set(0, ref::ElemType::Int64, {x[0]});
}

}  // namespace

SFUMATO_REGISTER_INFER(sample, sample, "Sample");
SFUMATO_REGISTER_INFER(paged_attention, paged_attention, "PagedAttention");
SFUMATO_REGISTER_INFER(rms_norm, rms_norm, "RmsNorm");
SFUMATO_REGISTER_INFER(rope, rope, "Rope");
SFUMATO_REGISTER_INFER(swiglu, swiglu, "SwiGlu");

}  // namespace sfumato::graph
