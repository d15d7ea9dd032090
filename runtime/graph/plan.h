// A compiled plan: the graph after passes, every surviving node bound to an
// operator's graph-node face (host tiling for these shapes on this DeviceInfo),
// device tensors with their placement (weights once in a weight block;
// activations at offsets of one arena whose size is the peak of a
// liveness-based reuse plan), and streams with events. compile() runs the whole
// pipeline for one set of concrete input shapes; Model caches plans per input
// shapes, so a batch or sequence change re-specialises without re-importing.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/graph/ir.h"
#include "runtime/ops/node_op.h"
#include "sim/device_if.h"

namespace sfumato::graph {

enum class Precision { FP32, FP16, BF16, Mixed };
const char* precision_name(Precision p);
bool parse_precision(const std::string& s, Precision& out);

// Passes in the order they run. Every one is on by default.
const std::vector<std::string>& all_passes();
// "all", "none" or a comma-separated list of pass names (unknown names throw
// InputError).
std::set<std::string> parse_passes(const std::string& spec);

struct CompileOptions {
    std::set<std::string> passes = std::set<std::string>(all_passes().begin(), all_passes().end());
    Precision precision = Precision::FP32;
    int streams = 0;  // 0 = the planner chooses; 1 = one stream
    // A training forward (train-step): fused LayerNorms also output their statistics (Mean,
    // InvStdDev) for the backward, and only activations whose gradient the output gives (ReLU,
    // Clip) fuse into a Conv/Gemm (a GELU's gradient needs its input).
    bool training = false;
    bool on(const std::string& pass) const { return passes.count(pass) != 0; }
};

// What a pass did.
struct PassReport {
    std::string name;
    bool enabled = true;
    int changes = 0;
    std::map<std::string, int> patterns;  // what fired, how often (e.g. "Conv+Add+Relu": 16)
    std::vector<std::string> notes;       // one line per change of interest
};

struct PlanTensor {
    std::string name;
    int value = -1;      // graph value id
    ops::TensorRef ref;  // shape, dtype, elem, format, strides; addr set at load
    // External: an external graph input (Value::external), placed by the caller.
    enum class Kind : uint8_t { Weight, Activation, View, Workspace, External } kind = Kind::Activation;
    int base = -1;             // View: the tensor it aliases
    uint64_t view_offset = 0;  // View: byte offset into its base
    uint64_t offset = 0;       // within the weight block or the activation arena
    uint64_t bytes = 0;
    int def_step = -1,
        last_step = -1;  // lifetime in steps (inputs: -1; outputs: steps.size())
    bool graph_input = false, graph_output = false;
    std::shared_ptr<const ConstValue> weight;  // Weight: the data uploaded at load
};

struct PlanStep {
    std::string name;  // the node's name (fused nodes keep the anchor's)
    std::string op_type;
    std::vector<std::string> fused;  // every original node this step stands for
    ops::NodeDesc desc;
    std::shared_ptr<ops::INodeOp> op;  // null for pure views
    std::vector<int> in, out;          // plan tensors (-1 = omitted)
    int workspace = -1;                // plan tensor
    std::string form;                  // op->describe()
    int stream = 0;
    std::vector<int> waits;                // events this step's stream waits for before its kernels
    int record = -1;                       // event recorded after its kernels
    bool view = false;                     // no kernels (a reshape as a view)
    size_t kernels = 0;                    // kernel launches per inference
    std::vector<ref::ElemType> out_elems;  // for reports
};

struct MemoryReport {
    uint64_t weight_bytes = 0;
    uint64_t peak_bytes = 0;           // activation arena with reuse
    uint64_t peak_bytes_no_reuse = 0;  // every activation in its own block
};

struct Plan {
    Graph graph;  // after passes
    std::vector<PlanTensor> tensors;
    std::vector<PlanStep> steps;
    std::vector<int> inputs,
        outputs;  // plan tensors of the graph inputs / outputs
    MemoryReport memory;
    int num_streams = 1;
    int num_events = 0;
    std::vector<PassReport> passes;
    std::string signature;  // the input shapes it was compiled for
    // Inputs bound as plan-time constants (slot -> value); run() checks it gets the same.
    std::map<size_t, ref::HostTensor> bound_inputs;
    Precision precision = Precision::FP32;
    uint64_t align = 512;
    // Number of kernels one inference launches.
    size_t kernel_count() const;
};

// Binds concrete input shapes (one per graph input, in order; checked against
// the declared shapes, symbolic dimensions take any size), infers, runs the
// passes, binds operators, plans memory and streams. Errors name the node, op
// or input.
// `values` (optional, one per input): small integer inputs (at most kMaxShapeInput elements)
// that feed an operand needed at plan time (axes, shapes, bounds, repeats fed as inputs, as
// the ONNX backend tests do; directly or through shape arithmetic) are bound as plan-time
// constants, like the shape tensors of other graph engines; the plan is then specific to
// them. Data inputs (token ids, masks) always run on the device.
constexpr uint64_t kMaxShapeInput = 64;
std::unique_ptr<Plan> compile(const Graph& imported, const std::vector<std::vector<int64_t>>& input_shapes,
                              const DeviceInfo& dev, const CompileOptions& opt,
                              const std::vector<ref::HostTensor>* values = nullptr);

// Input shapes from the model's declared ones with symbolic dimensions set: the
// first symbolic dimension of every input to `batch`, any other to
// `dims[symbol]` (default 1... error if absent and `strict`).
std::vector<std::vector<int64_t>> default_input_shapes(const Graph& g, int64_t batch,
                                                       const std::map<std::string, int64_t>& dims = {});

// An imported model and its compiled plans, one per input signature.
class Model {
public:
    explicit Model(Graph g) : m_graph(std::move(g)) {}
    const Graph& graph() const { return m_graph; }
    // The plan for these input shapes (compiled on first use, then cached).
    const Plan& plan(const std::vector<std::vector<int64_t>>& input_shapes, const DeviceInfo& dev,
                     const CompileOptions& opt, const std::vector<ref::HostTensor>* values = nullptr);
    size_t cached_plans() const { return m_plans.size(); }
    size_t compilations() const { return m_compilations; }

private:
    Graph m_graph;
    std::map<std::string, std::unique_ptr<Plan>> m_plans;
    size_t m_compilations = 0;
};

}  // namespace sfumato::graph
