// The LLM run (see engine.h).
#include "runtime/llm/engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "isa/dtype.h"
#include "runtime/ops/node_op.h"
#include "runtime/llm/host_util.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "sim/trace.h"

namespace sfumato::llm {

namespace {

using util::align_up;
using util::elem_bytes;
using util::kAlign;
using util::gib;
using util::held;

bool is_cache(const std::string& name) {
    return name.size() > 6 && (name.ends_with(".k_cache") || name.ends_with(".v_cache"));
}

// A pipeline stage's receive buffer: bound by the caller, not a weight.
bool is_received(const std::string& name) { return name == kPpHidden || name == kPpResidual; }

// Host values of an external weight (functional runs).
}  // namespace

std::vector<std::vector<int64_t>> draw_prompts(const ModelConfig& c, const RunOptions& o) {
    std::mt19937_64 rng(o.seed);
    std::vector<std::vector<int64_t>> out(static_cast<size_t>(std::max<int64_t>(0, o.batch)));
    for (auto& p : out)
        for (int64_t i = 0; i < o.prefill; ++i)
            p.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(c.vocab_size)));
    return out;
}

LlmRun::LlmRun(const ModelConfig& c, RunOptions o, const DeviceInfo& dev) : m_c(c), m_o(std::move(o)), m_dev(dev) {
    if (m_o.prefill < 1) throw InputError("llm: --prefill must be at least 1 token");
    if (m_o.decode < 0) throw InputError("llm: --decode must not be negative");
    if (m_o.batch < 1 || m_o.batch > 4096) throw InputError("llm: --batch must be 1..4096");
    if (m_o.block_size < 1 || m_o.block_size > 4096) throw InputError("llm: --block-size must be 1..4096");
    if (!(m_o.kv_mem_fraction > 0 && m_o.kv_mem_fraction <= 1)) throw InputError("llm: --kv-mem-fraction must be in (0, 1]");
    if (m_o.max_prefill_tokens < 1) throw InputError("llm: --max-prefill-tokens must be at least 1");
    if (m_o.first_layer < 0 || m_o.first_layer >= end_layer() || end_layer() > m_c.num_layers)
        throw InputError("llm: layers [" + std::to_string(m_o.first_layer) + ", " + std::to_string(end_layer()) +
                         ") are not a range of the model's " + std::to_string(m_c.num_layers));
    m_positions = m_o.prefill + m_o.decode + 1;
    const double reach = static_cast<double>(m_c.max_position_embeddings) *
                         (m_c.rope_scaling == RopeScaling::None || m_c.rope_scaling == RopeScaling::Dynamic ? 1.0 : m_c.rope_factor);
    if (m_c.rope_scaling != RopeScaling::Dynamic && static_cast<double>(m_positions) > reach)
        throw InputError("llm: sequences reach " + std::to_string(m_positions) + " positions, past the model's " +
                         std::to_string(static_cast<int64_t>(reach)) + " (max_position_embeddings)");
    if (m_c.sliding_window > 0 && m_positions > m_c.sliding_window)
        throw InputError("llm: sequences reach " + std::to_string(m_positions) + " positions, past the sliding window of " +
                         std::to_string(m_c.sliding_window) + " (sliding-window attention is not modelled)");
    if (m_o.weights && m_o.weights->layers.size() != static_cast<size_t>(m_c.num_layers))
        throw InputError("llm: the host weights do not match the model");
    m_sample = ops::has_node_op("Sample");
    m_rng.seed(m_o.seed + 1);
    // Prompts.
    const std::vector<std::vector<int64_t>> drawn = draw_prompts(m_c, m_o);
    for (int64_t s = 0; s < m_o.batch; ++s) {
        std::vector<int64_t> p;
        if (static_cast<size_t>(s) < m_o.prompts.size()) p = m_o.prompts[static_cast<size_t>(s)];
        if (p.empty()) p = drawn[static_cast<size_t>(s)];
        if (static_cast<int64_t>(p.size()) != m_o.prefill)
            throw InputError("llm: prompt " + std::to_string(s) + " has " + std::to_string(p.size()) +
                             " tokens, --prefill is " + std::to_string(m_o.prefill));
        for (int64_t t : p)
            if (t < 0 || t >= m_c.vocab_size) throw InputError("llm: prompt token " + std::to_string(t) + " outside the vocabulary");
        m_prompts.push_back(std::move(p));
    }

    // Memory: the first plans (with the smallest cache that serves the request) give the
    // activation arena and the weights; the KV cache gets what it is given or a share of the rest.
    const int64_t per_seq = KvCache::blocks_for(m_positions, m_o.block_size);
    m_mem.kv_blocks_needed = per_seq * m_o.batch;
    const int64_t layers = end_layer() - m_o.first_layer;  // this chip's (a pipeline stage's share)
    m_mem.kv_block_bytes = static_cast<uint64_t>(2 * layers * m_o.block_size * m_c.kv_size() * 2);
    m_mem.capacity = dev.gm_bytes > dev.reserved_bytes ? dev.gm_bytes - dev.reserved_bytes : 0;
    if (m_o.kv_blocks > 0 && m_o.kv_blocks < m_mem.kv_blocks_needed)
        throw InputError("llm: --kv-blocks " + std::to_string(m_o.kv_blocks) + " does not hold the request: " +
                         std::to_string(m_o.batch) + " x " + std::to_string(m_positions) + " tokens need " +
                         std::to_string(m_mem.kv_blocks_needed) + " blocks of " + std::to_string(m_o.block_size) +
                         ": short by " + std::to_string(m_mem.kv_blocks_needed - m_o.kv_blocks) + " blocks");
    // Weights alone past the device: say so before compiling anything.
    const uint64_t wb = weight_bytes(m_c, m_o.quant);
    if (layers == m_c.num_layers && wb > m_mem.capacity)
        throw InputError("llm: " + m_c.name + " does not fit the device: its weights take " + gib(wb) + " (" +
                         std::to_string(m_c.params()) + " parameters" +
                         (m_o.quant == Quant::None ? ", 2 bytes each" : ", int8 projections (W8A8)") + "), over the " +
                         gib(m_mem.capacity) +
                         " a program can allocate by " + gib(wb - m_mem.capacity));
    // The first prefill step is the largest (whole groups; a chunked prompt's first chunk is its
    // longest query); the last decode step has the widest block table.
    const std::vector<PrefillStep> ps = prefill_steps();
    m_prefill_steps = ps.size();
    const size_t all = static_cast<size_t>(m_o.batch);
    const StepBatch pre = batch_for(ps[0].count, ps[0].tokens, ps[0].start);
    const StepBatch dec = batch_for(all, 1, m_o.prefill + (m_o.decode > 0 ? m_o.decode - 1 : 0));
    auto p0 = compile(pre, m_mem.kv_blocks_needed);
    auto p1 = compile(dec, m_mem.kv_blocks_needed);
    m_kernels_prefill = p0->kernel_count();
    m_kernels_decode = p1->kernel_count();
    m_mem.activations = std::max(p0->memory.peak_bytes, p1->memory.peak_bytes) + p0->memory.weight_bytes +
                        p1->memory.weight_bytes;
    // Expert parallel's windows: sized for the larger of the two first plans (the prefill's).
    for (const auto* p : {p0.get(), p1.get()})
        for (int id : p->graph.inputs) {
            const graph::Value& v = p->graph.val(id);
            if (!v.external || !v.name.starts_with("ep.")) continue;
            // The sizes are int32 on the device.
            uint64_t n = v.elem == ref::ElemType::Int64 ? 4 : elem_bytes(v.elem);
            for (int64_t d : graph::concrete(v.shape, v.name)) n *= static_cast<uint64_t>(d);
            auto it = std::find_if(m_buffers.begin(), m_buffers.end(),
                                   [&](const auto& b) { return b.first == v.name; });
            if (it == m_buffers.end()) m_buffers.push_back({v.name, n});
            else it->second = std::max(it->second, n);
        }
    for (int id : p0->graph.inputs) {
        const graph::Value& v = p0->graph.val(id);
        if (!v.external || is_cache(v.name) || is_received(v.name) || v.name.starts_with("ep.")) continue;
        const std::vector<int64_t> s = graph::concrete(v.shape, v.name);
        m_weight_shapes.push_back({v.name, s, v.elem});
        uint64_t n = elem_bytes(v.elem);
        for (int64_t d : s) n *= static_cast<uint64_t>(d);
        m_mem.weights += align_up(n, kAlign);
    }
    // Device memory held: weights in one allocation, the largest plan's arena, and the KV cache
    // in one region per layer and kind (K, V), each rounded as the allocator rounds.
    m_mem.reserved = m_o.reserved_bytes;
    for (const auto& b : m_buffers) m_mem.reserved += held(b.second);
    m_mem.weights_imported = static_cast<bool>(m_o.import_weights);
    const uint64_t fixed =
        (m_mem.weights_imported ? 0 : held(m_mem.weights)) + held(m_mem.activations) + m_mem.reserved;
    if (fixed > m_mem.capacity)
        throw InputError("llm: " + m_c.name + " does not fit the device: weights " + gib(m_mem.weights) +
                         " + activations " + gib(m_mem.activations) +
                         (m_mem.reserved ? " + collective buffers " + gib(m_mem.reserved) : std::string()) + " take " +
                         gib(fixed) + ", over its " +
                         gib(m_mem.capacity) + " by " + gib(fixed - m_mem.capacity));
    const uint64_t left = m_mem.capacity - fixed, regions = static_cast<uint64_t>(2 * layers);
    const uint64_t region_block = m_mem.kv_block_bytes / regions;
    if (m_o.kv_blocks > 0) {
        m_mem.kv_blocks = m_o.kv_blocks;
    } else {
        uint64_t region = 2ull << 20;
        const double target = static_cast<double>(left) * m_o.kv_mem_fraction / static_cast<double>(regions);
        while (static_cast<double>(region) * 2 <= target) region <<= 1;
        m_mem.kv_blocks = static_cast<double>(region) <= target ? static_cast<int64_t>(region / region_block) : 0;
    }
    m_mem.kv = static_cast<uint64_t>(m_mem.kv_blocks) * m_mem.kv_block_bytes;
    if (m_mem.kv_blocks < m_mem.kv_blocks_needed) {
        const int64_t short_by = m_mem.kv_blocks_needed - m_mem.kv_blocks;
        throw InputError("llm: the KV cache does not hold the request: " + std::to_string(m_o.batch) + " x " +
                         std::to_string(m_positions) + " tokens need " + std::to_string(m_mem.kv_blocks_needed) +
                         " blocks of " + std::to_string(m_o.block_size) + ", the cache has " +
                         std::to_string(m_mem.kv_blocks) + ": short by " + std::to_string(short_by) + " blocks (" +
                         gib(static_cast<uint64_t>(short_by) * m_mem.kv_block_bytes) + ")");
    }
    const uint64_t kv_held = regions * held(static_cast<uint64_t>(m_mem.kv_blocks) * region_block);
    if (kv_held > left)
        throw InputError("llm: --kv-blocks " + std::to_string(m_mem.kv_blocks) + " takes " + gib(kv_held) + ", " +
                         gib(left) + " are left after weights and activations: short by " + gib(kv_held - left));
    m_mem.free = left - kv_held;
    m_kv = std::make_unique<KvCache>(m_mem.kv_blocks, m_o.block_size);
    if (m_mem.kv_blocks == m_mem.kv_blocks_needed) {
        // The plans just compiled are the run's own.
        m_buckets[bucket_key(pre)].plan = std::move(p0);
        if (!m_buckets.count(bucket_key(dec))) m_buckets[bucket_key(dec)].plan = std::move(p1);
    }
}

