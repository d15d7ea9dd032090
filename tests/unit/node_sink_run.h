// Test helper: runs a graph-node operator's launches without SystemC. The inputs go to a
// functional GM (TestMem), each kernel's blocks run in order on a KapiSink of the kernel's kind
// (split: vector kernels on an AIV, cube kernels on an AIC; coupled: a coupled core), which
// executes every instruction and checks operands, flags and races; the outputs come back as
// host tensors to compare with the reference. Tensors in a fractal format (TensorRef::format)
// are converted on the host on the way in and out; `raw` keeps each output's stored bytes.
#pragma once
#include <string>
#include <vector>

#include "isa_test_mem.h"
#include "kapi_sink.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/transdata.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::test {

struct NodeSinkRun {
    std::vector<ref::HostTensor> outs;
    std::vector<std::string> errors;  // sink errors, unbalanced flags, races
    std::vector<std::string> kernels;
    std::vector<std::vector<uint8_t>> raw;  // each output as stored (its format, padding included)
    std::vector<std::vector<isa::Instr>> issued;  // per kernel, every block's instructions in order
};

inline NodeSinkRun run_node_on_sinks(ops::NodeDesc node, const std::vector<ref::HostTensor>& inputs,
                                     const DeviceInfo& dev) {
    NodeSinkRun r;
    std::unique_ptr<ops::INodeOp> op = ops::make_node_op(node, dev);
    std::vector<ops::TensorRef> outs = op->outputs();
    uint64_t at = 0x1000;
    auto place = [&](ops::TensorRef& t) {
        t.addr = at;
        at += (std::max<uint64_t>(t.storage_bytes(), 1) + 4095) / 4096 * 4096;
    };
    for (auto& t : node.inputs) place(t);
    for (auto& t : outs) place(t);
    const uint64_t ws = at;
    at += (op->workspace_bytes() + 4095) / 4096 * 4096;
    isa::test::TestMem mem(1 << 20, at + 4096);
    for (auto& byte : mem.of(isa::Pos::GM)) byte = 0xff;  // poison: unwritten outputs read as nan
    for (size_t i = 0; i < inputs.size(); ++i) {
        const ops::TensorRef& t = node.inputs[i];
        const std::vector<uint8_t> b =
            ops::host_to_format(ref::to_device_bytes(inputs[i], t.dtype), t.shape, t.dtype, t.format);
        std::copy(b.begin(), b.end(),
                  mem.of(isa::Pos::GM).begin() + static_cast<int64_t>(node.inputs[i].addr));
    }
    const bool coupled = dev.arch == "coupled";
    for (const KernelDesc& k : op->launches(node.inputs, outs, ws)) {
        r.kernels.push_back(k.name);
        r.issued.emplace_back();
        const isa::CoreKind kind = coupled                        ? isa::CoreKind::Coupled
                                   : k.kind == KernelKind::Vector ? isa::CoreKind::Vector
                                                                  : isa::CoreKind::Cube;
        for (uint32_t b = 0; b < k.block_dim; ++b) {
            kernel::test::KapiSink sink(kind, &mem);
            sink.set_block(b, k.block_dim);
            if (kind != isa::CoreKind::Vector) {
                sink.set_buffer(isa::Pos::L1, dev.l1_bytes);
                sink.set_buffer(isa::Pos::L0A, dev.l0a_bytes);
                sink.set_buffer(isa::Pos::L0B, dev.l0b_bytes);
                sink.set_buffer(isa::Pos::L0C, dev.l0c_bytes);
            }
            if (kind != isa::CoreKind::Cube) sink.set_buffer(isa::Pos::UB, dev.ub_bytes);
            sink.set_event_ids(dev.event_ids);
            k.body(sink);
            for (const auto& i : sink.issued()) r.issued.back().push_back(i.in);
            const std::string where = k.name + " block " + std::to_string(b) + ": ";
            for (const auto& e : sink.errors()) r.errors.push_back(where + e);
            if (!sink.flags_clear()) r.errors.push_back(where + "flags left set");
            if (const std::string race = sink.first_race(); !race.empty()) r.errors.push_back(where + race);
        }
    }
    for (const auto& t : outs) {
        const uint8_t* at_gm = mem.of(isa::Pos::GM).data() + t.addr;
        r.raw.emplace_back(at_gm, at_gm + t.storage_bytes());
        const std::vector<uint8_t> nd = ops::host_from_format(r.raw.back(), t.shape, t.dtype, t.format);
        r.outs.push_back(ref::from_device_bytes(nd.data(), t.dtype, t.elem, t.shape));
    }
    return r;
}

}  // namespace sfumato::test
