// PagedAttention on the tiny chip (split parts), driven straight through the
// device: a prefill of 100 tokens in one piece, and the same tokens as a
// chunked prefill of 60 then 40 (the second continuing the first's cache, in
// other blocks of the same caches, listed out of order). The continuation's
// outputs equal the one-piece run's last 40 rows and both equal the host
// reference (FusedAttention's fp16 tolerance, docs/llm.md "Operators"); the
// caches hold the new k and v rows bit for bit at the slots the block table
// names.
#include <catch2/catch.hpp>
#include <random>

#include "models/chip/chip_params.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/ref_ops.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;
using ref::ElemType;

namespace {

constexpr int64_t kNH = 4, kNKV = 2, kD = 32, kBS = 64, kNB = 4, kL = 100;

ops::NodeDesc paged_node(int64_t ql, int64_t cl, const std::vector<int64_t>& blocks) {
    ops::NodeDesc n;
    n.name = "pa";
    n.op_type = "PagedAttention";
    n.attrs.set_owner("pa");
    n.attrs.set("num_heads", ref::Attr::of_int(kNH));
    n.attrs.set("num_kv_heads", ref::Attr::of_int(kNKV));
    n.attrs.set("head_dim", ref::Attr::of_int(kD));
    n.attrs.set("block_size", ref::Attr::of_int(kBS));
    n.attrs.set("scale", ref::Attr::of_float(1.0 / std::sqrt(double(kD))));
    n.attrs.set("query_lens", ref::Attr::of_ints({ql}));
    n.attrs.set("context_lens", ref::Attr::of_ints({cl}));
    n.attrs.set("block_table", ref::Attr::of_ints(blocks));
    n.attrs.set("max_blocks", ref::Attr::of_int(static_cast<int64_t>(blocks.size())));
    n.inputs = {ops::make_tensor({ql, kNH, kD}, ElemType::Float16),
                ops::make_tensor({ql, kNKV, kD}, ElemType::Float16),
                ops::make_tensor({ql, kNKV, kD}, ElemType::Float16),
                ops::make_tensor({kNB, kBS, kNKV, kD}, ElemType::Float16),
                ops::make_tensor({kNB, kBS, kNKV, kD}, ElemType::Float16)};
    return n;
}

ref::HostTensor random(const std::vector<int64_t>& shape, std::mt19937& rng) {
    ref::HostTensor t(ElemType::Float16, shape);
    std::uniform_real_distribution<double> d(-1, 1);
    for (double& x : t.data) x = d(rng);
    ref::round_to_type(t);
    return t;
}

}  // namespace

