// Shape inference of the LLM operators (contract: docs/llm.md, "Operators"):
// RmsNorm, Rope, SwiGlu. Each checks input counts, float types and the dims the
// op ties together, and names the node on a mismatch.
#include "runtime/graph/infer.h"

namespace sfumato::graph {

namespace {

// RmsNorm(x [.., H], weight [H], residual [.., H]?) -> y [.., H], residual_out
// [.., H].
void rms_norm(InferCtx &c) {
  c.need_inputs(2, 3);
  c.need_float(0);
  c.need_float(1);
  const Shape &x = c.shape(0);
  if (x.empty())
    c.fail("x must have rank >= 1");
  const Shape &w = c.shape(1);
  if (w.size() != 1 ||
      (w[0].known() && x.back().known() && w[0].v != x.back().v))
    c.fail("weight must be [H] with H = x's last dimension " + x.back().str());
  if (c.has(2)) {
    c.same_type(0, 2);
    if (c.shape(2).size() != x.size())
      c.fail("residual must have x's shape");
  } else if (c.has_output(1)) {
    c.fail("residual_out needs the residual input");
  }
  c.set(0, c.elem(0), x);
  c.set(1, c.elem(0), x);
}

// Rope(x [T, N, D], positions [T], cos_sin [P, R]) -> [T, N, D].
void rope(InferCtx &c) {
  c.need_inputs(3, 3);
  c.need_float(0);
  c.need_float(2);
  const Shape &x = c.shape(0);
  if (x.size() != 3)
    c.fail("x must be [T, N, D]");
  const ref::ElemType pt = c.elem(1);
  if (pt != ref::ElemType::Int64 && pt != ref::ElemType::Int32)
    c.fail("positions must be int64 or int32");
  if (c.shape(1).size() != 1)
    c.fail("positions must be [T]");
  if (c.shape(2).size() != 2)
    c.fail("cos_sin must be [P, R]");
  const std::string style = c.attrs().get_string("style", "half");
  if (style != "half" && style != "interleaved")
    c.fail("attribute 'style' = '" + style + "' (valid: half, interleaved)");
  c.set(0, c.elem(0), x);
}

// SwiGlu(gate_up [.., 2I]) -> [.., I].
void swiglu(InferCtx &c) {
  c.need_inputs(1, 1);
  c.need_float(0);
  Shape s = c.shape(0);
  if (s.empty())
    c.fail("gate_up must have rank >= 1");
  if (s.back().known()) {
    if (s.back().v % 2)
      c.fail("gate_up's last dimension " + s.back().str() + " is odd");
    s.back() = Dim::of(s.back().v / 2);
  } else {
    s.back() = Dim::symbol("(" + s.back().str() + ")/2");
  }
  c.set(0, c.elem(0), s);
}

} // namespace

SFUMATO_REGISTER_INFER(rms_norm, rms_norm, "RmsNorm");
SFUMATO_REGISTER_INFER(rope, rope, "Rope");
SFUMATO_REGISTER_INFER(swiglu, swiglu, "SwiGlu");

} // namespace sfumato::graph
