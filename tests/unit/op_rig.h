// Test helper: runs a graph-node operator (runtime/ops/node_op.h) without the chip model. Every
// block of every launch runs on a KapiSink in program order against one functional memory
// (inputs placed in GM, outputs read back), with the sink's checks (operand ranges, binary
// flags balanced, no unsynchronised sharing between pipes); the outputs are compared with the
// host reference (runtime/ref) within a tolerance.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "kapi_sink.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::ops::test {

inline DeviceInfo vec_device(uint32_t cores, uint64_t ub) {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = std::max(1u, cores / 2);
    d.vector_cores = cores;
    d.aiv_per_aic = 2;
    d.ub_bytes = ub;
    d.l1_bytes = 512 << 10;
    d.event_ids = 8;
    d.vector_bytes_per_cycle = 256;
    return d;
}
inline DeviceInfo tiny_dev() { return vec_device(4, 32 << 10); }
inline DeviceInfo b910_dev() { return vec_device(48, 192 << 10); }

struct RigResult {
    bool passed = false;
    std::string why;  // first failure
    double max_abs_err = 0;
    size_t instrs = 0;
    std::string describe;
    std::vector<ref::HostTensor> out;
};

// Random values for a tensor (ints and bools in small ranges).
inline ref::HostTensor random_tensor(const std::vector<int64_t>& shape, ref::ElemType t, std::mt19937& rng,
                                     double lo = -4, double hi = 4) {
    ref::HostTensor h(t, shape);
    if (t == ref::ElemType::Bool) integer_input(0, 1)(h, rng);
    else if (ref::is_float(t)) uniform_input(lo, hi)(h, rng);
    else integer_input(static_cast<int64_t>(lo * 10), static_cast<int64_t>(hi * 10))(h, rng);
    ref::round_to_type(h);
    return h;
}

// Runs node n (its inputs' shapes/types set; values in `vals`, one per input, absent inputs
// skipped) and compares every output with the reference. check_races = false skips the
// quadratic race scan (for long instruction streams).
inline RigResult run_node(NodeDesc n, const std::vector<ref::HostTensor>& vals, const DeviceInfo& dev,
                          const Tolerance& tol, bool check_races = true) {
    RigResult r;
    std::unique_ptr<INodeOp> op;
    try {
        op = make_node_op(n, dev);
    } catch (const std::exception& e) {
        r.why = std::string("plan: ") + e.what();
        return r;
    }
    r.describe = op->describe();
    std::vector<TensorRef> outs = op->outputs();
    uint64_t top = 4096;
    auto place = [&](uint64_t bytes) {
        const uint64_t a = top;
        top += (std::max<uint64_t>(bytes, 1) + 511) / 512 * 512;
        return a;
    };
    for (auto& t : n.inputs)
        if (t.present) t.addr = place(t.storage_bytes());
    for (size_t o = 0; o < outs.size(); ++o) {
        const int v = op->view_of(o);
        outs[o].addr = v >= 0 ? n.inputs[static_cast<size_t>(v)].addr : place(outs[o].storage_bytes());
    }
    const uint64_t ws = op->workspace_bytes() ? place(op->workspace_bytes()) : 0;
    isa::test::TestMem mem(std::max<uint64_t>(dev.ub_bytes, 64 << 10), top + 4096);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (!n.inputs[i].present) continue;
        const auto b = ref::to_device_bytes(vals[i], n.inputs[i].dtype);
        std::copy(b.begin(), b.end(), mem.of(isa::Pos::GM).begin() + static_cast<long>(n.inputs[i].addr));
    }
    try {
        for (const KernelDesc& k : op->launches(n.inputs, outs, ws)) {
            for (uint32_t b = 0; b < k.block_dim; ++b) {
                kernel::test::KapiSink sink(isa::CoreKind::Vector, &mem);
                sink.set_block(b, k.block_dim);
                sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
                sink.set_event_ids(dev.event_ids);
                k.body(sink);
                r.instrs += sink.issued().size();
                if (!sink.errors().empty()) {
                    r.why = "block " + std::to_string(b) + ": " + sink.errors().front();
                    return r;
                }
                if (!sink.flags_clear()) {
                    r.why = "block " + std::to_string(b) + ": flags left set";
                    return r;
                }
                if (check_races) {
                    const std::string race = sink.first_race();
                    if (!race.empty()) {
                        r.why = "block " + std::to_string(b) + ": race " + race;
                        return r;
                    }
                }
            }
        }
    } catch (const std::exception& e) {
        r.why = std::string("run: ") + e.what();
        return r;
    }
    std::vector<const ref::HostTensor*> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(n.inputs[i].present ? &vals[i] : nullptr);
    const std::vector<ref::HostTensor> want = ref::run_ref({n.name, n.op_type, n.opset, n.attrs}, ins);
    r.passed = true;
    for (size_t o = 0; o < outs.size(); ++o) {
        const ref::HostTensor got = ref::from_device_bytes(mem.of(isa::Pos::GM).data() + outs[o].addr, outs[o].dtype,
                                                           outs[o].elem, outs[o].shape);
        const CheckResult c = compare_tensors(got, want.at(o), tol);
        r.max_abs_err = std::max(r.max_abs_err, c.max_abs_err);
        if (!c.passed && r.passed) {
            r.passed = false;
            r.why = "output " + std::to_string(o) + " differs (max abs err " + std::to_string(c.max_abs_err) + ")";
            // First differing element, for the message.
            ref::HostTensor w = want.at(o);
            w.type = got.type;
            ref::round_to_type(w);
            for (size_t i = 0; i < got.data.size() && i < w.data.size(); ++i) {
                const double g = got.data[i], e = w.data[i];
                if (!(std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e)) && !(std::isnan(g) && std::isnan(e))) {
                    r.why += "; first at " + std::to_string(i) + ": got " + std::to_string(g) + " want " + std::to_string(e);
                    break;
                }
            }
        }
        r.out.push_back(got);
    }
    return r;
}

inline NodeDesc node(const std::string& op, const std::vector<std::pair<std::vector<int64_t>, ref::ElemType>>& ins,
                     int opset = 17) {
    NodeDesc n;
    n.name = op + "_t";
    n.op_type = op;
    n.opset = opset;
    n.attrs.set_owner(n.name);
    for (const auto& [s, t] : ins) n.inputs.push_back(make_tensor(s, t));
    return n;
}

}  // namespace sfumato::ops::test
