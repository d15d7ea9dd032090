// Test helper: an IInstrSink without SystemC for kernel-API tests. It records every issued
// instruction, optionally executes it in program order on a TestMem (one valid serialisation
// of the pipes), checks operands against its buffer sizes, and checks the synchronisation a
// real core would need: binary flags (no set of a flag already set, no wait on a flag never
// set before it in program order, none left set at the end) and races — two instructions of
// different pipes touching overlapping bytes, one writing, with no happens-before path between
// them through set/wait flags (vector clocks per pipe).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "isa/instr_sink.h"
#include "isa/semantics.h"
#include "isa_test_mem.h"

namespace sfumato::kernel::test {

using isa::Pipe;
using isa::Pos;

class KapiSink : public isa::IInstrSink {
public:
    using Clock = std::array<uint32_t, isa::kNumPipes>;
    struct Issued {
        isa::Instr in;
        Pipe pipe;
        Clock stamp;
    };

    explicit KapiSink(isa::CoreKind kind = isa::CoreKind::Coupled, isa::test::TestMem* mem = nullptr)
        : m_kind(kind), m_mem(mem) {
        m_size.fill(0);
        const bool cube = kind != isa::CoreKind::Vector, vec = kind != isa::CoreKind::Cube;
        if (cube)
            m_size[idx(Pos::L1)] = 128 * 1024, m_size[idx(Pos::L0A)] = m_size[idx(Pos::L0B)] = 16 * 1024,
            m_size[idx(Pos::L0C)] = 32 * 1024;
        if (vec) m_size[idx(Pos::UB)] = 32 * 1024;
    }
    void set_block(uint32_t idx_, uint32_t num) { m_block = idx_, m_num = num; }
    void set_sub_block(uint32_t sub) { m_sub = sub; }
    void set_buffer(Pos p, uint64_t bytes) { m_size[idx(p)] = bytes; }
    void set_event_ids(uint32_t n) { m_events = n; }

    void issue(const isa::Instr& in) override {
        if (const std::string e = isa::validate(in); !e.empty()) fail(in, e);
        isa::Extent ex[isa::kMaxExtents];
        const int n = isa::footprint(in, ex);
        for (int i = 0; i < n; ++i)
            if (ex[i].pos != Pos::GM && ex[i].hi > m_size[idx(ex[i].pos)])
                fail(in, "overruns " + std::string(isa::pos_name(ex[i].pos)));
        const Pipe p = isa::exec_pipe(in);
        Clock& vc = m_vc[idx(p)];
        if (in.op == isa::Opcode::WAIT_FLAG) {
            if (in.flag.event_id >= m_events) fail(in, "event id out of range");
            bool& f = m_flag[flag_idx(in)];
            if (!f) fail(in, "wait on a flag not set before it");
            f = false;
            merge(vc, m_flag_vc[flag_idx(in)]);
        }
        if (in.op == isa::Opcode::PIPE_BARRIER && in.pipe == Pipe::ALL) {
            Clock all{};
            for (auto& c : m_vc) merge(all, c);
            for (auto& c : m_vc) c = all;
        }
        ++vc[idx(p)];
        if (in.op == isa::Opcode::SET_FLAG) {
            if (in.flag.event_id >= m_events) fail(in, "event id out of range");
            bool& f = m_flag[flag_idx(in)];
            if (f) fail(in, "set of a flag that is already set");
            f = true;
            m_flag_vc[flag_idx(in)] = vc;
        }
        m_issued.push_back({in, p, vc});
        if (m_mem && isa::param_kind(in.op) != isa::ParamKind::Flag && in.op != isa::Opcode::PIPE_BARRIER)
            isa::execute(in, *m_mem);
    }
    uint64_t load(const isa::Instr& in) override {
        issue(in);
        return m_mem ? isa::load_scalar(in, *m_mem) : 0;
    }
    void scalar(uint32_t cycles) override { m_scalar += cycles; }
    uint32_t block_idx() const override { return m_block; }
    uint32_t block_num() const override { return m_num; }
    uint32_t sub_block_idx() const override { return m_sub; }
    isa::CoreKind core_kind() const override { return m_kind; }
    uint64_t buffer_size(Pos pos) const override { return m_size[idx(pos)]; }
    uint32_t event_ids() const override { return m_events; }

    const std::vector<Issued>& issued() const { return m_issued; }
    std::vector<isa::Instr> instrs() const {
        std::vector<isa::Instr> v;
        for (const auto& i : m_issued) v.push_back(i.in);
        return v;
    }
    size_t count(isa::Opcode op) const {
        size_t n = 0;
        for (const auto& i : m_issued) n += i.in.op == op;
        return n;
    }
    uint64_t scalar_cycles() const { return m_scalar; }
    const std::vector<std::string>& errors() const { return m_errors; }
    bool flags_clear() const {
        for (bool f : m_flag)
            if (f) return false;
        return true;
    }
    // The first race, or "" (pairs of different pipes, overlapping local bytes, one a write,
    // not ordered by flags).
    std::string first_race() const {
        for (size_t b = 0; b < m_issued.size(); ++b) {
            isa::Extent eb[isa::kMaxExtents];
            const int nb = isa::footprint(m_issued[b].in, eb);
            for (size_t a = 0; a < b; ++a) {
                const Issued& ia = m_issued[a];
                if (ia.pipe == m_issued[b].pipe || ia.stamp[idx(ia.pipe)] <= m_issued[b].stamp[idx(ia.pipe)])
                    continue;
                isa::Extent ea[isa::kMaxExtents];
                const int na = isa::footprint(ia.in, ea);
                for (int i = 0; i < na; ++i)
                    for (int j = 0; j < nb; ++j)
                        if (ea[i].pos == eb[j].pos && ea[i].pos != Pos::GM && (ea[i].write || eb[j].write) &&
                            ea[i].lo < eb[j].hi && eb[j].lo < ea[i].hi)
                            return std::string(isa::opcode_name(ia.in.op)) + " #" + std::to_string(a) +
                                   " vs " + isa::opcode_name(m_issued[b].in.op) + " #" + std::to_string(b) +
                                   " on " + isa::pos_name(ea[i].pos);
            }
        }
        return "";
    }

private:
    static size_t idx(Pos p) { return static_cast<size_t>(p); }
    static size_t idx(Pipe p) { return static_cast<size_t>(p); }
    static size_t flag_idx(const isa::Instr& in) {
        return (idx(in.flag.src) * isa::kNumPipes + idx(in.flag.dst)) * 16 + in.flag.event_id;
    }
    static void merge(Clock& a, const Clock& b) {
        for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
    }
    void fail(const isa::Instr& in, const std::string& why) {
        m_errors.push_back(std::string(isa::opcode_name(in.op)) + " #" + std::to_string(m_issued.size()) +
                           ": " + why);
    }

    isa::CoreKind m_kind;
    isa::test::TestMem* m_mem;
    uint32_t m_block = 0, m_num = 1, m_events = 8, m_sub = 0;
    std::array<uint64_t, static_cast<size_t>(Pos::kCount)> m_size{};
    std::vector<Issued> m_issued;
    std::array<Clock, isa::kNumPipes> m_vc{};
    std::array<bool, isa::kNumPipes * isa::kNumPipes * 16> m_flag{};
    std::array<Clock, isa::kNumPipes * isa::kNumPipes * 16> m_flag_vc{};
    uint64_t m_scalar = 0;
    std::vector<std::string> m_errors;
};

}  // namespace sfumato::kernel::test
