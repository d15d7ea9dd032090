// Timing re-use's identity and L2 estimate (runtime/reuse/timing_reuse.h),
// without a simulation: what makes two launches the same, and what an LRU L2 of
// a given capacity still holds of an operand after the operand bytes of later
// launches (the thresholds derive from the capacity).
#include <catch2/catch.hpp>

#include "runtime/ops/node_launch.h"
#include "runtime/reuse/footprint.h"
#include "runtime/reuse/timing_reuse.h"
#include "sim/error.h"

using namespace sfumato;
using reuse::L2Recency;

namespace {

KernelDesc node_kernel(uint64_t in_addr, uint32_t block_dim = 8) {
  KernelDesc k;
  k.type = "Relu";
  k.block_dim = block_dim;
  k.body = [](isa::IInstrSink &) {};
  ops::NodeDesc n;
  n.op_type = "Relu";
  ops::TensorRef in = ops::make_tensor({4, 64}, ref::ElemType::Float16),
                 out = in;
  in.addr = in_addr;
  out.addr = 1 << 20;
  std::vector<KernelDesc> ks{k};
  ops::stamp_node_launch(ks, n, {in}, {out}, 0, 0);
  return ks[0];
}

} // namespace

TEST_CASE("timing re-use: a launch's identity names the operator, operands, "
          "alignment and launch",
          "[reuse]") {
  KernelDesc opaque;
  opaque.type = "custom";
  CHECK(reuse::launch_identity(opaque)
            .empty()); // an opaque body is never a candidate
  const std::string a = reuse::launch_identity(node_kernel(4096));
  CHECK(!a.empty());
  CHECK(reuse::launch_identity(node_kernel(4096 + 512)) ==
        a); // same alignment within a 512-byte line pair
  CHECK(reuse::launch_identity(node_kernel(4096 + 32)) !=
        a); // another alignment splits rows otherwise
  CHECK(reuse::launch_identity(node_kernel(4096, 16)) !=
        a); // another launch shape
  KernelDesc op;
  op.type = "add";
  op.op = "add";
  op.op_args = {{"n", "1024"}};
  const std::string b = reuse::launch_identity(op);
  op.op_args["n"] = "2048";
  CHECK(!b.empty());
  CHECK(reuse::launch_identity(op) != b);
  // The operands' ranges (for the L2 estimate): inputs, then outputs.
  const auto ops = reuse::launch_operands(node_kernel(4096));
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].addr == 4096);
  CHECK(ops[0].bytes == 4 * 64 * 2);
  CHECK(!ops[0].written);
  CHECK(ops[1].written);
}

TEST_CASE("timing re-use: the L2 estimate follows LRU stack distance in "
          "operand bytes",
          "[reuse]") {
  const uint64_t cap = 1000, a = 100;
  L2Recency l2(cap);
  CHECK(l2.held(0, a) == L2Recency::Held::None); // never touched
  l2.touch({{0, a, false}});
  CHECK(l2.held(0, a) == L2Recency::Held::Whole);
  // Later launches touch cap - a bytes: the operand still fits beside them.
  l2.touch({{5000, cap - a, false}});
  CHECK(l2.held(0, a) == L2Recency::Held::Whole);
  // One byte more: its oldest lines are evicted, the rest still there.
  l2.touch({{9000, 1, true}});
  CHECK(l2.held(0, a) == L2Recency::Held::Part);
  // cap bytes touched since: nothing of it is left.
  l2.touch({{7000, a - 1, false}});
  CHECK(l2.held(0, a) == L2Recency::Held::None);
  // An operand larger than the L2 is never held whole.
  L2Recency big(cap);
  big.touch({{0, 2 * cap, false}});
  CHECK(big.held(0, 2 * cap) == L2Recency::Held::Part);
}

TEST_CASE(
    "timing re-use: the switch parses off, on and auto and is timing mode only",
    "[reuse]") {
  CHECK(reuse::parse_reuse_mode("off") == reuse::ReuseMode::Off);
  CHECK(reuse::parse_reuse_mode("on") == reuse::ReuseMode::On);
  CHECK(reuse::parse_reuse_mode("auto") == reuse::ReuseMode::Auto);
  CHECK_THROWS_AS(reuse::parse_reuse_mode("yes"), InputError);
  CHECK(reuse::resolve_mode(reuse::ReuseMode::Auto, true) ==
        reuse::ReuseMode::Off);
  CHECK(reuse::resolve_mode(reuse::ReuseMode::Auto, false) ==
        reuse::ReuseMode::Auto);
  CHECK_THROWS_AS(reuse::resolve_mode(reuse::ReuseMode::On, true), InputError);
}

