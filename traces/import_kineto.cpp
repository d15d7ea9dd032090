// `sfumato import kineto`: the PyTorch profiler's Chrome trace (torch.profiler with
// record_shapes=True, export_chrome_trace; plain or gzip). CPU operators are complete events
// ("ph": "X", "cat": "cpu_op") with args "External id", "Input Dims", "Input type" and
// "Concrete Inputs"; device kernels ("cat": "kernel", also "gpu_memcpy"/"gpu_memset") carry
// their measured "dur", their "stream", and link to the CPU operator that launched them by
// "External id", or by "correlation" through the runtime call ("cat": "cuda_runtime") that
// launched them. The CPU operators nest by time on each thread; from the outermost in, the
// first operator sfumato can map (traces/import_map.cpp) becomes kernel tasks whose measured
// time is that of every device kernel below it; views and bookkeeping cost nothing; anything
// else with device time is listed as skipped with the reason. A trace without device kernels
// (a CPU run) is measured by the operators' own durations. Events are read one at a time from
// the traceEvents array, so a truncated file still yields the events before the cut.
// A kernel belongs to the innermost CPU operator that encloses, in time and on its thread, the
// runtime call that launched it (found by "correlation"); this holds for every Kineto version,
// also those whose kernels' "External id" is the correlation itself. Only when the launching call
// is not in the trace is the kernel's (or the call's) "External id" used. Collective kernels
// (NCCL/RCCL) and host<->device copies are listed apart: a single-chip replay of operators does
// not model them. Older traces (PyTorch 1.8-1.9: categories "Operator"/"Kernel"/"Runtime",
// "Input dims", no "Input type") are read too; their tensors are taken as float32.
// Simplified: dependencies between streams are not recovered (each stream keeps its order).
#include <zlib.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "sim/error.h"
#include "traces/import.h"
#include "traces/json_events.h"

