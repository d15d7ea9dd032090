// A serving instance over several chips (runtime/serve/serve_run.h): tensor-parallel ranks
// (runtime/llm/parallel.h's TpRun) or pipeline stages, each of one or more TP ranks
// (runtime/llm/pipeline.h's PpRun). Chip 0 (stage 0, rank 0) runs the scheduler and posts every
// step to the other chips (tp_lockstep.h); each runs the same step on its shard and its layers.
// With stages, a later stage's step waits on its stream for the activations the previous stage
// sends over the links once its last layer is issued (PpRun's hooks, installed by join_chip), so
// the step's kernels run stage after stage, the step ending at the last stage's read-back. With
// several batches in flight (serve.pp_batches_in_flight) chip 0 posts the next step once its own
// part of the previous one is done (ChipStepTimer::submit), and each chip runs the posted steps
// in order, so the stages work on different steps at once.
#include <algorithm>

#include "runtime/serve/chip_timer.h"
#include "runtime/serve/serve_run.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::serve {

void ServeRun::make_parallel(const llm::ModelConfig& c, const llm::RunOptions& ro,
                             const std::vector<DeviceInfo>& devs) {
    if (ro.import_weights)
        throw InputError(m_s.pp > 1 ? "serve.pp: a pipeline-parallel instance shares no chip's weights"
                                    : "serve.tp: a tensor-parallel instance shares no chip's weights");
    if (m_s.pp <= 1) {
        llm::TpOptions t;
        t.tp = m_s.tp;
        t.comm_buffer_bytes = m_s.comm_buffer_bytes;
        t.mirror = m_s.tp_mirror;
        try {
            m_tp = std::make_unique<llm::TpRun>(c, ro, t, devs);
        } catch (const InputError& e) {
            throw InputError("serve.tp " + std::to_string(m_s.tp) + ": " + e.what());
        }
        m_run = &m_tp->rank(0);
        m_lock = std::make_unique<TpLockstep>(devs.size() - 1);
        return;
    }
    llm::PpOptions p;
    p.pp = m_s.pp;
    p.tp = std::max<int64_t>(1, m_s.tp);
    p.microbatches = 1;  // a serving step is one batch (one in flight: see docs/serve.md)
    p.mirror = m_s.tp_mirror;
    p.comm_buffer_bytes = m_s.comm_buffer_bytes;
    // The receive buffers hold the widest padded step the policy can form: a budget's prompt
    // tokens and its decodes (continuous), or a whole batch of the longest requests (static,
    // dynamic).
    const SchedulerOptions& o = m_s.sched;
    const int64_t len = ro.prefill + ro.decode + 1;
    const int64_t budget = o.max_num_batched_tokens;
    int64_t widest = shape_bucket(budget) + shape_bucket(std::min(o.max_num_seqs, budget));
    if (o.policy != Policy::Continuous)
        widest = std::max(widest, shape_bucket(o.max_batch * len) + o.max_batch);
    p.max_step_tokens = widest;
    try {
        m_pp = std::make_unique<llm::PpRun>(c, ro, p, devs);
    } catch (const InputError& e) {
        throw InputError("serve.pp " + std::to_string(m_s.pp) + ": " + e.what());
    }
    m_run = &m_pp->chip(0);
    m_lock = std::make_unique<TpLockstep>(devs.size() - 1);
}

llm::LlmRun& ServeRun::chip_run(uint32_t r) {
    if (m_pp) return m_pp->chip(r);
    if (m_tp) return m_tp->rank(r);
    return *m_run;
}

const llm::LlmRun& ServeRun::chip_engine(uint32_t r) const {
    if (m_pp) return m_pp->chip(r);
    if (m_tp) return m_tp->rank(r);
    return *m_run;
}

void ServeRun::join(uint32_t rank, rt::Runtime& rt, comm::Communicator* comm) {
    if (m_tp) m_tp->join_rank(rank, rt, comm);
    if (m_pp) m_pp->join_chip(rank, rt, comm);
}