LlmRun::~LlmRun() = default;

size_t LlmRun::kernels_expected() const {
    return m_kernels_prefill * m_prefill_steps + m_kernels_decode * static_cast<size_t>(m_o.decode);
}

StepBatch LlmRun::batch_for(size_t count, int64_t q, int64_t ctx) const {
    StepBatch b;
    b.query_lens.assign(count, q);
    b.context_lens.assign(count, ctx);
    b.max_blocks = KvCache::blocks_for(ctx + q, m_o.block_size);
    b.block_table.assign(static_cast<size_t>(b.max_blocks) * count, -1);
    return b;
}

std::vector<LlmRun::PrefillStep> LlmRun::prefill_steps() const {
    std::vector<PrefillStep> steps;
    const size_t n = static_cast<size_t>(m_o.batch);
    if (m_o.prefill <= m_o.max_prefill_tokens) {
        const size_t group = static_cast<size_t>(std::max<int64_t>(1, m_o.max_prefill_tokens / m_o.prefill));
        for (size_t s = 0; s < n; s += group) steps.push_back({s, std::min(group, n - s), 0, m_o.prefill});
        return steps;
    }
    for (size_t s = 0; s < n; ++s)
        for (int64_t c = 0; c < m_o.prefill; c += m_o.max_prefill_tokens)
            steps.push_back({s, 1, c, std::min(m_o.max_prefill_tokens, m_o.prefill - c)});
    return steps;
}

