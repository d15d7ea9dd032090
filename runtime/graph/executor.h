// The executor: runs a compiled plan through runtime/rt only, as a user's host
// program would. load() allocates the weight block and the activation arena
// once, uploads every weight (in its device dtype and format, packed into one
// host staging buffer and one copy), creates the plan's streams and events and
// fixes every kernel's arguments; run() uploads the inputs, issues each step's
// event waits, kernel launches and event records on its stream, and
// synchronises; outputs() reads the results back. Load and each inference are
// timed apart (simulated time), so inference time contains no weight upload.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "runtime/graph/plan.h"
#include "runtime/rt/runtime.h"

namespace sfumato::graph {

class Executor {
public:
    Executor(rt::Runtime& rt, const Plan& plan);
    ~Executor();
    // The device address of an external graph input (Value::external), by value name; every
    // external input must be bound before load(). The caller owns that memory and its contents.
    void bind(const std::string& name, uint64_t addr);
    void load();
    // Recomputes step s's launches after its owner changed plan.steps[s].desc and .op in place
    // (a node whose host-known attributes change between runs on the same tensors, such as the
    // KV lengths of paged attention). Its workspace must still fit the planned one.
    void refresh_step(size_t s);
    // Inputs in the order of the graph inputs, external ones left out (element types are
    // converted to the device's). In timing mode the values are not read (shapes must still
    // match).
    void run(const std::vector<ref::HostTensor>& inputs);
    // run() without the final device synchronisation (a training step issues its backward
    // behind the forward); run_ps() is not updated.
    void issue(const std::vector<ref::HostTensor>& inputs);
    // A plan tensor as placed by load().
    const ops::TensorRef& placed(int t) const { return m_refs.at(static_cast<size_t>(t)); }
    // The activation arena's device address (0 when the plan has none), after load(): a training
    // step places its backward's tensors in it too (train_memory.h).
    uint64_t arena() const { return m_arena; }
    // Graph outputs (in functional mode; timing mode returns zero-filled tensors
    // of the right shape).
    std::vector<ref::HostTensor> outputs();
    void unload();

    const Plan& plan() const { return m_plan; }
    uint64_t load_ps() const { return m_load_ps; }
    const std::vector<uint64_t>& run_ps() const { return m_run_ps; }  // per inference
    // Tasks each step launched in the last inference.
    const std::vector<std::vector<std::shared_ptr<Task>>>& step_tasks() const { return m_step_tasks; }
    // Called after every step is issued (for progress reports).
    void on_step(std::function<void(size_t)> f) { m_on_step = std::move(f); }
    // A follower of identical ranks (timing mode): runs upload the inputs and call on_step for
    // every step but launch no kernel (another rank's kernels stand for these).
    void skip_kernels(bool on) { m_skip_kernels = on; }
    // Functional mode: called once each step's kernels have completed, with the step's output
    // tensors as the device holds them (ND contiguous ones, and with `nc1hwc0` contiguous NC1HWC0
    // ones as their logical NCHW values; others are passed empty), read without simulated time
    // and before a later step can reuse their memory. Watching changes no cycle: nothing is
    // issued to the device. A step's completion calls the watch in effect when it was issued.
    using StepWatch = std::function<void(size_t step, const std::vector<ref::HostTensor>& outs)>;
    void watch_steps(StepWatch f, bool nc1hwc0 = false) {
        m_watch = std::move(f);
        m_watch_5hd = nc1hwc0;
    }
    // Emits the graph-op track (one per stream) into the runtime's trace for the
    // last inference.
    void emit_trace() const;

private:
    rt::Runtime& m_rt;
    const Plan& m_plan;
    std::vector<ops::TensorRef> m_refs;              // per plan tensor, placed
    std::vector<std::vector<KernelDesc>> m_kernels;  // per step
    // Gathers whose indices are a graph input: (step, input slot of issue()); their operator is
    // planned again with the ids the caller passes (attribute known_ids, runtime/ops/llm/
    // embedding.h), so data-dependent row addresses agree in both modes.
    std::vector<std::pair<size_t, size_t>> m_id_steps;
    std::vector<std::shared_ptr<ops::INodeOp>> m_step_ops;  // per step: replaces the plan's op when set
    std::vector<std::vector<int64_t>> m_known_ids;          // per step: the ids its op was planned with
    void find_id_steps();
    void know_ids(const std::vector<ref::HostTensor>& inputs);
    std::vector<uint32_t> m_streams;                 // runtime stream ids per plan stream
    std::vector<uint32_t> m_events;
    uint64_t m_weights = 0, m_arena = 0;
    std::map<std::string, uint64_t> m_bound;  // external inputs' addresses
    std::vector<size_t> m_fed;                // graph input slots run() receives (not external)
    bool m_loaded = false;
    bool m_skip_kernels = false;
    uint64_t m_load_ps = 0;
    std::vector<uint64_t> m_run_ps;
    std::vector<std::vector<std::shared_ptr<Task>>> m_step_tasks;
    std::function<void(size_t)> m_on_step;
    StepWatch m_watch;
    bool m_watch_5hd = false;
    void issue_steps(const std::vector<ref::HostTensor>& inputs);
    void fix_kernels(size_t s);
    void watch_step(size_t s);
    std::vector<ref::HostTensor> read_step_outputs(size_t s, bool nc1hwc0);
};

// Elementwise comparison of a result with an expected tensor: |got - want| <=
// atol + rtol*|want|.
struct CompareResult {
    bool passed = true;
    double max_abs_err = 0, max_rel_err = 0;
    double max_abs_ref = 0;
    std::string detail;  // first mismatch, when failed
};
CompareResult compare(const ref::HostTensor& got, const ref::HostTensor& want, double atol, double rtol);

}  // namespace sfumato::graph
