// GroupedMatmul: the experts' matmul of a mixture-of-experts layer (contract: docs/llm.md,
// "Operators"). x [R, K] holds the rows of all experts grouped by expert (MoePermute's x_perm),
// w [E, K, N] one weight per expert, group_sizes [E] (int64; int32 on the device) the rows of
// each: y[off_e + i] = x[off_e + i] w[e]. One cube launch: each block's scalar unit reads the
// group sizes, and the groups' output tiles are numbered across the groups (group by group, each
// group's tiles in row-major order) and dealt round robin over the blocks, so a small group does
// not leave the other cores idle and a ragged load spreads evenly. Each group runs the library's
// cube matmul (runtime/ops/cube_matmul.h) on its rows with one tiling planned on the host for the
// average group (R / E rows; the tile sizes do not depend on data), the group's row count set at
// run time; an empty group costs nothing but its size load. A block drains its pipes between
// groups (each group is one matmul call).
// Host-known sizes: `host_experts` (ints, R entries of expert ids, as MoePermute) or
// `host_group_sizes` (ints, E; summing to at most R) give the sizes in timing mode, where the
// loads read 0 (see runtime/ops/llm/moe.h). Simplified: no L2 prefetch by the AIVs (a CUBE
// launch), no split-k; a loaded size is clamped to the rows left.
#include <algorithm>

#include "runtime/kernel/api.h"
#include "runtime/ops/cube_matmul.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/llm/moe.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"
#include "runtime/ref/llm_moe.h"