std::string LlmRun::bucket_key(const StepBatch& b) const {
    if (m_shape_keys) {
        const int64_t multi = std::count_if(b.query_lens.begin(), b.query_lens.end(), [](int64_t q) { return q > 1; });
        return "T" + std::to_string(b.tokens()) + "/B" + std::to_string(b.sequences()) + "/P" + std::to_string(multi);
    }
    std::string k;
    for (int64_t q : b.query_lens) k += std::to_string(q) + ",";
    return k + "/" + std::to_string(b.max_blocks);
}

std::unique_ptr<graph::Plan> LlmRun::compile(const StepBatch& b, int64_t num_blocks) {
    const auto t0 = std::chrono::steady_clock::now();
    // The bucket's plan is made for its longest contexts (the largest attention workspace);
    // each step then sets its own lengths.
    StepBatch widest = b;
    for (size_t s = 0; s < widest.sequences(); ++s)
        widest.context_lens[s] = widest.max_blocks * m_o.block_size - widest.query_lens[s];
    // Placeholder block ids (the plan's own are set per step): distinct while the cache has room.
    for (size_t i = 0; i < widest.block_table.size(); ++i)
        widest.block_table[i] = static_cast<int64_t>(i % static_cast<size_t>(std::max<int64_t>(1, num_blocks)));
    StepGraphOptions go;
    go.elem = m_c.torch_dtype == "bfloat16" ? ref::ElemType::Bfloat16 : ref::ElemType::Float16;
    go.block_size = m_o.block_size;
    go.num_blocks = num_blocks;
    go.rope_positions = m_positions;
    go.sample = m_sample;
    go.quant = m_o.quant;
    go.ep_ranks = m_o.ep_ranks;
    go.ep_rank = m_o.ep_rank;
    go.first_layer = m_o.first_layer;
    go.end_layer = end_layer();
    // One stream: the step is a chain, and a captured model runs on one stream.
    graph::CompileOptions opt = m_o.compile;
    opt.streams = 1;
    if (m_o.ep_ranks > 1) opt.passes.erase("dce");  // the experts' outputs leave by the combine's copies
    graph::Graph g = build_step_graph(m_c, widest, go);
    std::vector<std::vector<int64_t>> shapes;
    for (int id : g.inputs) shapes.push_back(graph::concrete(g.val(id).shape, g.val(id).name));
    auto plan = graph::compile(g, shapes, m_dev, opt);
    ++m_compilations;
    m_compile_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return plan;
}

