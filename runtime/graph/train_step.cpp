// The training step host program (train_step.h).
#include "runtime/graph/train_step.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/graph/executor.h"
#include "runtime/ops/node_launch.h"
#include "runtime/ref/adamw.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::graph {


void TrainSetup::compile(Graph g, int64_t batch, const DeviceInfo& dev) {
    graph = std::make_unique<Graph>(std::move(g));
    train_graph(*graph);
    copt.passes = train_passes(layout);
    copt.streams = 1;
    copt.training = true;
    const auto shapes = default_input_shapes(*graph, batch);
    plan = graph::compile(*graph, shapes, dev, copt);
    tp = build_train_plan(*plan, dev, opt);
    memory = plan_train_memory(*plan, tp, dev);
    memory.comm_bytes = comm::Communicator::rank_buffer_bytes(comm_buffer_bytes);
}

namespace {

// The rows of the table an integer graph input indexes (the data input of the Gathers along
// axis 0 that read it; the smallest when several do).
int64_t index_bound(const Plan& p, int t) {
    int64_t bound = 0;
    for (const PlanStep& st : p.steps) {
        if (st.op_type != "Gather" || st.in.size() < 2 || st.in[1] != t) continue;
        const ops::TensorRef& d = p.tensors[static_cast<size_t>(st.in[0])].ref;
        const int64_t axis = st.desc.attrs.get_int("axis", 0);
        if (axis != 0 || d.shape.empty()) continue;
        bound = bound == 0 ? d.shape[0] : std::min(bound, d.shape[0]);
    }
    if (bound <= 0)
        throw InputError("train-step: input '" + p.tensors[static_cast<size_t>(t)].name +
                         "' is not a float tensor, nor the indices of an embedding (a Gather along axis 0)");
    return bound;
}

}  // namespace

void TrainSetup::make_data(uint32_t ranks, bool with_targets) {
    for (uint32_t r = 0; r < ranks; ++r) {
        std::mt19937 rng(1000 + r);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<ref::HostTensor> in;
        for (int t : plan->inputs) {
            const ops::TensorRef& ref = plan->tensors[static_cast<size_t>(t)].ref;
            ref::HostTensor h(ref.elem, ref.shape);
            if (ref::is_float(ref.elem)) {
                for (double& v : h.data) v = u(rng);
            } else {  // token ids: uniform over the rows of the table a Gather reads with them
                std::uniform_int_distribution<int64_t> id(0, index_bound(*plan, t) - 1);
                for (double& v : h.data) v = static_cast<double>(id(rng));
            }
            ref::round_to_type(h);
            in.push_back(std::move(h));
        }
        inputs.push_back(std::move(in));
        if (!with_targets) continue;
        const ops::TensorRef& o = plan->tensors[static_cast<size_t>(tp.output)].ref;
        ref::HostTensor t(o.elem, o.shape);
        if (tp.softmax_ce) {
            const int64_t classes = o.shape.back();
            std::uniform_int_distribution<int64_t> label(0, classes - 1);
            for (size_t row = 0; row < t.data.size() / static_cast<size_t>(classes); ++row)
                t.data[row * static_cast<size_t>(classes) + static_cast<size_t>(label(rng))] = 1.0;
        } else {
            for (double& v : t.data) v = u(rng);
        }
        ref::round_to_type(t);
        targets.push_back(std::move(t));
    }
}

namespace {

void check(rt::Context& ctx, rt::Status s, uint32_t r) {
    if (s != rt::Status::Ok) throw InputError("train-step rank " + std::to_string(r) + ": " + ctx.last_error());
}

std::vector<KernelDesc> kernels_of(const TrainItem& it, const std::vector<ops::TensorRef>& refs, uint64_t ws) {
    std::vector<ops::TensorRef> in, out;
    for (int t : it.in) {
        if (t >= 0) {
            in.push_back(refs[static_cast<size_t>(t)]);
        } else {
            ops::TensorRef r;
            r.present = false;
            in.push_back(r);
        }
    }
    for (int t : it.out) out.push_back(refs[static_cast<size_t>(t)]);
    std::vector<KernelDesc> ks = it.op->launches(in, out, ws);
    ops::stamp_node_launch(ks, it.desc, in, out, ws, it.op->workspace_bytes());
    for (size_t k = 0; k < ks.size(); ++k) {
        ks[k].name = ks.size() == 1 ? it.name : it.name + "#" + std::to_string(k);
        if (ks[k].type.empty()) ks[k].type = it.desc.op_type;
    }
    return ks;
}

ref::HostTensor read_back(rt::Runtime& rt, const ops::TensorRef& r) {
    std::vector<uint8_t> b(r.storage_bytes());
    rt.memcpy_d2h(b.data(), r.addr, b.size());
    return ref::from_device_bytes(b.data(), r.dtype, r.elem, r.shape);
}

}  // namespace

