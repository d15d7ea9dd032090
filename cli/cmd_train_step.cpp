// `sfumato train-step MODEL.onnx|zoo:NAME --system F --batch B [--bucket-mb M] [--overlap on|off]
// [--lr X] [--optimizer O] [--precision P] [--steps N] [--loss-scale ...] [--ranks R]
// [--recompute on|off] [--layout on|off] [--dropout on|off] [--dim NAME=V] [--plan-only] [--mode M] [--out DIR]`: data-parallel training steps
// on R chips of a system. Every rank runs its own host program on its chip: the forward through
// the graph executor (runtime/graph, activations kept for the backward), the loss gradient and
// the backward as operator-library kernels (runtime/graph/train.h) on its compute stream, the
// weight gradients all-reduced in buckets on a communication stream (runtime/comm) as soon as a
// bucket is complete (--overlap on) or after the whole backward (off), and the SGD update per
// bucket once it is reduced (SGD, or a fused optimizer kernel; under --precision mixed on fp32 master
// weights, with dynamic loss scaling: runtime/graph/train_run.cpp). Each rank has its own batch of B
// samples (inputs and targets from a fixed seed per rank); the loss gradient is scaled by 1 / (B R), so the summed gradient is the
// global batch's mean. Every rank's compute is simulated (--simulate auto/all); with --simulate
// one (timing mode, an approximation: runtime/system/simulate.h) only rank 0's, the others' compute
// streams waiting for a notify from rank 0 at each bucket boundary (a link latency later), every
// rank running its part of every all-reduce. Reports the step time (first forward kernel to last update, over all
// ranks), compute time (the compute streams' busy time, the busiest rank), communication time
// (the time a collective is running, on the busiest rank), their overlap and the exposed
// communication share: the time communication runs with no compute kernel running, over the step
// (the rest of the step not computing is the host's launches and the input copies); and the
// communication share: the collectives' time, overlapped or not, over the step. Functional mode checks every reduced gradient and updated weight
// against a host reference (ONNX-semantics references in double over the same per-rank data,
// summed over ranks, then the SGD step). The step's memory plan per chip (runtime/graph/
// train_memory.h: one arena for the forward and the backward, in-place gradients, optional
// recomputation) is printed with its peak and the chip's headroom; --plan-only prints it and
// simulates nothing. --layout on (the default) keeps activations and gradients in NC1HWC0 through
// the chains of ops whose forward and backward run in it (runtime/graph/train_layout.cpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "cli/command.h"
#include "models/power/energy_report.h"
#include "cli/reuse_option.h"
#include "isa/text.h"
#include "cli/system_session.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/train_step.h"
#include "runtime/system/simulate.h"
#include "runtime/train/train_system.h"
#include "runtime/graph/zoo.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