TEST_CASE("paged attention: a chunked prefill in two pieces equals one piece and the reference") {
    Harness h;
    const DeviceInfo dev = device_info(h.params(), true);
    std::mt19937 rng(5);
    const ref::HostTensor q = random({kL, kNH, kD}, rng), k = random({kL, kNKV, kD}, rng),
                          v = random({kL, kNKV, kD}, rng);
    uint64_t at = (dev.reserved_bytes + 0xffff) / 0x10000 * 0x10000;
    auto place = [&](uint64_t bytes) {
        const uint64_t a = at;
        at += (bytes + 4095) / 4096 * 4096;
        return a;
    };
    auto upload = [&](const ref::HostTensor& t) {
        const std::vector<uint8_t> b = ref::to_device_bytes(t, isa::DType::FP16);
        const uint64_t a = place(b.size());
        h.chip().gm()->write(a, b.data(), b.size());
        return a;
    };
    const uint64_t qa = upload(q), ka = upload(k), va = upload(v);
    const uint64_t cache_bytes = uint64_t{kNB * kBS * kNKV * kD * 2};
    const uint64_t kc = place(cache_bytes), vc = place(cache_bytes);
    const std::vector<uint8_t> zeros(cache_bytes, 0);
    h.chip().gm()->write(kc, zeros.data(), cache_bytes);
    h.chip().gm()->write(vc, zeros.data(), cache_bytes);
    const uint64_t row_q = kNH * kD * 2, row_kv = kNKV * kD * 2;
    const uint64_t o_one = place(kL * row_q), o_b1 = place(60 * row_q), o_b2 = place(40 * row_q);

    struct Run {
        ops::NodeDesc node;
        int64_t first;  // first token row
        uint64_t out;
    };
    std::vector<Run> runs = {{paged_node(kL, 0, {0, 1}), 0, o_one},
                             {paged_node(60, 0, {3, 2}), 0, o_b1},
                             {paged_node(40, 60, {3, 2}), 60, o_b2}};
    std::vector<std::string> forms;
    const bool done = h.run_host([&] {
        for (Run& r : runs) {
            std::unique_ptr<ops::INodeOp> op = ops::make_node_op(r.node, dev);
            forms.push_back(op->describe());
            std::vector<ops::TensorRef> in = r.node.inputs, out = op->outputs();
            in[0].addr = qa + static_cast<uint64_t>(r.first) * row_q;
            in[1].addr = ka + static_cast<uint64_t>(r.first) * row_kv;
            in[2].addr = va + static_cast<uint64_t>(r.first) * row_kv;
            in[3].addr = kc, in[4].addr = vc;
            out[0].addr = r.out;
            const uint64_t ws = place(op->workspace_bytes() + 1);
            for (const KernelDesc& kd : op->launches(in, out, ws)) {
                auto t = std::make_shared<Task>();
                t->kind = TaskKind::Kernel;
                t->kernel = kd;
                h.submit_and_wait(t);
            }
        }
    });
    REQUIRE(done);
    INFO(forms[0] << " | " << forms[2]);
    auto read = [&](uint64_t a, const std::vector<int64_t>& shape) {
        std::vector<uint8_t> b(static_cast<size_t>(ref::HostTensor(ElemType::Float16, shape).numel() * 2));
        h.chip().gm()->read(a, b.data(), b.size());
        return ref::from_device_bytes(b.data(), isa::DType::FP16, ElemType::Float16, shape);
    };
    // The reference of the one-piece prefill (caches start empty).
    ref::HostTensor cache(ElemType::Float16, {kNB, kBS, kNKV, kD});
    const ops::NodeDesc& n = runs[0].node;
    const std::vector<ref::HostTensor> want =
        ref::run_ref({n.name, n.op_type, n.opset, n.attrs}, {&q, &k, &v, &cache, &cache});
    const double u = 0x1p-11;
    const ops::Tolerance tol{u * (3 + 2 * std::sqrt(double(kD))), 2 * u};
    const ref::HostTensor one = read(o_one, {kL, kNH, kD}), b2 = read(o_b2, {40, kNH, kD});
    CHECK(ops::compare_tensors(one, want[0], tol).passed);
    ref::HostTensor tail(ElemType::Float16, {40, kNH, kD}), want_tail = tail;
    std::copy(one.data.begin() + 60 * kNH * kD, one.data.end(), tail.data.begin());
    std::copy(want[0].data.begin() + 60 * kNH * kD, want[0].data.end(), want_tail.data.begin());
    CHECK(ops::compare_tensors(b2, tail, tol).passed);
    CHECK(ops::compare_tensors(b2, want_tail, tol).passed);
    // Rows 0..63 in block 3, 64..99 in block 2, exactly.
    const ref::HostTensor kcache = read(kc, {kNB, kBS, kNKV, kD}), vcache = read(vc, {kNB, kBS, kNKV, kD});
    const int64_t per_row = kNKV * kD;
    for (int64_t pos = 0; pos < kL; ++pos) {
        const int64_t slot = (pos < kBS ? 3 : 2) * kBS + pos % kBS;
        for (int64_t e = 0; e < per_row; ++e) {
            REQUIRE(kcache.data[static_cast<size_t>(slot * per_row + e)] ==
                    k.data[static_cast<size_t>(pos * per_row + e)]);
            REQUIRE(vcache.data[static_cast<size_t>(slot * per_row + e)] ==
                    v.data[static_cast<size_t>(pos * per_row + e)]);
        }
    }
}