void run_rank(const TrainSetup& ts, comm::Communicator& comm, uint32_t r, rt::Context& ctx, rt::Device& dev,
              bool functional, MirrorSlots& mirror, RankRun& out) {
    const TrainPlan& tp = ts.tp;
    out.ctx = &ctx;
    rt::Runtime rt(dev, ctx);
    std::unique_ptr<reuse::TimingReuse> reuse;
    if (!(ts.mirror && r != 0)) reuse = std::make_unique<reuse::TimingReuse>(ctx, rt.device_info(), ts.reuse);
    Executor ex(rt, *ts.plan);
    ex.load();
    const uint64_t arena = ex.arena();  // the forward's activations and the backward's tensors
    const uint64_t grads = rt.malloc(std::max<uint64_t>(tp.grad_bytes, 1));
    const uint64_t ws = tp.workspace_bytes ? rt.malloc(tp.workspace_bytes) : 0;
    const uint64_t state = tp.state_bytes ? rt.malloc(tp.state_bytes) : 0;
    if (state) {  // the optimizer's moments start at zero
        std::vector<uint8_t> zeros(functional ? tp.state_bytes : 0, 0);
        rt.memcpy_h2d(state, functional ? zeros.data() : nullptr, tp.state_bytes);
    }
    std::vector<ops::TensorRef> refs(tp.tensors.size());
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        switch (t.kind) {
            case TrainTensor::Kind::Forward: refs[i] = ex.placed(t.plan); break;
            case TrainTensor::Kind::Alias:
                refs[i] = t.ref;
                refs[i].addr = refs[static_cast<size_t>(t.alias)].addr;
                break;
            case TrainTensor::Kind::WeightGrad:
                refs[i] = t.ref;
                refs[i].addr = grads + t.offset;
                break;
            case TrainTensor::Kind::State:
                refs[i] = t.ref;
                refs[i].addr = state + t.offset;
                break;
            default:
                refs[i] = t.ref;
                refs[i].addr = arena + t.offset;
        }
        if (t.kind == TrainTensor::Kind::Const) {
            const std::vector<uint8_t> b = ref::to_device_bytes(*t.value, t.ref.dtype);
            rt.memcpy_h2d(refs[i].addr, functional ? b.data() : nullptr, b.size());
        }
    }
    std::vector<std::vector<KernelDesc>> bwd, upd;
    for (const TrainItem& it : tp.backward) bwd.push_back(kernels_of(it, refs, ws));
    for (const TrainItem& it : tp.update) upd.push_back(kernels_of(it, refs, ws));
    comm.init_rank(r, ctx);
    const rt::Stream compute = rt.default_stream(), cs = rt.create_stream(0);
    const bool follower = ts.mirror && r != 0, leader = ts.mirror && r == 0;
    rt::Stream ns{};
    if (leader) ns = rt.create_stream(0);
    if (follower) {
        mirror.slot[r].resize(tp.buckets.size());
        for (uint32_t& sl : mirror.slot[r]) check(ctx, ctx.notify_create(&sl), r);
    }
    std::vector<rt::EventId> written(tp.buckets.size()), reduced(tp.buckets.size());
    for (size_t k = 0; k < tp.buckets.size(); ++k) {
        check(ctx, ctx.event_create(&written[k]), r);
        check(ctx, ctx.event_create(&reduced[k]), r);
    }
    {
        const ops::TensorRef& t = refs[static_cast<size_t>(tp.target)];
        std::vector<uint8_t> b;
        if (functional) b = ref::to_device_bytes(ts.targets[r], t.dtype);
        rt.memcpy_h2d(t.addr, functional ? b.data() : nullptr, t.storage_bytes());
    }
    comm.host_barrier();
    out.first = ctx.tasks().size();
    auto all_reduce = [&](size_t k) {
        const Bucket& b = tp.buckets[k];
        check(ctx, ctx.stream_wait_event(cs.id, written[k]), r);
        if (ts.inputs.size() == 1) {  // one chip: its gradients are the global batch's
            check(ctx, ctx.event_record(reduced[k], cs.id), r);
            return;
        }
        const size_t before = ctx.tasks().size();
        comm.all_reduce(r, grads + b.offset, grads + b.offset, b.bytes / isa::dtype_size(b.dtype), b.dtype, comm::RedOp::Sum,
                        cs.id);
        out.collectives.push_back({before, ctx.tasks().size()});
        check(ctx, ctx.event_record(reduced[k], cs.id), r);
    };
    if (!follower) ex.issue(ts.inputs[r]);
    for (size_t i = 0; i < tp.backward.size(); ++i) {
        const int done = tp.backward[i].completes_bucket;
        if (follower) {
            // Rank 0's backward up to this bucket stands for this rank's.
            if (done < 0) continue;
            check(ctx, ctx.notify_wait(mirror.slot[r][static_cast<size_t>(done)], compute.id), r);
        } else {
            for (const KernelDesc& k : bwd[i]) rt.launch(k, compute);
            if (done < 0) continue;
        }
        check(ctx, ctx.event_record(written[static_cast<size_t>(done)], compute.id), r);
        if (leader) {
            check(ctx, ctx.stream_wait_event(ns.id, written[static_cast<size_t>(done)]), r);
            for (uint32_t q = 1; q < mirror.slot.size(); ++q)
                check(ctx, ctx.notify_record(*mirror.dev[q], mirror.slot[q][static_cast<size_t>(done)], ns.id), r);
        }
        if (ts.overlap) all_reduce(static_cast<size_t>(done));
    }
    if (!ts.overlap) {
        // After the whole backward: the communication stream waits for its last kernel.
        rt::EventId all = 0;
        check(ctx, ctx.event_create(&all), r);
        check(ctx, ctx.event_record(all, compute.id), r);
        check(ctx, ctx.stream_wait_event(cs.id, all), r);
        for (size_t k = 0; k < tp.buckets.size(); ++k) all_reduce(k);
    }
    for (size_t k = 0; k < tp.buckets.size(); ++k) {
        check(ctx, ctx.stream_wait_event(compute.id, reduced[k]), r);
        if (follower) continue;  // rank 0's update stands for this rank's
        for (size_t u : tp.buckets[k].updates)
            for (const KernelDesc& kd : upd[u]) rt.launch(kd, compute);
    }
    rt.synchronize_device();
    out.last = ctx.tasks().size();
    if (reuse) {
        reuse->settle();  // the last stand-ins' traffic, before the stats are read
        out.reuse = reuse->counters();
    }
    if (!functional) return;
    for (size_t i = 0; i < tp.tensors.size(); ++i)
        if (tp.tensors[i].kind == TrainTensor::Kind::WeightGrad) out.grads[static_cast<int>(i)] = read_back(rt, refs[i]);
    for (const TrainItem& u : tp.update) {
        const int w = tp.tensors[static_cast<size_t>(u.out[0])].plan;
        out.weights[w] = read_back(rt, refs[static_cast<size_t>(u.out[0])]);
    }
}

