// Executor (see executor.h).
#include "runtime/graph/executor.h"

#include "runtime/ops/node_launch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <systemc>

#include "runtime/ops/transdata.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"
#include "sim/trace.h"

namespace sfumato::graph {

namespace {
void check(rt::Runtime& rt, rt::Status s) {
    if (s != rt::Status::Ok) throw InputError(rt.context().last_error());
}
}  // namespace

Executor::Executor(rt::Runtime& rt, const Plan& plan) : m_rt(rt), m_plan(plan) {}

Executor::~Executor() = default;

void Executor::bind(const std::string& name, uint64_t addr) { m_bound[name] = addr; }

void Executor::load() {
    const uint64_t t0 = now_tick().v;
    const Plan& p = m_plan;
    const bool functional = m_rt.functional();
    if (p.memory.weight_bytes) m_weights = m_rt.malloc(p.memory.weight_bytes);
    if (p.memory.peak_bytes) m_arena = m_rt.malloc(p.memory.peak_bytes);
    m_refs.resize(p.tensors.size());
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlanTensor& t = p.tensors[i];
        m_refs[i] = t.ref;
        if (t.kind == PlanTensor::Kind::Weight) {
            m_refs[i].addr = m_weights + t.offset;
        } else if (t.kind == PlanTensor::Kind::External) {
            auto b = m_bound.find(t.name);
            if (b == m_bound.end())
                throw InputError("executor: external input '" + t.name + "' has no device address (bind it)");
            m_refs[i].addr = b->second;
        } else if (t.kind != PlanTensor::Kind::View) {
            m_refs[i].addr = m_arena + t.offset;
        }
    }
    m_fed.clear();
    for (size_t i = 0; i < p.inputs.size(); ++i)
        if (p.tensors[static_cast<size_t>(p.inputs[i])].kind != PlanTensor::Kind::External) m_fed.push_back(i);
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        if (p.tensors[i].kind != PlanTensor::Kind::View) continue;
        size_t r = i;
        while (p.tensors[r].kind == PlanTensor::Kind::View) r = static_cast<size_t>(p.tensors[r].base);
        m_refs[i].addr = m_refs[r].addr + p.tensors[i].view_offset;
    }
    // Weights: one staging buffer, one copy.
    if (p.memory.weight_bytes) {
        std::vector<uint8_t> staging;
        if (functional) {
            staging.assign(p.memory.weight_bytes, 0);
            for (const PlanTensor& t : p.tensors) {
                if (t.kind != PlanTensor::Kind::Weight || t.bytes == 0) continue;  // 0: not read
                std::vector<uint8_t> b = t.weight->to_device(t.ref.dtype);
                if (t.ref.format != ops::Format::ND)
                    b = ops::host_to_format(b, t.ref.shape, t.ref.dtype, t.ref.format);
                if (!b.empty())
                    std::memcpy(staging.data() + t.offset, b.data(), std::min<uint64_t>(b.size(), t.bytes));
            }
        }
        m_rt.memcpy_h2d(m_weights, functional ? staging.data() : nullptr, p.memory.weight_bytes);
    }
    // Streams (plan stream 0 is the default stream) and events.
    m_streams.assign(1, m_rt.default_stream().id);
    for (int s = 1; s < p.num_streams; ++s) m_streams.push_back(m_rt.create_stream(0).id);
    for (int e = 0; e < p.num_events; ++e) {
        rt::EventId id = 0;
        check(m_rt, m_rt.context().event_create(&id));
        m_events.push_back(id);
    }
    // Kernel arguments are fixed from here on.
    m_kernels.assign(p.steps.size(), {});
    m_step_ops.assign(p.steps.size(), nullptr);
    m_known_ids.assign(p.steps.size(), {});
    for (size_t s = 0; s < p.steps.size(); ++s) fix_kernels(s);
    find_id_steps();
    m_loaded = true;
    m_load_ps = now_tick().v - t0;
}

void Executor::find_id_steps() {
    const Plan& p = m_plan;
    m_id_steps.clear();
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const PlanStep& st = p.steps[s];
        if (st.view || !st.op || st.op_type != "Gather" || st.in.size() < 2 || st.in[1] < 0) continue;
        if (st.desc.attrs.get_int("axis", 0) != 0 || st.desc.attrs.has("host_ids")) continue;
        int t = st.in[1];  // through views of the whole tensor
        while (p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View &&
               p.tensors[static_cast<size_t>(t)].view_offset == 0)
            t = p.tensors[static_cast<size_t>(t)].base;
        if (ref::is_float(p.tensors[static_cast<size_t>(t)].ref.elem)) continue;
        for (size_t j = 0; j < m_fed.size(); ++j)
            if (p.inputs[m_fed[j]] == t && p.tensors[static_cast<size_t>(t)].ref.numel() == st.desc.inputs[1].numel())
                m_id_steps.push_back({s, j});
    }
}