// Bytes in the unit that suits them (GiB, MiB or KiB, three decimals).
std::string size_str(double b) {
    char buf[48];
    const double a = b < 0 ? -b : b;
    if (a >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.3f GiB", b / (1024.0 * 1024 * 1024));
    else if (a >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.3f MiB", b / (1024.0 * 1024));
    else std::snprintf(buf, sizeof buf, "%.3f KiB", b / 1024.0);
    return buf;
}
std::string size_str(uint64_t b) { return size_str(static_cast<double>(b)); }

// Host seconds with three significant digits at least: "12.3 s", "1.23 s", "45.6 ms" (a small
// step's wall time printed "0.0 s").
std::string wall_str(double s) {
    char buf[48];
    if (s >= 10) std::snprintf(buf, sizeof buf, "%.1f s", s);
    else if (s >= 1) std::snprintf(buf, sizeof buf, "%.2f s", s);
    else std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
    return buf;
}

// One line per run of steps: "step 1: scale 65536, skipped (overflow)".
void print_steps(const std::vector<graph::StepRecord>& steps, bool scaling) {
    if (steps.size() <= 1 && !scaling) return;
    int applied = 0;
    for (const graph::StepRecord& r : steps) applied += r.skipped ? 0 : 1;
    std::printf("  %zu steps: %d applied, %zu skipped (overflow)\n", steps.size(), applied,
                steps.size() - static_cast<size_t>(applied));
    for (size_t i = 0; i < steps.size() && scaling; ++i) {
        if (i == 16 && steps.size() > 17) {
            std::printf("    ... (%zu more in summary.json)\n", steps.size() - 16);
            break;
        }
        std::printf("    step %zu: loss scale %g, %s\n", i + 1, steps[i].loss_scale,
                    steps[i].skipped ? "skipped: the reduced gradients hold inf/NaN" : "applied");
    }
}

void print_header(const graph::TrainSetup& ts, const std::string& model, uint32_t ranks, uint32_t chips, SystemSession& s,
                  int64_t batch, const std::string& precision, const std::string& overlap, double bucket_mb) {
    std::printf("train-step %s on %u of %u chips (%s, %s mode): batch %lld per chip (global %lld), %s, overlap %s\n",
                model.c_str(), ranks, chips, s.system_params().name.get().c_str(), s.mode().c_str(),
                static_cast<long long>(batch), static_cast<long long>(batch * ranks), precision.c_str(), overlap.c_str());
    std::printf("  %llu parameters, %zu buckets of <= %.1f MiB, kernels per rank: %zu forward, %zu backward, %zu update\n",
                static_cast<unsigned long long>(ts.tp.parameters), ts.tp.buckets.size(), bucket_mb,
                ts.plan->kernel_count(), ts.tp.backward.size(), ts.tp.update_launches());
    const nlohmann::json l = graph::train_layout_json(*ts.plan, ts.tp);
    if (!ts.layout) {
        std::printf("  layout: off (activations and gradients in ND; every convolution converts its operands)\n");
    } else {
        auto n = [&](const char* part, const char* k) { return l.contains(part) ? l[part].value(k, 0) : 0; };
        // On, but no chain kept (no Conv of this model and chip writes NC1HWC0): the ND step.
        const bool kept = n("forward", "saved") > 0 || n("backward", "items_in_nc1hwc0") > 0;
        std::printf("  layout: %s; conversions forward %d -> %d (%d saved), "
                    "backward %d -> %d (%d saved: %d TransData, %d in-kernel; %d backward items on NC1HWC0)\n",
                    kept ? "NC1HWC0 kept across forward and backward chains"
                         : "on, nothing kept in NC1HWC0 (no Conv here writes it)",
                    n("forward", "before"), n("forward", "after"), n("forward", "saved"), n("backward", "before"),
                    n("backward", "after"), n("backward", "saved"), n("backward", "transdata"),
                    n("backward", "in_kernel"), n("backward", "items_in_nc1hwc0"));
    }
}

void print_memory(const graph::TrainMemory& m, bool recompute) {
    const double cap = static_cast<double>(m.capacity_bytes);
    const double head = cap - static_cast<double>(m.total_bytes());
    std::printf("  memory plan per chip: peak %s of %s (%.1f %%), headroom %s\n", size_str(m.total_bytes()).c_str(),
                size_str(m.capacity_bytes).c_str(), cap > 0 ? 100.0 * static_cast<double>(m.total_bytes()) / cap : 0.0,
                size_str(head).c_str());
    std::printf("    weights %s, gradients %s, optimizer state %s (fp32 master weights %s), backward workspace %s, "
                "communication buffers %s, arena %s (live peak %s at %s; every tensor apart: %s)\n",
                size_str(m.weight_bytes).c_str(), size_str(m.gradient_bytes).c_str(), size_str(m.state_bytes).c_str(),
                size_str(m.master_bytes).c_str(),
                size_str(m.workspace_bytes).c_str(),
                size_str(m.comm_bytes).c_str(), size_str(m.arena_bytes).c_str(), size_str(m.live_peak_bytes).c_str(), m.live_peak_at.c_str(),
                size_str(m.no_reuse_bytes).c_str());
    std::printf("    activations kept for the backward %s (%s of them in 2-byte types); %d in-place gradients (%s); "
                "recompute %s: %d steps (%s not kept)\n",
                size_str(m.kept_bytes).c_str(), size_str(m.kept_2byte_bytes).c_str(), m.in_place,
                size_str(m.in_place_bytes).c_str(), recompute ? "on" : "off", m.recomputed, size_str(m.recomputed_bytes).c_str());
}

int cmd_train_step(const std::vector<std::string>& args) {
    CommonOptions common;
    common.trace = "task";
    std::string model_path, system_file, overlap = "on", precision = "fp16", simulate = "auto", reuse = "off",
                recompute = "off", optimizer = "sgd", layout = "on", dropout = "off", reuse_log;
    bool plan_only = false;
    std::vector<std::string> dim_args;
    int64_t batch = 1, ls_window = 2000;
    int steps = 1;
    std::string loss_scale = "auto";
    double ls_init = 65536, ls_growth = 2, ls_backoff = 0.5;
    double bucket_mb = 25, lr = 0.01;
    uint32_t ranks = 0;
    po::options_description d("sfumato train-step");
    d.add_options()("model", po::value<std::string>(&model_path), "MODEL.onnx, or zoo:NAME")(
        "batch", po::value<int64_t>(&batch)->default_value(1), "samples per chip (per rank)")(
        "bucket-mb", po::value<double>(&bucket_mb)->default_value(25), "gradient bucket size (MiB)")(
        "overlap", po::value<std::string>(&overlap)->default_value("on"),
        "on: all-reduce each bucket as soon as its gradients are written | off: after the whole backward")(
        "lr", po::value<double>(&lr)->default_value(0.01), "learning rate")(
        "optimizer", po::value<std::string>(&optimizer)->default_value("sgd"),
        "sgd: w -= lr g | momentum: SGD with momentum 0.9 (fp32 buffer) | adamw: AdamW (beta1 0.9, beta2 0.999, "
        "epsilon 1e-8, weight decay 0.01; fp32 moments) | lamb: LAMB (AdamW's direction with epsilon 1e-6, scaled "
        "per weight by the trust ratio |w| / |r|); each a fused vector kernel per weight (two for LAMB)")(
        "precision", po::value<std::string>(&precision)->default_value("fp16"),
        "fp32 | fp16 | bf16 | mixed: fp16 compute with fp32 master weights (the optimizer updates them and "
        "writes their fp16 rounding) and dynamic loss scaling | mixed-bf16: bf16 compute with fp32 master "
        "weights (no loss scaling unless --loss-scale dynamic)")(
        "steps", po::value<int>(&steps)->default_value(1), "training steps run back to back (the same batch each step)")(
        "loss-scale", po::value<std::string>(&loss_scale)->default_value("auto"),
        "dynamic: scale the loss, check the reduced gradients for inf/NaN on the chip, skip the step and "
        "back off on overflow, grow after --loss-scale-window good steps | off | auto: dynamic under "
        "--precision mixed, off otherwise")(
        "loss-scale-init", po::value<double>(&ls_init)->default_value(65536), "initial loss scale (2^16)")(
        "loss-scale-window", po::value<int64_t>(&ls_window)->default_value(2000),
        "applied steps in a row before the scale grows")(
        "loss-scale-growth", po::value<double>(&ls_growth)->default_value(2), "growth factor")(
        "loss-scale-backoff", po::value<double>(&ls_backoff)->default_value(0.5), "factor on overflow")(
        "ranks", po::value<uint32_t>(&ranks)->default_value(0), "chips 0..R-1 take part (0: all; 1: one chip, no all-reduce)")(
        "simulate", po::value<std::string>(&simulate)->default_value("auto"),
        "all: every rank's compute on its chip | one: rank 0's compute only, the other ranks follow its "
        "bucket times (timing mode; an approximation: a notify's latency late at every bucket, their memory "
        "without the kernels' traffic) | auto: all (docs/multichip.md)")(
        "recompute", po::value<std::string>(&recompute)->default_value("off"),
        "on: recompute the outputs of cheap forward steps (pooling, activations, elementwise) in the backward "
        "instead of keeping them | off")(
        "layout", po::value<std::string>(&layout)->default_value("on"),
        "on: activations and gradients stay in NC1HWC0 across convolutions, batch norms, ReLUs, residual adds "
        "and pooling (TransData only at the boundaries) | off: everything ND, each convolution converts its "
        "operands")(
        "dim", po::value<std::vector<std::string>>(&dim_args)->composing(),
        "NAME=V: the value of an input's symbolic dimension other than the batch (e.g. --dim seq=128); "
        "repeatable")(
        "dropout", po::value<std::string>(&dropout)->default_value("off"),
        "on: every Dropout trains (a mask per rank from a seeded generator, the same in the forward and the "
        "backward; kept values scaled by 1 / (1 - ratio)) | off: only a Dropout whose training_mode input is "
        "true trains, the others are the identity as in inference")(
        "plan-only", po::bool_switch(&plan_only),
        "compile the step and print its memory plan without simulating it");
    add_reuse_option(d, reuse, &reuse_log);
    add_system_option(d, system_file);
    add_run_options(d, common);
    po::positional_options_description pos;
    pos.add("model", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato train-step MODEL.onnx|zoo:NAME --system F --batch B [options]", d, vm, &pos))
        return kExitOk;
    if (model_path.empty()) throw InputError("train-step needs a model (MODEL.onnx or zoo:NAME)");
    if (system_file.empty()) throw InputError("train-step needs --system F (e.g. configs/system-8x910b-like.ini)");
    if (overlap != "on" && overlap != "off") throw InputError("--overlap must be on or off, not '" + overlap + "'");
    if (batch < 1 || batch > 4096) throw InputError("--batch must be 1..4096");
    if (!(bucket_mb > 0) || bucket_mb > 4096) throw InputError("--bucket-mb must be in (0, 4096]");
    if (!(lr >= 0) || lr > 1e3) throw InputError("--lr must be in [0, 1000]");
    if (recompute != "on" && recompute != "off") throw InputError("--recompute must be on or off, not '" + recompute + "'");
    if (layout != "on" && layout != "off") throw InputError("--layout must be on or off, not '" + layout + "'");
    if (dropout != "on" && dropout != "off") throw InputError("--dropout must be on or off, not '" + dropout + "'");
    graph::TrainSetup ts;
    if (!graph::parse_optimizer(optimizer, ts.opt.optimizer))
        throw InputError("--optimizer must be sgd, momentum, adamw or lamb, not '" + optimizer + "'");
    // Mixed precision trains fp16 (bf16) compute copies of fp32 master weights.
    const bool mixed = precision == "mixed" || precision == "mixed-bf16";
    const std::string compute_precision = precision == "mixed" ? "fp16" : precision == "mixed-bf16" ? "bf16" : precision;
    if (!graph::parse_precision(compute_precision, ts.copt.precision) || ts.copt.precision == graph::Precision::Mixed)
        throw InputError("--precision must be fp32, fp16, bf16, mixed or mixed-bf16, not '" + precision + "'");
    if (steps < 1 || steps > 100000) throw InputError("--steps must be 1..100000");
    if (loss_scale != "auto" && loss_scale != "dynamic" && loss_scale != "off")
        throw InputError("--loss-scale must be auto, dynamic or off, not '" + loss_scale + "'");
    ts.scaling.dynamic = loss_scale == "dynamic" || (loss_scale == "auto" && precision == "mixed");
    if (ts.scaling.dynamic && !mixed)
        throw InputError("--loss-scale dynamic needs --precision mixed or mixed-bf16 (the unscale is fused into the "
                         "optimizer's update of the fp32 master weights)");
    if (!(ls_init > 0) || ls_init > 1e30) throw InputError("--loss-scale-init must be in (0, 1e30]");
    if (ls_window < 1) throw InputError("--loss-scale-window must be at least 1");
    if (!(ls_growth >= 1) || ls_growth > 1e6) throw InputError("--loss-scale-growth must be in [1, 1e6]");
    if (!(ls_backoff > 0) || ls_backoff >= 1) throw InputError("--loss-scale-backoff must be in (0, 1)");
    ts.scaling.init = ls_init, ts.scaling.growth_interval = ls_window;
    ts.scaling.growth = ls_growth, ts.scaling.backoff = ls_backoff;
    ts.steps = steps;
    ts.opt.master = mixed;

    graph::Graph imported = model_path.rfind("zoo:", 0) == 0 ? graph::zoo_graph(model_path.substr(4))
                                                             : graph::import_onnx_file(model_path);
    SystemSession s(common, system_file, text::join("sfumato train-step", args));
    s.elaborate();
    const uint32_t chips = s.system().size();
    ranks = graph::train_ranks(s.host(), ranks);
    ts.reuse = reuse_options(reuse, s.functional(), false, s.chip_params(), reuse_log);
    // auto = all: rank 0's compute standing for the others' (one) is an approximation
    // (runtime/system/simulate.h), so timing mode simulates every rank unless asked.
    ts.mirror = ranks > 1 && sys::mirror_ranks(simulate, s.functional());

    const auto wall0 = std::chrono::steady_clock::now();
    ts.overlap = overlap == "on";
    ts.opt.lr = lr;
    ts.opt.loss_scale = 1.0 / static_cast<double>(batch * ranks);
    ts.opt.bucket_bytes = static_cast<uint64_t>(bucket_mb * 1048576.0);
    ts.opt.recompute = recompute == "on";
    ts.dropout = dropout == "on";
    for (const std::string& a : dim_args) {
        const size_t eq = a.find('=');
        char* end = nullptr;
        const long long v = eq == std::string::npos ? 0 : std::strtoll(a.c_str() + eq + 1, &end, 10);
        if (eq == std::string::npos || eq == 0 || !end || *end || end == a.c_str() + eq + 1 || v < 1 || v > (1ll << 24))
            throw InputError("--dim " + a + ": expected NAME=V with V a positive integer (e.g. --dim seq=128)");
        ts.dims[a.substr(0, eq)] = v;
    }
    ts.layout = layout == "on";
    ts.comm_buffer_bytes = s.comm_params().buffer_bytes;
    ts.compile(std::move(imported), batch, s.system().chip(0).info());
    if (plan_only) {
        const double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        nlohmann::json summary = s.base_summary();
        summary["model"] = model_path;
        summary["train"] = graph::train_json(ts, ranks, batch, precision, lr);
        summary["memory_plan"] = graph::train_memory_json(ts.memory);
        summary["plan_only"] = true;
        summary["plan_s"] = plan_s;
        s.write_outputs(summary);
        print_header(ts, model_path, ranks, chips, s, batch, precision, overlap, bucket_mb);
        print_memory(ts.memory, recompute == "on");
        std::printf("  plan only: nothing simulated (plan %s)\n", wall_str(plan_s).c_str());
        return kExitOk;
    }
    ts.make_data(ranks, s.functional());
    const double plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const graph::TrainStepRun run = graph::run_train_step(s.host(), ts, ranks, s.comm_params(), s.functional());
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    const bool passed = run.passed;
    const nlohmann::json& check = run.check;
    const graph::TrainStepFigures f = graph::train_step_figures(ts, run, batch);
    const double step_us = f.step_us, compute_us = f.compute_us, comm_us = f.comm_us, overlap_us = f.overlap_us;
    const double exposed_us = f.exposed_us, share = f.exposed_share, images_s = f.samples_per_s;
    nlohmann::json summary = s.base_summary();
    summary["model"] = model_path;
    summary["train"] = graph::train_json(ts, ranks, batch, precision, lr);
    summary.update(graph::train_step_json(s.host(), ts, run, ranks, batch));
    const rt::AllocatorStats as = run.runs[0].ctx->memory_stats();
    const reuse::ReuseCounters& rc = run.reuse;
    summary["reuse_timing"] = reuse_json(ts.reuse, rc);
    summary["wall_s"] = wall_s;
    summary["plan_s"] = plan_s;
    // Energy per step: every simulated chip's kernels and static power over the step.
    summary["energy"]["per_step_j"] = power::energy_per_unit(summary["energy"], 1.0, step_us * 1e-6);
    s.write_outputs(summary);

    print_header(ts, model_path, ranks, chips, s, batch, precision, overlap, bucket_mb);
    print_memory(ts.memory, recompute == "on");
    std::printf("  device allocator on rank 0: peak %s in use, %s reserved (power-of-two segments)\n",
                size_str(as.peak_in_use).c_str(), size_str(as.peak_reserved).c_str());
    print_steps(run.runs[0].steps, ts.scaling.dynamic);
    std::printf("  %sstep %.3f us: compute %.3f us, communication %.3f us (overlapped %.3f us), exposed %.3f us\n",
                ts.steps > 1 ? "per " : "", step_us, compute_us, comm_us, overlap_us, exposed_us);
    std::printf("  %.1f samples/s per chip (%lld per chip per step)\n", images_s, static_cast<long long>(batch));
    std::printf("  communication share %.1f %% of the step (overlapped or not), exposed communication share %.1f %%\n",
                step_us > 0 ? 100.0 * comm_us / step_us : 0.0, 100.0 * share);
    std::printf("  energy: %.4g J per step over the %zu simulated chips and their links; run %.4g J (links %.4g J), "
                "average power %.1f W\n",
                summary["energy"]["per_step_j"].get<double>(), summary["energy"]["chips"].size(),
                summary["energy"]["total_j"].get<double>(), summary["energy"]["fabric"]["total_j"].get<double>(),
                summary["energy"]["average_power_w"].get<double>());
    if (ts.mirror)
        std::printf("  APPROXIMATION --simulate one: compute simulated on rank 0 only; ranks 1..%u follow rank 0's "
                    "bucket times (a notify, a link latency late) and run their part of every all-reduce without "
                    "their kernels' memory traffic (--simulate all, the default, is exact); wall %s\n",
                    ranks - 1, wall_str(wall_s).c_str());
    else
        std::printf("  every rank's compute simulated on its own chip model (%u chips); wall %s\n", ranks,
                    wall_str(wall_s).c_str());
    print_reuse(ts.reuse, rc);
    if (s.functional()) {
        std::printf("  check: %s (%llu gradient and weight values against the host reference, max abs err %.3g)\n",
                    passed ? "passed" : "FAILED", static_cast<unsigned long long>(check["compared"].get<uint64_t>()),
                    check["max_abs_err"].get<double>());
        if (!passed) std::printf("  first mismatch: %s\n", check["first_mismatch"].get<std::string>().c_str());
    }
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return passed ? kExitOk : kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("train-step", "one data-parallel training step (forward, backward, bucketed all-reduce, SGD) on a system",
                cmd_train_step);

}  // namespace sfumato::cli