namespace {

using Span = std::pair<uint64_t, uint64_t>;

std::vector<Span> merged(std::vector<Span> v) {
    std::sort(v.begin(), v.end());
    std::vector<Span> out;
    for (const Span& s : v) {
        if (s.second <= s.first) continue;
        if (!out.empty() && s.first <= out.back().second) out.back().second = std::max(out.back().second, s.second);
        else out.push_back(s);
    }
    return out;
}
double length(const std::vector<Span>& v) {
    double n = 0;
    for (const Span& s : v) n += static_cast<double>(s.second - s.first);
    return n;
}
double intersection(const std::vector<Span>& a, const std::vector<Span>& b) {
    double n = 0;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const uint64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
        if (hi > lo) n += static_cast<double>(hi - lo);
        (a[i].second < b[j].second) ? ++i : ++j;
    }
    return n;
}

}  // namespace

StepTimes step_times(const std::vector<RankRun>& runs) {
    StepTimes st;
    st.t0 = ~uint64_t(0);
    for (const RankRun& rr : runs) {
        std::vector<bool> in_coll(rr.last, false);
        std::vector<Span> comp, coll;
        for (const auto& [b, e] : rr.collectives)
            for (size_t i = b; i < e; ++i) {
                in_coll[i] = true;
                const Task& t = *rr.ctx->tasks()[i].task;
                coll.push_back({t.start_tick.v, t.end_tick.v});
            }
        for (size_t i = rr.first; i < rr.last; ++i) {
            const rt::TaskRecord& rec = rr.ctx->tasks()[i];
            const Task& t = *rec.task;
            st.t0 = std::min(st.t0, t.start_tick.v);
            st.t1 = std::max(st.t1, t.end_tick.v);
            if (!in_coll[i] && t.kind == TaskKind::Kernel && rec.stream == rt::kDefaultStream)
                comp.push_back({t.start_tick.v, t.end_tick.v});
        }
        comp = merged(comp);
        coll = merged(coll);
        const double c = length(comp);
        if (c >= st.compute_ps) {
            st.compute_ps = c;
            st.comm_ps = length(coll);
            st.overlap_ps = intersection(comp, coll);
        }
    }
    st.step_ps = st.t1 > st.t0 ? static_cast<double>(st.t1 - st.t0) : 0;
    return st;
}

