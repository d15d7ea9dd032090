// The LLM run's host program (see engine.h): places the weights, the RoPE table and the KV cache,
// then runs the request's prefill and decode steps (or a caller's ragged steps) through the step
// plans engine.cpp compiled, and records each step's kernels for the summary and trace.json.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "isa/dtype.h"
#include "runtime/llm/engine.h"
#include "runtime/llm/host_util.h"
#include "runtime/ops/node_op.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "sim/trace.h"

namespace sfumato::llm {

namespace {

using util::align_up;
using util::elem_bytes;
using util::kAlign;

const std::vector<float>& host_weight(const ModelWeights& w, const std::string& name) {
    if (name == "embed") return w.embed;
    if (name == "final_norm") return w.final_norm;
    if (name == "lm_head") return w.lm_head;
    const int64_t l = node_layer(name);
    if (l < 0 || static_cast<size_t>(l) >= w.layers.size()) throw InputError("llm: no host weight '" + name + "'");
    const LayerWeights& L = w.layers[static_cast<size_t>(l)];
    const std::string r = node_role(name);
    if (r == "ln1") return L.ln1;
    if (r == "ln2") return L.ln2;
    if (r == "wqkv") return L.wqkv;
    if (r == "bqkv") return L.bqkv;
    if (r == "wo") return L.wo;
    if (r == "w_gate_up") return L.w_gate_up;
    if (r == "w_down") return L.w_down;
    if (r == "router") return L.router;
    if (r == "e_gate_up") return L.e_gate_up;
    if (r == "e_down") return L.e_down;
    throw InputError("llm: no host weight '" + name + "'");
}

std::vector<uint8_t> device_bytes(const std::vector<float>& v, ref::ElemType e) {
    std::vector<uint8_t> b(v.size() * 2);
    for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t h = e == ref::ElemType::Bfloat16 ? isa::f32_to_bf16(v[i]) : isa::f32_to_f16(v[i]);
        b[2 * i] = static_cast<uint8_t>(h & 0xff);
        b[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
    return b;
}


// The device image of external weight `name` (functional runs): the host values in the model's
// dtype, or under W8A8 the int8 weight / its fp32 "_scale" from the per-channel quantisation.
std::vector<uint8_t> weight_image(const ModelWeights& w, const std::string& name, ref::ElemType e,
                                  const std::vector<int64_t>& shape, ref::ElemType model) {
    const bool scale = name.ends_with("_scale");
    if (e != ref::ElemType::Int8 && !scale) return device_bytes(host_weight(w, name), model);
    // An int8 weight is [K, N]; its scales are [N].
    const std::vector<float>& f = host_weight(w, scale ? name.substr(0, name.size() - 6) : name);
    const int64_t N = shape.back(), K = static_cast<int64_t>(f.size()) / std::max<int64_t>(1, N);
    const QuantizedMatrix m = quantize_weight(f, K, N);
    std::vector<uint8_t> b(scale ? 4 * m.scale.size() : m.q.size());
    if (scale) std::memcpy(b.data(), m.scale.data(), b.size());
    else std::memcpy(b.data(), m.q.data(), b.size());
    return b;
}
}  // namespace

void LlmRun::place(rt::Runtime& rt) {
    const bool functional = rt.functional();
    const ref::ElemType elem = m_c.torch_dtype == "bfloat16" ? ref::ElemType::Bfloat16 : ref::ElemType::Float16;
    if (functional && !m_o.weights) throw InputError("llm: a functional run needs host weights");
    rt::Context& ctx = rt.context();
    ctx.set_untimed(true);
    uint64_t wbase = 0;
    if (m_o.import_weights) {
        if (functional) throw InputError("llm: shared weights (import_weights) are a timing-mode option");
        if (ctx.import_handle(m_o.import_weights(), &wbase) != rt::Status::Ok) throw InputError(ctx.last_error());
    } else {
        wbase = rt.malloc(m_mem.weights);
    }
    m_weights_base = wbase;
    uint64_t off = 0;
    for (const auto& [name, shape, e] : m_weight_shapes) {
        uint64_t n = 1;
        for (int64_t d : shape) n *= static_cast<uint64_t>(d);
        m_addr[name] = wbase + off;
        if (functional) {
            const std::vector<uint8_t> b = name == "rope_cos_sin" ? device_bytes(rope_cos_sin(m_c, m_positions), elem)
                                                                  : weight_image(*m_o.weights, name, e, shape, elem);
            if (b.size() != n * elem_bytes(e)) throw InputError("llm: host weight '" + name + "' has the wrong size");
            if (ctx.write_untimed(wbase + off, b.data(), b.size()) != rt::Status::Ok) throw InputError(ctx.last_error());
        }
        off += align_up(elem_bytes(e) * n, kAlign);
    }
    for (const auto& b : m_buffers) m_addr[b.first] = rt.malloc(b.second);
    const uint64_t per = m_mem.kv / static_cast<uint64_t>(2 * (end_layer() - m_o.first_layer));
    for (int64_t l = m_o.first_layer; l < end_layer(); ++l) {
        m_addr[layer_tensor(l, "k_cache")] = rt.malloc(per);
        m_addr[layer_tensor(l, "v_cache")] = rt.malloc(per);
    }
    ctx.set_untimed(false);
}

// Phase, layer and op tracks above the runtime's task and pipe tracks (trace level op or finer).
void LlmRun::emit_trace(rt::Runtime& rt, const StepRecord& r, size_t index) {
    TraceHub* hub = rt.device().trace();
    if (!hub || !hub->on(TraceLevel::Op) || r.ops.empty()) return;
    ITraceSink& sink = *hub->sink();
    const TrackId phase = sink.track("llm", "phase", 40), layer = sink.track("llm", "layer", 41),
                  op = sink.track("llm", "op", 42);
    sink.slice_str(phase, r.prefill ? "prefill" : "decode " + std::to_string(index - 1), Tick(r.begin_ps),
                   Tick(r.begin_ps + r.ps), nullptr, 0);
    int64_t cur = -2;
    Tick lb{0}, le{0};
    auto close = [&] {
        if (cur >= -1) sink.slice_str(layer, cur < 0 ? "head" : "layer " + std::to_string(cur), lb, le, nullptr, 0);
    };
    for (const StepOp& o : r.ops) {
        Tick b = o.tasks.front()->start_tick, e = o.tasks.front()->end_tick;
        for (const auto& t : o.tasks) {
            b = Tick(std::min(b.v, t->start_tick.v));
            e = Tick(std::max(e.v, t->end_tick.v));
        }
        sink.slice_str(op, o.name + " (" + o.op_type + ")", b, e, nullptr, 0);
        const int64_t l = node_layer(o.name);
        if (l != cur) {
            close();
            cur = l;
            lb = b;
            le = e;
        }
        le = Tick(std::max(le.v, e.v));
    }
    close();
}

std::vector<int64_t> LlmRun::run_step(rt::Runtime& rt, bool prefill, StepBatch b, const std::vector<size_t>& seqs) {
    for (size_t i = 0; i < seqs.size(); ++i) m_kv->reserve(seqs[i], b.context_lens[i] + b.query_lens[i]);
    b.block_table = m_kv->table(seqs, b.max_blocks);
    return execute(rt, prefill, std::move(b));
}

bool LlmRun::refresh(Bucket& bk, const StepBatch& b) {
    std::vector<std::pair<size_t, ops::NodeDesc>> fresh;
    for (size_t s : bk.host_attr_steps) {
        const graph::PlanStep& st = bk.plan->steps[s];
        ops::NodeDesc d = st.desc;
        set_host_attrs(st.name, st.op_type, d.attrs, m_c, b, m_o.block_size);
        fresh.emplace_back(s, std::move(d));
    }
    std::vector<std::shared_ptr<ops::INodeOp>> made;
    for (const auto& [s, d] : fresh) {
        made.push_back(std::shared_ptr<ops::INodeOp>(ops::make_node_op(d, m_dev)));
        const graph::PlanStep& st = bk.plan->steps[s];
        const uint64_t placed = st.workspace >= 0 ? bk.plan->tensors[static_cast<size_t>(st.workspace)].bytes : 0;
        if (made.back()->workspace_bytes() > placed) return false;
    }
    for (size_t i = 0; i < fresh.size(); ++i) {
        graph::PlanStep& st = bk.plan->steps[fresh[i].first];
        st.desc = std::move(fresh[i].second);
        st.op = made[i];
        bk.ex->refresh_step(fresh[i].first);
    }
    return true;
}

const StepRecord& LlmRun::step_batch(rt::Runtime& rt, StepBatch b, bool prefill) {
    const size_t n = b.sequences();
    if (n == 0 || b.context_lens.size() != n || b.max_blocks < 1 ||
        b.block_table.size() != static_cast<size_t>(b.max_blocks) * n || (!b.ids.empty() && b.ids.size() != static_cast<size_t>(b.tokens())))
        throw InputError("llm: malformed step batch (lengths, block table or ids do not agree)");
    for (size_t s = 0; s < n; ++s) {
        const int64_t q = b.query_lens[s], ctx = b.context_lens[s];
        if (q < 1 || ctx < 0 || ctx + q > m_positions || KvCache::blocks_for(ctx + q, m_o.block_size) > b.max_blocks)
            throw InputError("llm: step sequence " + std::to_string(s) + " (" + std::to_string(q) + " new tokens after " +
                             std::to_string(ctx) + ") reaches past its block table or the " + std::to_string(m_positions) +
                             " positions of the RoPE table");
    }
    for (int64_t id : b.block_table)
        if (id < -1 || id >= m_mem.kv_blocks)
            throw InputError("llm: block " + std::to_string(id) + " is not one of the cache's " + std::to_string(m_mem.kv_blocks));
    m_shape_keys = !rt.functional();
    execute(rt, prefill, std::move(b));
    return m_steps.back();
}

std::vector<int64_t> LlmRun::execute(rt::Runtime& rt, bool prefill, StepBatch b) {
    const std::vector<int64_t>& ids = b.ids;
    for (size_t s = 0; s < b.sequences(); ++s)
        for (int64_t i = 0; i < b.query_lens[s]; ++i) b.positions.push_back(b.context_lens[s] + i);
    if (!rt.functional() && m_c.moe()) {
        if (m_o.route) m_o.route(b, m_steps.size());
        else b.experts = draw_routing(b.tokens());
    }
    // Serving switches between many plans: a server keeps its graphs loaded, so loading one here
    // is setup, untimed.
    rt::Context& rctx = rt.context();
    const bool was_untimed = rctx.untimed();
    if (m_shape_keys) rctx.set_untimed(true);
    Bucket* bk0 = &bucket(b);
    if (!refresh(*bk0, b)) {
        // Compiled from a batch of another split: compile it again from this one.
        const std::string key = bucket_key(b);
        if (bk0->ex) bk0->ex->unload();
        m_buckets.erase(key);
        m_live.clear();
        ++m_recompiled;
        bk0 = &bucket(b);
        if (!refresh(*bk0, b)) throw InputError("llm: a step's attention needs more workspace than its own plan placed");
    }
    rctx.set_untimed(was_untimed);
    Bucket& bk = *bk0;
    const int64_t T = b.tokens();
    ref::HostTensor tok(ref::ElemType::Int64, {T}), pos(ref::ElemType::Int64, {T});
    int64_t t = 0;
    for (size_t s = 0; s < b.sequences(); ++s)
        for (int64_t i = 0; i < b.query_lens[s]; ++i, ++t) {
            if (!ids.empty()) tok.data[static_cast<size_t>(t)] = static_cast<double>(ids[static_cast<size_t>(t)]);
            pos.data[static_cast<size_t>(t)] = static_cast<double>(b.context_lens[s] + i);
        }
    StepRecord rec;
    rec.prefill = prefill;
    rec.tokens = T;
    if (m_before_step) m_before_step();
    rec.begin_ps = now_tick().v;
    std::vector<ref::HostTensor> in;
    if (m_o.first_layer == 0) in.push_back(tok);
    in.push_back(pos);
    rec.captured = m_captured;
    if (m_captured) {
        rt::Context& ctx = rt.context();
        rt::ModelId model = 0;
        auto check = [&](rt::Status st) {
            if (st != rt::Status::Ok) throw InputError(ctx.last_error());
        };
        check(ctx.capture_begin(rt.default_stream().id));
        bk.ex->issue(in);
        check(ctx.capture_end(rt.default_stream().id, &model));
        check(ctx.model_launch(model, rt.default_stream().id));
        rt.synchronize_device();
    } else {
        bk.ex->run(in);
    }
    // A stage before the last sends its outputs to the next stage (the after_op hook), not home.
    const std::vector<ref::HostTensor> out = has_head() ? bk.ex->outputs() : std::vector<ref::HostTensor>{};
    rec.ps = now_tick().v - rec.begin_ps;
    const graph::Plan& p = *bk.plan;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const auto& tasks = bk.ex->step_tasks()[s];
        if (tasks.empty()) continue;
        StepOp op;
        op.name = p.steps[s].name;
        op.op_type = p.steps[s].op_type;
        if (!p.steps[s].out.empty() && p.steps[s].out[0] >= 0) op.shape = p.tensors[static_cast<size_t>(p.steps[s].out[0])].ref.shape;
        op.tasks = tasks;
        rec.ops.push_back(std::move(op));
    }
    m_steps.push_back(std::move(rec));
    emit_trace(rt, m_steps.back(), m_steps.size() - 1);
    if (m_on_step) m_on_step(m_steps.back());
    if (!m_o.keep_step_ops) m_steps.back().ops.clear();
    // Next tokens: sampled on the device, or the argmax of the logits read back.
    if (!has_head()) return {};
    std::vector<int64_t> next(b.sequences(), 0);
    if (!rt.functional()) {
        // Timing mode has no logits: the next ids (which rows the embedding reads) are a seeded draw.
        for (int64_t& t : next) t = static_cast<int64_t>(m_rng() % static_cast<uint64_t>(m_c.vocab_size));
        return next;
    }
    const ref::HostTensor& o = out.at(0);
    for (int64_t s = 0; s < static_cast<int64_t>(b.sequences()); ++s) {
        if (m_sample) {
            next[static_cast<size_t>(s)] = static_cast<int64_t>(o.data[static_cast<size_t>(s)]);
            continue;
        }
        const size_t V = static_cast<size_t>(m_c.vocab_size), base = static_cast<size_t>(s) * V;
        size_t best = 0;
        for (size_t v = 1; v < V; ++v)
            if (o.data[base + v] > o.data[base + best]) best = v;
        next[static_cast<size_t>(s)] = static_cast<int64_t>(best);
    }
    return next;
}

std::vector<std::vector<int64_t>> LlmRun::draw_routing(int64_t tokens) {
    // Timing mode has no router output: each token's experts_per_token experts are a seeded
    // uniform draw without replacement, per layer and step (a partial Fisher-Yates shuffle).
    const int64_t E = m_c.num_experts, K = m_c.experts_per_token;
    std::vector<std::vector<int64_t>> r(static_cast<size_t>(m_c.num_layers));
    std::vector<int64_t> deck(static_cast<size_t>(E));
    for (auto& layer : r) {
        layer.reserve(static_cast<size_t>(tokens * K));
        for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t e = 0; e < E; ++e) deck[static_cast<size_t>(e)] = e;
            for (int64_t j = 0; j < K; ++j) {
                const int64_t pick = j + static_cast<int64_t>(m_route_rng() % static_cast<uint64_t>(E - j));
                std::swap(deck[static_cast<size_t>(j)], deck[static_cast<size_t>(pick)]);
                layer.push_back(deck[static_cast<size_t>(j)]);
            }
        }
    }
    return r;
}