void Executor::know_ids(const std::vector<ref::HostTensor>& inputs) {
    for (const auto& [s, j] : m_id_steps) {
        const PlanStep& st = m_plan.steps[s];
        std::vector<int64_t> ids(inputs[j].data.size());
        const int64_t V = st.desc.inputs[0].shape.empty() ? 0 : st.desc.inputs[0].shape[0];
        if (V <= 0) continue;
        for (size_t i = 0; i < ids.size(); ++i) {
            // As the row gather treats a loaded id: a negative one wraps, then clamped into [0, V)
            // (in double, so a value no int64 holds, NaN included, converts to a valid row).
            double v = inputs[j].data[i];
            if (v < 0) v += static_cast<double>(V);
            ids[i] = std::isnan(v) ? 0 : static_cast<int64_t>(std::clamp(v, 0.0, static_cast<double>(V - 1)));
        }
        if (ids == m_known_ids[s] || ids.size() != st.desc.inputs[1].numel()) continue;
        ops::NodeDesc d = st.desc;
        d.attrs.set("known_ids", ref::Attr::of_ints(ids));
        m_step_ops[s] = std::shared_ptr<ops::INodeOp>(ops::make_node_op(d, m_rt.device_info()));
        m_known_ids[s] = std::move(ids);
        fix_kernels(s);
    }
}

void Executor::fix_kernels(size_t s) {
    const Plan& p = m_plan;
    const PlanStep& st = p.steps[s];
    m_kernels[s].clear();
    if (st.view || !st.op) return;
    const ops::INodeOp& op = m_step_ops.size() > s && m_step_ops[s] ? *m_step_ops[s] : *st.op;
    auto placed = [&](const std::vector<int>& ts) {
        std::vector<ops::TensorRef> v;
        for (int t : ts) {
            if (t < 0) {
                ops::TensorRef r;
                r.present = false;
                v.push_back(r);
            } else {
                v.push_back(m_refs[static_cast<size_t>(t)]);
            }
        }
        return v;
    };
    const std::vector<ops::TensorRef> in = placed(st.in), out = placed(st.out);
    const uint64_t ws = st.workspace >= 0 ? m_refs[static_cast<size_t>(st.workspace)].addr : 0;
    const uint64_t ws_bytes = st.workspace >= 0 ? p.tensors[static_cast<size_t>(st.workspace)].bytes : 0;
    if (op.workspace_bytes() > ws_bytes)
        throw InputError("executor: step '" + st.name + "' needs " + std::to_string(op.workspace_bytes()) +
                         " bytes of workspace, the plan placed " + std::to_string(ws_bytes));
    m_kernels[s] = op.launches(in, out, ws);
    ops::stamp_node_launch(m_kernels[s], st.desc, in, out, ws, ws_bytes);
    for (size_t k = 0; k < m_kernels[s].size(); ++k) {
        KernelDesc& kd = m_kernels[s][k];
        kd.name = m_kernels[s].size() == 1 ? st.name : st.name + "#" + std::to_string(k);
        if (kd.type.empty()) kd.type = st.op_type;
    }
}

void Executor::refresh_step(size_t s) {
    if (!m_loaded) throw InputError("executor: refresh_step before load");
    fix_kernels(s);
}

void Executor::run(const std::vector<ref::HostTensor>& inputs) {
    const uint64_t t0 = now_tick().v;
    issue_steps(inputs);
    m_rt.synchronize_device();
    m_run_ps.push_back(now_tick().v - t0);
}

void Executor::issue(const std::vector<ref::HostTensor>& inputs) { issue_steps(inputs); }

