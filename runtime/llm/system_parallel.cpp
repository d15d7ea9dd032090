#include "runtime/llm/system_parallel.h"

#include <string>

#include "sim/error.h"

namespace sfumato::llm {

ChipSet first_chips(sys::SystemRun& s, uint32_t n) {
    ChipSet c;
    for (uint32_t i = 0; i < n; ++i) {
        c.infos.push_back(s.system().device(i).info());
        c.devices.push_back(&s.device(i));
        c.ids.push_back(i);
    }
    return c;
}

void check_tp(const sys::SystemRun& s, int64_t tp) {
    const uint32_t chips = s.size();
    if (tp < 1 || tp > chips)
        throw InputError("llm --tp " + std::to_string(tp) + ": the system has " + std::to_string(chips) + " chips");
}

void check_pp(const sys::SystemRun& s, int64_t pp, int64_t tp) {
    const uint32_t chips = s.size();
    if (pp < 1 || tp < 1 || pp * tp > chips)
        throw InputError("llm --pp " + std::to_string(pp) + " --tp " + std::to_string(tp) + ": " + std::to_string(pp * tp) +
                         " chips needed, the system has " + std::to_string(chips));
}

void check_ep(const sys::SystemRun& s, int64_t ep) {
    const uint32_t chips = s.size();
    if (ep < 1 || ep > chips)
        throw InputError("llm --ep " + std::to_string(ep) + ": the system has " + std::to_string(chips) + " chips");
}

std::unique_ptr<TpRun> run_tp(sys::SystemRun& s, const ModelConfig& c, const RunOptions& ro, const TpOptions& t,
                              const comm::CommParams& cp) {
    check_tp(s, t.tp);
    const ChipSet cs = first_chips(s, static_cast<uint32_t>(t.tp));
    auto run = std::make_unique<TpRun>(c, ro, t, cs.infos);
    std::unique_ptr<comm::Communicator> comm;
    if (t.tp > 1) comm = std::make_unique<comm::Communicator>(s.system().info(), cs.devices, cp);
    s.run(cs.ids, [&](uint32_t r, rt::Context& ctx) { run->run_rank(r, s.device(r), ctx, comm.get()); });
    return run;
}

std::unique_ptr<PpRun> run_pp(sys::SystemRun& s, const ModelConfig& c, const RunOptions& ro, const PpOptions& p,
                              const comm::CommParams& cp) {
    check_pp(s, p.pp, p.tp);
    const uint32_t tp = static_cast<uint32_t>(p.tp), pp = static_cast<uint32_t>(p.pp);
    const ChipSet cs = first_chips(s, pp * tp);
    auto run = std::make_unique<PpRun>(c, ro, p, cs.infos);
    std::vector<std::unique_ptr<comm::Communicator>> comms;
    if (tp > 1)
        for (uint32_t st = 0; st < pp; ++st) {
            std::vector<rt::Device*> devs;
            for (uint32_t r = 0; r < tp; ++r) devs.push_back(&s.device(st * tp + r));
            comms.push_back(std::make_unique<comm::Communicator>(s.system().info(), devs, cp));
        }
    s.run(cs.ids, [&](uint32_t i, rt::Context& ctx) {
        run->run_chip(i, s.device(i), ctx, tp > 1 ? comms[i / tp].get() : nullptr);
    });
    return run;
}

std::unique_ptr<EpRun> run_ep(sys::SystemRun& s, const ModelConfig& c, const RunOptions& ro, const EpOptions& e) {
    check_ep(s, e.ep);
    const ChipSet cs = first_chips(s, static_cast<uint32_t>(e.ep));
    auto run = std::make_unique<EpRun>(c, ro, e, cs.infos);
    s.run(cs.ids, [&](uint32_t r, rt::Context& ctx) { run->run_rank(r, s.device(r), ctx, cs.devices); });
    return run;
}

nlohmann::json tp_json(const TpRun& run, const RunOptions& ro, const Figures& f, bool functional) {
    const ModelConfig& sh = run.shard();
    const uint32_t tp = static_cast<uint32_t>(run.tp());
    nlohmann::json j;
    j["model"] = model_json(run.model(), ro.quant);
    j["request"] = request_json(ro, f.prefill_steps);
    j["parallel"] = {{"tp", tp},
                     {"simulate", run.mirrored() ? "one" : "all"},
                     {"heads_per_chip", sh.num_heads},
                     {"kv_heads_per_chip", sh.num_kv_heads},
                     {"kv_heads_replicated", run.kv_replicated()},
                     {"intermediate_per_chip", sh.intermediate_size},
                     {"replicated", "embedding, norms, lm_head"}};
    j["memory"] = nlohmann::json::array();
    for (uint32_t r = 0; r < tp; ++r) j["memory"].push_back(memory_json(run.rank(r).memory(), r, "collective_buffers"));
    add_figures(j, f);
    nlohmann::json comm_j = nlohmann::json::array();
    for (uint32_t r = 0; r < tp; ++r) {
        const TpRun::RankShare sr = run.comm_share(r);
        comm_j.push_back({{"chip", r},
                          {"prefill", share_json(sr.prefill, "all_reduces")},
                          {"decode", share_json(sr.decode, "all_reduces")}});
    }
    j["communication"] = comm_j;
    j["tokens"] = run.tokens();
    if (functional) j["ranks_agree"] = run.ranks_agree();
    return j;
}

namespace {

double pp_pct(uint64_t a, uint64_t b) { return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0; }
double pp_ms(uint64_t ps) { return static_cast<double>(ps) / 1e9; }

nlohmann::json pp_share_json(const PpRun::Share& s) {
    return {{"window_ms", pp_ms(s.window_ps)},
            {"busy_ms", pp_ms(s.busy_ps)},
            {"comm_ms", pp_ms(s.comm_ps)},
            {"bubble_ms", pp_ms(s.idle_ps)},
            {"busy_share", pp_pct(s.busy_ps, s.window_ps) / 100},
            {"comm_share", pp_pct(s.comm_ps, s.window_ps) / 100},
            {"bubble_share", pp_pct(s.idle_ps, s.window_ps) / 100},
            {"sent_bytes", s.sent_bytes},
            {"sends", s.sends},
            {"all_reduces", s.all_reduces}};
}

}  // namespace

nlohmann::json pp_json(const PpRun& run, const RunOptions& ro, const Figures& f, bool functional) {
    nlohmann::json j;
    j["model"] = model_json(run.model(), ro.quant);
    j["request"] = request_json(ro, f.prefill_steps);
    nlohmann::json mbs = nlohmann::json::array();
    for (const auto& mb : run.microbatches()) mbs.push_back(mb.size());
    j["parallel"] = {{"pp", static_cast<uint32_t>(run.pp())},
                     {"tp", static_cast<uint32_t>(run.tp())},
                     {"simulate", run.mirrored() ? "one" : "all"},
                     {"microbatches", mbs},
                     {"receive_buffer_bytes", run.recv_bytes()}};
    nlohmann::json stages = nlohmann::json::array();
    for (uint32_t i = 0; i < run.chips(); ++i) {
        const LlmRun& r = run.chip(i);
        const PpRun::ChipShare sh = run.share(i);
        std::vector<double> busy;
        for (uint64_t b : sh.busy_per_decode_step) busy.push_back(pp_ms(b));
        stages.push_back({{"chip", i},
                          {"stage", i / run.tp()},
                          {"rank", i % run.tp()},
                          {"first_layer", r.first_layer()},
                          {"end_layer", r.end_layer()},
                          {"prefill", pp_share_json(sh.prefill)},
                          {"decode", pp_share_json(sh.decode)},
                          {"decode_step_busy_ms", busy}});
    }
    j["stages"] = stages;
    nlohmann::json mem = nlohmann::json::array();
    for (uint32_t i = 0; i < run.chips(); ++i)
        mem.push_back(memory_json(run.chip(i).memory(), i, "transfer_and_collective_buffers"));
    j["memory"] = mem;
    add_figures(j, f);
    j["tokens"] = run.tokens();
    if (functional) j["ranks_agree"] = run.ranks_agree();
    return j;
}

nlohmann::json ep_json(const EpRun& run, const RunOptions& ro, const Figures& f) {
    const uint32_t n = static_cast<uint32_t>(run.ep());
    nlohmann::json j;
    j["model"] = model_json(run.model(), ro.quant);
    j["request"] = request_json(ro, f.prefill_steps);
    j["parallel"] = {{"ep", n},
                     {"experts_per_chip", run.shard().num_experts},
                     {"sequences_per_chip", ro.batch / n},
                     {"attention", "data parallel"},
                     {"replicated", "attention, norms, router, embedding, lm_head"}};
    j["memory"] = nlohmann::json::array();
    for (uint32_t r = 0; r < n; ++r) j["memory"].push_back(memory_json(run.rank(r).memory(), r, "collective_buffers"));
    add_figures(j, f);
    nlohmann::json comm_j = nlohmann::json::array();
    for (uint32_t r = 0; r < n; ++r) {
        const EpRun::RankShare sr = run.comm_share(r);
        const EpRun::Rows rows = run.dispatched_rows(r);
        comm_j.push_back({{"chip", r},
                          {"prefill", share_json(sr.prefill, "exchanges")},
                          {"decode", share_json(sr.decode, "exchanges")},
                          {"dispatch_rows_remote", rows.remote},
                          {"dispatch_rows_local", rows.local},
                          {"row_bytes", run.row_bytes()}});
    }
    j["communication"] = comm_j;
    j["tokens"] = run.tokens();
    return j;
}

PathFractions path_fractions(const std::vector<StepRecord>& steps, const PathBound& path) {
    // TTFT and TPOT are critical paths across the chips, not sums of kernel time.
    const PhaseTotals t = run_totals(steps, false).eager;
    double decode_ps = 0;
    for (uint64_t ps : t.decode_ps) decode_ps += static_cast<double>(ps);
    const double tpot_ps = t.decode_ps.empty() ? 0 : decode_ps / static_cast<double>(t.decode_ps.size());
    PathFractions p;
    p.known = path.known;
    p.ttft = t.prefill_ps ? path.ttft_ps / static_cast<double>(t.prefill_ps) : 0;
    p.tpot = tpot_ps > 0 ? path.tpot_ps / tpot_ps : 0;
    return p;
}

}  // namespace sfumato::llm
