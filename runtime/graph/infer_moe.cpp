// Shape inference of the mixture-of-experts and W8A8 operators (contract: docs/llm.md,
// "Operators"): MoeRouter, MoePermute, GroupedMatmul, MoeCombine, MoeFfn, DynamicQuant,
// QuantMatMul. Each checks input counts, types and the dims the op ties together, and names the
// node on a mismatch.
#include "runtime/graph/infer.h"

namespace sfumato::graph {

namespace {

void need_index(InferCtx& c, size_t i, const char* what) {
    const ref::ElemType t = c.elem(i);
    if (t != ref::ElemType::Int64 && t != ref::ElemType::Int32) c.fail(std::string(what) + " must be int64 or int32");
}

void same_dim(InferCtx& c, const Dim& a, const Dim& b, const std::string& what) {
    if (a.known() && b.known() && a.v != b.v) c.fail(what + ": " + a.str() + " vs " + b.str());
}

// MoeRouter(logits [T, E]) -> weights [T, k], experts [T, k] (int64).
void moe_router(InferCtx& c) {
    c.need_inputs(1, 1);
    c.need_float(0);
    const Shape& x = c.shape(0);
    if (x.size() != 2) c.fail("logits must be [T, E]");
    const int64_t k = c.attrs().get_int("top_k", 2);
    if (k < 1 || (x[1].known() && k > x[1].v))
        c.fail("attribute 'top_k' = " + std::to_string(k) + " must be in [1, " + x[1].str() + "] (the experts)");
    c.set(0, c.elem(0), {x[0], Dim::of(k)});
    c.set(1, ref::ElemType::Int64, {x[0], Dim::of(k)});
}

// MoePermute(x [T, H], experts [T, k]) -> x_perm [T k, H], rows [T, k], group_sizes [E].
void moe_permute(InferCtx& c) {
    c.need_inputs(2, 2);
    c.need_float(0);
    need_index(c, 1, "experts");
    const Shape &x = c.shape(0), &e = c.shape(1);
    if (x.size() != 2) c.fail("x must be [T, H]");
    if (e.size() != 2) c.fail("experts must be [T, k]");
    same_dim(c, x[0], e[0], "x and experts differ in T");
    const int64_t E = c.attrs().get_int("num_experts", 0);
    if (E < 1) c.fail("attribute 'num_experts' must be >= 1");
    const Dim r = x[0].known() && e[1].known() ? Dim::of(x[0].v * e[1].v) : Dim::symbol(x[0].str() + "*" + e[1].str());
    c.set(0, c.elem(0), {r, x[1]});
    c.set(1, ref::ElemType::Int64, e);
    c.set(2, ref::ElemType::Int64, {Dim::of(E)});
}

// GroupedMatmul(x [R, K], weight [E, K, N], group_sizes [E]) -> [R, N].
void grouped_matmul(InferCtx& c) {
    c.need_inputs(3, 3);
    c.need_float(0);
    c.same_type(0, 1);
    need_index(c, 2, "group_sizes");
    const Shape &x = c.shape(0), &w = c.shape(1), &s = c.shape(2);
    if (x.size() != 2) c.fail("x must be [R, K]");
    if (w.size() != 3) c.fail("weight must be [E, K, N]");
    same_dim(c, x[1], w[1], "x's K and weight's K differ");
    if (s.size() != 1) c.fail("group_sizes must be [E]");
    same_dim(c, s[0], w[0], "group_sizes and weight differ in E");
    c.set(0, c.elem(0), {x[0], w[2]});
}

// MoeCombine(y_perm [R, H], rows [T, k], weights [T, k]) -> [T, H].
void moe_combine(InferCtx& c) {
    c.need_inputs(3, 3);
    c.need_float(0);
    need_index(c, 1, "rows");
    c.need_float(2);
    const Shape &y = c.shape(0), &r = c.shape(1), &w = c.shape(2);
    if (y.size() != 2) c.fail("y_perm must be [R, H]");
    if (r.size() != 2 || w.size() != 2) c.fail("rows and weights must be [T, k]");
    same_dim(c, r[0], w[0], "rows and weights differ in T");
    same_dim(c, r[1], w[1], "rows and weights differ in k");
    c.set(0, c.elem(0), {r[0], y[1]});
}

// MoeFfn(x [T, H], logits [T, E], w_gate_up [E, H, 2I], w_down [E, I, H]) -> [T, H].
void moe_ffn(InferCtx& c) {
    c.need_inputs(4, 4);
    for (size_t i = 0; i < 4; ++i) c.need_float(i);
    for (size_t i = 1; i < 4; ++i) c.same_type(0, i);
    const Shape &x = c.shape(0), &l = c.shape(1), &g = c.shape(2), &d = c.shape(3);
    if (x.size() != 2 || l.size() != 2 || g.size() != 3 || d.size() != 3)
        c.fail("expects x [T, H], logits [T, E], w_gate_up [E, H, 2I], w_down [E, I, H]");
    same_dim(c, x[0], l[0], "x and logits differ in T");
    same_dim(c, l[1], g[0], "logits and w_gate_up differ in E");
    same_dim(c, g[0], d[0], "w_gate_up and w_down differ in E");
    same_dim(c, x[1], g[1], "x and w_gate_up differ in H");
    same_dim(c, x[1], d[2], "x and w_down differ in H");
    if (g[2].known() && d[1].known() && g[2].v != 2 * d[1].v) c.fail("w_gate_up's last dim must be twice w_down's I");
    const int64_t k = c.attrs().get_int("top_k", 2);
    if (k < 1 || (l[1].known() && k > l[1].v)) c.fail("attribute 'top_k' = " + std::to_string(k) + " must be in [1, " + l[1].str() + "]");
    c.set(0, c.elem(0), x);
}

// DynamicQuant(x [.., H]) -> q [.., H] int8, scale [..] float.
void dynamic_quant(InferCtx& c) {
    c.need_inputs(1, 1);
    c.need_float(0);
    const Shape& x = c.shape(0);
    if (x.empty()) c.fail("x must have rank >= 1");
    c.set(0, ref::ElemType::Int8, x);
    c.set(1, ref::ElemType::Float, Shape(x.begin(), x.end() - 1));
}

// QuantMatMul(a [M, K] int8, w [K, N] int8, w_scale [N], a_scale [M]) -> [M, N] fp16 / bf16.
void quant_matmul(InferCtx& c) {
    c.need_inputs(4, 4);
    if (c.elem(0) != ref::ElemType::Int8 || c.elem(1) != ref::ElemType::Int8) c.fail("a and w must be int8");
    if (c.elem(2) != ref::ElemType::Float || c.elem(3) != ref::ElemType::Float) c.fail("w_scale and a_scale must be float");
    const Shape &a = c.shape(0), &w = c.shape(1);
    if (a.size() != 2 || w.size() != 2) c.fail("a must be [M, K] and w [K, N]");
    same_dim(c, a[1], w[0], "a's K and w's K differ");
    const std::string od = c.attrs().get_string("output_dtype", "fp16");
    if (od != "fp16" && od != "bf16") c.fail("attribute 'output_dtype' = '" + od + "' (valid: fp16, bf16)");
    c.set(0, od == "bf16" ? ref::ElemType::Bfloat16 : ref::ElemType::Float16, {a[0], w[1]});
}

}  // namespace

SFUMATO_REGISTER_INFER(moe_router, moe_router, "MoeRouter");
SFUMATO_REGISTER_INFER(moe_permute, moe_permute, "MoePermute");
SFUMATO_REGISTER_INFER(grouped_matmul, grouped_matmul, "GroupedMatmul");
SFUMATO_REGISTER_INFER(moe_combine, moe_combine, "MoeCombine");
SFUMATO_REGISTER_INFER(moe_ffn, moe_ffn, "MoeFfn");
SFUMATO_REGISTER_INFER(dynamic_quant, dynamic_quant, "DynamicQuant");
SFUMATO_REGISTER_INFER(quant_matmul, quant_matmul, "QuantMatMul");

}  // namespace sfumato::graph
