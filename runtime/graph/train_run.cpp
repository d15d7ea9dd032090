// One rank's host program of a training step (train_step.h, run_rank): load, then per step the
// forward through the executor, the backward on the compute stream, each bucket's all-reduce on
// the communication stream, and the update. With dynamic loss scaling the loss gradient carries
// the scale, every reduced bucket is checked for infinities and NaNs on the chip (NonFiniteCheck,
// runtime/ops/optim/nonfinite_check.cpp), the host reads the flags after the last bucket and
// either skips the update and halves the scale or applies it with the unscale fused into the
// optimizer kernels (inv_scale) and doubles the scale after `growth_interval` good steps.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "runtime/graph/executor.h"
#include "runtime/graph/train_step.h"
#include "runtime/ops/node_launch.h"
#include "runtime/ops/optim/multi_sgd.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::graph {

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

// Bucket k's plain-SGD updates (SgdUpdate items, W and G of the bucket's one type) as one
// multi-tensor launch (runtime/ops/optim/multi_sgd.h), named after the bucket.
std::vector<KernelDesc> bucket_update_kernels(const TrainPlan& tp, size_t k, const std::vector<ops::TensorRef>& refs,
                                              const DeviceInfo& dev) {
    std::vector<ops::SgdSegment> segs;
    isa::DType dt = tp.buckets[k].dtype;
    double lr = 0;
    for (size_t u : tp.buckets[k].updates) {
        const TrainItem& it = tp.update[u];
        const ops::TensorRef &w = refs[static_cast<size_t>(it.in[0])], &g = refs[static_cast<size_t>(it.in[1])];
        segs.push_back({w.addr, g.addr, w.numel()});
        dt = w.dtype;
        lr = it.desc.attrs.get_float("lr", 0.01);
    }
    if (segs.empty()) return {};
    return {ops::multi_sgd_kernel(segs, dt, lr, dev, "bucket" + std::to_string(k) + "/sgd")};
}

// The item with other attributes (its operator planned again).
TrainItem with_attrs(const TrainItem& it, ref::Attrs a, const DeviceInfo& dev) {
    TrainItem c = it;
    a.set_owner(c.name);
    c.desc.attrs = std::move(a);
    c.op = ops::make_node_op(c.desc, dev);
    return c;
}

ref::HostTensor read_back(rt::Runtime& rt, const ops::TensorRef& r) {
    std::vector<uint8_t> b(r.storage_bytes());
    rt.memcpy_d2h(b.data(), r.addr, b.size());
    return ref::from_device_bytes(b.data(), r.dtype, r.elem, r.shape);
}

// Device addresses of every train tensor; the constants and master weights uploaded.
std::vector<ops::TensorRef> place(const TrainPlan& tp, const Executor& ex, uint64_t arena, uint64_t grads,
                                  uint64_t state) {
    std::vector<ops::TensorRef> refs(tp.tensors.size());
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        switch (t.kind) {
            case TrainTensor::Kind::Forward: refs[i] = ex.placed(t.plan); break;
            case TrainTensor::Kind::Alias:
                refs[i] = t.ref;
                refs[i].addr = refs[static_cast<size_t>(t.alias)].addr + t.offset;
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
    }
    return refs;
}

// Uploads the tensors whose values come from the host: the backward's constants and the target
// (in the arena: after their last reader other tensors may take their bytes, so every step
// uploads them again) and, at load only, the fp32 master weights.
void upload(rt::Runtime& rt, const TrainSetup& ts, uint32_t r, const std::vector<ops::TensorRef>& refs,
            bool functional, bool load) {
    const TrainPlan& tp = ts.tp;
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        const bool now = t.kind == TrainTensor::Kind::Const || (load && t.kind == TrainTensor::Kind::State && t.value);
        if (!now) continue;
        const std::vector<uint8_t> b = ref::to_device_bytes(*t.value, t.ref.dtype);
        rt.memcpy_h2d(refs[i].addr, functional ? b.data() : nullptr, b.size());
    }
    const ops::TensorRef& t = refs[static_cast<size_t>(tp.target)];
    std::vector<uint8_t> b;
    if (functional) b = ref::to_device_bytes(ts.targets[r], t.dtype);
    rt.memcpy_h2d(t.addr, functional ? b.data() : nullptr, t.storage_bytes());
}