void LlmRun::start(rt::Runtime& rt) {
    m_rt = &rt;
    place(rt);
}

uint64_t LlmRun::export_weights(rt::Runtime& rt) {
    rt::Context& ctx = rt.context();
    uint64_t handle = 0;
    ctx.set_untimed(true);
    const rt::Status st = ctx.export_handle(m_weights_base, &handle);
    ctx.set_untimed(false);
    if (st != rt::Status::Ok) throw InputError("llm: exporting the weights: " + ctx.last_error());
    return handle;
}

std::vector<int64_t> LlmRun::step(rt::Runtime& rt, bool prefill, const std::vector<size_t>& seqs, int64_t q,
                                  int64_t ctx, std::vector<int64_t> ids) {
    StepBatch b = batch_for(seqs.size(), q, ctx);
    b.ids = std::move(ids);
    return run_step(rt, prefill, std::move(b), seqs);
}

void LlmRun::run(rt::Runtime& rt) {
    m_rt = &rt;
    place(rt);
    using GM = RunOptions::GraphMode;
    if (m_o.graph_mode != GM::Captured) run_request(rt, false);
    if (m_o.graph_mode == GM::Both)
        for (int64_t s = 0; s < m_o.batch; ++s) m_kv->release(static_cast<size_t>(s));
    if (m_o.graph_mode != GM::Eager) run_request(rt, true);
}