std::map<int, ref::HostTensor> host_gradients(const TrainSetup& ts, uint32_t r) {
    const Plan& p = *ts.plan;
    std::vector<std::shared_ptr<ref::HostTensor>> fwd(p.tensors.size());
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlanTensor& t = p.tensors[i];
        if (t.kind != PlanTensor::Kind::Weight || !t.weight) continue;
        auto h = std::make_shared<ref::HostTensor>(*t.weight->host());
        h->type = t.ref.elem;
        ref::round_to_type(*h);
        fwd[i] = h;
    }
    for (size_t i = 0; i < p.inputs.size(); ++i) fwd[static_cast<size_t>(p.inputs[i])] = std::make_shared<ref::HostTensor>(ts.inputs[r][i]);
    for (const PlanStep& st : p.steps) {
        std::vector<const ref::HostTensor*> in;
        for (int t : st.in) {
            // A view the layout pass made (same bytes in ND as its NC1HWC0 base): the base's values.
            const PlanTensor& pt = p.tensors[static_cast<size_t>(std::max(t, 0))];
            if (t >= 0 && !fwd[static_cast<size_t>(t)] && pt.kind == PlanTensor::Kind::View && pt.base >= 0)
                fwd[static_cast<size_t>(t)] = fwd[static_cast<size_t>(pt.base)];
            in.push_back(t >= 0 ? fwd[static_cast<size_t>(t)].get() : nullptr);
        }
        if (st.op_type == "TransData") {  // a layout conversion: the same values
            fwd[static_cast<size_t>(st.out[0])] = fwd[static_cast<size_t>(st.in[0])];
            continue;
        }
        ref::RefNode n{st.name, st.op_type, st.desc.opset, st.desc.attrs, static_cast<int>(st.out.size())};
        std::vector<ref::HostTensor> o = ref::run_ref(n, in);
        for (size_t k = 0; k < st.out.size() && k < o.size(); ++k)
            if (st.out[k] >= 0) {
                o[k].type = p.tensors[static_cast<size_t>(st.out[k])].ref.elem;
                ref::round_to_type(o[k]);
                fwd[static_cast<size_t>(st.out[k])] = std::make_shared<ref::HostTensor>(std::move(o[k]));
            }
    }
    const TrainPlan& tp = ts.tp;
    std::vector<std::shared_ptr<ref::HostTensor>> h(tp.tensors.size());
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        if (t.kind == TrainTensor::Kind::Forward) h[i] = fwd[static_cast<size_t>(t.plan)];
        else if (t.kind == TrainTensor::Kind::Const) h[i] = std::make_shared<ref::HostTensor>(*t.value);
        else if (t.kind == TrainTensor::Kind::Target) h[i] = std::make_shared<ref::HostTensor>(ts.targets[r]);
    }
    auto get = [&](int id) { return host_alias(tp, h, id); };
    for (const TrainItem& it : tp.backward) {
        std::vector<const ref::HostTensor*> in;
        for (int t : it.in) in.push_back(t >= 0 ? get(t) : nullptr);
        if (it.desc.op_type == "TransData") {  // a layout conversion: the same values
            h[static_cast<size_t>(it.out[0])] = std::make_shared<ref::HostTensor>(*in.at(0));
            continue;
        }
        ref::RefNode n{it.desc.name, it.desc.op_type, it.desc.opset, it.desc.attrs, 1};
        std::vector<ref::HostTensor> o = ref::run_ref(n, in);
        o[0].type = tp.tensors[static_cast<size_t>(it.out[0])].ref.elem;
        ref::round_to_type(o[0]);
        h[static_cast<size_t>(it.out[0])] = std::make_shared<ref::HostTensor>(std::move(o[0]));
    }
    std::map<int, ref::HostTensor> g;
    for (size_t i = 0; i < tp.tensors.size(); ++i)
        if (tp.tensors[i].kind == TrainTensor::Kind::WeightGrad) g[static_cast<int>(i)] = *h[i];
    return g;
}

