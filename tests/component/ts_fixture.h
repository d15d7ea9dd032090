// Test doubles around the task scheduler: cores whose blocks take a fixed number of cycles, a
// one-engine DMA with bandwidth and latency, and an IDevice that wires them with a TaskScheduler,
// so scheduler and runtime behaviour can be checked without the AI-core model. A Host module runs
// a host program in an SC_THREAD, as the CLI does.
#pragma once
#include <functional>
#include <memory>
#include <queue>
#include <systemc>
#include <vector>

#include "models/dma/i_dma.h"
#include "models/ts/task_scheduler.h"
#include "runtime/rt/context.h"
#include "sim/config.h"
#include "sim/sc_time_util.h"
#include "sim/stats.h"

namespace sfumato::test {

// Each block takes block_cycles(task) cycles (default: KernelDesc::flops read as cycles).
class FixedRunner : public sc_core::sc_module, public ts::IBlockRunner {
public:
    SC_HAS_PROCESS(FixedRunner);
    FixedRunner(sc_core::sc_module_name n, ClockDomain clock) : sc_module(n), m_clock(clock) {
        SC_METHOD(fire);
        sensitive << m_wake;
        dont_initialize();
    }
    void run_block(const ts::CoreSlot&, Task& task, uint32_t, ts::IBlockDone& done, uint64_t cookie) override {
        const uint64_t cycles = static_cast<uint64_t>(task.kernel.flops);
        const uint64_t at = now_tick().v + m_clock.ticks(cycles);
        m_heap.push(Item{at, m_seq++, &done, cookie});
        m_wake.notify(to_sc_time(Tick(at - now_tick().v)));
    }

private:
    struct Item {
        uint64_t tick, seq;
        ts::IBlockDone* done;
        uint64_t cookie;
        bool operator>(const Item& o) const { return tick != o.tick ? tick > o.tick : seq > o.seq; }
    };
    void fire() {
        const uint64_t now = now_tick().v;
        while (!m_heap.empty() && m_heap.top().tick <= now) {
            Item i = m_heap.top();
            m_heap.pop();
            i.done->block_done(i.cookie);
        }
        if (!m_heap.empty()) m_wake.notify(to_sc_time(Tick(m_heap.top().tick - now)));
    }
    ClockDomain m_clock;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> m_heap;
    uint64_t m_seq = 0;
    sc_core::sc_event m_wake;
};

// One engine, FIFO: latency + bytes / bandwidth (pinned or pageable rate), in ps.
class LinkDma : public sc_core::sc_module, public IDmaEngine {
public:
    SC_HAS_PROCESS(LinkDma);
    LinkDma(sc_core::sc_module_name n, double pinned_gbps, double pageable_gbps, uint64_t latency_ps)
        : sc_module(n), m_pinned(pinned_gbps), m_pageable(pageable_gbps), m_latency(latency_ps) {
        SC_METHOD(fire);
        sensitive << m_wake;
        dont_initialize();
    }
    uint64_t copy_ps(const MemcpyDesc& c) const {
        const double gbps = c.pinned || c.dir == CopyDir::D2D ? m_pinned : m_pageable;
        return m_latency + static_cast<uint64_t>(static_cast<double>(c.bytes) * 1000.0 / gbps);
    }
    void start(const MemcpyDesc& c, IDmaClient& client, uint64_t cookie) override {
        const uint64_t now = now_tick().v;
        m_free = std::max(m_free, now) + copy_ps(c);
        m_jobs.push_back({m_free, &client, cookie});
        m_wake.notify(to_sc_time(Tick(m_jobs.front().tick - now)));
    }

private:
    struct Job {
        uint64_t tick;
        IDmaClient* client;
        uint64_t cookie;
    };
    void fire() {
        const uint64_t now = now_tick().v;
        while (!m_jobs.empty() && m_jobs.front().tick <= now) {
            Job j = m_jobs.front();
            m_jobs.pop_front();
            j.client->dma_done(j.cookie);
        }
        if (!m_jobs.empty()) m_wake.notify(to_sc_time(Tick(m_jobs.front().tick - now)));
    }
    double m_pinned, m_pageable;
    uint64_t m_latency, m_free = 0;
    std::deque<Job> m_jobs;
    sc_core::sc_event m_wake;
};

// The effective value of a declared numeric parameter.
inline uint64_t param(const Config& c, const std::string& key) {
    for (const ParamDecl& d : c.decls()) {
        if (d.key == key) return std::stoull(d.value);
    }
    throw InputError("test: parameter " + key + " is not declared");
}

inline DeviceInfo tiny_info() {
    DeviceInfo i;
    i.arch = "split";
    i.cube_cores = 2;
    i.vector_cores = 4;
    i.aiv_per_aic = 2;
    i.clock = ClockDomain(1000);
    i.gm_bytes = 1ull << 30;
    i.functional = false;
    return i;
}

class TestDevice : public IDevice {
public:
    TestDevice(Config& cfg, DeviceInfo info = tiny_info(), double pinned_gbps = 25.0, double pageable_gbps = 10.0,
               uint64_t link_latency_ps = 1'000'000)
        : m_info(info),
          m_root(nullptr, "root"),
          m_runner("runner", info.clock),
          m_dma("dma", pinned_gbps, pageable_gbps, link_latency_ps),
          m_tsp(ParamScope(cfg, "chip.ts")),
          m_hostp(ParamScope(cfg, "host")),
          m_ts("ts", m_tsp, info.clock, m_info, m_runner, m_dma, &m_root, &m_trace) {}
    const rt::RuntimeParams& host_params() const { return m_hostp; }
    const DeviceInfo& info() const override { return m_info; }
    uint32_t open_queue(int priority) override { return m_ts.open_queue(priority); }
    void submit(uint32_t q, std::shared_ptr<Task> t) override { m_ts.submit(q, std::move(t)); }
    uint32_t create_event() override { return m_ts.create_event(); }
    IBackingStore* gm() override { return nullptr; }
    ts::TaskScheduler& ts() { return m_ts; }
    LinkDma& dma() { return m_dma; }
    TraceHub& trace() { return m_trace; }

private:
    DeviceInfo m_info;
    StatGroup m_root;
    TraceHub m_trace;
    FixedRunner m_runner;
    LinkDma m_dma;
    ts::TsParams m_tsp;
    rt::RuntimeParams m_hostp;
    ts::TaskScheduler m_ts;
};

class Host : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Host);
    Host(sc_core::sc_module_name n, std::function<void()> program) : sc_module(n), m_program(std::move(program)) {
        SC_THREAD(run);
    }
    bool finished = false;

