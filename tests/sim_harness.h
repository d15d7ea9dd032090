// In-process harness for component and timing tests: builds a chip from a preset plus
// overrides, runs kernels submitted straight to the device interface from a host thread, and
// reports whether the host program finished (a deadlock leaves it waiting with nothing pending).
// SystemC elaborates once per process: one Harness per TEST_CASE (CTest runs each alone).
#pragma once
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/chip/chip.h"
#include "runtime/rt/runtime.h"
#include "sim/config.h"
#include "sim/failure.h"
#include "sim/host_thread.h"
#include "sim/sc_time_util.h"
#include "tests/support.h"

namespace sfumato::test {

class Harness {
public:
    // preset "": the built-in defaults (a tiny split chip) without a config file.
    explicit Harness(const std::vector<std::string>& sets = {}, const std::string& preset = "tiny", bool functional = true) {
        if (!preset.empty()) m_config.load_ini(config(preset));
        for (const auto& s : sets) m_config.apply_override(s);
        m_params = std::make_unique<ChipParams>(m_config);
        m_host = std::make_unique<rt::RuntimeParams>(ParamScope(m_config, "host"));
        m_config.check_unused();
        init_time_resolution();
        m_chip = std::make_unique<Chip>("chip", *m_params, functional, m_trace, m_root);
    }
    const ChipParams& params() const { return *m_params; }
    const rt::RuntimeParams& host_params() const { return *m_host; }
    TraceHub& trace() { return m_trace; }
    StatGroup& root() { return m_root; }
    Chip& chip() { return *m_chip; }
    const StatGroup& stats() const { return m_root; }

    // Runs the kernels (one queue each, submitted at time 0) and waits for all of them.
    // Returns false if the simulation ran out of events before they finished (deadlock).
    bool run(std::vector<std::shared_ptr<Task>> tasks) {
        m_tasks = std::move(tasks);
        HostThread host("host", [this] {
            for (auto& t : m_tasks) m_chip->submit(m_chip->open_queue(0), t);
            for (auto& t : m_tasks)
                while (!t->done) sc_core::wait(t->done_event);
        });
        sc_core::sc_start();
        rethrow_failure();
        return host.finished();
    }

    // Runs `program` as the host thread (it may submit, wait and call the chip); returns whether
    // it finished.
    bool run_host(std::function<void()> program) {
        HostThread host("host", std::move(program));
        sc_core::sc_start();
        rethrow_failure();
        return host.finished();
    }
    // Submits `t` on a fresh queue and waits for it (from the host thread).
    void submit_and_wait(const std::shared_ptr<Task>& t) {
        m_chip->submit(m_chip->open_queue(0), t);
        while (!t->done) sc_core::wait(t->done_event);
    }

    // Test kernels declare their code (fetched whole at start-up), so their bodies run without
    // instruction-fetch stalls and their timing is the pipes' alone, after Task::startup_cycles.
    static constexpr uint32_t kCodeBytes = 4096;
    static std::shared_ptr<Task> kernel(std::function<void(isa::IInstrSink&)> body, uint32_t block_dim = 1,
                                        KernelKind kind = KernelKind::Vector) {
        auto t = std::make_shared<Task>();
        t->kind = TaskKind::Kernel;
        t->kernel.name = "test";
        t->kernel.block_dim = block_dim;
        t->kernel.kind = kind;
        t->kernel.body = std::move(body);
        t->kernel.code_bytes = kCodeBytes;
        return t;
    }

private:
    Config m_config;
    std::unique_ptr<ChipParams> m_params;
    std::unique_ptr<rt::RuntimeParams> m_host;
    StatGroup m_root{nullptr, ""};
    TraceHub m_trace;
    std::unique_ptr<Chip> m_chip;
    std::vector<std::shared_ptr<Task>> m_tasks;
};

inline isa::Instr vadd(uint64_t dst, uint64_t a, uint64_t b, uint16_t repeat, isa::DType t = isa::DType::FP16) {
    isa::Instr in;
    in.op = isa::Opcode::VADD;
    in.pipe = isa::Pipe::V;
    in.dtype = t;
    in.dst = {dst, isa::Pos::UB};
    in.src0 = {a, isa::Pos::UB};
    in.src1 = {b, isa::Pos::UB};
    in.vec.repeat = repeat;
    return in;
}

inline isa::Instr flag(isa::Opcode op, isa::Pipe src, isa::Pipe dst, uint8_t id) {
    isa::Instr in;
    in.op = op;
    in.pipe = op == isa::Opcode::SET_FLAG ? src : dst;
    in.flag = {src, dst, id};
    return in;
}

inline isa::Instr load(uint64_t ub, uint64_t gm, uint32_t bytes) {
    isa::Instr in;
    in.op = isa::Opcode::COPY_GM_TO_UB;
    in.pipe = isa::Pipe::MTE2;
    in.dst = {ub, isa::Pos::UB};
    in.src0 = {gm, isa::Pos::GM};
    in.copy = {1, bytes, 0, 0};
    return in;
}

inline isa::Instr store(uint64_t gm, uint64_t ub, uint32_t bytes) {
    isa::Instr in;
    in.op = isa::Opcode::COPY_UB_TO_GM;
    in.pipe = isa::Pipe::MTE3;
    in.dst = {gm, isa::Pos::GM};
    in.src0 = {ub, isa::Pos::UB};
    in.copy = {1, bytes, 0, 0};
    return in;
}

}  // namespace sfumato::test
