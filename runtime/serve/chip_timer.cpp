// The chip's step timer (runtime/serve/chip_timer.h).
#include "runtime/serve/chip_timer.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "runtime/llm/step_graph.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::serve {

int64_t shape_bucket(int64_t n) {
    if (n <= 1) return 1;
    if (n <= 8) return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(n)));
    const int lg = std::bit_width(static_cast<uint64_t>(n)) - 1;
    const int64_t g = std::max<int64_t>(8, int64_t{1} << std::max(0, lg - 3));
    return (n + g - 1) / g * g;
}

llm::StepBatch step_shape(const std::vector<StepItem>& items, int64_t block_size, int64_t scratch, bool pad) {
    llm::StepBatch b;
    std::vector<std::vector<int64_t>> rows;
    int64_t prefill = 0, decodes = 0;
    for (const StepItem& it : items) {
        const int64_t need = (it.context + it.tokens + block_size - 1) / block_size;
        if (static_cast<int64_t>(it.blocks.size()) < need)
            throw SimError(kExitFailure, "serve: request " + std::to_string(it.request) + " holds " +
                                             std::to_string(it.blocks.size()) + " KV blocks, its step needs " +
                                             std::to_string(need));
        b.query_lens.push_back(it.tokens);
        b.context_lens.push_back(it.context);
        rows.emplace_back(it.blocks.begin(), it.blocks.begin() + need);
        if (it.prefill) prefill += it.tokens;
        else ++decodes;
    }
    if (pad) {
        auto add = [&](int64_t q) {
            b.query_lens.push_back(q);
            b.context_lens.push_back(0);
            rows.emplace_back(static_cast<size_t>((q + block_size - 1) / block_size), scratch);
        };
        if (prefill > 0 && shape_bucket(prefill) > prefill) add(shape_bucket(prefill) - prefill);
        if (decodes > 0)
            for (int64_t d = decodes; d < shape_bucket(decodes); ++d) add(1);
    }
    for (const auto& r : rows) b.max_blocks = std::max<int64_t>(b.max_blocks, static_cast<int64_t>(r.size()));
    for (const auto& r : rows) {
        b.block_table.insert(b.block_table.end(), r.begin(), r.end());
        b.block_table.insert(b.block_table.end(), static_cast<size_t>(b.max_blocks) - r.size(), -1);
    }
    return b;
}

ChipStepTimer::ChipStepTimer(llm::LlmRun& run, rt::Runtime& rt, int64_t scratch, bool pad)
    : m_run(run), m_rt(rt), m_scratch(scratch), m_pad(pad), m_t0(now_tick().v) {}

void ChipStepTimer::observe(std::function<void(const llm::StepBatch&, size_t, const llm::StepRecord&)> f) {
    m_observe = std::move(f);
    m_run.on_step([this](const llm::StepRecord& r) {
        if (m_observe) m_observe(m_batch, m_real, r);
    });
}

uint64_t swap_kv(llm::LlmRun& run, rt::Runtime& rt, int64_t out_tokens, int64_t in_tokens) {
    const llm::ModelConfig& c = run.config();
    rt::Context& ctx = rt.context();
    const rt::StreamId s = rt.default_stream().id;
    for (const auto& [tokens, dir] : {std::pair{out_tokens, CopyDir::D2H}, std::pair{in_tokens, CopyDir::H2D}}) {
        if (tokens <= 0) continue;
        const uint64_t bytes = static_cast<uint64_t>(tokens) * static_cast<uint64_t>(c.kv_size()) * 2;  // 16-bit
        for (int64_t l = run.first_layer(); l < run.end_layer(); ++l)
            for (const char* kind : {"k_cache", "v_cache"}) {
                const uint64_t dev = run.address(llm::layer_tensor(l, kind));
                // Timing mode: the host side is a token (no host buffer).
                const rt::Status st = dir == CopyDir::D2H ? ctx.copy_explicit(dir, 0, dev, bytes, s, true, true)
                                                          : ctx.copy_explicit(dir, dev, 0, bytes, s, true, true);
                if (st != rt::Status::Ok) throw SimError(kExitFailure, "serve: KV swap copy: " + ctx.last_error());
            }
    }
    if (ctx.stream_synchronize(s) != rt::Status::Ok) throw SimError(kExitFailure, "serve: KV swap: " + ctx.last_error());
    return static_cast<uint64_t>(out_tokens + in_tokens) * static_cast<uint64_t>(c.kv_size()) * 2 * 2 *
           static_cast<uint64_t>(run.end_layer() - run.first_layer());
}

double ChipStepTimer::swap_seconds(int64_t out_tokens, int64_t in_tokens) {
    const uint64_t t0 = now_tick().v;
    if (m_lock) {
        TpLockstep::Work w;
        w.kind = TpLockstep::Kind::Swap;
        w.swap_out = out_tokens;
        w.swap_in = in_tokens;
        m_lock->post(std::move(w));
    }
    // Every chip copies its shard's (its KV heads of its stage's layers).
    m_n.swap_bytes += swap_kv(m_run, m_rt, out_tokens, in_tokens);
    uint64_t end = now_tick().v;
    if (m_lock) {
        end = std::max(end, m_lock->wait_followers().second);
        m_n.swap_bytes += m_lock->take_swap_bytes();
    }
    return static_cast<double>(end - t0) * 1e-12;
}