void Executor::issue_steps(const std::vector<ref::HostTensor>& inputs) {
    if (!m_loaded) throw InputError("executor: run before load");
    const Plan& p = m_plan;
    if (inputs.size() != m_fed.size())
        throw InputError("executor: " + std::to_string(inputs.size()) + " inputs given, the model has " +
                         std::to_string(m_fed.size()));
    const bool functional = m_rt.functional();
    for (size_t j = 0; j < inputs.size(); ++j) {
        const size_t i = m_fed[j];
        const ops::TensorRef& r = m_refs[static_cast<size_t>(p.inputs[i])];
        if (auto b = p.bound_inputs.find(i); b != p.bound_inputs.end() && functional) {
            ref::HostTensor t = inputs[j];
            t.type = b->second.type;
            ref::round_to_type(t);
            if (t.data != b->second.data)
                throw InputError("input '" + p.tensors[static_cast<size_t>(p.inputs[i])].name +
                                 "' was bound at compile time (a shape input); compile again for new values");
        }
        if (p.bound_inputs.count(i) || r.storage_bytes() == 0) continue;  // uploaded with the weights / empty
        if (inputs[j].shape != r.shape)
            throw InputError("input '" + p.tensors[static_cast<size_t>(p.inputs[i])].name + "': shape " +
                             ref::shape_str(inputs[j].shape) + ", the plan was compiled for " +
                             ref::shape_str(r.shape));
        std::vector<uint8_t> bytes;
        if (functional) {
            ref::HostTensor t = inputs[j];
            t.type = r.elem;
            ref::round_to_type(t);
            bytes = ref::to_device_bytes(t, r.dtype);
        }
        if (r.storage_bytes())  // an empty input has nothing to upload
            m_rt.memcpy_h2d(r.addr, functional ? bytes.data() : nullptr, r.storage_bytes());
    }
    know_ids(inputs);
    m_step_tasks.assign(p.steps.size(), {});
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const PlanStep& st = p.steps[s];
        if (st.view) continue;
        const uint32_t stream = m_streams[static_cast<size_t>(st.stream)];
        for (int e : st.waits)
            check(m_rt, m_rt.context().stream_wait_event(stream, m_events[static_cast<size_t>(e)]));
        if (!m_skip_kernels)
            for (const KernelDesc& k : m_kernels[s]) m_step_tasks[s].push_back(m_rt.launch(k, rt::Stream{stream}));
        if (st.record >= 0)
            check(m_rt, m_rt.context().event_record(m_events[static_cast<size_t>(st.record)], stream));
        if (m_watch && functional && !m_step_tasks[s].empty()) watch_step(s);
        if (m_on_step) m_on_step(s);
    }
}

// The step's last task completes after its earlier ones (one stream, in order). A method
// process waits for it and reads the outputs through the functional memory's backdoor, in the
// delta the task completes: no consumer of the outputs has started, so none of their memory has
// been reused yet.
void Executor::watch_step(size_t s) {
    std::shared_ptr<Task> last = m_step_tasks[s].back();
    const StepWatch watch = m_watch;  // the watch of this issue (a later issue may set another)
    const bool nc1hwc0 = m_watch_5hd;
    if (last->done) {
        watch(s, read_step_outputs(s, nc1hwc0));
        return;
    }
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.dont_initialize();
    o.set_sensitivity(&last->done_event);
    auto fired = std::make_shared<bool>(false);
    sc_core::sc_spawn(
        [this, s, last, fired, watch, nc1hwc0] {
            if (*fired || !last->done) return;
            *fired = true;
            watch(s, read_step_outputs(s, nc1hwc0));
        },
        sc_core::sc_gen_unique_name("graph_step_watch"), &o);
}

namespace {

// An NC1HWC0 tensor's storage [N, C1, spatial..., C0] as its logical [N, C, spatial...] values
// (the padding channels dropped).
ref::HostTensor logical_of_nc1hwc0(const std::vector<uint8_t>& bytes, const ops::TensorRef& r) {
    const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(r.dtype));
    const int64_t n = r.shape[0], c = r.shape[1], c1 = (c + c0 - 1) / c0;
    int64_t pix = 1;
    for (size_t d = 2; d < r.shape.size(); ++d) pix *= r.shape[d];
    const ref::HostTensor st = ref::from_device_bytes(bytes.data(), r.dtype, r.elem, {n, c1, pix, c0});
    ref::HostTensor out(r.elem, r.shape);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < pix; ++p)
                out.data[static_cast<size_t>((i * c + ch) * pix + p)] =
                    st.data[static_cast<size_t>(((i * c1 + ch / c0) * pix + p) * c0 + ch % c0)];
    return out;
}

}  // namespace

