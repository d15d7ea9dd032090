// PagedAttention node face and host tiling (runtime/ops/llm/paged_attention.h):
// the item list of the attention launch, the flash-decoding split, the
// cache-write runs and the combine groups, all from the node's attributes.
#include "runtime/ops/llm/paged_attention.h"

#include <algorithm>
#include <cmath>

#include "runtime/ops/attention/attention.h"
#include "runtime/ops/llm/llm_common.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ref/llm_shapes.h"

namespace sfumato::ops::llm {

namespace {

using attention::AttnItem;
using attention::AttnList;
using attention::AttnPlan;
using attention::KvSource;

uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

class PagedAttentionOp : public INodeOp {
public:
    PagedAttentionOp(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        for (size_t i = 0; i < 5; ++i) {
            static const char* names[] = {"q", "k", "v", "k_cache", "v_cache"};
            const isa::DType t = act_input(n, i, names[i]);
            if (t != isa::DType::FP16 && t != isa::DType::BF16)
                throw UnsupportedError(n, std::string("input '") + names[i] + "' has dtype " +
                                              isa::dtype_name(t) + " (supported: fp16, bf16)");
            if (t != n.inputs[0].dtype)
                throw UnsupportedError(n, "q, k, v and the caches must have one dtype");
        }
        try {
            m_l = ref::paged_layout(n.name, n.attrs, n.inputs[0].shape, n.inputs[1].shape, n.inputs[2].shape,
                                    n.inputs[3].shape, n.inputs[4].shape);
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        if (m_l.D % 16 || m_l.D > 512)
            throw UnsupportedError(
                n, "head_dim " + std::to_string(m_l.D) + " (supported: multiples of 16 up to 512)");
        if (m_l.BS % 64)
            throw UnsupportedError(n, "block_size " + std::to_string(m_l.BS) + " is not a multiple of 64");
        m_t = n.inputs[0].dtype;
        m_es = isa::dtype_size(m_t);
        m_out = norm::tensor_like(n.inputs[0], n.inputs[0].shape);
        plan_attention_items();
        plan_cache_write();
        plan_combine();
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_attn.ws_bytes() + m_partial_bytes; }
    std::string describe() const override {
        return "paged: " + std::to_string(m_prefill_items) + " prefill tiles of " +
               std::to_string(m_attn.br) + " rows, " + std::to_string(m_decode_items) + " decode items" +
               (m_split_parts ? " (" + std::to_string(m_split_parts) + " key-split parts, combined)" : "") +
               ", " + std::to_string(m_attn.bc) + " keys per step";
    }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        std::vector<KernelDesc> ks;
        const uint64_t q = in[0].addr, k = in[1].addr, v = in[2].addr, kc = in[3].addr, vc = in[4].addr,
                       o = out[0].addr;
        if (!m_cw.runs.empty()) {
            CacheWritePlan c = m_cw;
            c.k = k, c.v = v, c.kc = kc, c.vc = vc;
            KernelDesc kd = norm::vector_launch(
                m_node.name + ".cache_write", m_node.op_type, c.blocks,
                [c](isa::IInstrSink& s) { cache_write_kernel(s, c); }, 0,
                4 * static_cast<uint64_t>(m_l.T) * c.row_bytes, 0, 0, m_dev);
            ks.push_back(std::move(kd));
        }
        auto list = std::make_shared<AttnList>(*m_list);
        for (AttnItem& it : list->items) it.q += q, it.o += o;
        for (KvSource& s : list->srcs) s.k += kc, s.v += vc;
        list->partial = ws + m_attn.ws_bytes();
        AttnPlan p = m_attn;
        p.list = list;
        p.ws = ws;
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = KernelKind::Mix;
        kd.block_dim = p.blocks;
        kd.body = [p](isa::IInstrSink& s) { attention::attention_kernel(s, p); };
        kd.flops = m_pairs * 4.0 * static_cast<double>(m_l.D);
        kd.bytes = m_kv_bytes + 2 * in[0].storage_bytes();
        double lb = 0;
        if (m_dev.cube_macs_fp16 > 0)
            lb = m_pairs * 2.0 * static_cast<double>(m_l.D) / (m_dev.cube_macs_fp16 * m_dev.cube_cores);
        kd.min_compute_cycles = lb;
        ks.push_back(std::move(kd));
        if (!m_comb.groups.empty()) {
            CombinePlan c = m_comb;
            c.partial = list->partial;
            for (auto& g : c.groups) g.o += o;
            ks.push_back(norm::vector_launch(
                m_node.name + ".combine", m_node.op_type, c.blocks,
                [c](isa::IInstrSink& s) { combine_kernel(s, c); }, 0, m_partial_bytes + m_comb_out_bytes, 6,
                m_partial_bytes / 4, m_dev));
        }
        return ks;
    }

private:
    // The attention tiling (br, bc) for the largest item, then the items
    // themselves.
    void plan_attention_items() {
        const ref::PagedLayout& l = m_l;
        const int64_t grp = l.NH / l.NKV;
        AttnPlan& p = m_attn;
        p.dt = m_t;
        p.wt = m_t == isa::DType::FP16 ? isa::DType::FP16 : isa::DType::FP32;
        p.D = p.Dv = static_cast<uint32_t>(l.D);
        p.scale = l.scale;
        p.causal = true;
        p.kv_block = static_cast<uint32_t>(l.BS);
        int64_t rows = 1, keys = 1, est = 0;
        for (size_t s = 0; s < l.query_lens.size(); ++s) {
            const int64_t ql = l.query_lens[s];
            if (ql == 0) continue;
            rows = std::max(rows, ql == 1 ? grp : ql);
            keys = std::max(keys, l.context_lens[s] + ql);
            est += ql == 1 ? l.NKV : l.NH * ql;
        }
        if (keys > (1 << 24) || rows > (1 << 24)) throw UnsupportedError(m_node, "sequence too long");
        p.Sq = static_cast<uint32_t>(rows), p.Sk = static_cast<uint32_t>(keys);
        p.G = static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(est, 1 << 20)));
        std::string why;
        if (!attention::plan_attention(p, m_dev, why)) throw UnsupportedError(m_node, why);
        build_items();
        p.blocks = static_cast<uint32_t>(
            std::max<uint64_t>(1, std::min<uint64_t>(m_list->items.size(), std::max(1u, m_dev.cube_cores))));
    }

