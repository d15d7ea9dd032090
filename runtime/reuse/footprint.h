// The global-memory footprint of a kernel launch, for timing re-use (timing_reuse.h): recorded
// from the instructions of a full simulation, replayed when a later launch of the same identity
// runs as a stand-in, so the memory system is left as the kernel would have left it
// (ITrafficReplay, sim/traffic_replay.h). A footprint is the union of the GM byte ranges the launch's
// instructions read and wrote (each instruction's hull per operand, isa::footprint), kept
// relative to the launch's operands (input, output, workspace), so a stand-in whose operands lie
// elsewhere (another layer's weights, another step's activations) replays its own addresses.
// Simplified: an instruction's strided access counts as its hull (the rows between belong to the
// same tensor, and the launch's other blocks read them); the order of accesses within a launch is
// not kept (reads replay before writes, each in address order); a range outside every operand
// (argument blocks) replays at its absolute address.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "isa/instr_sink.h"
#include "runtime/reuse/timing_reuse.h"
#include "sim/traffic_replay.h"

namespace sfumato::reuse {

class Footprint {
public:
    // `ops`: the launch's operands (launch_operands()), which ranges are kept relative to.
    explicit Footprint(std::vector<OperandRange> ops) : m_ops(std::move(ops)) {}
    // Adds the GM bytes an instruction reads or writes.
    void record(const isa::Instr& in);
    // The footprint as ranges of a launch whose operands are `ops` (the same identity, so the
    // same operand list): reads first, then writes, each in operand and address order.
    void ranges_for(const std::vector<OperandRange>& ops, std::vector<GmRange>& out) const;
    uint64_t bytes() const;

private:
    void add(uint64_t lo, uint64_t hi, bool write);
    std::vector<OperandRange> m_ops;
    // Per (operand + 1, write): disjoint [lo, hi) offsets (operand 0 = absolute addresses).
    std::map<std::pair<int, bool>, std::map<uint64_t, uint64_t>> m_sets;
};

// A sink that passes everything to `inner` and records each instruction's GM bytes.
class FootprintSink : public isa::IInstrSink {
public:
    FootprintSink(isa::IInstrSink& inner, Footprint& fp) : m_in(inner), m_fp(fp) {}
    void issue(const isa::Instr& in) override {
        m_fp.record(in);
        m_in.issue(in);
    }
    uint64_t load(const isa::Instr& in) override {
        m_fp.record(in);
        return m_in.load(in);
    }
    void scalar(uint32_t cycles) override { m_in.scalar(cycles); }
    uint32_t block_idx() const override { return m_in.block_idx(); }
    uint32_t block_num() const override { return m_in.block_num(); }
    uint32_t sub_block_idx() const override { return m_in.sub_block_idx(); }
    isa::CoreKind core_kind() const override { return m_in.core_kind(); }
    uint64_t buffer_size(isa::Pos pos) const override { return m_in.buffer_size(pos); }
    uint32_t event_ids() const override { return m_in.event_ids(); }

private:
    isa::IInstrSink& m_in;
    Footprint& m_fp;
};

}  // namespace sfumato::reuse