// The overflow check of every bucket (NonFiniteCheck of its gradients) and the flags they write.
std::vector<std::vector<KernelDesc>> check_kernels(rt::Runtime& rt, const TrainPlan& tp, uint64_t grads,
                                                   uint64_t& flags, uint64_t& flag_bytes) {
    std::vector<std::unique_ptr<ops::INodeOp>> ops;
    std::vector<ops::TensorRef> in, out;
    flag_bytes = 0;
    for (size_t k = 0; k < tp.buckets.size(); ++k) {
        const Bucket& b = tp.buckets[k];
        ops::NodeDesc d;
        d.name = "bucket" + std::to_string(k) + "/nonfinite_check";
        d.op_type = "NonFiniteCheck";
        d.opset = 1;
        d.attrs.set_owner(d.name);
        ops::TensorRef g = ops::make_tensor({static_cast<int64_t>(b.bytes / isa::dtype_size(b.dtype))},
                                            tp.tensors[static_cast<size_t>(b.grads[0])].ref.elem);
        g.addr = grads + b.offset;
        d.inputs = {g};
        ops.push_back(ops::make_node_op(d, rt.device_info()));
        in.push_back(g);
        out.push_back(ops.back()->outputs()[0]);
        out.back().addr = flag_bytes;
        flag_bytes += (out.back().storage_bytes() + 511) / 512 * 512;
    }
    flags = rt.malloc(std::max<uint64_t>(flag_bytes, 1));
    std::vector<std::vector<KernelDesc>> ks;
    for (size_t k = 0; k < ops.size(); ++k) {
        out[k].addr += flags;
        ks.push_back(ops[k]->launches({in[k]}, {out[k]}, 0));
        for (KernelDesc& kd : ks.back()) kd.name = "bucket" + std::to_string(k) + "/nonfinite_check";
    }
    return ks;
}

}  // namespace

