// The identity of a kernel launch for timing re-use (timing_reuse.h): a text
// key built from integers and a 64-bit hash of each constant input's values,
// and the LRU estimate of what the L2 holds of its operands.
#include <cstring>

#include "runtime/ops/node_launch.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::reuse {

namespace {

constexpr size_t kMaxHashedFloats = 16;

class KeyWriter {
public:
  void u(uint64_t v) { m_s += std::to_string(v) + ','; }
  void i(int64_t v) { m_s += std::to_string(v) + ','; }
  void s(const std::string &v) {
    m_s += std::to_string(v.size()) + ':' + v + ',';
  }
  void d(double v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof b);
    u(b);
  }
  void ints(const std::vector<int64_t> &v) {
    u(v.size());
    for (int64_t x : v)
      i(x);
  }
  void tensor(const ops::TensorRef &t) {
    u(t.present);
    if (!t.present)
      return;
    ints(t.shape);
    ints(t.strides);
    u(static_cast<uint64_t>(t.dtype));
    u(static_cast<uint64_t>(t.elem));
    u(static_cast<uint64_t>(t.format));
    u(t.addr %
      512); // alignment decides how its rows split into memory requests
  }
  void host(const ref::HostTensor *h) {
    if (!h) {
      u(0);
      return;
    }
    u(1);
    u(static_cast<uint64_t>(h->type));
    ints(h->shape);
    // Operators plan from integer constants (shapes, axes, pads, indices) and
    // scalar-like float ones (bounds, fill values); a larger float constant is
    // a weight or a bias, whose values a timing-mode kernel never looks at.
    if (ref::is_float(h->type) && h->data.size() > kMaxHashedFloats)
      return;
    uint64_t hash = 1469598103934665603ull; // FNV-1a over the values' bits
    for (double v : h->data) {
      uint64_t b = 0;
      std::memcpy(&b, &v, sizeof b);
      for (int k = 0; k < 8; ++k) {
        hash ^= (b >> (8 * k)) & 0xff;
        hash *= 1099511628211ull;
      }
    }
    u(hash);
  }
  void attr(const ref::Attr &a) {
    u(static_cast<uint64_t>(a.kind));
    i(a.i);
    d(a.f);
    s(a.s);
    ints(a.ints);
    u(a.floats.size());
    for (double f : a.floats)
      d(f);
    u(a.strings.size());
    for (const std::string &x : a.strings)
      s(x);
    host(a.t.get());
  }
  void node(const ops::NodeLaunch &nl) {
    const ops::NodeDesc &n = nl.node;
    s(n.op_type);
    i(n.opset);
    i(n.num_outputs);
    u(n.attrs.all().size());
    for (const auto &[name, a] : n.attrs.all()) {
      if (name == "fused_nodes")
        continue; // the fused nodes' names, for reports only
      s(name);
      if (n.op_type == "Rope" && name == "host_positions")
        rope_positions(nl, a.ints);
      else
        attr(a);
    }
    u(n.constants.size());
    for (const auto &c : n.constants)
      host(c.get());
    u(nl.in.size());
    for (const ops::TensorRef &t : nl.in)
      tensor(t);
    u(nl.out.size());
    for (const ops::TensorRef &t : nl.out)
      tensor(t);
    u(nl.workspace_bytes);
    u(nl.workspace % 512);
  }
  // Rope's positions only choose which cos_sin row each token's copy reads
  // (runtime/ops/llm/rope.cpp: one copy of a row per token, the same vector
  // work whatever the values). What can change its time is which rows the
  // tokens share and how the rows fall on memory lines: the positions relative
  // to the first token's, and where the first token's row starts within a
  // 512-B line (the table's own alignment is in its operand). So consecutive
  // decode steps, whose positions all move by one, keep one identity (two,
  // alternating, for rows of half a line); where
  // the rows lie in the L2 and the HBM is left to the agreement check and the
  // error bound (docs/timing_reuse.md).
  void rope_positions(const ops::NodeLaunch &nl,
                      const std::vector<int64_t> &pos) {
    const ops::TensorRef *cs = nl.in.size() > 2 ? &nl.in[2] : nullptr;
    const uint64_t rows =
        cs && cs->present && !cs->shape.empty() && cs->shape[0] > 0
            ? static_cast<uint64_t>(cs->shape[0])
            : 0;
    const uint64_t row_bytes = rows ? cs->storage_bytes() / rows : 0;
    u(pos.size());
    if (pos.empty())
      return;
    u(static_cast<uint64_t>(pos[0]) * row_bytes % 512);
    for (int64_t p : pos)
      i(p - pos[0]);
  }
  std::string take() { return std::move(m_s); }

private:
  std::string m_s;
};

} // namespace

std::string launch_identity(const KernelDesc &k) {
  const auto *nl = dynamic_cast<const ops::NodeLaunch *>(k.origin.get());
  if (!nl && k.op.empty() && k.reuse_key.empty())
    return {};
  KeyWriter w;
  w.s(k.type);
  w.u(k.origin_part);
  w.u(k.block_dim);
  w.u(static_cast<uint64_t>(k.kind));
  w.u(k.args_bytes);
  w.u(k.code_bytes);
  w.d(k.flops);
  w.u(k.bytes);
  if (nl) {
    w.s("node");
    w.node(*nl);
  } else if (k.op.empty()) {
    // A host program's kernel (a collective's copy or reduce): its own key.
    w.s("kernel");
    w.s(k.reuse_key);
  } else {
    // An operator-library call: its arguments name every shape and option it
    // plans from.
    w.s("op");
    w.s(k.op);
    w.u(k.op_args.size());
    for (const auto &[name, v] : k.op_args) {
      w.s(name);
      w.s(v);
    }
  }
  return w.take();
}

std::vector<OperandRange> launch_operands(const KernelDesc &k) {
  std::vector<OperandRange> v;
  const auto *nl = dynamic_cast<const ops::NodeLaunch *>(k.origin.get());
  if (!nl) {
    if (!k.reuse_key.empty())
      for (const KernelDesc::GmOperand &o : k.operands)
        v.push_back({o.addr, o.bytes, o.written});
    return v;
  }
  for (const ops::TensorRef &t : nl->in)
    if (t.present)
      v.push_back({t.addr, t.storage_bytes(), false});
  for (const ops::TensorRef &t : nl->out)
    if (t.present)
      v.push_back({t.addr, t.storage_bytes(), true});
  if (nl->workspace_bytes)
    v.push_back({nl->workspace, nl->workspace_bytes, true});
  return v;
}

L2Recency::Held L2Recency::held(uint64_t addr, uint64_t bytes) const {
  auto it = m_last.find(addr);
  if (it == m_last.end())
    return Held::None; // never touched by a kernel since the start
  const uint64_t d = m_pos - it->second;
  if (d + bytes <= m_capacity)
    return Held::Whole;
  return d < m_capacity ? Held::Part : Held::None;
}

void L2Recency::touch(const std::vector<OperandRange> &ops) {
  for (const OperandRange &o : ops)
    m_pos += o.bytes;
  for (const OperandRange &o : ops)
    m_last[o.addr] = m_pos;
}

} // namespace sfumato::reuse