    void build_items() {
        const ref::PagedLayout& l = m_l;
        const int64_t grp = l.NH / l.NKV, D = l.D, NH = l.NH, es = static_cast<int64_t>(m_es);
        const uint32_t br = m_attn.br, bc = m_attn.bc;
        auto list = std::make_shared<AttnList>();
        for (size_t s = 0; s < l.query_lens.size(); ++s)
            for (int64_t h = 0; h < l.NKV; ++h) {
                KvSource src;
                src.k = src.v = static_cast<uint64_t>(h * D * es);
                src.ld = static_cast<uint32_t>(l.NKV * D);
                src.bs = static_cast<uint32_t>(l.BS);
                src.blocks.assign(l.block_table.begin() + static_cast<int64_t>(s) * l.max_blocks,
                                  l.block_table.begin() + static_cast<int64_t>(s + 1) * l.max_blocks);
                list->srcs.push_back(std::move(src));
            }
        std::vector<AttnItem> decode;
        int64_t t0 = 0;
        for (size_t s = 0; s < l.query_lens.size(); ++s) {
            const int64_t ql = l.query_lens[s], cl = l.context_lens[s];
            if (ql == 1) {  // the GQA group's heads as the item's rows
                for (int64_t h = 0; h < l.NKV; ++h)
                    for (int64_t r0 = 0; r0 < grp; r0 += br) {
                        AttnItem it;
                        it.q = it.o = static_cast<uint64_t>((t0 * NH + h * grp + r0) * D * es);
                        it.ldq = it.ldo = static_cast<uint32_t>(D);
                        it.i0 = 0, it.tm = static_cast<uint32_t>(std::min<int64_t>(br, grp - r0));
                        it.key0 = 0, it.keys = static_cast<uint32_t>(cl + 1);
                        it.shift = cl;
                        it.src = static_cast<uint32_t>(static_cast<int64_t>(s) * l.NKV + h);
                        decode.push_back(it);
                        m_pairs += static_cast<double>(it.tm) * static_cast<double>(cl + 1);
                    }
            } else if (ql > 1) {  // FlashAttention tiles of br query rows per head
                for (int64_t h = 0; h < NH; ++h)
                    for (int64_t i0 = 0; i0 < ql; i0 += br) {
                        AttnItem it;
                        it.q = it.o = static_cast<uint64_t>(((t0 + i0) * NH + h) * D * es);
                        it.ldq = it.ldo = static_cast<uint32_t>(NH * D);
                        it.i0 = static_cast<uint32_t>(i0),
                        it.tm = static_cast<uint32_t>(std::min<int64_t>(br, ql - i0));
                        it.key0 = 0, it.keys = static_cast<uint32_t>(cl + i0 + it.tm);
                        it.shift = cl;
                        it.src = static_cast<uint32_t>(static_cast<int64_t>(s) * l.NKV + h / grp);
                        list->items.push_back(it);
                        for (uint32_t r = 0; r < it.tm; ++r) m_pairs += static_cast<double>(cl + i0 + r + 1);
                        ++m_prefill_items;
                    }
            }
            m_kv_bytes += static_cast<uint64_t>((cl + ql) * l.NKV * D * es * 2);
            t0 += ql;
        }
        m_decode_items = decode.size();
        split_decode(decode, *list, bc);
        // Largest first, so the last wave is the shortest.
        std::stable_sort(list->items.begin(), list->items.end(), [bc](const AttnItem& a, const AttnItem& b) {
            return uint64_t{a.tm} * cdiv(a.keys, bc) > uint64_t{b.tm} * cdiv(b.keys, bc);
        });
        m_list = list;
    }