void LlmRun::run_request(rt::Runtime& rt, bool captured) {
    m_captured = captured;
    m_rng.seed(m_o.seed + 1);
    m_route_rng.seed(m_o.seed + 2);
    const bool record_tokens = m_tokens.empty();
    std::vector<std::vector<int64_t>> tokens(static_cast<size_t>(m_o.batch));
    for (const PrefillStep& p : prefill_steps()) {
        StepBatch b = batch_for(p.count, p.tokens, p.start);
        std::vector<size_t> seqs;
        for (size_t s = p.first; s < p.first + p.count; ++s) {
            seqs.push_back(s);
            const auto& prompt = m_prompts[s];
            b.ids.insert(b.ids.end(), prompt.begin() + p.start, prompt.begin() + p.start + p.tokens);
        }
        const std::vector<int64_t> next = run_step(rt, true, std::move(b), seqs);
        // The first generated token comes from a prompt's last chunk.
        if (p.start + p.tokens == m_o.prefill)
            for (size_t i = 0; i < seqs.size(); ++i) tokens[seqs[i]].push_back(next[i]);
    }
    std::vector<size_t> all;
    for (size_t s = 0; s < static_cast<size_t>(m_o.batch); ++s) all.push_back(s);
    for (int64_t k = 0; k < m_o.decode; ++k) {
        StepBatch b = batch_for(all.size(), 1, m_o.prefill + k);
        for (const auto& t : tokens) b.ids.push_back(t.back());
        const std::vector<int64_t> next = run_step(rt, false, std::move(b), all);
        for (size_t s = 0; s < all.size(); ++s) tokens[s].push_back(next[s]);
    }
    if (record_tokens) m_tokens = std::move(tokens);
}

uint64_t kernel_bytes(const StepRecord& st) {
    uint64_t b = 0;
    for (const auto& op : st.ops)
        for (const auto& t : op.tasks) b += t->kernel.bytes;
    return b;
}

RunTotals run_totals(const std::vector<StepRecord>& steps, bool split_captured) {
    RunTotals r;
    for (const auto& st : steps) {
        PhaseTotals& p = split_captured && st.captured ? r.captured : r.eager;
        if (st.prefill) {
            p.prefill_ps += st.ps;
            ++p.prefill_steps;
        } else {
            p.decode_ps.push_back(st.ps);
            p.decode_bytes += kernel_bytes(st);
        }
    }
    return r;
}

}  // namespace sfumato::llm
