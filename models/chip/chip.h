// A whole chip assembled from parameters: AI cores (coupled, or AIC + AIVs on split parts),
// global memory, a DMA engine and the task scheduler, behind the runtime's device interface.
// Functional mode backs global memory with a sparse store; timing mode stores nothing.
// In a system (models/link/system.h) a chip has an index, memory ports for the fabric's peer DMA,
// and routes peer copies and notify records to the fabric.
#pragma once
#include <array>
#include <memory>
#include <systemc>
#include <vector>

#include "models/aicore/ai_core.h"
#include "models/aicore/instr_stats.h"
#include "models/chip/chip_params.h"
#include "models/chip/simple_dma.h"
#include "models/chip/simple_gm.h"
#include "models/dma/sdma.h"
#include "models/link/i_fabric.h"
#include "models/mem/memory_system.h"
#include "models/power/energy_attributor.h"
#include "models/ts/aicore_runner.h"
#include "models/ts/task_scheduler.h"
#include "sim/device_if.h"
#include "sim/sparse_memory.h"
#include "sim/stats.h"
#include "sim/trace.h"

namespace sfumato {

class Chip : public sc_core::sc_module, public IDevice {
public:
    // `device_id`: the chip's index in its system; `extra_ports`: memory ports for the fabric.
    Chip(sc_core::sc_module_name name, const ChipParams& p, bool functional, TraceHub& trace, StatGroup& root,
         uint32_t device_id = 0, uint32_t extra_ports = 0);

    const DeviceInfo& info() const override { return m_info; }
    uint32_t open_queue(int priority) override { return m_ts->open_queue(priority); }
    void submit(uint32_t queue, std::shared_ptr<Task> task) override { m_ts->submit(queue, std::move(task)); }
    uint32_t create_event() override { return m_ts->create_event(); }
    IBackingStore* gm() override { return m_gm.get(); }
    void flush_caches() override;
    ITrafficReplay* traffic_replay() override;
    bool kernel_activity(const Task& t, std::vector<double>& out) const override;
    bool charge_standin(const Task& standin, const std::vector<double>& activity) override;

    uint32_t create_notify() override { return m_ts->create_notify(); }

    // System wiring: the memory target and the first of the extra ports, and the fabric that
    // carries this chip's peer copies and notifies.
    IMemTarget& mem_target() { return *m_mem; }
    uint32_t first_extra_port() const { return m_first_extra_port; }
    uint32_t line_bytes() const;
    void attach_fabric(IFabric* fabric);
    ts::TaskScheduler& scheduler() { return *m_ts; }

    const ChipParams& params() const { return m_p; }
    const std::vector<std::unique_ptr<AiCore>>& cores() const { return m_cores; }
    const InstrStats& instr_stats() const { return *m_instr_stats; }
    // Energy bookkeeping over kernel spans (models/power): per-kernel memory events, the power
    // timeline. Call energy().finish(now) at the end of a run before reading it.
    power::EnergyAttributor& energy() { return *m_energy; }
    const power::EnergyAttributor& energy() const { return *m_energy; }
    // The detailed memory system (null when chip.mem.model = simple).
    mem::MemorySystem* memory_system() const { return m_memsys.get(); }
    // What every core and queue is doing: for deadlock reports.
    std::string describe_state() const;

private:
    class DmaRouter : public IDmaEngine {
    public:
        void start(const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) override;
        IDmaEngine* local = nullptr;
        IFabric* fabric = nullptr;
        uint32_t device_id = 0;
    };

    const ChipParams& m_p;
    DeviceInfo m_info;
    uint32_t m_first_extra_port = 0;
    DmaRouter m_router;
    StatGroup m_stats;
    std::unique_ptr<SparseMemory> m_gm;
    std::unique_ptr<InstrStats> m_instr_stats;
    std::unique_ptr<SimpleGm> m_simple_gm;
    std::unique_ptr<mem::MemorySystem> m_memsys;
    IMemTarget* m_mem = nullptr;
    std::unique_ptr<SimpleDma> m_simple_dma;
    std::unique_ptr<SdmaEngines> m_sdma;
    IDmaEngine* m_dma = nullptr;
    std::unique_ptr<CrossFlags> m_xflags;  // split parts only
    std::unique_ptr<SystemRegion> m_region;
    std::vector<std::unique_ptr<AiCore>> m_cores;
    // The issue memos the cores of each kind share (models/aicore/instr_cache.h), by isa::CoreKind.
    std::array<std::unique_ptr<IssueMemo>, 3> m_issue_memos;
    std::unique_ptr<ts::AiCoreRunner> m_runner;
    std::unique_ptr<ts::TaskScheduler> m_ts;
    std::unique_ptr<power::EnergyAttributor> m_energy;
};

}  // namespace sfumato