void ChipStepTimer::begin_step(double now_s) {
    const uint64_t target = m_t0 + static_cast<uint64_t>(now_s * 1e12 + 0.5);
    const uint64_t now = now_tick().v;
    // Whole nanoseconds: the runtime's host delay resolution.
    if (target >= now + 1000) {
        const uint64_t ns = (target - now) / 1000;
        m_rt.context().host_delay_ns(ns);
        m_n.idle_s += static_cast<double>(ns) * 1e-9;
    }
}

// The step's padded batch (counted), and whether it computes prompt tokens.
llm::StepBatch ChipStepTimer::shaped(const std::vector<StepItem>& batch, bool& prefill) {
    llm::StepBatch b = step_shape(batch, m_run.options().block_size, m_scratch, m_pad);
    prefill = false;
    int64_t tokens = 0;
    for (const StepItem& it : batch) {
        prefill = prefill || it.prefill;
        tokens += it.tokens;
    }
    m_n.tokens += tokens;
    m_n.sequences += static_cast<int64_t>(batch.size());
    m_n.padded_tokens += b.tokens() - tokens;
    m_n.padded_sequences += static_cast<int64_t>(b.sequences() - batch.size());
    ++m_n.steps;
    if (m_observe) {
        m_batch = b;
        m_real = batch.size();
    }
    return b;
}

double ChipStepTimer::step_seconds(const std::vector<StepItem>& batch) {
    bool prefill = false;
    llm::StepBatch b = shaped(batch, prefill);
    StepTimes::Given check;
    StepKey key = m_lock ? StepKey{} : step_key(b);
    // Whether the engine's loaded plan is this shape's (the last simulated step's shape) changes
    // the step's time (the kernels' code and the L2 as the previous step left them), so it is part
    // of the shape.
    const std::string bare = key.shape;
    key.shape += bare == m_last_shape ? "|same" : "|switched";
    if (!m_lock) {
        const StepTimes::Given g = m_times.decide(key, &check);
        if (g.kind != StepTimes::Kind::None) {
            // Re-used: the host waits out the step's time (whole nanoseconds; begin_step aligns
            // the next step to the scheduler's clock).
            const uint64_t ns = static_cast<uint64_t>(std::llround(g.seconds * 1e9));
            if (ns > 0) m_rt.context().host_delay_ns(ns);
            return g.seconds;
        }
    }
    if (m_lock) {
        TpLockstep::Work w;
        w.kind = TpLockstep::Kind::Step;
        w.batch = b;
        w.prefill = prefill;
        m_lock->post(std::move(w));
    }
    const llm::StepRecord& r = m_run.step_batch(m_rt, std::move(b), prefill);
    if (!m_lock) {
        const double s = static_cast<double>(r.ps) * 1e-12;
        m_times.simulated(key, s, check);
        m_last_shape = bare;
        return s;
    }
    // The step ends when its slowest rank's does (the ranks' all-reduces join them).
    const auto [begin, end] = m_lock->wait_followers();
    return static_cast<double>(std::max(end, r.begin_ps + r.ps) - std::min(begin, r.begin_ps)) * 1e-12;
}


double ChipStepTimer::submit(const std::vector<StepItem>& batch) {
    if (!m_lock) throw SimError(kExitFailure, "serve: submit without the instance's other chips");
    bool prefill = false;
    llm::StepBatch b = shaped(batch, prefill);
    TpLockstep::Work w;
    w.kind = TpLockstep::Kind::Step;
    w.batch = b;
    w.prefill = prefill;
    const size_t n = m_lock->post(std::move(w));
    const llm::StepRecord& r = m_run.step_batch(m_rt, std::move(b), prefill);
    m_posted.push_back({n, r.begin_ps + r.ps});
    return static_cast<double>(now_tick().v - m_t0) * 1e-12;
}

bool ChipStepTimer::retire(double until_s, double& exit_s) {
    if (m_posted.empty()) throw SimError(kExitFailure, "serve: no step in flight to retire");
    const Posted p = m_posted.front();
    // No limit past what the clock can count (an arrival beyond ~200 days).
    const double ps = std::max(0.0, until_s) * 1e12 + 0.5;
    const uint64_t until = ps < 1.8e19 - static_cast<double>(m_t0) ? m_t0 + static_cast<uint64_t>(ps) : UINT64_MAX;
    if (!m_lock->wait_work(p.work, until)) return false;
    m_posted.pop_front();
    const uint64_t end = std::max(m_lock->take(p.work).second, p.end_ps);
    exit_s = static_cast<double>(end - m_t0) * 1e-12;
    return true;
}

}  // namespace sfumato::serve
