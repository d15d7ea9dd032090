// A data-parallel training step on a system of chips as a library (train_system.h).
#include "runtime/train/train_system.h"

#include <algorithm>

#include "sim/error.h"

namespace sfumato::graph {

uint32_t train_ranks(const sys::SystemRun& s, uint32_t ranks) {
    const uint32_t chips = s.size();
    if (ranks == 0) ranks = chips;
    if (ranks > chips) throw InputError("--ranks " + std::to_string(ranks) + ": the system has " + std::to_string(chips) + " chips");
    if (ranks < 1) throw InputError("--ranks must be at least 1");
    return ranks;
}

TrainStepRun run_train_step(sys::SystemRun& s, const TrainSetup& ts, uint32_t ranks, const comm::CommParams& cp,
                            bool functional) {
    std::vector<rt::Device*> devs;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < ranks; ++i) {
        devs.push_back(&s.device(i));
        ids.push_back(i);
    }
    comm::Communicator comm(s.system().info(), devs, cp);
    TrainStepRun out;
    out.runs.resize(ranks);
    MirrorSlots slots;
    slots.slot.resize(ranks);
    slots.dev = devs;
    // The ranks run one program in step (data parallel): one table of identities, a rank taking
    // the time of another's run of the same launch (runtime/reuse/timing_reuse.h, lockstep).
    reuse::ReuseOptions ro = ts.reuse;
    if (!ro.table) {
        ro.table = reuse::make_reuse_table();
        ro.lockstep = true;
    }
    s.run(ids, [&](uint32_t r, rt::Context& ctx) {
        run_rank(ts, comm, r, ctx, s.device(r), functional, slots, ro, out.runs[r]);
    });
    out.times = step_times(out.runs);
    for (const RankRun& rr : out.runs) out.reuse += rr.reuse;
    if (functional) {
        out.check = check_against_reference(ts, out.runs);
        out.passed = out.check["passed"].get<bool>();
    }
    return out;
}

TrainStepFigures train_step_figures(const TrainSetup& ts, const TrainStepRun& run, int64_t batch) {
    const StepTimes& tm = run.times;
    TrainStepFigures f;
    const double per = 1e6 * static_cast<double>(ts.steps);
    f.step_us = tm.step_ps / per, f.compute_us = tm.compute_ps / per, f.comm_us = tm.comm_ps / per;
    f.overlap_us = tm.overlap_ps / per;
    f.exposed_us = std::max(0.0, f.comm_us - f.overlap_us);
    f.exposed_share = f.step_us > 0 ? f.exposed_us / f.step_us : 0;
    f.comm_share = f.step_us > 0 ? f.comm_us / f.step_us : 0;
    f.samples_per_s = f.step_us > 0 ? static_cast<double>(batch) / (f.step_us * 1e-6) : 0;
    return f;
}

nlohmann::json train_json(const TrainSetup& ts, uint32_t ranks, int64_t batch, const std::string& precision, double lr) {
    return {{"ranks", ranks},
            {"batch_per_rank", batch},
            {"global_batch", batch * ranks},
            {"precision", precision},
            {"overlap", ts.overlap},
            {"recompute", ts.opt.recompute},
            {"dropout_masks", ts.dropout_masks.size()},
            {"lr", lr},
            {"optimizer", optimizer_name(ts.opt.optimizer)},
            {"loss", ts.tp.softmax_ce ? "softmax cross-entropy" : "0.5 * mean squared error"},
            {"bucket_bytes", ts.opt.bucket_bytes},
            {"buckets", ts.tp.buckets.size()},
            {"gradient_bytes", ts.tp.grad_bytes},
            {"parameters", ts.tp.parameters},
            {"forward_kernels", ts.plan->kernel_count()},
            {"backward_kernels", ts.tp.backward.size()},
            {"update_kernels", ts.tp.update_launches()},
            {"steps", ts.steps},
            {"master_weights", ts.opt.master},
            {"loss_scaling", ts.scaling.dynamic ? nlohmann::json{{"init", ts.scaling.init},
                                                                 {"growth_interval", ts.scaling.growth_interval},
                                                                 {"growth", ts.scaling.growth},
                                                                 {"backoff", ts.scaling.backoff}}
                                                : nlohmann::json("off")},
            {"layout", train_layout_json(*ts.plan, ts.tp)}};
}

nlohmann::json train_step_json(const sys::SystemRun& s, const TrainSetup& ts, const TrainStepRun& run, uint32_t ranks,
                               int64_t batch) {
    const TrainStepFigures f = train_step_figures(ts, run, batch);
    const StepTimes& tm = run.times;
    nlohmann::json j;
    nlohmann::json mem = train_memory_json(ts.memory);
    const rt::AllocatorStats as = run.runs.at(0).ctx->memory_stats();
    mem["device_peak_in_use_bytes"] = as.peak_in_use;
    mem["device_peak_reserved_bytes"] = as.peak_reserved;
    j["memory_plan"] = mem;
    j["samples_per_s_per_chip"] = f.samples_per_s;
    j["step_us"] = f.step_us;
    j["step_cycles"] = s.system().clock().ceil_cycle(Tick(static_cast<uint64_t>(tm.step_ps / ts.steps))).v;
    j["run_us"] = tm.step_ps / 1e6;
    nlohmann::json recs = nlohmann::json::array();
    for (const StepRecord& r : run.runs[0].steps) recs.push_back({{"loss_scale", r.loss_scale}, {"skipped", r.skipped}});
    j["step_records"] = recs;
    j["compute_us"] = f.compute_us;
    j["comm_us"] = f.comm_us;
    j["overlap_us"] = f.overlap_us;
    j["exposed_comm_us"] = f.exposed_us;
    j["exposed_comm_share"] = f.exposed_share;
    j["comm_share"] = f.comm_share;
    j["ranks_simulated"] = ts.mirror ? 1 : ranks;
    j["simulate"] = ts.mirror ? "one" : "all";
    j["links"] = s.links_json(tm.t0, tm.t1);
    j["check"] = run.check;
    return j;
}

}  // namespace sfumato::graph