TEST_CASE("timing re-use: a footprint is kept relative to the operands and "
          "replays at another launch's",
          "[reuse]") {
  // Operands: an input of 4 KiB, an output of 1 KiB (the launch's order).
  const std::vector<reuse::OperandRange> ops{{0x10000, 4096, false},
                                             {0x20000, 1024, true}};
  reuse::Footprint fp(ops);
  auto copy = [](isa::Opcode op, uint64_t gm, uint32_t nburst, uint32_t len,
                 uint32_t gap) {
    isa::Instr in = isa::make_instr(op);
    in.copy.nburst = nburst;
    in.copy.len_bytes = len;
    if (op == isa::Opcode::COPY_UB_TO_GM) {
      in.dst = {gm, isa::Pos::GM};
      in.copy.dst_gap = gap;
    } else {
      in.src0 = {gm, isa::Pos::GM};
      in.copy.src_gap = gap;
    }
    return in;
  };
  // Two blocks read halves of the input as strided rows (the hull of each is
  // one range), and write the output; a vector instruction touches no GM.
  fp.record(copy(isa::Opcode::COPY_GM_TO_UB, 0x10000, 4, 256, 256));
  fp.record(copy(isa::Opcode::COPY_GM_TO_UB, 0x10000 + 2048, 4, 256, 256));
  fp.record(copy(isa::Opcode::COPY_UB_TO_GM, 0x20000, 1, 1024, 0));
  fp.record(isa::make_instr(isa::Opcode::VADD));
  CHECK(fp.bytes() == 1792 + 1792 + 1024);
  // Another launch of the same identity: its operands lie elsewhere.
  const std::vector<reuse::OperandRange> other{{0x50000, 4096, false},
                                               {0x70000, 1024, true}};
  std::vector<GmRange> r;
  fp.ranges_for(other, r);
  REQUIRE(r.size() == 3);
  // Reads first (address order), then writes.
  CHECK(r[0].addr == 0x50000);
  CHECK(r[0].bytes == 1792);
  CHECK(!r[0].write);
  CHECK(r[1].addr == 0x50000 + 2048);
  CHECK(r[1].bytes == 1792);
  CHECK(r[2].addr == 0x70000);
  CHECK(r[2].bytes == 1024);
  CHECK(r[2].write);
  // Touching ranges merge into one.
  fp.record(copy(isa::Opcode::COPY_GM_TO_UB, 0x10000 + 1792, 1, 256, 0));
  r.clear();
  fp.ranges_for(other, r);
  REQUIRE(r.size() == 2);
  CHECK(r[0].bytes == 4096 - 256);
}

namespace {

// A Rope launch over T tokens at `pos` (host_positions), cos_sin rows of R
// fp16 values.
KernelDesc rope_kernel(const std::vector<int64_t> &pos, int64_t R) {
  KernelDesc k;
  k.type = "Rope";
  k.block_dim = 8;
  k.body = [](isa::IInstrSink &) {};
  ops::NodeDesc n;
  n.op_type = "Rope";
  n.attrs.set("host_positions", ref::Attr::of_ints(pos));
  const int64_t T = static_cast<int64_t>(pos.size());
  ops::TensorRef x = ops::make_tensor({T, 4, R}, ref::ElemType::Float16),
                 p = ops::make_tensor({T}, ref::ElemType::Int64),
                 cs = ops::make_tensor({4096, R}, ref::ElemType::Float16);
  x.addr = 1 << 20;
  p.addr = 2 << 20;
  cs.addr = 4 << 20;
  std::vector<KernelDesc> ks{k};
  ops::stamp_node_launch(ks, n, {x, p, cs}, {x}, 0, 0);
  return ks[0];
}

} // namespace

TEST_CASE("timing re-use: Rope is keyed on its positions' pattern and row "
          "alignment, not their values",
          "[reuse]") {
  // Rows of 128 fp16 values: 256 B, so a position's row starts at 0 or 256
  // within a 512-B line.
  const std::string a = reuse::launch_identity(rope_kernel({1000, 1200}, 128));
  CHECK(reuse::launch_identity(rope_kernel({1002, 1202}, 128)) ==
        a); // both moved by two: the same rows' layout
  CHECK(reuse::launch_identity(rope_kernel({1001, 1201}, 128)) !=
        a); // the first row in the other half of its line
  CHECK(reuse::launch_identity(rope_kernel({1000, 1201}, 128)) !=
        a); // another pattern
  CHECK(reuse::launch_identity(rope_kernel({1000}, 128)) != a); // fewer tokens
  // Rows of 256 fp16 values fill a line: every step keeps one identity.
  CHECK(reuse::launch_identity(rope_kernel({7}, 256)) ==
        reuse::launch_identity(rope_kernel({8}, 256)));
}