std::vector<ref::HostTensor> Executor::read_step_outputs(size_t s, bool nc1hwc0) {
    std::vector<ref::HostTensor> outs;
    IBackingStore* gm = m_rt.device().dev().gm();
    for (int t : m_plan.steps[s].out) {
        outs.emplace_back();
        if (t < 0 || !gm) continue;
        const ops::TensorRef& r = m_refs[static_cast<size_t>(t)];
        const bool c0 = nc1hwc0 && r.format == ops::Format::NC1HWC0 && r.shape.size() >= 3;
        if ((r.format != ops::Format::ND && !c0) || !r.contiguous() || r.storage_bytes() == 0) continue;
        std::vector<uint8_t> bytes(r.storage_bytes());
        gm->read(r.addr, bytes.data(), bytes.size());
        outs.back() = c0 ? logical_of_nc1hwc0(bytes, r) : ref::from_device_bytes(bytes.data(), r.dtype, r.elem, r.shape);
    }
    return outs;
}

std::vector<ref::HostTensor> Executor::outputs() {
    std::vector<ref::HostTensor> out;
    const bool functional = m_rt.functional();
    for (int t : m_plan.outputs) {
        const ops::TensorRef& r = m_refs[static_cast<size_t>(t)];
        std::vector<uint8_t> bytes(r.storage_bytes());
        if (!bytes.empty())  // an empty output (a zero-size dimension) has nothing to copy
            m_rt.memcpy_d2h(functional ? bytes.data() : nullptr, r.addr, bytes.size());
        ref::HostTensor h = functional ? ref::from_device_bytes(bytes.data(), r.dtype, r.elem, r.shape)
                                       : ref::HostTensor(r.elem, r.shape);
        out.push_back(std::move(h));
    }
    return out;
}

void Executor::unload() {
    if (!m_loaded) return;
    for (uint32_t e : m_events) check(m_rt, m_rt.context().event_destroy(e));
    for (size_t s = 1; s < m_streams.size(); ++s) check(m_rt, m_rt.context().stream_destroy(m_streams[s]));
    m_events.clear();
    m_streams.clear();
    if (m_weights) m_rt.free(m_weights);
    if (m_arena) m_rt.free(m_arena);
    m_weights = m_arena = 0;
    m_loaded = false;
}

void Executor::emit_trace() const {
    TraceHub* hub = m_rt.device().trace();
    if (!hub || !hub->on(TraceLevel::Op)) return;
    ITraceSink& sink = *hub->sink();
    std::vector<TrackId> tracks;
    for (int s = 0; s < m_plan.num_streams; ++s)
        tracks.push_back(sink.track("device", "graph ops (stream " + std::to_string(s) + ")", 50 + s));
    for (size_t s = 0; s < m_plan.steps.size(); ++s) {
        const auto& tasks = m_step_tasks.size() > s ? m_step_tasks[s] : std::vector<std::shared_ptr<Task>>{};
        if (tasks.empty()) continue;
        Tick b = tasks.front()->start_tick, e = tasks.front()->end_tick;
        bool done = true;
        for (const auto& t : tasks) {
            done = done && t->done;
            b = Tick(std::min(b.v, t->start_tick.v));
            e = Tick(std::max(e.v, t->end_tick.v));
        }
        if (!done) continue;
        const PlanStep& st = m_plan.steps[s];
        sink.slice_str(tracks[static_cast<size_t>(st.stream)], st.name + " (" + st.op_type + ")", b, e,
                       nullptr, 0);
    }
}

CompareResult compare(const ref::HostTensor& got, const ref::HostTensor& want, double atol, double rtol) {
    CompareResult r;
    if (got.shape != want.shape) {
        r.passed = false;
        r.detail = "shape " + ref::shape_str(got.shape) + ", expected " + ref::shape_str(want.shape);
        r.max_abs_err = INFINITY;
        return r;
    }
    for (double v : want.data)
        if (std::isfinite(v)) r.max_abs_ref = std::max(r.max_abs_ref, std::fabs(v));
    for (size_t i = 0; i < got.data.size(); ++i) {
        const double g = got.data[i], e = want.data[i];
        bool ok;
        double err = 0;
        if (std::isnan(e) || std::isnan(g))
            ok = std::isnan(e) && std::isnan(g);
        else if (std::isinf(e) || std::isinf(g))
            ok = g == e;
        else {
            err = std::fabs(g - e);
            ok = err <= atol + rtol * std::fabs(e);
            r.max_abs_err = std::max(r.max_abs_err, err);
            if (e != 0) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(e));
        }
        if (!ok) {
            if (r.passed) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "element %zu: got %.6g, expected %.6g", i, g, e);
                r.detail = buf;
            }
            r.passed = false;
            if (!std::isfinite(err) || err == 0) r.max_abs_err = INFINITY;
        }
    }
    return r;
}

}  // namespace sfumato::graph