LlmRun::Bucket& LlmRun::bucket(const StepBatch& b) {
    const std::string key = bucket_key(b);
    Bucket& bk = m_buckets[key];
    if (!bk.plan && m_shape_keys) {
        // Shape keys: the plan serves every split and length of its shape, so its attention
        // workspace is sized at the longest contexts the RoPE table allows.
        StepBatch wide = b;
        wide.max_blocks = KvCache::blocks_for(m_positions, m_o.block_size);
        wide.block_table.assign(static_cast<size_t>(wide.max_blocks) * wide.sequences(), 0);
        bk.plan = compile(wide, m_mem.kv_blocks);
    } else if (!bk.plan) {
        bk.plan = compile(b, m_mem.kv_blocks);
    }
    if (m_live != key) {
        // One loaded plan at a time: lengths only grow, so a left bucket is not revisited.
        if (!m_live.empty() && m_buckets[m_live].ex) {
            m_buckets[m_live].ex->unload();
            m_buckets[m_live].ex.reset();
        }
        bk.ex = std::make_unique<graph::Executor>(*m_rt, *bk.plan);
        bk.ex->skip_kernels(m_o.follower);
        if (m_after_op) {
            const graph::Executor* ex = bk.ex.get();
            const graph::Plan* plan = bk.plan.get();
            bk.ex->on_step([this, ex, plan](size_t s) { m_after_op(plan->steps[s], *ex); });
        }
        for (const auto& [name, addr] : m_addr) bk.ex->bind(name, addr);
        bk.ex->load();
        if (m_o.watch) {
            const graph::Plan* plan = bk.plan.get();
            bk.ex->watch_steps([this, plan](size_t s, const std::vector<ref::HostTensor>& outs) { m_o.watch(*plan, s, outs); });
        }
        bk.host_attr_steps.clear();
        ref::Attrs scratch;
        for (size_t s = 0; s < bk.plan->steps.size(); ++s)
            if (bk.plan->steps[s].op && set_host_attrs(bk.plan->steps[s].name, bk.plan->steps[s].op_type, scratch, m_c, b, m_o.block_size))
                bk.host_attr_steps.push_back(s);
        m_live = key;
    }
    return bk;
}

}  // namespace sfumato::llm
