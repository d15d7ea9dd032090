// Serving on a system of chips as a library (the host side of `sfumato serve --system F`,
// cli/cmd_serve.cpp, which parses, calls this and prints; a user's C++ program does the same):
// over a sys::SystemRun (runtime/system/system_run.h) it places the instances (ServeCluster,
// cluster.h: several instances behind the router, tensor- and pipeline-parallel instances,
// disaggregated prefill/decode), opens a communicator over each tensor-parallel group, runs one
// host program per instance and rank on its chip to the end of the trace, and makes summary.json's
// `serve` section:
//
//   sys::SystemRun s(system, host_params, &trace, stats_root);   // system: models/link's System
//   serve::ServeSetup setup = serve::ServeParams(ParamScope(config, "serve")).setup();
//   serve::SystemServe run(s, model, requests, setup, comm_params, reuse_options);
//   run.run();
//   ... run.summary(slo_ttft_s, slo_tpot_s), run.links_json(), run.cluster().requests_csv() ...
//
// Timing mode only (a trace carries token counts, not tokens). Step re-use
// (ServeSetup::step_reuse) is for a single-chip instance (ServeRun) and is turned off here; the
// kernels' timing re-use (reuse_options) shares one table over the chips.
#pragma once
#include <nlohmann/json.hpp>

#include "runtime/comm/communicator.h"
#include "runtime/reuse/timing_reuse.h"
#include "runtime/serve/cluster.h"
#include "runtime/system/system_run.h"

namespace sfumato::serve {

class SystemServe {
public:
    // Places the instances on the system's chips (ServeCluster's InputErrors name the culprit).
    // setup.comm_buffer_bytes comes from `cp`; the request trace is copied (the run keeps it).
    SystemServe(sys::SystemRun& s, const llm::ModelConfig& model, RequestTrace trace, ServeSetup setup,
                const comm::CommParams& cp, reuse::ReuseOptions reuse);
    ~SystemServe();
    SystemServe(const SystemServe&) = delete;
    SystemServe& operator=(const SystemServe&) = delete;

    // Runs every host program to the end of the trace (SystemRun::run's errors).
    void run();

    const ServeCluster& cluster() const { return *m_cluster; }
    const RequestTrace& trace() const { return m_trace; }
    const reuse::ReuseOptions& reuse_options() const { return m_reuse; }
    reuse::ReuseCounters reuse_counters() const { return m_cluster->reuse_counters(); }
    // After run(): summary.json's `serve` section (SLO bounds in seconds, 0: none) and the links'
    // counters over the run (`links`).
    nlohmann::json summary(double slo_ttft_s, double slo_tpot_s) const;
    nlohmann::json links_json() const;

private:
    sys::SystemRun& m_s;
    RequestTrace m_trace;
    reuse::ReuseOptions m_reuse;
    std::unique_ptr<ServeCluster> m_cluster;
    std::vector<std::unique_ptr<comm::Communicator>> m_comms;
    uint64_t m_end_ps = 0;
};

}  // namespace sfumato::serve
