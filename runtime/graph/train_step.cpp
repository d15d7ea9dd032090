// The training step host program (train_step.h).
#include "runtime/graph/train_step.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <random>
#include <thread>

#include "runtime/graph/executor.h"
#include "runtime/ops/node_launch.h"
#include "runtime/ref/ref_ops.h"
#include "sim/error.h"

namespace sfumato::graph {


void TrainSetup::compile(Graph g, int64_t batch, const DeviceInfo& dev) {
    graph = std::make_unique<Graph>(std::move(g));
    train_graph(*graph);
    train_dropout(*graph, dropout, dropout_masks);
    copt.passes = train_passes(layout);
    copt.streams = 1;
    copt.training = true;
    std::vector<std::vector<int64_t>> shapes;
    try {
        shapes = default_input_shapes(*graph, batch, dims);
    } catch (const InputError& e) {
        throw InputError(std::string(e.what()) + "; train-step takes a symbolic dimension's value as --dim NAME=V");
    }
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
    // Rank r's values come from its own generator (seed 1000 + r), so the ranks are made on the
    // host's cores side by side (a ResNet-50 batch of 32 is 4.8 M values a rank); the values do
    // not depend on how many threads make them.
    struct RankData {
        std::vector<ref::HostTensor> in;
        ref::HostTensor target;
        std::exception_ptr error;
    };
    std::vector<RankData> made(ranks);
    const auto make = [this, with_targets](uint32_t r, RankData& d) {
        std::mt19937 rng(1000 + r);
        std::uniform_real_distribution<double> u(-1, 1);
        for (int t : plan->inputs) {
            const ops::TensorRef& ref = plan->tensors[static_cast<size_t>(t)].ref;
            ref::HostTensor h(ref.elem, ref.shape);
            const auto mask = dropout_masks.find(plan->tensors[static_cast<size_t>(t)].name);
            if (mask != dropout_masks.end()) {  // a Dropout's: 0 with probability ratio, else 1 / (1 - ratio)
                std::bernoulli_distribution drop(mask->second);
                for (double& v : h.data) v = drop(rng) ? 0.0 : 1.0 / (1.0 - mask->second);
            } else if (ref::is_float(ref.elem)) {
                for (double& v : h.data) v = u(rng);
            } else {  // token ids: uniform over the rows of the table a Gather reads with them
                std::uniform_int_distribution<int64_t> id(0, index_bound(*plan, t) - 1);
                for (double& v : h.data) v = static_cast<double>(id(rng));
            }
            ref::round_to_type(h);
            d.in.push_back(std::move(h));
        }
        if (!with_targets) return;
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
        d.target = std::move(t);
    };
    const uint32_t threads = std::min<uint32_t>(ranks, std::max(1u, std::thread::hardware_concurrency()));
    const auto worker = [&](uint32_t first) {
        for (uint32_t r = first; r < ranks; r += threads) {
            try {
                make(r, made[r]);
            } catch (...) {
                made[r].error = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    for (uint32_t w = 1; w < threads; ++w) pool.emplace_back(worker, w);
    worker(0);
    for (std::thread& th : pool) th.join();
    for (RankData& d : made) {
        if (d.error) std::rethrow_exception(d.error);  // the lowest rank's error (the same for every rank)
        inputs.push_back(std::move(d.in));
        if (with_targets) targets.push_back(std::move(d.target));
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

std::vector<size_t> decision_inputs(const TrainItem& it) {
    const std::string& op = it.desc.op_type;
    // ActivationGrad(x, dy) = f'(x) dy: a kinked f (HardSigmoid, LeakyRelu, Abs, ...) switches
    // f' at a threshold; a smooth f' moves by the forward's rounding only, so x from the device
    // costs nothing there. (Comparisons feeding a Where, such as PRelu's or Max's, are
    // forward-only items and follow the device through Where's condition.)
    if (op == "ReluGrad" || op == "ClipGrad" || op == "ActivationGrad") return {0};
    if (op == "MaxPoolGrad") return {0, 1};
    if (op == "Where") return {0};
    return {};
}

namespace {

// Per train tensor: its value is a function of forward values and constants only (no gradient
// enters it): forward tensors, constants, the target, and the outputs of backward items that read
// only such tensors (a TransData or Slice of an activation, an Equal of two, a recomputation).
std::vector<char> forward_only(const TrainPlan& tp) {
    std::vector<char> f(tp.tensors.size(), 0);
    auto of = [&](int id) {
        while (tp.tensors[static_cast<size_t>(id)].kind == TrainTensor::Kind::Alias) id = tp.tensors[static_cast<size_t>(id)].alias;
        return f[static_cast<size_t>(id)] != 0;
    };
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor::Kind k = tp.tensors[i].kind;
        f[i] = k == TrainTensor::Kind::Forward || k == TrainTensor::Kind::Const || k == TrainTensor::Kind::Target;
    }
    for (const TrainItem& it : tp.backward) {
        bool all = true;
        for (int t : it.in) all = all && (t < 0 || of(t));
        for (int t : it.out)
            if (t >= 0) f[static_cast<size_t>(t)] = all;
    }
    for (size_t i = 0; i < tp.tensors.size(); ++i) f[i] = of(static_cast<int>(i));
    return f;
}

}  // namespace

std::set<int> decision_sources(const Plan& p, const TrainPlan& tp) {
    const std::vector<char> fo = forward_only(tp);
    std::vector<int> item_of(tp.tensors.size(), -1), step_of(p.tensors.size(), -1);
    for (size_t i = 0; i < tp.backward.size(); ++i)
        for (int t : tp.backward[i].out)
            if (t >= 0) item_of[static_cast<size_t>(t)] = static_cast<int>(i);
    for (size_t s = 0; s < p.steps.size(); ++s)
        for (int t : p.steps[s].out)
            if (t >= 0) step_of[static_cast<size_t>(t)] = static_cast<int>(s);
    std::set<int> out, seen_plan;
    std::set<int> seen;
    // A plan tensor: a computing step's output is recorded; a view's or a TransData's source is
    // followed (the host gives them their source's values).
    std::function<void(int)> plan_tensor = [&](int t) {
        if (t < 0 || !seen_plan.insert(t).second) return;
        const PlanTensor& pt = p.tensors[static_cast<size_t>(t)];
        const int s = step_of[static_cast<size_t>(t)];
        if (s < 0) {
            if (pt.kind == PlanTensor::Kind::View && pt.base >= 0) plan_tensor(pt.base);
            return;
        }
        const PlanStep& st = p.steps[static_cast<size_t>(s)];
        if (st.view || st.op_type == "TransData") {
            for (int i : st.in) plan_tensor(i);
            return;
        }
        out.insert(t);
    };
    std::function<void(int)> train_tensor = [&](int id) {
        if (id < 0 || !fo[static_cast<size_t>(id)] || !seen.insert(id).second) return;
        const TrainTensor& t = tp.tensors[static_cast<size_t>(id)];
        if (t.kind == TrainTensor::Kind::Alias) return train_tensor(t.alias);
        if (t.kind == TrainTensor::Kind::Forward) return plan_tensor(t.plan);
        if (item_of[static_cast<size_t>(id)] >= 0)
            for (int i : tp.backward[static_cast<size_t>(item_of[static_cast<size_t>(id)])].in) train_tensor(i);
    };
    for (const TrainItem& it : tp.backward)
        for (size_t k : decision_inputs(it))
            if (k < it.in.size()) train_tensor(it.in[k]);
    return out;
}

std::map<int, ref::HostTensor> host_gradients(const TrainSetup& ts, uint32_t r,
                                              const std::map<int, ref::HostTensor>* weights, double loss_mult,
                                              const std::map<int, ref::HostTensor>* device_forward) {
    const Plan& p = *ts.plan;
    std::vector<std::shared_ptr<ref::HostTensor>> fwd(p.tensors.size());
    // The device's forward values (dev), where given; views and TransData steps of them follow.
    std::vector<std::shared_ptr<ref::HostTensor>> dev(p.tensors.size());
    if (device_forward)
        for (const auto& [t, v] : *device_forward)
            if (t >= 0 && static_cast<size_t>(t) < dev.size() && !v.data.empty())
                dev[static_cast<size_t>(t)] = std::make_shared<ref::HostTensor>(v);
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlanTensor& t = p.tensors[i];
        if (t.kind != PlanTensor::Kind::Weight || !t.weight) continue;
        const auto given = weights ? weights->find(static_cast<int>(i)) : std::map<int, ref::HostTensor>::const_iterator{};
        auto h = std::make_shared<ref::HostTensor>(weights && given != weights->end() ? given->second
                                                                                      : *t.weight->host());
        h->type = t.ref.elem;
        ref::round_to_type(*h);
        fwd[i] = h;
    }
    for (size_t i = 0; i < p.inputs.size(); ++i) fwd[static_cast<size_t>(p.inputs[i])] = std::make_shared<ref::HostTensor>(ts.inputs[r][i]);
    for (const PlanStep& st : p.steps) {
        std::vector<const ref::HostTensor*> in, din;
        bool other = false;  // a device value differs from the host's among the inputs
        for (int t : st.in) {
            // A view the layout pass made (same bytes in ND as its NC1HWC0 base): the base's values.
            const PlanTensor& pt = p.tensors[static_cast<size_t>(std::max(t, 0))];
            if (t >= 0 && !fwd[static_cast<size_t>(t)] && pt.kind == PlanTensor::Kind::View && pt.base >= 0) {
                fwd[static_cast<size_t>(t)] = fwd[static_cast<size_t>(pt.base)];
                dev[static_cast<size_t>(t)] = dev[static_cast<size_t>(pt.base)];
            }
            in.push_back(t >= 0 ? fwd[static_cast<size_t>(t)].get() : nullptr);
            const bool d = t >= 0 && dev[static_cast<size_t>(t)];
            other = other || d;
            din.push_back(d ? dev[static_cast<size_t>(t)].get() : in.back());
        }
        if (st.op_type == "TransData") {  // a layout conversion: the same values
            fwd[static_cast<size_t>(st.out[0])] = fwd[static_cast<size_t>(st.in[0])];
            dev[static_cast<size_t>(st.out[0])] = dev[static_cast<size_t>(st.in[0])];
            continue;
        }
        ref::RefNode n{st.name, st.op_type, st.desc.opset, st.desc.attrs, static_cast<int>(st.out.size())};
        std::vector<ref::HostTensor> o = ref::run_ref(n, in);
        // A view of device values: the same view of them (a computing step's output is recorded).
        std::vector<ref::HostTensor> d;
        if (st.view && other) d = ref::run_ref(n, din);
        for (size_t k = 0; k < st.out.size() && k < o.size(); ++k)
            if (st.out[k] >= 0) {
                o[k].type = p.tensors[static_cast<size_t>(st.out[k])].ref.elem;
                ref::round_to_type(o[k]);
                fwd[static_cast<size_t>(st.out[k])] = std::make_shared<ref::HostTensor>(std::move(o[k]));
                if (k < d.size() && !dev[static_cast<size_t>(st.out[k])]) {
                    d[k].type = o[k].type;
                    ref::round_to_type(d[k]);
                    dev[static_cast<size_t>(st.out[k])] = std::make_shared<ref::HostTensor>(std::move(d[k]));
                }
            }
    }
    const TrainPlan& tp = ts.tp;
    // h: the host's values; hd: the same where they derive from the device's forward (only the
    // tensors that depend on forward values alone, read by the backward's decisions).
    std::vector<std::shared_ptr<ref::HostTensor>> h(tp.tensors.size()), hd(tp.tensors.size());
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        if (t.kind == TrainTensor::Kind::Forward) {
            h[i] = fwd[static_cast<size_t>(t.plan)];
            hd[i] = dev[static_cast<size_t>(t.plan)] ? dev[static_cast<size_t>(t.plan)] : h[i];
        } else if (t.kind == TrainTensor::Kind::Const) {
            h[i] = hd[i] = std::make_shared<ref::HostTensor>(*t.value);
        } else if (t.kind == TrainTensor::Kind::Target) {
            h[i] = hd[i] = std::make_shared<ref::HostTensor>(ts.targets[r]);
        }
    }
    const std::vector<char> fo = device_forward ? forward_only(tp) : std::vector<char>(tp.tensors.size(), 0);
    auto get = [&](int id) { return host_alias(tp, h, id); };
    auto get_dev = [&](int id) { return host_alias(tp, hd, id); };
    for (const TrainItem& it : tp.backward) {
        std::vector<const ref::HostTensor*> in;
        for (int t : it.in) in.push_back(t >= 0 ? get(t) : nullptr);
        // Forward-only items also run on the device's forward values (when any differs).
        bool derived = device_forward != nullptr, other = false;
        std::vector<const ref::HostTensor*> din;
        for (size_t k = 0; k < it.in.size() && derived; ++k) {
            const int t = it.in[k];
            derived = t < 0 || fo[static_cast<size_t>(t)];
            din.push_back(t >= 0 && derived ? get_dev(t) : in[k]);
            other = other || din.back() != in[k];
        }
        const int out = it.out[0];
        if (it.desc.op_type == "TransData") {  // a layout conversion: the same values
            h[static_cast<size_t>(out)] = std::make_shared<ref::HostTensor>(*in.at(0));
            if (derived) hd[static_cast<size_t>(out)] = other ? std::make_shared<ref::HostTensor>(*din.at(0)) : h[static_cast<size_t>(out)];
            continue;
        }
        // The decisions from the device's forward.
        if (device_forward)
            for (size_t k : decision_inputs(it))
                if (k < it.in.size() && it.in[k] >= 0 && fo[static_cast<size_t>(it.in[k])]) in[k] = get_dev(it.in[k]);
        ref::RefNode n{it.desc.name, it.desc.op_type, it.desc.opset, it.desc.attrs, 1};
        if (it.desc.op_type == "LossGrad" && loss_mult != 1)
            n.attrs.set("scale", ref::Attr::of_float(it.desc.attrs.get_float("scale", 1) * loss_mult));
        const ref::ElemType type = tp.tensors[static_cast<size_t>(out)].ref.elem;
        auto eval = [&](const std::vector<const ref::HostTensor*>& args) {
            std::vector<ref::HostTensor> o = ref::run_ref(n, args);
            o[0].type = type;
            ref::round_to_type(o[0]);
            return std::make_shared<ref::HostTensor>(std::move(o[0]));
        };
        h[static_cast<size_t>(out)] = eval(in);
        if (derived) hd[static_cast<size_t>(out)] = other ? eval(din) : h[static_cast<size_t>(out)];
    }
    std::map<int, ref::HostTensor> g;
    for (size_t i = 0; i < tp.tensors.size(); ++i)
        if (tp.tensors[i].kind == TrainTensor::Kind::WeightGrad) g[static_cast<int>(i)] = *h[i];
    return g;
}

namespace {

// Comparison of device values with the host's, with the tolerance of the step's precision.
struct Comparer {
    bool fp32 = true;
    double step_scale = 0;  // the step's largest gradient
    uint64_t compared = 0, bad = 0;
    double max_err = 0;
    std::string first;

    // A tensor's absolute tolerance scales with its largest value, and at least with 1 % of the
    // step's largest gradient: a gradient that is zero in exact arithmetic (a BatchNorm's shift
    // before a linear layer and another BatchNorm: MobileNetV2's projections) is the rounding
    // residue of sums of gradient-sized terms.
    void operator()(const std::vector<double>& got, const std::vector<double>& want, const std::string& what,
                    double floor) {
        double scale = 0;
        for (double v : want) scale = std::max(scale, std::fabs(v));
        const double atol = (fp32 ? 1e-4 : 2e-2) * std::max({scale, 1e-3, floor}), rtol = fp32 ? 1e-3 : 2e-2;
        for (size_t i = 0; i < want.size(); ++i) {
            ++compared;
            const double e = std::fabs(got.at(i) - want[i]);
            if (std::isfinite(e)) max_err = std::max(max_err, e);
            if (!(e <= atol + rtol * std::fabs(want[i])) && !bad++)
                first = what + " element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", expected " +
                        std::to_string(want[i]);
        }
    }
    void fail(const std::string& what) {
        if (!bad++) first = what;
    }
};

// The host's replay of the steps: per update item the values the rule updates (the fp32 master
// copy, or the weight in its type) and its states; per weight its value in its type.
struct HostReplay {
    struct Weight {
        std::vector<double> w;
        std::vector<double> s[2];
    };
    const TrainSetup& ts;
    std::map<int, ref::HostTensor> weights;  // plan tensor -> value in its type
    std::map<size_t, Weight> host;           // per update item
    std::map<int, ref::HostTensor> sum;      // the last step's reduced gradients
    double scale = 1;
    int64_t good = 0, applied = 0;

    explicit HostReplay(const TrainSetup& t) : ts(t) {
        scale = ts.scaling.dynamic ? ts.scaling.init : 1.0;
        for (size_t u = 0; u < ts.tp.update.size(); ++u) {
            const int w = ts.tp.tensors[static_cast<size_t>(ts.tp.update[u].out[0])].plan;
            const PlanTensor& pt = ts.plan->tensors[static_cast<size_t>(w)];
            ref::HostTensor v = *pt.weight->host();
            v.type = ts.opt.master ? ref::ElemType::Float : pt.ref.elem;
            ref::round_to_type(v);
            Weight& h = host[u];
            h.w = v.data;
            h.s[0].assign(v.data.size(), 0.0), h.s[1].assign(v.data.size(), 0.0);
            v.type = pt.ref.elem;
            ref::round_to_type(v);
            weights[w] = v;
        }
    }

    // One step over every rank's data; the device's decision to skip it is checked.
    void step(const std::vector<RankRun>& runs, const StepRecord& device, size_t k, Comparer& cmp) {
        sum.clear();
        for (uint32_t r = 0; r < runs.size(); ++r)
            for (auto& [id, t] : host_gradients(ts, r, &weights, scale,
                                                k < runs[r].forward_seen.size() ? &runs[r].forward_seen[k] : nullptr)) {
                auto it = sum.find(id);
                if (it == sum.end()) sum.emplace(id, t);
                else
                    for (size_t i = 0; i < t.data.size(); ++i) it->second.data[i] += t.data[i];
            }
        bool overflow = false;
        for (auto& [id, t] : sum) {
            ref::round_to_type(t);  // the all-reduce sums in the gradient's type
            for (double v : t.data) overflow = overflow || !std::isfinite(v);
        }
        if (ts.scaling.dynamic && overflow != device.skipped)
            cmp.fail("step " + std::to_string(k + 1) + ": the device " + (device.skipped ? "skipped" : "applied") +
                     " it, the host reference's gradients are " + (overflow ? "not finite" : "finite"));
        if (!device.skipped) {
            const ref::OptimizerRule rule = ts.opt.rule(ts.opt.step + applied, 1.0 / scale);
            for (size_t u = 0; u < ts.tp.update.size(); ++u) {
                const TrainItem& it = ts.tp.update[u];
                Weight& h = host[u];
                rule.apply(h.w, sum.at(it.in[1]).data, &h.s[0], &h.s[1]);
                ref::HostTensor& wt = weights[ts.tp.tensors[static_cast<size_t>(it.out[0])].plan];
                wt.data = h.w;
                ref::round_to_type(wt);
                if (!ts.opt.master) h.w = wt.data;  // the device keeps W in its type
            }
            ++applied;
        }
        if (!ts.scaling.dynamic) return;
        if (overflow) {
            scale *= ts.scaling.backoff, good = 0;
        } else if (++good == ts.scaling.growth_interval) {
            scale *= ts.scaling.growth, good = 0;
        }
    }

    // Rank r's last reduced gradients (unless that step was skipped), weights, states and master.
    void compare(const RankRun& run, uint32_t r, Comparer& cmp) const {
        const TrainPlan& tp = ts.tp;
        const std::string rank = "rank " + std::to_string(r);
        if (run.steps.empty() || !run.steps.back().skipped)
            for (const auto& [id, want] : sum) {
                const int w = tp.tensors[static_cast<size_t>(id)].plan;
                cmp(run.grads.at(id).data, want.data, rank + " gradient of " + ts.plan->tensors[static_cast<size_t>(w)].name,
                    1e-2 * cmp.step_scale);
            }
        const int states = ref::OptimizerRule::states(ts.opt.rule(1, 1).kind);
        for (size_t u = 0; u < tp.update.size(); ++u) {
            const TrainItem& it = tp.update[u];
            const int w = tp.tensors[static_cast<size_t>(it.out[0])].plan;
            const std::string name = ts.plan->tensors[static_cast<size_t>(w)].name;
            cmp(run.weights.at(w).data, weights.at(w).data, rank + " updated " + name, 1e-2 * cmp.step_scale);
            // The states the kernel rewrote (momentum, moments) and the master copy, read back.
            const Weight& h = host.at(u);
            for (int k = 0; k < states && it.desc.op_type != "SgdUpdate"; ++k)
                cmp(run.states.at(it.in[2 + static_cast<size_t>(k)]).data, h.s[k],
                    rank + " optimizer state " + std::to_string(k) + " of " + name, 0);
            if (ts.opt.master) cmp(run.states.at(it.in.back()).data, h.w, rank + " master weights of " + name, 0);
        }
    }
};

}  // namespace

nlohmann::json check_against_reference(const TrainSetup& ts, const std::vector<RankRun>& runs) {
    Comparer cmp;
    cmp.fp32 = ts.copt.precision == Precision::FP32;
    HostReplay replay(ts);
    for (size_t k = 0; k < runs[0].steps.size(); ++k) replay.step(runs, runs[0].steps[k], k, cmp);
    for (const auto& [id, want] : replay.sum)
        for (double v : want.data) cmp.step_scale = std::max(cmp.step_scale, std::isfinite(v) ? std::fabs(v) : 0.0);
    for (uint32_t r = 0; r < runs.size(); ++r) replay.compare(runs[r], r, cmp);
    // The forward tensors (per rank and step) whose device values gave the backward's decisions.
    uint64_t decisions = 0;
    for (const RankRun& rr : runs)
        for (const auto& seen : rr.forward_seen) decisions += seen.size();
    nlohmann::json j = {{"checked", true},       {"passed", cmp.bad == 0}, {"compared", cmp.compared},
                        {"mismatches", cmp.bad}, {"max_abs_err", cmp.max_err}, {"device_decisions", decisions}};
    if (cmp.bad) j["first_mismatch"] = cmp.first;
    return j;
}

}  // namespace sfumato::graph