    // Flash-decoding: when the items leave cube cores idle, each long decode item
    // is split into parts of whole key steps (at least two steps each) over the
    // idle cores; the parts write partial slots.
    void split_decode(const std::vector<AttnItem>& decode, AttnList& list, uint32_t bc) {
        const uint64_t cores = std::max(1u, m_dev.cube_cores), nd = decode.size(), busy = list.items.size();
        const uint64_t free = cores > busy ? cores - busy : 0;
        for (const AttnItem& it : decode) {
            const uint64_t steps = cdiv(it.keys, bc);
            const uint64_t parts = nd ? std::min<uint64_t>(free / nd, steps / 2) : 1;
            if (parts < 2) {
                list.items.push_back(it);
                continue;
            }
            const uint64_t per = cdiv(steps, parts) * bc;
            CombinePlan::Group g;
            g.o = it.o, g.ldo = it.ldo, g.rows = it.tm;
            g.part0 = m_split_parts;
            for (uint64_t k0 = 0; k0 < it.keys; k0 += per) {
                AttnItem part = it;
                part.key0 = static_cast<uint32_t>(k0);
                part.keys = static_cast<uint32_t>(std::min<uint64_t>(per, it.keys - k0));
                part.part = m_split_parts++;
                list.items.push_back(part);
                ++g.parts;
            }
            m_comb.groups.push_back(g);
        }
        m_partial_bytes = uint64_t{m_split_parts} * attention::partial_slot_bytes(m_attn.br, m_attn.Dv);
    }

    void plan_cache_write() {
        const ref::PagedLayout& l = m_l;
        m_cw.t = m_t;
        m_cw.row_bytes = static_cast<uint64_t>(l.NKV * l.D) * m_es;
        int64_t t0 = 0;
        uint64_t longest = 0;
        for (size_t s = 0; s < l.query_lens.size(); ++s) {
            for (int64_t i = 0; i < l.query_lens[s];) {
                const int64_t pos = l.context_lens[s] + i;
                const int64_t n = std::min(l.query_lens[s] - i,
                                           l.BS - pos % l.BS);  // to the block's end
                m_cw.runs.push_back({static_cast<uint64_t>(t0 + i), static_cast<uint64_t>(l.slot(s, pos)),
                                     static_cast<uint32_t>(n)});
                longest = std::max(longest, static_cast<uint64_t>(n) * m_cw.row_bytes);
                i += n;
            }
            t0 += l.query_lens[s];
        }
        m_cw.chunk =
            std::max<uint64_t>(32, std::min<uint64_t>(longest, (m_dev.ub_bytes - 1024) / 2 / 32 * 32));
        m_cw.blocks = static_cast<uint32_t>(
            std::max<uint64_t>(1, std::min<uint64_t>(m_cw.runs.size(), std::max(1u, m_dev.vector_cores))));
    }

    void plan_combine() {
        if (m_comb.groups.empty()) return;
        CombinePlan& c = m_comb;
        c.t = m_t;
        c.br = m_attn.br, c.D = m_attn.Dv;
        c.slot_bytes = attention::partial_slot_bytes(c.br, c.D);
        uint32_t rmax = 1, pmax = 1;
        for (const auto& g : c.groups) {
            rmax = std::max(rmax, g.rows);
            pmax = std::max(pmax, g.parts);
            m_comb_out_bytes += uint64_t{g.rows} * c.D * m_es;
        }
        c.rows = rmax;
        while (c.rows > 1 && combine_ub_bytes(c.rows, c.D, pmax) > m_dev.ub_bytes) --c.rows;
        if (combine_ub_bytes(c.rows, c.D, pmax) > m_dev.ub_bytes)
            throw UnsupportedError(
                m_node, "the combine step of " + std::to_string(pmax) + " parts does not fit in UB");
        c.blocks =
            static_cast<uint32_t>(std::min<uint64_t>(c.groups.size(), std::max(1u, m_dev.vector_cores)));
    }

    NodeDesc m_node;
    DeviceInfo m_dev;
    ref::PagedLayout m_l;
    isa::DType m_t = isa::DType::FP16;
    uint64_t m_es = 2;
    TensorRef m_out;
    AttnPlan m_attn;
    std::shared_ptr<const AttnList> m_list;
    CacheWritePlan m_cw;
    CombinePlan m_comb;
    uint32_t m_split_parts = 0;
    uint64_t m_partial_bytes = 0, m_comb_out_bytes = 0, m_kv_bytes = 0;
    size_t m_prefill_items = 0, m_decode_items = 0;
    double m_pairs = 0;
};

std::unique_ptr<INodeOp> make_paged(const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<PagedAttentionOp>(n, d);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(paged_attention, "PagedAttention", make_paged);

}  // namespace sfumato::ops::llm