nlohmann::json check_against_reference(const TrainSetup& ts, const std::vector<RankRun>& runs) {
    std::map<int, ref::HostTensor> sum;
    for (uint32_t r = 0; r < runs.size(); ++r) {
        for (auto& [id, t] : host_gradients(ts, r)) {
            auto it = sum.find(id);
            if (it == sum.end()) {
                sum.emplace(id, t);
            } else {
                for (size_t i = 0; i < t.data.size(); ++i) it->second.data[i] += t.data[i];
            }
        }
    }
    const bool fp32 = ts.copt.precision == Precision::FP32;
    uint64_t compared = 0, bad = 0;
    double max_err = 0;
    std::string first;
    // A tensor's absolute tolerance scales with its largest value, and at least with 1 % of the
    // step's largest gradient: a gradient that is zero in exact arithmetic (a BatchNorm's shift
    // before a linear layer and another BatchNorm: MobileNetV2's projections) is the rounding
    // residue of sums of gradient-sized terms.
    double step_scale = 0;
    for (const auto& [id, want] : sum)
        for (double v : want.data) step_scale = std::max(step_scale, std::fabs(v));
    auto compare = [&](const ref::HostTensor& got, const ref::HostTensor& want, const std::string& what) {
        double scale = 0;
        for (double v : want.data) scale = std::max(scale, std::fabs(v));
        const double atol = (fp32 ? 1e-4 : 2e-2) * std::max({scale, 1e-3, 1e-2 * step_scale}), rtol = fp32 ? 1e-3 : 2e-2;
        for (size_t i = 0; i < want.data.size(); ++i) {
            ++compared;
            const double e = std::fabs(got.data[i] - want.data[i]);
            max_err = std::max(max_err, e);
            if (!(e <= atol + rtol * std::fabs(want.data[i]))) {
                if (!bad++)
                    first = what + " element " + std::to_string(i) + ": " + std::to_string(got.data[i]) + ", expected " +
                            std::to_string(want.data[i]);
            }
        }
    };
    for (uint32_t r = 0; r < runs.size(); ++r) {
        for (const auto& [id, want] : sum) {
            const TrainTensor& t = ts.tp.tensors[static_cast<size_t>(id)];
            const std::string name = ts.plan->tensors[static_cast<size_t>(t.plan)].name;
            compare(runs[r].grads.at(id), want, "rank " + std::to_string(r) + " gradient of " + name);
            const PlanTensor& w = ts.plan->tensors[static_cast<size_t>(t.plan)];
            ref::HostTensor upd = *w.weight->host();
            upd.type = w.ref.elem;
            ref::round_to_type(upd);
            if (ts.opt.optimizer == TrainOptions::Optimizer::AdamW) {
                ref::AdamW h;
                h.lr = ts.opt.lr, h.b1 = ts.opt.beta1, h.b2 = ts.opt.beta2, h.eps = ts.opt.epsilon;
                h.wd = ts.opt.weight_decay, h.t = ts.opt.step;
                for (size_t i = 0; i < upd.data.size(); ++i) {
                    double m = 0, v = 0;  // the moments before the first step
                    upd.data[i] = h.step(upd.data[i], want.data[i], m, v);
                }
            } else {
                for (size_t i = 0; i < upd.data.size(); ++i) upd.data[i] -= ts.opt.lr * want.data[i];
            }
            ref::round_to_type(upd);
            compare(runs[r].weights.at(t.plan), upd, "rank " + std::to_string(r) + " updated " + name);
        }
    }
    nlohmann::json j = {{"checked", true}, {"passed", bad == 0}, {"compared", compared}, {"mismatches", bad}, {"max_abs_err", max_err}};
    if (bad) j["first_mismatch"] = first;
    return j;
}

}  // namespace sfumato::graph
