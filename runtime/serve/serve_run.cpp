// The serving host program (runtime/serve/serve_run.h).
#include "runtime/serve/serve_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "sim/trace.h"

namespace sfumato::serve {

ServeParams::ServeParams(const ParamScope& s)
    : policy(s, "policy", "continuous",
             "scheduling policy: continuous (iteration-level, vLLM V1), static, dynamic",
             {"continuous", "static", "dynamic"}),
      max_num_batched_tokens(s, "max_num_batched_tokens", 8192, "tokens",
                             "continuous: new tokens per step, prefill and decode together",
                             {1, int64_t{1} << 20}),
      max_num_seqs(s, "max_num_seqs", 256, "sequences", "continuous: sequences per step", {1, 65536}),
      long_prefill_token_threshold(
          s, "long_prefill_token_threshold", 0, "tokens",
          "continuous: a prompt's new tokens per step at most (chunked prefill; 0: the budget)",
          {0, int64_t{1} << 20}),
      chunked_prefill(s, "chunked_prefill", true, "",
                      "continuous: a prompt longer than the step's budget left is cut to it (off: it waits)"),
      max_batch(s, "max_batch", 8, "requests", "static / dynamic: requests per batch (1: one at a time)",
                {1, 65536}),
      timeout_s(s, "timeout_s", 1.0, "s", "static: the first request's longest wait for a full batch",
                {0, 1e6}),
      window_s(s, "window_s", 0.05, "s", "dynamic: a batch closes this long after its first request arrived",
               {0, 1e6}),
      kv_blocks(s, "kv_blocks", 0, "blocks",
                "KV cache blocks the scheduler's pool holds (0: what kv_mem_fraction of the memory left "
                "gives, less "
                "one scratch block)",
                {0, int64_t{1} << 24}),
      block_size(s, "block_size", 128, "tokens", "KV cache block size (a multiple of 64)", {64, 4096}),
      prefix_caching(s, "prefix_caching", true, "", "share the computed blocks of a request's named prefix"),
      preemption(s, "preemption", "recompute",
                 "continuous: a preempted request's KV is dropped and recomputed (recompute) or copied to "
                 "host memory "
                 "over the host link and back when it resumes (swap)",
                 {"recompute", "swap"}),
      scheduling(s, "scheduling", "fcfs",
                 "which waiting request goes first: fcfs (arrival order; a trace's priorities ignored, as "
                 "vLLM's default) or priority (lower priority values first; preemption takes the least "
                 "urgent, and an urgent request that cannot be admitted preempts less urgent running ones)",
                 {"fcfs", "priority"}),
      watermark(s, "watermark", 0.01, "", "share of the KV pool an admission must leave free", {0, 0.99}),
      max_model_len(
          s, "max_model_len", 0, "tokens",
          "longest prompt + output served (0: the model's max_position_embeddings); longer requests are "
          "rejected",
          {0, int64_t{1} << 24}),
      kv_mem_fraction(s, "kv_mem_fraction", 0.9, "",
                      "share of the memory left after weights and activations for the KV cache", {0.01, 1.0}),
      pad_shapes(
          s, "pad_shapes", true, "",
          "pad each step to a shape bucket (prefill tokens and decode sequences), one plan per bucket"),
      instances(s, "instances", 1, "instances",
                "serving instances on the system (--system; each a whole copy of the model on one chip)",
                {1, 1024}),
      router(
          s, "router", "round_robin",
          "how requests are spread over the instances: round_robin, or least_tokens (the instance with the "
          "fewest tokens still to compute)",
          {"round_robin", "least_tokens"}),
      placement(
          s, "placement", "",
          "each instance's chip, comma-separated (e.g. 0,0,1: two instances on chip 0 sharing its weights); "
          "empty: instance i on chip i mod chips",
          {}),
      prefill_instances(
          s, "prefill_instances", 0, "instances",
          "disaggregated prefill/decode: the first N instances compute prompts and move each request's "
          "KV cache over the links to a decode instance on another chip (0: no disaggregation)",
          {0, 1023}),
      prefill_tp(s, "prefill_tp", 0, "chips",
                 "disaggregated prefill/decode: the prefill instances' tensor-parallel chips (0: serve.tp, the "
                 "decode instances'); each prefill rank sends its KV heads to the decode ranks holding them",
                 {0, 64}),
      tp(s, "tp", 1, "chips",
         "tensor parallelism per instance (--tp N): each instance's model sharded over N chips of the "
         "--system, "
         "Megatron-style as `sfumato llm --tp` (an all-reduce over the links after o_proj and down_proj)",
         {1, 64}),
      pp(s, "pp", 1, "stages",
         "pipeline parallelism per instance (--pp N): each instance's layers in N stages on N groups of "
         "serve.tp chips of the --system, as `sfumato llm --pp` splits them; a step runs through the stages "
         "in turn, the activations over the links",
         {1, 64}),
      pp_batches_in_flight(
          s, "pp_batches_in_flight", 0, "steps",
          "pipeline-parallel instances: steps the scheduler keeps in flight at once, a request in at most "
          "one, so stage 0 starts a step while the later stages run the ones before (0: serve.pp, as "
          "vLLM; 1: each step leaves the last stage before the next is scheduled)",
          {0, 64}),
      step_reuse(
          s, "step_reuse", true, "",
          "a step whose shape was simulated takes its time from the simulated steps (interpolated over "
          "the decodes' summed contexts; a single-chip instance in timing mode with kernel re-use on; "
          "--exact simulates every step)"),
      step_reuse_span(s, "step_reuse_span", 2048, "tokens",
                      "step re-use: the widest gap of the decodes' summed contexts an interpolation bridges",
                      {1, int64_t{1} << 30}),
      step_reuse_check(
          s, "step_reuse_check", 16, "steps",
          "step re-use: every N-th re-usable step is simulated anyway and its deviation measured, N "
          "doubling after every 4 checks (0: none)",
          {0, int64_t{1} << 30}) {}

ServeSetup ServeParams::setup() const {
    ServeSetup u;
    SchedulerOptions& o = u.sched;
    o.policy = parse_policy(policy.get());
    o.max_num_batched_tokens = max_num_batched_tokens;
    o.max_num_seqs = max_num_seqs;
    o.long_prefill_token_threshold = long_prefill_token_threshold;
    o.chunked_prefill = chunked_prefill;
    o.max_batch = max_batch;
    o.timeout_s = timeout_s;
    o.window_s = window_s;
    o.kv_blocks = kv_blocks;
    o.block_size = block_size;
    o.prefix_caching = prefix_caching;
    o.swap = preemption.get() == "swap";
    o.priority = scheduling.get() == "priority";
    o.watermark = watermark;
    o.max_model_len = max_model_len;
    u.kv_mem_fraction = kv_mem_fraction;
    u.pad_shapes = pad_shapes;
    u.instances = instances;
    u.router = router.get();
    u.prefill_instances = prefill_instances;
    u.prefill_tp = prefill_tp;
    u.tp = tp;
    u.pp = pp;
    u.pp_in_flight = pp_batches_in_flight;
    u.step_reuse.on = step_reuse;
    u.step_reuse.span = step_reuse_span;
    u.step_reuse.check_every = step_reuse_check;
    const std::string& pl = placement.get();
    for (size_t at = 0; !pl.empty() && at <= pl.size();) {
        const size_t comma = std::min(pl.find(',', at), pl.size());
        const std::string f = pl.substr(at, comma - at);
        if (f.empty() || f.size() > 6 || f.find_first_not_of("0123456789") != std::string::npos)
            throw InputError("serve.placement '" + pl + "': '" + f + "' is not a chip index (a list such as 0,0,1)");
        u.placement.push_back(static_cast<uint32_t>(std::stoul(f)));
        at = comma + 1;
    }
    if (!u.placement.empty() && static_cast<int64_t>(u.placement.size()) != u.instances)
        throw InputError("serve.placement '" + pl + "' names " + std::to_string(u.placement.size()) +
                         " chips for serve.instances " + std::to_string(u.instances));
    return u;
}

ServeRun::ServeRun(const llm::ModelConfig& c, RequestTrace trace, ServeSetup s, const DeviceInfo& dev,
                   InstanceShare share)
    : ServeRun(c, std::move(trace), std::move(s), std::vector<DeviceInfo>{dev}, std::move(share)) {}

ServeRun::ServeRun(const llm::ModelConfig& c, RequestTrace trace, ServeSetup s,
                   const std::vector<DeviceInfo>& devs, InstanceShare share)
    : m_share(std::move(share)), m_c(c), m_trace(std::move(trace)), m_s(std::move(s)) {
    SchedulerOptions& o = m_s.sched;
    if (o.block_size < 64 || o.block_size % 64)
        throw InputError("serve.block_size " + std::to_string(o.block_size) +
                         " is not a multiple of 64 (the paged-attention kernel's key step)");
    if (m_trace.requests.empty()) throw InputError("serve: the trace '" + m_trace.source + "' has no requests");
    const int64_t reach = c.max_position_embeddings;
    const int64_t len = o.max_model_len > 0 ? o.max_model_len : reach;
    if (len < 2 || len > reach)
        throw InputError("serve.max_model_len " + std::to_string(len) + " is outside [2, " + std::to_string(reach) +
                         "] (the model's max_position_embeddings)");
    llm::RunOptions ro;
    ro.batch = 1;
    ro.prefill = std::min<int64_t>(o.max_num_batched_tokens, len - 1);  // the largest step of the budget
    ro.decode = len - 1 - ro.prefill;                                   // RoPE rows: len
    ro.max_prefill_tokens = o.max_num_batched_tokens;
    ro.block_size = o.block_size;
    ro.kv_blocks = o.kv_blocks > 0 ? o.kv_blocks + 1 : 0;
    ro.kv_mem_fraction = m_s.kv_mem_fraction;
    ro.seed = m_s.seed;
    ro.keep_step_ops = false;
    ro.reserved_bytes = m_share.reserved_bytes;
    ro.import_weights = m_share.import_weights;
    const int64_t chips = std::max<int64_t>(1, m_s.tp) * std::max<int64_t>(1, m_s.pp);
    if (static_cast<int64_t>(devs.size()) != chips)
        throw InputError("serve.tp " + std::to_string(m_s.tp) + " x serve.pp " + std::to_string(m_s.pp) +
                         ": the instance has " + std::to_string(devs.size()) + " chips");
    if (m_s.pp_in_flight > std::max<int64_t>(1, m_s.pp))
        throw InputError("serve.pp_batches_in_flight " + std::to_string(m_s.pp_in_flight) + " exceeds serve.pp " +
                         std::to_string(m_s.pp) + " (at most one step in flight per stage)");
    if (devs.size() == 1) {
        m_own = std::make_unique<llm::LlmRun>(c, ro, devs[0]);
        m_run = m_own.get();
    } else {
        make_parallel(c, ro, devs);
    }
    // The padding's scratch block: the last one every chip holds (stages hold different numbers).
    int64_t blocks = m_run->memory().kv_blocks;
    for (uint32_t r = 1; m_pp && r < m_pp->chips(); ++r)
        blocks = std::min(blocks, m_pp->chip(r).memory().kv_blocks);
    m_scratch = blocks - 1;
    o.kv_blocks = m_scratch;
    if (o.kv_blocks < 1) throw InputError("serve: the KV cache has no block beside the scratch block");
    o.max_model_len = len;
}

ServeRun::~ServeRun() = default;

void ServeRun::run(rt::Runtime& rt, IArrivals* arrivals, const std::function<void(const Scheduler&)>& ready,
                   const std::function<void()>& after_start, IHandoff* handoff) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!m_pp) m_run->start(rt);  // a stage started when it joined
    if (after_start) after_start();
    ChipStepTimer timer(*m_run, rt, m_scratch, m_s.pad_shapes);
    timer.lockstep(m_lock.get());
    if (m_pp) timer.pipelined(m_s.batches_in_flight());
    if (!m_lock) timer.step_reuse(m_s.step_reuse);
    if (m_s.export_profile) {
        m_profile = std::make_unique<VidurProfile>(m_c, m_s.sched.block_size, m_s.sched.max_model_len);
        timer.observe([this](const llm::StepBatch& b, size_t real, const llm::StepRecord& r) {
            m_profile->add_step(b, real, r);
        });
    }
    Scheduler sched(m_trace, m_s.sched, timer, arrivals, handoff);
    if (ready) ready(sched);
    m_res = sched.run();
    if (m_lock) m_lock->post({});  // the followers stop
    if (m_profile && m_pp) {
        // Stage 0 rank 0's ops (its layers), its sends to stage 1 (Vidur's pipeline send_recv)
        // and its stage's all-reduces.
        m_profile->set_tensor_parallel(m_pp->tp());
        for (const auto& [bytes, ps] : m_pp->send_copies(0)) m_profile->add_copy(bytes, ps);
        for (const auto& [bytes, ps] : m_pp->all_reduce_spans(0)) m_profile->add_all_reduce(bytes, ps);
    }
    if (m_profile && m_tp) {
        m_profile->set_tensor_parallel(m_tp->tp());
        for (const auto& [bytes, ps] : m_tp->all_reduce_spans(0)) m_profile->add_all_reduce(bytes, ps);
    }
    m_counters = timer.counters();
    m_step_reuse = timer.step_reuse_counters();
    emit_trace(rt, timer.origin_ps());
    m_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {

Tick at(uint64_t origin_ps, double s) { return Tick(origin_ps + static_cast<uint64_t>(std::max(0.0, s) * 1e12 + 0.5)); }

nlohmann::json ms_json(const Percentiles& p) {
    return {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p90", p.p90 * 1e3}, {"p99", p.p99 * 1e3}, {"max", p.max * 1e3}};
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

}  // namespace

// Per request: queued (arrival to first scheduling), prefill (to the first token), decode (to
// the last); the scheduler's steps; counters of KV blocks in use, waiting requests and batch.
void ServeRun::emit_trace(rt::Runtime& rt, uint64_t origin_ps) const {
    TraceHub* hub = rt.device().trace();
    if (!hub || !hub->on(TraceLevel::Op)) return;
    ITraceSink& sink = *hub->sink();
    const std::string proc = "serve" + m_share.label;
    // Several batches in flight: step k on track k mod K (step k + K starts after step k left).
    const size_t slots = m_pp ? static_cast<size_t>(m_s.batches_in_flight()) : 1;
    std::vector<TrackId> steps;
    for (size_t k = 0; k < slots; ++k)
        steps.push_back(sink.track(proc, k == 0 ? "scheduler steps" : "scheduler steps (in flight " + std::to_string(k + 1) + ")",
                                   0));
    const TrackId kv = sink.counter_track(proc, "kv blocks used"), wait = sink.counter_track(proc, "waiting"),
                  batch = sink.counter_track(proc, "batch sequences");
    for (size_t i = 0; i < m_res.steps.size(); ++i) {
        const StepLog& l = m_res.steps[i];
        sink.slice_str(steps[i % slots],
                       "step " + std::to_string(i) + ": " + std::to_string(l.prefill_tokens) + " prefill + " +
                           std::to_string(l.decode_tokens) + " decode tokens, " + std::to_string(l.sequences) + " seqs",
                       at(origin_ps, l.begin_s), at(origin_ps, l.begin_s + l.seconds), nullptr, 0);
        sink.counter(kv, at(origin_ps, l.begin_s), static_cast<double>(l.kv_used_blocks));
        sink.counter(wait, at(origin_ps, l.begin_s), static_cast<double>(l.waiting));
        sink.counter(batch, at(origin_ps, l.begin_s), static_cast<double>(l.sequences));
    }
    for (size_t i = 0; i < m_res.requests.size(); ++i) {
        const RequestResult& r = m_res.requests[i];
        if (r.finish_s < 0) continue;  // another instance's
        const TrackId t = sink.track(proc, "request " + r.id, static_cast<int>(std::min<size_t>(i + 1, 1 << 30)));
        if (!r.rejected.empty()) {
            sink.slice_str(t, "rejected: " + r.rejected, at(origin_ps, r.arrival_s), at(origin_ps, r.finish_s), nullptr, 0);
            continue;
        }
        sink.slice_str(t, "queued", at(origin_ps, r.arrival_s), at(origin_ps, r.scheduled_s), nullptr, 0);
        sink.slice_str(t, "prefill", at(origin_ps, r.scheduled_s), at(origin_ps, r.first_token_s), nullptr, 0);
        if (r.finish_s > r.first_token_s)
            sink.slice_str(t, "decode (" + std::to_string(r.output_tokens - 1) + " tokens)", at(origin_ps, r.first_token_s),
                           at(origin_ps, r.finish_s), nullptr, 0);
    }
}

// Per priority class (more than one among the requests): the class's served requests, their
// latencies and preemptions; throughput over the whole run's duration.
nlohmann::json by_priority_json(const ServeResult& r, double slo_ttft_s, double slo_tpot_s) {
    std::map<int64_t, ServeResult> cls;
    for (const RequestResult& x : r.requests) {
        ServeResult& c = cls[x.priority];
        c.requests.push_back(x);
        c.end_s = r.end_s;
        c.preemptions += x.preemptions;
    }
    nlohmann::json a = nlohmann::json::array();
    if (cls.size() < 2) return a;
    for (const auto& [p, c] : cls) {
        const ServeMetrics m = summarize(c, slo_ttft_s, slo_tpot_s);
        a.push_back({{"priority", p}, {"requests", c.requests.size()}, {"served", m.served},
                     {"rejected", m.rejected}, {"ttft_ms", ms_json(m.ttft)}, {"tpot_ms", ms_json(m.tpot)}, {"e2e_ms", ms_json(m.e2e)},
                     {"preemptions", c.preemptions}, {"met_slo", m.met_slo}});
    }
    return a;
}

nlohmann::json metrics_json(const ServeResult& r, double slo_ttft_s, double slo_tpot_s) {
    const ServeMetrics m = summarize(r, slo_ttft_s, slo_tpot_s);
    double busy_s = 0;
    int64_t waiting_peak = 0;
    for (const StepLog& l : r.steps) {
        busy_s += l.seconds;
        waiting_peak = std::max(waiting_peak, l.waiting);
    }
    return {{"served", m.served}, {"rejected", m.rejected}, {"ttft_ms", ms_json(m.ttft)},
            {"tpot_ms", ms_json(m.tpot)}, {"e2e_ms", ms_json(m.e2e)}, {"itl_ms", ms_json(m.itl)},
            {"requests_per_s", m.requests_per_s}, {"output_tokens_per_s", m.output_tokens_per_s},
            {"goodput_per_s", m.goodput_per_s}, {"met_slo", m.met_slo},
            {"slo_ttft_ms", slo_ttft_s * 1e3}, {"slo_tpot_ms", slo_tpot_s * 1e3},
            {"mean_batch", m.mean_batch}, {"preemptions", r.preemptions},
            {"priority_preemptions", r.priority_preemptions},
            {"by_priority", by_priority_json(r, slo_ttft_s, slo_tpot_s)},
            {"duration_s", r.end_s},
            {"steps", r.steps.size()}, {"busy_s", busy_s}, {"waiting_peak", waiting_peak},
            {"swapped_out_tokens", r.swapped_out}, {"swapped_in_tokens", r.swapped_in}, {"swap_ms", r.swap_s * 1e3}};
}

// KV utilisation: blocks in use over the pool, weighted by step time.
nlohmann::json kv_json(const ServeResult& r, int64_t pool_blocks) {
    double used_s = 0, busy_s = 0;
    int64_t peak = 0;
    for (const StepLog& l : r.steps) {
        used_s += static_cast<double>(l.kv_used_blocks) * l.seconds;
        busy_s += l.seconds;
        peak = std::max(peak, l.kv_used_blocks);
    }
    const double pool = static_cast<double>(pool_blocks);
    return {{"pool_blocks", pool_blocks}, {"peak_used_blocks", peak},
            {"peak_utilisation", pool > 0 ? static_cast<double>(peak) / pool : 0},
            {"mean_utilisation", busy_s > 0 && pool > 0 ? used_s / busy_s / pool : 0}};
}

nlohmann::json ServeRun::summary(double slo_ttft_s, double slo_tpot_s) const {
    const SchedulerOptions& o = m_s.sched;
    nlohmann::json j;
    j["model"] = {{"name", m_c.name}, {"architecture", llm::arch_name(m_c.arch)}, {"params", m_c.params()}};
    j["trace"] = {{"source", m_trace.source}, {"format", m_trace.format}, {"requests", m_trace.requests.size()},
                  {"notes", m_trace.notes}};
    j["setup"] = {{"policy", policy_name(o.policy)},
                  {"max_num_batched_tokens", o.max_num_batched_tokens},
                  {"max_num_seqs", o.max_num_seqs},
                  {"long_prefill_token_threshold", o.long_prefill_token_threshold},
                  {"chunked_prefill", o.chunked_prefill},
                  {"max_batch", o.max_batch},
                  {"timeout_s", o.timeout_s},
                  {"window_s", o.window_s},
                  {"kv_blocks", o.kv_blocks},
                  {"block_size", o.block_size},
                  {"prefix_caching", o.prefix_caching},
                  {"preemption", o.swap ? "swap" : "recompute"},
                  {"scheduling", o.priority ? "priority" : "fcfs"},
                  {"watermark", o.watermark},
                  {"max_model_len", o.max_model_len},
                  {"pad_shapes", m_s.pad_shapes},
                  {"tp", tp()},
                  {"pp", pp()}};
    const llm::MemoryPlan& mp = m_run->memory();
    j["memory"] = {{"capacity", mp.capacity}, {"weights", mp.weights}, {"weights_imported", mp.weights_imported},
                   {"kv", mp.kv}, {"kv_blocks", mp.kv_blocks}, {"activations", mp.activations},
                   {"reserved", mp.reserved}, {"free", mp.free}};
    j["metrics"] = metrics_json(m_res, slo_ttft_s, slo_tpot_s);
    j["kv"] = kv_json(m_res, o.kv_blocks);
    j["timer"] = {{"steps", m_counters.steps}, {"tokens", m_counters.tokens}, {"padded_tokens", m_counters.padded_tokens},
                  {"sequences", m_counters.sequences}, {"padded_sequences", m_counters.padded_sequences},
                  {"idle_s", m_counters.idle_s}, {"swap_bytes", m_counters.swap_bytes}, {"plans_compiled", m_run->plans_compiled()},
                  {"plans_recompiled", m_run->plans_recompiled()}, {"compile_seconds", m_run->compile_seconds()},
                  {"step_reuse", step_reuse_json(m_s.step_reuse, m_step_reuse)}};
    if (m_tp) {
        // Each rank's all-reduces: their number and bytes, the time they ran (the union of their
        // tasks' spans) and the rank's step time.
        j["communication"] = nlohmann::json::array();
        for (uint32_t r = 0; r < static_cast<uint32_t>(m_tp->tp()); ++r) {
            const llm::RankCollectives::Share sh = m_tp->comm_total(r);
            j["communication"].push_back({{"rank", r},
                                          {"all_reduces", sh.calls},
                                          {"bytes", sh.bytes},
                                          {"comm_ms", static_cast<double>(sh.comm_ps) * 1e-9},
                                          {"steps_ms", static_cast<double>(sh.step_ps) * 1e-9},
                                          {"share", sh.share()}});
        }
        j["parallel"] = {{"tp", m_tp->tp()},
                         {"simulate", m_tp->mirrored() ? "one" : "all"},
                         {"heads_per_chip", m_tp->shard().num_heads},
                         {"kv_heads_per_chip", m_tp->shard().num_kv_heads},
                         {"kv_heads_replicated", m_tp->kv_replicated()},
                         {"intermediate_per_chip", m_tp->shard().intermediate_size}};
    }
    if (m_pp) j["pipeline"] = pipeline_json();
    j["wall_seconds"] = m_wall_s;
    return j;
}

std::string requests_csv(const ServeResult& res, const std::vector<size_t>& instance) {
    std::string s = "request_id,";
    if (!instance.empty()) s += "instance,";
    s += "arrival_s,scheduled_s,first_token_s,finish_s,ttft_ms,tpot_ms,e2e_ms,max_itl_ms,prompt_tokens,"
         "output_tokens,preemptions,prefix_hit_tokens,priority,rejected\n";
    char buf[512];
    for (size_t i = 0; i < res.requests.size(); ++i) {
        const RequestResult& r = res.requests[i];
        const bool ok = r.rejected.empty();
        std::snprintf(buf, sizeof buf, ",%.9f,%.9f,%.9f,%.9f,%.6f,%.6f,%.6f,%.6f,%lld,%lld,%lld,%lld,%lld,",
                      r.arrival_s,
                      r.scheduled_s, r.first_token_s, r.finish_s, ok ? r.ttft() * 1e3 : -1.0, ok ? r.tpot() * 1e3 : -1.0,
                      ok ? r.e2e() * 1e3 : -1.0, r.max_itl_s * 1e3, static_cast<long long>(r.prompt_tokens),
                      static_cast<long long>(r.output_tokens), static_cast<long long>(r.preemptions),
                      static_cast<long long>(r.prefix_hit_tokens), static_cast<long long>(r.priority));
        s += csv_field(r.id);
        if (!instance.empty()) s += "," + std::to_string(instance.at(i));
        s += buf + csv_field(r.rejected) + "\n";
    }
    return s;
}

std::string ServeRun::requests_csv() const { return serve::requests_csv(m_res); }

std::string steps_csv(const std::vector<const ServeResult*>& results, const std::vector<int64_t>& pools) {
    std::string s =
        "instance,step,begin_s,seconds,sequences,prefill_tokens,decode_tokens,waiting,kv_used_blocks,"
        "kv_pool_blocks,preempted,swapped_out_tokens,swapped_in_tokens\n";
    char buf[320];
    for (size_t i = 0; i < results.size(); ++i)
        for (size_t k = 0; k < results[i]->steps.size(); ++k) {
            const StepLog& l = results[i]->steps[k];
            std::snprintf(buf, sizeof buf, "%zu,%zu,%.9f,%.9f,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n",
                          i, k, l.begin_s, l.seconds, static_cast<long long>(l.sequences),
                          static_cast<long long>(l.prefill_tokens), static_cast<long long>(l.decode_tokens),
                          static_cast<long long>(l.waiting), static_cast<long long>(l.kv_used_blocks),
                          static_cast<long long>(pools.at(i)), static_cast<long long>(l.preempted),
                          static_cast<long long>(l.swapped_out), static_cast<long long>(l.swapped_in));
            s += buf;
        }
    return s;
}

std::string ServeRun::steps_csv() const { return serve::steps_csv({&m_res}, {m_s.sched.kv_blocks}); }

}  // namespace sfumato::serve