void run_rank(const TrainSetup& ts, comm::Communicator& comm, uint32_t r, rt::Context& ctx, rt::Device& dev,
              bool functional, MirrorSlots& mirror, const reuse::ReuseOptions& reuse_opt, RankRun& out) {
    const TrainPlan& tp = ts.tp;
    out.ctx = &ctx;
    rt::Runtime rt(dev, ctx);
    const DeviceInfo info = rt.device_info();
    std::unique_ptr<reuse::TimingReuse> reuse;
    if (!(ts.mirror && r != 0)) reuse = std::make_unique<reuse::TimingReuse>(ctx, info, reuse_opt);
    Executor ex(rt, *ts.plan);
    ex.load();
    const uint64_t arena = ex.arena();  // the forward's activations and the backward's tensors
    const uint64_t grads = rt.malloc(std::max<uint64_t>(tp.grad_bytes, 1));
    const uint64_t ws = tp.workspace_bytes ? rt.malloc(tp.workspace_bytes) : 0;
    const uint64_t state = tp.state_bytes ? rt.malloc(tp.state_bytes) : 0;
    for (const auto& [addr, bytes] : {std::pair{state, tp.state_bytes}, std::pair{grads, tp.grad_bytes}}) {
        // The optimizer's states start at zero; so does the gradient block's padding, which the
        // overflow check reads with the gradients.
        if (!addr || !bytes) continue;
        std::vector<uint8_t> zeros(functional ? bytes : 0, 0);
        rt.memcpy_h2d(addr, functional ? zeros.data() : nullptr, bytes);
    }
    const std::vector<ops::TensorRef> refs = place(tp, ex, arena, grads, state);
    upload(rt, ts, r, refs, functional, true);
    const bool scaling = ts.scaling.dynamic;
    // The overflow check of each bucket and its flags (one 32-byte slot per block).
    std::vector<std::vector<KernelDesc>> checks;
    uint64_t flags = 0, flag_bytes = 0;
    if (scaling) checks = check_kernels(rt, tp, grads, flags, flag_bytes);
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
        comm.all_reduce(r, grads + b.offset, grads + b.offset, b.bytes / isa::dtype_size(b.dtype), b.dtype,
                        comm::RedOp::Sum, cs.id);
        out.collectives.push_back({before, ctx.tasks().size()});
        check(ctx, ctx.event_record(reduced[k], cs.id), r);
    };
    // The loss gradient's item (its scale changes with the loss scale).
    size_t loss_item = 0;
    while (loss_item < tp.backward.size() && tp.backward[loss_item].desc.op_type != "LossGrad") ++loss_item;
    std::vector<std::vector<KernelDesc>> bwd, upd, bupd;
    for (const TrainItem& it : tp.backward) bwd.push_back(kernels_of(it, refs, ws));
    const std::set<int> sources = functional ? decision_sources(*ts.plan, tp) : std::set<int>{};
    double S = scaling ? ts.scaling.init : 1.0;
    int64_t good = 0, applied = 0;
    for (int s = 0; s < ts.steps; ++s) {
        if (s > 0) upload(rt, ts, r, refs, functional, false);
        if (scaling) {
            const TrainItem& li = tp.backward.at(loss_item);
            ref::Attrs a = li.desc.attrs;
            a.set("scale", ref::Attr::of_float(ts.opt.loss_scale * S));
            bwd[loss_item] = kernels_of(with_attrs(li, a, info), refs, ws);
        }
        // This step's update kernels: the optimizer's step count and the loss scale's inverse;
        // plain SGD as one multi-tensor launch per bucket (bucket_update_kernels).
        const bool plain = tp.update.empty() || tp.update[0].desc.op_type == "SgdUpdate";
        upd.clear();
        if (plain && bupd.empty())
            for (size_t k = 0; k < tp.buckets.size(); ++k) bupd.push_back(bucket_update_kernels(tp, k, refs, info));
        for (const TrainItem& it : tp.update)
            if (!plain)
                upd.push_back(kernels_of(with_attrs(it, ts.opt.update_attrs(ts.opt.step + applied, 1.0 / S), info),
                                         refs, ws));
        if (functional) {
            // The forward values the backward's decisions read, as this step's forward writes them.
            out.forward_seen.emplace_back();
            ex.watch_steps(
                [&fs = out.forward_seen, i = out.forward_seen.size() - 1, &sources, &p = *ts.plan](
                    size_t st, const std::vector<ref::HostTensor>& o) {
                    for (size_t k = 0; k < o.size() && k < p.steps[st].out.size(); ++k)
                        if (sources.count(p.steps[st].out[k]) && !o[k].data.empty()) fs[i][p.steps[st].out[k]] = o[k];
                },
                true);
        }
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
        StepRecord rec;
        rec.loss_scale = S;
        if (scaling) {
            for (size_t k = 0; k < tp.buckets.size(); ++k) {
                check(ctx, ctx.stream_wait_event(compute.id, reduced[k]), r);
                if (follower) continue;  // rank 0's check stands for this rank's
                for (const KernelDesc& kd : checks[k]) rt.launch(kd, compute);
            }
            // The host reads the flags (a synchronisation, as a framework's scaler does).
            std::vector<uint8_t> fb(flag_bytes, 0);
            rt.memcpy_d2h(fb.data(), flags, flag_bytes);
            bool bad = false;
            if (functional)
                for (size_t o = 0; o + 4 <= fb.size(); o += 4) {
                    float v;
                    std::memcpy(&v, fb.data() + o, 4);
                    bad = bad || std::isnan(v);
                }
            rec.skipped = bad;
        }
        if (!rec.skipped) {
            for (size_t k = 0; k < tp.buckets.size(); ++k) {
                if (!scaling) check(ctx, ctx.stream_wait_event(compute.id, reduced[k]), r);
                if (follower) continue;  // rank 0's update stands for this rank's
                if (plain)
                    for (const KernelDesc& kd : bupd[k]) rt.launch(kd, compute);
                else
                    for (size_t u : tp.buckets[k].updates)
                        for (const KernelDesc& kd : upd[u]) rt.launch(kd, compute);
            }
            ++applied;
        }
        if (scaling) {  // PyTorch GradScaler's rule
            if (rec.skipped) {
                S *= ts.scaling.backoff;
                good = 0;
            } else if (++good == ts.scaling.growth_interval) {
                S *= ts.scaling.growth;
                good = 0;
            }
        }
        out.steps.push_back(rec);
    }
    rt.synchronize_device();
    out.last = ctx.tasks().size();
    if (reuse) {
        reuse->settle();  // the last stand-ins' traffic, before the stats are read
        out.reuse = reuse->counters();
    }
    if (!functional) return;
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        if (t.kind == TrainTensor::Kind::WeightGrad) out.grads[static_cast<int>(i)] = read_back(rt, refs[i]);
        if (t.kind == TrainTensor::Kind::State) out.states[static_cast<int>(i)] = read_back(rt, refs[i]);
    }
    for (const TrainItem& u : tp.update) {
        const int w = tp.tensors[static_cast<size_t>(u.out[0])].plan;
        out.weights[w] = read_back(rt, refs[static_cast<size_t>(u.out[0])]);
    }
}

}  // namespace sfumato::graph
