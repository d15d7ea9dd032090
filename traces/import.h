// Importing profiler traces as workload files. A trace's operators become graph-node kernel
// tasks (`node` with shapes and dtypes, no buffers: a replay places operands at no simulated
// cost) carrying the time the profiler measured (`measured_us`) and the operator they came from
// (`source`), on streams that follow the trace's; a replay then reports per-operator error.
// What could not be used is listed with the reason and the measured time it held, never
// silently dropped. Importers throw InputError (exit 2) only when nothing usable remains.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "traces/workload.h"

namespace sfumato::import {

// One reason something was skipped, aggregated: how often, and the measured time it held.
struct Skip {
    std::string what;  // operator or event name
    std::string why;
    size_t count = 0;
    double measured_us = 0;
};

struct Report {
    std::string format;  // "kineto" | "op-summary"
    size_t events = 0;   // events (rows) read
    size_t ops_mapped = 0, tasks = 0;
    size_t ops_free = 0;  // views and bookkeeping: cost nothing
    double measured_us = 0, mapped_us = 0;  // device time in the trace, and in mapped ops
    std::vector<std::string> notes;         // e.g. "truncated after event 1234"
    std::vector<Skip> skipped;              // sorted by measured time, then count
    void skip(const std::string& what, const std::string& why, double us);
    void finish();  // sorts skipped
};

struct Imported {
    workload::Workload w;
    Report report;
};

// An operator as a profiler saw it: name (aten::mm, MatMul, ...), inputs with shape and type
// (type "" = not a tensor), scalar/list inputs as text (Kineto's Concrete Inputs).
struct OpInput {
    std::vector<int64_t> shape;
    std::vector<std::vector<int64_t>> list;  // a tensor list's shapes
    std::string type;                        // element type as the profiler spells it
    std::string concrete;                    // e.g. "[2, 2]", "1", "False"; "" if unknown
    bool tensor = false, is_list = false;
};
struct ProfOp {
    std::string name;
    std::vector<OpInput> in;
    // The output's shape when known from elsewhere in the trace (a forward convolution's, from its
    // backward), for traces that do not record scalar arguments; empty if unknown.
    std::vector<int64_t> out_hint;
};

// The graph nodes (one per kernel task; a backward op may need two) an aten operator stands
// for, or the reason it cannot be mapped. `free` ops (views, bookkeeping) cost nothing.
struct Mapping {
    std::vector<nlohmann::json> nodes;  // node objects for workload kernel tasks
    std::string why;                    // non-empty: not mapped
    bool free = false;
};
Mapping map_aten(const ProfOp& op);
bool is_free_aten(const std::string& name);
bool mappable_aten(const std::string& name);
// Element type names of PyTorch ("float", "c10::Half", ...) and of the vendor CSV ("DT_FLOAT16",
// "FLOAT16", ...) as an ONNX code, or nothing.
std::optional<int> elem_of_torch(const std::string& t);

// `sfumato import kineto`: a PyTorch profiler Chrome trace (plain or gzip). steps > 0 keeps the
// first `steps` profiler steps ("ProfilerStep#N" annotations): the operators, on any thread,
// that start within their time span, and the kernels those launched; 0 keeps everything.
Imported import_kineto(const std::string& path, size_t steps = 0);
// `sfumato import op-summary`: the vendor profiler's op_summary CSV.
Imported import_op_summary(const std::string& path);

// Text of a file, gunzipped when it is gzip; throws InputError naming it.
std::string read_maybe_gzip(const std::string& path);

}  // namespace sfumato::import
