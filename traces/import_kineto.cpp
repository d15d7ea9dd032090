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
    std::string name;
};

std::vector<int64_t> dims_of(const json& d) {
    std::vector<int64_t> v;
    for (const json& x : d) {
        if (x.is_number_integer()) v.push_back(x.get<int64_t>());
    }
    return v;
}

ProfOp prof_op(const CpuOp& c) {
    ProfOp op;
    op.name = c.name;
    const json& a = c.args;
    const json dims = a.value("Input Dims", json::array());
    const json types = a.value("Input type", json::array());
    const json conc = a.value("Concrete Inputs", json::array());
    const size_t n = std::max({dims.is_array() ? dims.size() : 0, types.is_array() ? types.size() : 0, conc.is_array() ? conc.size() : 0});
    for (size_t i = 0; i < n; ++i) {
        OpInput in;
        const std::string t = types.is_array() && i < types.size() && types[i].is_string() ? types[i].get<std::string>() : "";
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

Imported import_kineto(const std::string& path) {
    Imported out;
    Report& rep = out.report;
    rep.format = "kineto";
    std::vector<CpuOp> ops;
    std::vector<Kernel> kernels;
    std::map<int64_t, int64_t> runtime_ext;  // correlation -> External id of the launching call
    TraceEventReader reader(path);
    json e;
    while (reader.next(e)) {
        ++rep.events;
        const std::string ph = text(e, "ph");
        if (ph != "X") continue;
        const std::string cat = text(e, "cat");
        const json args = e.contains("args") && e["args"].is_object() ? e["args"] : json::object();
        if (cat == "cpu_op" || cat == "operator") {
            CpuOp c;
            c.name = text(e, "name");
            c.ts = num(e, "ts");
            c.dur = num(e, "dur");
            c.ext = id_of(args, "External id");
            c.thread = (e.contains("pid") ? e["pid"].dump() : "") + "/" + (e.contains("tid") ? e["tid"].dump() : "");
            c.args = args;
            ops.push_back(std::move(c));
        } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
            Kernel k;
            k.ts = num(e, "ts");
            k.dur = num(e, "dur");
            k.ext = id_of(args, "External id");
            k.corr = id_of(args, "correlation");
            k.stream = id_of(args, "stream");
            k.name = text(e, "name", cat);
            kernels.push_back(std::move(k));
        } else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") {
            const int64_t corr = id_of(args, "correlation"), ext = id_of(args, "External id");
            if (corr >= 0 && ext >= 0) runtime_ext[corr] = ext;
        }
    }
    if (!reader.found_array()) throw InputError(path + ": not a Chrome trace (no \"traceEvents\" array)");
    if (reader.truncated())
        rep.notes.push_back("the trace is truncated or malformed after event " + std::to_string(rep.events) +
                            ": the events before it were used");
    if (reader.bad()) rep.notes.push_back(std::to_string(reader.bad()) + " events are not valid JSON objects and were skipped");

    // Link kernels to CPU operators.
    std::map<int64_t, size_t> by_ext;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].ext >= 0) by_ext[ops[i].ext] = i;  // the innermost (last) op of an id wins
    }
    const bool device = !kernels.empty();
    std::vector<int64_t> streams;
    for (const Kernel& k : kernels) {
        rep.measured_us += k.dur;
        int64_t ext = k.ext;
        if ((ext < 0 || !by_ext.count(ext)) && k.corr >= 0 && runtime_ext.count(k.corr)) ext = runtime_ext[k.corr];
        auto it = by_ext.find(ext);
        if (it == by_ext.end()) {
            rep.skip(k.name.substr(0, 60), "device kernel linked to no CPU operator", k.dur);
            continue;
        }
        CpuOp& c = ops[it->second];
        c.device_us += k.dur;
        if (c.first_kernel_ts < 0 || k.ts < c.first_kernel_ts) c.first_kernel_ts = k.ts, c.stream = k.stream;
    }

    // Nest operators by time on each thread.
    std::vector<size_t> order(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (ops[a].thread != ops[b].thread) return ops[a].thread < ops[b].thread;
        if (ops[a].ts != ops[b].ts) return ops[a].ts < ops[b].ts;
        return ops[a].dur > ops[b].dur;
    });
    std::vector<size_t> roots, stack;
    std::string thread;
    for (size_t i : order) {
        if (ops[i].thread != thread) stack.clear(), thread = ops[i].thread;
        while (!stack.empty() && ops[i].ts >= ops[stack.back()].ts + ops[stack.back()].dur) stack.pop_back();
        if (stack.empty()) roots.push_back(i);
        else ops[stack.back()].children.push_back(i);
        stack.push_back(i);
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
        if (is_free_aten(c.name)) {
            ++rep.ops_free;
            if (measured > 0 && device) rep.skip(c.name, "a view or bookkeeping op, costs nothing here", measured);
            return;
        }
        if (device && measured <= 0) return;  // no device work below: nothing to simulate
        const bool aten = c.name.rfind("aten::", 0) == 0;
        std::string why = inherited;
        if (aten && mappable_aten(c.name)) {
            Mapping m = map_aten(prof_op(c));
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