void ServeRun::run_follower(uint32_t rank, rt::Runtime& rt, const std::function<void()>& after_start) {
    const uint32_t chips = m_pp   ? static_cast<uint32_t>(m_pp->chips())
                           : m_tp ? static_cast<uint32_t>(m_tp->tp())
                                  : 1;
    if (!m_lock || rank == 0 || rank >= chips)
        throw SimError(kExitFailure,
                       "serve: chip " + std::to_string(rank) + " is not a follower of this instance");
    llm::LlmRun& run = chip_run(rank);
    if (!m_pp) run.start(rt);  // a stage started when it joined
    if (after_start) after_start();
    const size_t f = rank - 1;
    for (;;) {
        const TpLockstep::Work& w = m_lock->next(f);
        if (w.kind == TpLockstep::Kind::Stop) break;
        const uint64_t begin = now_tick().v;
        if (w.kind == TpLockstep::Kind::Swap) {
            const uint64_t bytes = swap_kv(run, rt, w.swap_out, w.swap_in);
            m_lock->finished(f, begin, now_tick().v, bytes);
            continue;
        }
        const llm::StepRecord& r = run.step_batch(rt, w.batch, w.prefill);
        m_lock->finished(f, r.begin_ps, r.begin_ps + r.ps);
    }
}

namespace {

// Time during which at least two of the stages' kernels ran (each stage's spans disjoint).
uint64_t overlap_ps(const std::vector<std::vector<std::pair<uint64_t, uint64_t>>>& stages) {
    std::vector<std::pair<uint64_t, int>> ev;
    for (const auto& spans : stages)
        for (const auto& [b, e] : spans) ev.insert(ev.end(), {{b, 1}, {e, -1}});
    std::sort(ev.begin(), ev.end());  // at one instant the ends (-1) first
    uint64_t total = 0, from = 0;
    int running = 0;
    for (const auto& [t, d] : ev) {
        if (running >= 2) total += t - from;
        from = t;
        running += d;
    }
    return total;
}

}  // namespace

// The stages: each chip's layers, memory plan and what it sent to the next stage; the time the
// stages' kernels overlapped (their rank 0's).
nlohmann::json ServeRun::pipeline_json() const {
    nlohmann::json j = {{"pp", m_pp->pp()}, {"tp", m_pp->tp()}, {"batches_in_flight", m_s.batches_in_flight()}};
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> stage_spans;
    j["chips"] = nlohmann::json::array();
    for (uint32_t i = 0; i < m_pp->chips(); ++i) {
        const llm::LlmRun& r = m_pp->chip(i);
        const llm::MemoryPlan& mp = r.memory();
        const llm::PpRun::ChipTraffic t = m_pp->traffic(i);
        const int64_t stage = static_cast<int64_t>(i) / m_pp->tp();
        if (static_cast<int64_t>(i) % m_pp->tp() == 0) stage_spans.push_back(t.kernel_spans);
        j["chips"].push_back({{"chip", i},
                              {"stage", stage},
                              {"rank", static_cast<int64_t>(i) % m_pp->tp()},
                              {"first_layer", r.first_layer()},
                              {"end_layer", r.end_layer()},
                              {"embedding", stage == 0},
                              {"head", r.has_head()},
                              {"weights", mp.weights},
                              {"kv", mp.kv},
                              {"kv_blocks", mp.kv_blocks},
                              {"kv_block_bytes", mp.kv_block_bytes},
                              {"activations", mp.activations},
                              {"reserved", mp.reserved},
                              {"free", mp.free},
                              {"sends", t.sends},
                              {"sent_bytes", t.sent_bytes},
                              {"send_ms", static_cast<double>(t.send_ps) * 1e-9},
                              {"kernel_ms", static_cast<double>(t.kernel_ps) * 1e-9},
                              {"all_reduces", t.all_reduces}});
    }
    j["recv_bytes"] = m_pp->recv_bytes();
    j["stages_overlap_ms"] = static_cast<double>(overlap_ps(stage_spans)) * 1e-9;
    return j;
}

}  // namespace sfumato::serve
