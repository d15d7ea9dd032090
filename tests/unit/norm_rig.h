// Test helper for the normalisation, reduction and pooling operators: runs a graph-node
// operator without the chip model. Every block of every launch runs on a KapiSink in program
// order against one functional memory (inputs placed in GM at 512-byte aligned addresses,
// outputs read back); the sink checks operand ranges and flag balance, this rig also checks
// that every local operand is 32-byte aligned (the core rejects unaligned ones) and, for short
// streams, that no two pipes race. Outputs are compared with the host reference.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "kapi_sink.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::ops::normtest {

inline DeviceInfo device(uint32_t cores, uint64_t ub) {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = std::max(1u, cores / 2);
    d.vector_cores = cores;
    d.aiv_per_aic = 2;
    d.ub_bytes = ub;
    d.event_ids = 8;
    d.vector_bytes_per_cycle = 256;
    return d;
}

class AlignedSink : public kernel::test::KapiSink {
public:
    using KapiSink::KapiSink;
    void issue(const isa::Instr& in) override {
        isa::Extent ex[isa::kMaxExtents];
        const int n = isa::footprint(in, ex);
        for (int i = 0; i < n; ++i)
            if (ex[i].pos != isa::Pos::GM && ex[i].lo % 32 != 0 && misaligned.empty())
                misaligned = std::string(isa::opcode_name(in.op)) + " #" + std::to_string(issued().size()) +
                             " local address " + std::to_string(ex[i].lo) + " not 32-byte aligned";
        KapiSink::issue(in);
    }
    std::string misaligned;
};

struct RunResult {
    std::string error;  // first failure of the rig's checks ("" = none)
    std::vector<ref::HostTensor> out;
    size_t instrs = 0, launches = 0;
    std::string describe;
};

inline RunResult run_op(NodeDesc n, const std::vector<ref::HostTensor>& vals, const DeviceInfo& dev,
                        bool check_races = false) {
    RunResult r;
    std::unique_ptr<INodeOp> op = make_node_op(n, dev);
    r.describe = op->describe();
    std::vector<TensorRef> outs = op->outputs();
    uint64_t at = 512;
    auto place = [&](TensorRef& t) {
        t.addr = at;
        at += (std::max<uint64_t>(t.storage_bytes(), 1) + 511) / 512 * 512;
    };
    for (auto& t : n.inputs)
        if (t.present) place(t);
    for (auto& t : outs) place(t);
    const uint64_t ws = op->workspace_bytes();
    const uint64_t ws_addr = at;
    at += (ws + 511) / 512 * 512;
    isa::test::TestMem mem(dev.ub_bytes, at + 4096);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (!n.inputs[i].present) continue;
        const std::vector<uint8_t> b = ref::to_device_bytes(vals.at(i), n.inputs[i].dtype);
        std::copy(b.begin(), b.end(), mem.of(isa::Pos::GM).begin() + static_cast<long>(n.inputs[i].addr));
    }
    const std::vector<KernelDesc> ks = op->launches(n.inputs, outs, ws ? ws_addr : 0);
    r.launches = ks.size();
    for (const KernelDesc& k : ks) {
        for (uint32_t b = 0; b < k.block_dim; ++b) {
            AlignedSink sink(isa::CoreKind::Vector, &mem);
            sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
            sink.set_block(b, k.block_dim);
            sink.set_event_ids(dev.event_ids);
            try {
                k.body(sink);
            } catch (const std::exception& e) {
                r.error = "block " + std::to_string(b) + ": " + e.what();
                return r;
            }
            r.instrs += sink.issued().size();
            if (!sink.errors().empty()) r.error = "block " + std::to_string(b) + ": " + sink.errors()[0];
            else if (!sink.misaligned.empty()) r.error = "block " + std::to_string(b) + ": " + sink.misaligned;
            else if (!sink.flags_clear()) r.error = "block " + std::to_string(b) + ": flags left set";
            else if (check_races) r.error = sink.first_race();
            if (!r.error.empty()) return r;
        }
    }
    for (const TensorRef& t : outs)
        r.out.push_back(ref::from_device_bytes(mem.of(isa::Pos::GM).data() + t.addr, t.dtype, t.elem, t.shape));
    return r;
}

inline ref::HostTensor random_tensor(const std::vector<int64_t>& shape, ref::ElemType t, std::mt19937& rng, double lo = -4,
                                     double hi = 4) {
    ref::HostTensor h(t, shape);
    std::uniform_real_distribution<double> d(lo, hi);
    for (double& v : h.data) v = ref::is_float(t) ? d(rng) : std::round(d(rng));
    ref::round_to_type(h);
    return h;
}

// Runs the op and its reference; returns "" or the first mismatch (with context).
inline std::string check_op(const NodeDesc& n, const std::vector<ref::HostTensor>& vals, const DeviceInfo& dev,
                            const Tolerance& tol, bool check_races = false, RunResult* keep = nullptr) {
    RunResult r = run_op(n, vals, dev, check_races);
    if (!r.error.empty()) return r.error;
    std::vector<const ref::HostTensor*> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(n.inputs[i].present ? &vals[i] : nullptr);
    const std::vector<ref::HostTensor> want = ref::run_ref({n.name, n.op_type, n.opset, n.attrs}, ins);
    for (size_t o = 0; o < r.out.size(); ++o) {
        const CheckResult c = compare_tensors(r.out[o], want.at(o), tol);
        if (!c.passed) {
            // First mismatching element, for the message.
            ref::HostTensor w = want[o];
            w.type = r.out[o].type;
            ref::round_to_type(w);
            for (size_t i = 0; i < w.data.size(); ++i) {
                const double g = r.out[o].data[i], e = w.data[i];
                if (!(std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e)) && !(std::isnan(g) && std::isnan(e)) &&
                    g != e)
                    return "output " + std::to_string(o) + " element " + std::to_string(i) + ": got " +
                           std::to_string(g) + ", want " + std::to_string(e) + " (" + r.describe + ")";
            }
            return "output " + std::to_string(o) + " mismatch (" + r.describe + ")";
        }
    }
    if (keep) *keep = std::move(r);
    return "";
}

}  // namespace sfumato::ops::normtest
