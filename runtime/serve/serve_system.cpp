#include "runtime/serve/serve_system.h"

#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::serve {

namespace {

std::vector<DeviceInfo> chip_infos(sys::SystemRun& s) {
    std::vector<DeviceInfo> infos;
    for (uint32_t c = 0; c < s.size(); ++c) infos.push_back(s.device(c).dev().info());
    if (!infos.empty() && infos.front().functional)
        throw InputError("serve: runs in timing mode only (a trace carries token counts, not tokens): --mode timing");
    return infos;
}

ServeSetup system_setup(ServeSetup setup, const comm::CommParams& cp) {
    setup.comm_buffer_bytes = cp.buffer_bytes;
    setup.step_reuse.on = false;  // single-chip instances only (docs/serve.md)
    return setup;
}

}  // namespace

SystemServe::SystemServe(sys::SystemRun& s, const llm::ModelConfig& model, RequestTrace trace, ServeSetup setup,
                         const comm::CommParams& cp, reuse::ReuseOptions reuse)
    : m_s(s), m_trace(std::move(trace)), m_reuse(std::move(reuse)) {
    const std::vector<DeviceInfo> infos = chip_infos(s);
    m_cluster = std::make_unique<ServeCluster>(model, m_trace, system_setup(std::move(setup), cp), infos);
    if (!m_reuse.table) m_reuse.table = reuse::make_reuse_table();  // the chips re-use each other's runs
    // A tensor-parallel group's collectives (an instance's, or a stage's) run over its chips.
    for (const std::vector<uint32_t>& g : m_cluster->comm_groups()) {
        std::vector<rt::Device*> devs;
        for (uint32_t c : g) devs.push_back(&s.device(c));
        m_comms.push_back(std::make_unique<comm::Communicator>(s.system().info(), devs, cp));
    }
}

SystemServe::~SystemServe() = default;

void SystemServe::run() {
    const std::vector<ServeCluster::Host> hosts = m_cluster->hosts();
    std::vector<uint32_t> chips;
    for (const auto& h : hosts) chips.push_back(h.chip);
    m_s.run(chips, [&](uint32_t i, rt::Context& ctx) {
        const ServeCluster::Host& h = hosts[i];
        m_cluster->run_host(h, m_s.device(h.chip), ctx, m_reuse,
                            h.comm >= 0 ? m_comms[static_cast<size_t>(h.comm)].get() : nullptr);
    });
    m_end_ps = now_tick().v;
}

nlohmann::json SystemServe::summary(double slo_ttft_s, double slo_tpot_s) const {
    return m_cluster->summary(slo_ttft_s, slo_tpot_s);
}

nlohmann::json SystemServe::links_json() const { return m_s.links_json(0, m_end_ps); }

}  // namespace sfumato::serve