private:
    void run() {
        m_program();
        finished = true;
    }
    std::function<void()> m_program;
};

// A kernel whose blocks each take `cycles` on the FixedRunner.
inline KernelDesc fixed_kernel(const std::string& name, uint32_t block_dim, uint64_t cycles,
                               KernelKind kind = KernelKind::Vector) {
    KernelDesc k;
    k.name = name;
    k.type = "fixed";
    k.block_dim = block_dim;
    k.kind = kind;
    k.flops = static_cast<double>(cycles);
    k.body = [](isa::IInstrSink&) {};
    return k;
}

// A TestDevice and a runtime device on it, configured by `overrides` (key=value) and the host
// link rates; run() executes a host program on a fresh context until the simulation ends and
// returns whether the program finished (false: it was left waiting, a deadlock).
struct RtRig {
    Config cfg;
    std::unique_ptr<TestDevice> dev;
    std::unique_ptr<rt::Device> rtdev;
    explicit RtRig(const std::vector<std::string>& overrides = {}, double pinned_gbps = 25.0,
                   double pageable_gbps = 10.0) {
        init_time_resolution();
        for (const auto& o : overrides) cfg.apply_override(o);
        dev = std::make_unique<TestDevice>(cfg, tiny_info(), pinned_gbps, pageable_gbps);
        rtdev = std::make_unique<rt::Device>(*dev, dev->host_params(), &dev->trace());
    }
    bool run_program(std::function<void(rt::Context&)> program) {
        rt::Context& ctx = rtdev->open_context();
        Host host("host", [&] { program(ctx); });
        sc_core::sc_start();
        return host.finished;
    }
};

}  // namespace sfumato::test