namespace sfumato::import {

using nlohmann::json;

std::string read_maybe_gzip(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");  // reads plain files as they are
    if (!f) throw InputError("cannot open '" + path + "'");
    std::string out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    int err = 0;
    const char* msg = n < 0 ? gzerror(f, &err) : nullptr;
    gzclose(f);
    if (n < 0 && out.empty()) throw InputError("'" + path + "' cannot be decompressed: " + (msg ? msg : "gzip error"));
    return out;
}

namespace {

// A string field, or `dflt` when it is absent or not a string (json::value would throw).
std::string text(const json& e, const char* k, const std::string& dflt = "") {
    auto it = e.find(k);
    return it != e.end() && it->is_string() ? it->get<std::string>() : dflt;
}

double num(const json& e, const char* k, double dflt = 0) {
    auto it = e.find(k);
    if (it == e.end()) return dflt;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) {
        try {
            return std::stod(it->get<std::string>());
        } catch (...) {
        }
    }
    return dflt;
}

int64_t id_of(const json& args, const char* k) {
    auto it = args.find(k);
    if (it == args.end()) return -1;
    if (it->is_number_integer()) return it->get<int64_t>();
    if (it->is_string()) {
        try {
            return std::stoll(it->get<std::string>());
        } catch (...) {
        }
    }
    return -1;
}

struct CpuOp {
    std::string name;
    double ts = 0, dur = 0;
    int64_t ext = -1;
    std::string thread;
    json args;
    std::vector<size_t> children;
    double device_us = 0;  // kernels linked to this op itself
    double first_kernel_ts = -1;
    int64_t stream = -1;
};

struct Kernel {
    double ts = 0, dur = 0;
    int64_t ext = -1, corr = -1, stream = -1;
    std::string name, cat;
};

// A runtime call (cudaLaunchKernel, hipMemcpyAsync, ...) on a CPU thread.
struct Call {
    std::string thread;
    double ts = 0;
    int64_t ext = -1;
    int64_t op = -1;  // index of the innermost CPU operator enclosing it, or -1
};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Why a device kernel is left out whatever operator launched it, or "".
std::string kernel_left_out(const Kernel& k) {
    const std::string n = lower(k.name);
    if (n.find("nccl") != std::string::npos || n.find("rccl") != std::string::npos)
        return "collective kernel (NCCL): a single-chip replay leaves collectives out (sfumato collective models them)";
    if (k.cat == "memcpy" && (n.find("htod") != std::string::npos || n.find("dtoh") != std::string::npos ||
                              n.find("htoh") != std::string::npos))
        return "host<->device copy: a replay places operands on the device, no PCIe traffic";
    return "";
}

std::vector<int64_t> dims_of(const json& d) {
    std::vector<int64_t> v;
    for (const json& x : d) {
        if (x.is_number_integer()) v.push_back(x.get<int64_t>());
    }
    return v;
}

// Whether the operator's inputs carry element types (PyTorch < 1.10 wrote none).
bool has_types(const json& a) {
    auto it = a.find("Input type");
    return it != a.end() && it->is_array() && !it->empty();
}

ProfOp prof_op(const CpuOp& c) {
    ProfOp op;
    op.name = c.name;
    const json& a = c.args;
    const json dims = a.contains("Input Dims") ? a.value("Input Dims", json::array()) : a.value("Input dims", json::array());
    const bool typed = has_types(a);
    const json types = a.value("Input type", json::array());
    const json conc = a.value("Concrete Inputs", json::array());
    const size_t n = std::max({dims.is_array() ? dims.size() : 0, types.is_array() ? types.size() : 0, conc.is_array() ? conc.size() : 0});
    for (size_t i = 0; i < n; ++i) {
        OpInput in;
        const json d0 = dims.is_array() && i < dims.size() ? dims[i] : json();
        std::string t = types.is_array() && i < types.size() && types[i].is_string() ? types[i].get<std::string>() : "";
        // Untyped (old) traces: an input with dimensions is a tensor, taken as float32.
        if (!typed && d0.is_array() && !d0.empty()) t = d0[0].is_array() ? "TensorList" : "float";
        in.type = t;
        if (conc.is_array() && i < conc.size() && conc[i].is_string()) in.concrete = conc[i].get<std::string>();
        const json d = dims.is_array() && i < dims.size() ? dims[i] : json();
        if (t == "TensorList" || t == "GenericList" || (d.is_array() && !d.empty() && d[0].is_array())) {
            in.is_list = true;
            if (d.is_array())
                for (const json& x : d) in.list.push_back(x.is_array() ? dims_of(x) : std::vector<int64_t>{});
            in.type = "";
            // PyTorch writes a list's element type as the list's; the first tensor's type is unknown.
        } else if (elem_of_torch(t)) {
            in.tensor = d.is_array();
            if (d.is_array()) in.shape = dims_of(d);
        }
        op.in.push_back(std::move(in));
    }
    return op;
}

}  // namespace