namespace sfumato::ops::llm {

using isa::DType;
using namespace sfumato::kernel;

namespace {

// A block's sink seen by one group's matmul: block numbers rotated by the tiles of the groups
// before it, so that global tile g runs on block g % block_num.
class ShiftedSink : public isa::IInstrSink {
public:
    ShiftedSink(isa::IInstrSink& s, uint32_t shift) : m_s(s), m_shift(shift) {}
    void issue(const isa::Instr& in) override { m_s.issue(in); }
    uint64_t load(const isa::Instr& in) override { return m_s.load(in); }
    void scalar(uint32_t c) override { m_s.scalar(c); }
    uint32_t block_idx() const override {
        const uint32_t n = m_s.block_num();
        return (m_s.block_idx() + n - m_shift % n) % n;
    }
    uint32_t block_num() const override { return m_s.block_num(); }
    uint32_t sub_block_idx() const override { return m_s.sub_block_idx(); }
    isa::CoreKind core_kind() const override { return m_s.core_kind(); }
    uint64_t buffer_size(isa::Pos p) const override { return m_s.buffer_size(p); }
    uint32_t event_ids() const override { return m_s.event_ids(); }

private:
    isa::IInstrSink& m_s;
    uint32_t m_shift;
};

struct GmmPlan {
    CubeMatmulPlan base;
    uint64_t x = 0, w = 0, sizes = 0, y = 0;
    uint64_t R = 0, K = 0, N = 0, E = 0;
    uint32_t blocks = 1;
    std::shared_ptr<const std::vector<int64_t>> host_sizes;
};

void gmm_kernel(isa::IInstrSink& sink, const GmmPlan& p) {
    std::vector<uint64_t> sz(p.E, 0);
    {
        KernelContext ctx(sink);
        GlobalTensor<int32_t> sizes;
        sizes.SetGlobalBuffer(ctx, p.sizes, p.E);
        uint64_t left = p.R;
        for (uint64_t e = 0; e < p.E; ++e) {
            int64_t v = sizes.GetValue(e);
            if (p.host_sizes) v = (*p.host_sizes)[e];
            ctx.scalar(3);  // clamp, tile count
            sz[e] = static_cast<uint64_t>(std::clamp<int64_t>(v, 0, static_cast<int64_t>(left)));
            left -= sz[e];
        }
    }
    const uint32_t ei = isa::dtype_size(p.base.in), eo = isa::dtype_size(p.base.out);
    uint64_t before = 0, off = 0;
    for (uint64_t e = 0; e < p.E; ++e) {
        if (sz[e] == 0) continue;
        CubeMatmulPlan q = p.base;
        q.t.m = u32(sz[e]);
        q.t.tiles_m = u32((sz[e] + q.t.base_m - 1) / q.t.base_m);
        q.a = p.x + off * p.K * ei, q.b = p.w + e * p.K * p.N * ei, q.c = p.y + off * p.N * eo;
        sink.scalar(8);  // the group's addresses and tile counts
        ShiftedSink s(sink, u32(before % sink.block_num()));
        run_cube_matmul(s, q);
        before += q.t.tiles();
        off += sz[e];
    }
}

class GroupedMatmulOp : public INodeOp {
public:
    GroupedMatmulOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        GmmPlan& p = m_plan;
        const DType t = act_input(n, 0, "x");
        const TensorRef &x = n.inputs[0], &w = norm::need_input(n, 1, "weight");
        index_input(n, 2, "group_sizes");
        if (w.dtype != t) throw UnsupportedError(n, "weight's dtype differs from x's");
        if (!w.contiguous() || w.format != Format::ND) throw UnsupportedError(n, "weight is not contiguous ND");
        if (x.shape.size() != 2) throw UnsupportedError(n, "x must be [R, K], got " + ref::shape_str(x.shape));
        if (w.shape.size() != 3 || w.shape[1] != x.shape[1])
            throw UnsupportedError(n, "weight " + ref::shape_str(w.shape) + " must be [E, K, N] with x's K = " +
                                          std::to_string(x.shape[1]));
        p.R = static_cast<uint64_t>(x.shape[0]), p.K = static_cast<uint64_t>(x.shape[1]);
        p.E = static_cast<uint64_t>(w.shape[0]), p.N = static_cast<uint64_t>(w.shape[2]);
        if (n.inputs[2].numel() != p.E)
            throw UnsupportedError(n, "group_sizes " + ref::shape_str(n.inputs[2].shape) + " has not E = " +
                                          std::to_string(p.E) + " entries");
        if (p.E == 0 || p.K == 0 || p.N == 0) throw UnsupportedError(n, "an empty weight");
        for (uint64_t v : {p.R, p.K, p.N})
            if (v > 0x7fffffffull) throw UnsupportedError(n, "dimension above 2^31");
        if (n.attrs.has("host_group_sizes")) {
            std::vector<int64_t> h = n.attrs.get_ints("host_group_sizes", {});
            int64_t sum = 0;
            for (int64_t v : h) sum += v;
            // At most R: a window larger than its rows (expert parallel's receive window) is fine.
            if (h.size() != p.E || sum > static_cast<int64_t>(p.R) ||
                std::any_of(h.begin(), h.end(), [](int64_t v) { return v < 0; }))
                throw UnsupportedError(n, "attribute 'host_group_sizes' must be E = " + std::to_string(p.E) +
                                              " sizes >= 0 summing to at most R = " + std::to_string(p.R));
            p.host_sizes = std::make_shared<const std::vector<int64_t>>(std::move(h));
        } else if (n.attrs.has("host_experts")) {
            const std::vector<int64_t> h = host_experts_attr(n, p.R, static_cast<int64_t>(p.E));
            p.host_sizes = std::make_shared<const std::vector<int64_t>>(
                ref::moe_group(h, static_cast<int64_t>(p.E), "node '" + n.name + "'").sizes);
        }
        CubeMatmulPlan& b = p.base;
        b.in = t, b.out = t;
        b.lda = p.K, b.ldb = p.N, b.ldc = p.N;
        MatmulProblem pr;
        pr.m = u32(std::max<uint64_t>(1, (p.R + p.E - 1) / p.E));
        pr.n = u32(p.N), pr.k = u32(p.K);
        pr.in_es = pr.out_es = isa::dtype_size(t);
        pr.split_k_ok = false;  // the groups' tiles already fill the cores; no barrier per group
        pr.a_resident_ok = false;  // each group has its own A rows
        try {
            b.t = plan_matmul(pr, dev);
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        MatmulTiling& tl = b.t;
        tl.gm_nz = false, tl.batch = 1, tl.group_m = 1, tl.group_n = 0, tl.k_rot = 1, tl.k_split = 1;
        tl.pf_ahead = 0, tl.pf_buf = 0, tl.pf_aiv = 0, tl.pf_marks = nullptr;
        const uint64_t bound = ((p.R + tl.base_m - 1) / tl.base_m + std::min(p.E, p.R)) * tl.tiles_n;
        p.blocks = u32(std::max<uint64_t>(1, std::min<uint64_t>(bound, std::max(1u, dev.cube_cores))));
        m_out = norm::tensor_like(x, {x.shape[0], w.shape[2]});
        m_form = "grouped: " + std::to_string(p.E) + " groups, cube " + std::to_string(tl.base_m) + "x" +
                 std::to_string(tl.base_n) + " tiles, k chunk " + std::to_string(tl.k_l1) +
                 (p.host_sizes ? ", host-known sizes" : ", sizes read from GM");
    }
    std::vector<TensorRef> outputs() const override { return {m_out}; }
    std::string describe() const override { return m_form; }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_plan.R == 0) return {};
        GmmPlan p = m_plan;
        p.x = in[0].addr, p.w = in[1].addr, p.sizes = in[2].addr, p.y = out[0].addr;
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = KernelKind::Cube;
        kd.block_dim = p.blocks;
        kd.body = [p](isa::IInstrSink& s) { gmm_kernel(s, p); };
        const uint32_t es = isa::dtype_size(p.base.in);
        uint64_t experts = p.E;  // weights read: the groups that have rows
        if (p.host_sizes) experts = static_cast<uint64_t>(std::count_if(p.host_sizes->begin(), p.host_sizes->end(), [](int64_t v) { return v > 0; }));
        kd.flops = 2.0 * static_cast<double>(p.R * p.K * p.N);
        kd.bytes = (p.R * p.K + experts * p.K * p.N + p.R * p.N) * es + p.E * 4;
        const double steps =
            static_cast<double>(norm::cdiv(p.R, 16) * norm::cdiv(p.K, cube_k0_of(es)) * norm::cdiv(p.N, 16));
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        return {kd};
    }

private:
    NodeDesc m_node;
    DeviceInfo m_dev;
    GmmPlan m_plan;
    TensorRef m_out;
    std::string m_form;
};

std::unique_ptr<INodeOp> make_gmm(const NodeDesc& n, const DeviceInfo& d) { return std::make_unique<GroupedMatmulOp>(n, d); }

}  // namespace

SFUMATO_REGISTER_NODE_OP(grouped_matmul, "GroupedMatmul", make_gmm);

}  // namespace sfumato::ops::llm