Imported import_kineto(const std::string& path, size_t steps) {
    Imported out;
    Report& rep = out.report;
    rep.format = "kineto";
    std::vector<CpuOp> ops;
    std::vector<Kernel> kernels;
    std::vector<Call> calls;
    std::map<int64_t, size_t> call_of;  // correlation -> calls index
    bool untyped = false;
    TraceEventReader reader(path);
    json e;
    while (reader.next(e)) {
        ++rep.events;
        if (text(e, "ph") != "X") continue;
        // Kineto's categories are lower case since PyTorch 1.10 ("cpu_op", "kernel", ...), capitalised
        // before ("Operator", "Kernel", "Memcpy", "Runtime").
        const std::string cat = lower(text(e, "cat"));
        auto ai = e.find("args");
        const json args = ai != e.end() && ai->is_object() ? *ai : json::object();
        const int64_t ext = id_of(args, "External id") >= 0 ? id_of(args, "External id") : id_of(args, "external id");
        // User annotations (record_function, "Optimizer.step#Adam.step") enclose operators and
        // sometimes launch kernels themselves (apex's fused optimizers).
        if (cat == "cpu_op" || cat == "operator" || cat == "user_annotation") {
            CpuOp c;
            c.name = text(e, "name");
            c.ts = num(e, "ts");
            c.dur = std::max(0.0, num(e, "dur"));
            c.ext = ext;
            c.thread = (e.contains("pid") ? e["pid"].dump() : "") + "/" + (e.contains("tid") ? e["tid"].dump() : "");
            if (!has_types(args) && (args.contains("Input Dims") || args.contains("Input dims"))) untyped = true;
            c.args = args;
            ops.push_back(std::move(c));
        } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" || cat == "memset") {
            Kernel k;
            k.ts = num(e, "ts");
            k.dur = std::max(0.0, num(e, "dur"));
            k.ext = ext;
            k.corr = id_of(args, "correlation");
            k.stream = id_of(args, "stream");
            k.name = text(e, "name", cat);
            k.cat = cat == "gpu_memcpy" ? "memcpy" : cat == "gpu_memset" ? "memset" : cat;
            kernels.push_back(std::move(k));
        } else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime" || cat == "hip_runtime") {
            const int64_t corr = id_of(args, "correlation");
            if (corr < 0) continue;
            Call c;
            c.thread = (e.contains("pid") ? e["pid"].dump() : "") + "/" + (e.contains("tid") ? e["tid"].dump() : "");
            c.ts = num(e, "ts");
            c.ext = ext;
            call_of[corr] = calls.size();
            calls.push_back(std::move(c));
        }
    }
    if (!reader.found_array()) throw InputError(path + ": not a Chrome trace (no \"traceEvents\" array)");
    if (reader.truncated())
        rep.notes.push_back("the trace is truncated or malformed after event " + std::to_string(rep.events) +
                            ": the events before it were used");
    if (reader.bad()) rep.notes.push_back(std::to_string(reader.bad()) + " events are not valid JSON objects and were skipped");
    if (untyped) rep.notes.push_back("operators carry no input types (a PyTorch < 1.10 trace): tensors are taken as float32");

    // Profiler steps: with `steps`, only what starts within the first ones is kept.
    std::vector<std::pair<double, double>> step_spans;
    for (const CpuOp& c : ops)
        if (c.name.rfind("ProfilerStep#", 0) == 0) step_spans.emplace_back(c.ts, c.ts + c.dur);
    std::sort(step_spans.begin(), step_spans.end());
    if (steps > 0 && step_spans.size() > steps) {
        const double from = step_spans.front().first, to = step_spans[steps - 1].second;
        auto inside = [&](double ts) { return ts >= from && ts <= to; };
        std::vector<int64_t> call_kept(calls.size());
        for (size_t i = 0; i < calls.size(); ++i) call_kept[i] = inside(calls[i].ts);
        std::erase_if(ops, [&](const CpuOp& c) { return !inside(c.ts); });
        std::erase_if(kernels, [&](const Kernel& k) {
            auto it = k.corr >= 0 ? call_of.find(k.corr) : call_of.end();
            return it != call_of.end() ? !call_kept[it->second] : !inside(k.ts);
        });
        rep.notes.push_back("kept the first " + std::to_string(steps) + " of " + std::to_string(step_spans.size()) +
                            " profiler steps (--steps): operators starting in them and their kernels");
    } else if (step_spans.size() > 1 && steps == 0) {
        rep.notes.push_back("the trace holds " + std::to_string(step_spans.size()) +
                            " profiler steps; --steps 1 imports the first only (a replay's time grows with the steps)");
    }

    // Nest operators by time on each thread, and find the operator enclosing each runtime call
    // (one sweep per thread over operators and calls in time order).
    std::vector<size_t> order(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (ops[a].thread != ops[b].thread) return ops[a].thread < ops[b].thread;
        if (ops[a].ts != ops[b].ts) return ops[a].ts < ops[b].ts;
        return ops[a].dur > ops[b].dur;
    });
    std::vector<size_t> corder(calls.size());
    for (size_t i = 0; i < calls.size(); ++i) corder[i] = i;
    std::stable_sort(corder.begin(), corder.end(), [&](size_t a, size_t b) {
        return calls[a].thread != calls[b].thread ? calls[a].thread < calls[b].thread : calls[a].ts < calls[b].ts;
    });
    std::vector<size_t> roots, stack;
    std::string thread;
    size_t ci = 0;
    // Calls before operator i (same thread, earlier in time; a call at an operator's start time is
    // inside it) see the stack as it is.
    auto place_calls = [&](const std::string* th, double ts) {
        while (ci < corder.size()) {
            Call& c = calls[corder[ci]];
            if (th && (c.thread > *th || (c.thread == *th && c.ts >= ts))) break;
            if (c.thread == thread) {
                while (!stack.empty() && c.ts > ops[stack.back()].ts + ops[stack.back()].dur) stack.pop_back();
                if (!stack.empty()) c.op = static_cast<int64_t>(stack.back());
            }
            ++ci;
        }
    };
    for (size_t i : order) {
        place_calls(&ops[i].thread, ops[i].ts);
        if (ops[i].thread != thread) stack.clear(), thread = ops[i].thread;
        while (!stack.empty() && ops[i].ts >= ops[stack.back()].ts + ops[stack.back()].dur) stack.pop_back();
        if (stack.empty()) roots.push_back(i);
        else ops[stack.back()].children.push_back(i);
        stack.push_back(i);
    }
    place_calls(nullptr, 0);

    // Link kernels to CPU operators: through the launching call, else by External id.
    std::map<int64_t, size_t> by_ext;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].ext >= 0) by_ext[ops[i].ext] = i;  // the innermost (last) op of an id wins
    }
    const bool device = !kernels.empty();
    for (const Kernel& k : kernels) {
        rep.measured_us += k.dur;
        const std::string out_why = kernel_left_out(k);
        if (!out_why.empty()) {
            std::string what = k.name.substr(0, k.name.find('('));
            if (what.rfind("void ", 0) == 0) what = what.substr(5);
            while (!what.empty() && what.back() == ' ') what.pop_back();
            rep.skip(what.substr(0, 60), out_why, k.dur);
            continue;
        }
        int64_t op = -1;
        auto ci2 = k.corr >= 0 ? call_of.find(k.corr) : call_of.end();
        if (ci2 != call_of.end()) op = calls[ci2->second].op;
        if (op < 0) {
            auto it = by_ext.find(k.ext);
            if (it == by_ext.end() && ci2 != call_of.end()) it = by_ext.find(calls[ci2->second].ext);
            if (it != by_ext.end()) op = static_cast<int64_t>(it->second);
        }
        if (op < 0) {
            rep.skip(k.name.substr(0, 60),
                     ci2 == call_of.end() ? "device kernel whose launch is not in the trace (before the profiled window, or an unprofiled thread)"
                                          : "device kernel launched outside any recorded operator",
                     k.dur);
            continue;
        }
        CpuOp& c = ops[static_cast<size_t>(op)];
        c.device_us += k.dur;
        if (c.first_kernel_ts < 0 || k.ts < c.first_kernel_ts) c.first_kernel_ts = k.ts, c.stream = k.stream;
    }
    // Output shapes of convolutions, from their backward ops (for traces without Concrete Inputs).
    std::map<std::string, std::vector<int64_t>> conv_out;
    auto conv_key = [](const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
        return json(x).dump() + "|" + json(w).dump();
    };
    for (const CpuOp& c : ops) {
        const bool native = c.name == "aten::convolution_backward", cudnn = c.name == "aten::cudnn_convolution_backward";
        if (!native && !cudnn) continue;
        const ProfOp p = prof_op(c);
        const size_t gy = native ? 0 : 1, x = native ? 1 : 0;
        if (p.in.size() > 2 && p.in[gy].tensor && p.in[x].tensor && p.in[2].tensor)
            conv_out[conv_key(p.in[x].shape, p.in[2].shape)] = p.in[gy].shape;
    }

    // Device time below each operator, and its first kernel.
    std::vector<double> subtree(ops.size(), -1), first_ts(ops.size(), -1);
    std::vector<int64_t> first_stream(ops.size(), -1);
    std::function<void(size_t)> total = [&](size_t i) {
        double t = ops[i].device_us;
        double f = ops[i].first_kernel_ts;
        int64_t s = ops[i].stream;
        for (size_t c : ops[i].children) {
            total(c);
            t += subtree[c];
            if (first_ts[c] >= 0 && (f < 0 || first_ts[c] < f)) f = first_ts[c], s = first_stream[c];
        }
        subtree[i] = t;
        first_ts[i] = f;
        first_stream[i] = s;
    };
    for (size_t r : roots) total(r);

    struct Item {
        double ts;
        size_t op;
        Mapping m;
        double measured;
    };
    std::vector<Item> items;
    // `inherited`: why an enclosing mappable operator could not be mapped (reported for its
    // leaves when nothing below it maps either).
    std::function<void(size_t, const std::string&)> visit = [&](size_t i, const std::string& inherited) {
        const CpuOp& c = ops[i];
        const double measured = device ? subtree[i] : c.dur;
        // A view or bookkeeping op costs nothing, unless device work runs below it (aten::to as a
        // copy or a cast): then what is below is looked at.
        if (is_free_aten(c.name) && !(device && measured > 0 && !c.children.empty())) {
            ++rep.ops_free;
            if (measured > 0 && device) rep.skip(c.name, "a view or bookkeeping op, costs nothing here", measured);
            return;
        }
        if (device && measured <= 0) return;  // no device work below: nothing to simulate
        const bool aten = c.name.rfind("aten::", 0) == 0;
        std::string why = inherited;
        if (aten && mappable_aten(c.name)) {
            ProfOp p = prof_op(c);
            if (p.in.size() > 1 && p.in[0].tensor && p.in[1].tensor && c.name.find("conv") != std::string::npos) {
                auto it = conv_out.find(conv_key(p.in[0].shape, p.in[1].shape));
                if (it != conv_out.end()) p.out_hint = it->second;
            }
            Mapping m;
            if (c.args.contains("Input Dims") || c.args.contains("Input dims")) m = map_aten(p);
            else m.why = "no input shapes in the trace (torch.profiler records them with record_shapes=True)";
            if (m.why.empty() && !m.nodes.empty()) {
                items.push_back({device ? first_ts[i] : c.ts, i, std::move(m), measured});
                return;
            }
            if (c.children.empty() || !device) {
                rep.skip(c.name, m.why, measured);
                return;
            }
            why = c.name + ": " + m.why;
        }
        const std::string unmapped = !why.empty() ? why : aten ? "no sfumato mapping for this operator" : "not an aten operator";
        if (!c.children.empty()) {
            for (size_t ch : c.children) visit(ch, why);
            // Device work launched by the op itself, not by a child, is not covered.
            if (device && c.device_us > 0) rep.skip(c.name, unmapped, c.device_us);
            return;
        }
        if (!device && !aten) return;  // host-side annotations of a CPU run
        rep.skip(c.name, unmapped, measured);
    };
    for (size_t r : roots) visit(r, "");
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.ts < b.ts; });

    // Streams in order of first use.
    std::map<int64_t, uint32_t> stream_id;
    workload::Workload& w = out.w;
    w.description = "imported from " + path + " (PyTorch profiler trace)";
    for (const Item& it : items) {
        const int64_t s = device ? first_stream[it.op] : -1;
        if (!stream_id.count(s)) {
            const uint32_t id = static_cast<uint32_t>(stream_id.size());
            stream_id[s] = id;
            w.streams.push_back({id, 0});
        }
        const CpuOp& c = ops[it.op];
        const std::string source = c.name + "#" + std::to_string(c.ext >= 0 ? c.ext : static_cast<int64_t>(it.op));
        for (const json& n : it.m.nodes) {
            workload::Task t;
            t.index = w.tasks.size();
            t.kind = workload::Kind::Kernel;
            t.stream = stream_id[s];
            t.node = n;
            t.name = text(n, "name", c.name);
            t.source = source;
            t.measured_us = it.measured;
            w.tasks.push_back(std::move(t));
        }
        ++rep.ops_mapped;
        rep.mapped_us += it.measured;
    }
    rep.finish();
    if (!device) {
        rep.notes.push_back("no device kernels in the trace: operators are measured by their CPU durations");
        rep.measured_us = rep.mapped_us;
        for (const Skip& k : rep.skipped) rep.measured_us += k.measured_us;
    }
    rep.tasks = w.tasks.size();
    return out;
}

}  // namespace sfumato::import
