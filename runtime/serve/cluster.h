// Several serving instances on a system of chips behind a router (issue 25, `sfumato serve
// --system F --instances N`): each instance is a whole copy of the model (a ServeRun: its own
// scheduler, KV pool and step plans) in its own host program (a context, as a serving process
// is) on its chip; the router hands each arriving request to one instance. Instances on one chip
// contend for its cores and memory as two processes do, and share one copy of the weights: the
// chip's first instance exports its weight block through the runtime's shared-memory handles
// (runtime/rt/share_table.h) and the others map it, so the weights are held once; the KV cache
// left after the weights and every instance's activations is split evenly between them.
// Routers: round_robin (the i-th arrival to instance i mod N) and least_tokens (the instance
// with the fewest tokens still to compute: the rest of its requests' prompts and outputs, and
// those routed to it but not yet taken). A request is routed when an instance's host program
// first reaches its arrival time on the shared simulated clock (an idle instance waits there; a
// busy one at its step's end), with the loads as they are then; the order in which host
// programs resume at one instant is the simulation kernel's, so a run repeats exactly.
// Disaggregated prefill/decode (serve.prefill_instances P, continuous policy): the router spreads
// arrivals over instances 0..P-1 (prefill), each on a chip no decode instance uses; at a
// request's first prompt piece the prefill instance picks its decode instance (the router's rule
// over the decode instances), and during each prefill step the pieces' K and V move to the decode
// chips layer by layer as peer copies over the system's links (runtime/rt, the transfers --pp and
// the collectives use): once layer L's attention is issued, a KV stream waits for it and one
// batched call per decode chip posts that layer's block copies (kv_ship.cpp), so they run while
// the later layers compute; when the prompt is done (its first token out) a host callback behind
// its copies hands the request to the decode instance, whose first step for it is a decode. The
// KV transfer time is the exposed part, from the prompt's last step's end to the hand-off
// (queueing behind earlier copies included); the copies' own span (first start to last end) is
// reported beside it.
// Tensor parallelism per instance (serve.tp T): instance i spans chips i T .. i T + T - 1 (or T
// chips from its serve.placement entry), no chip in two instances; its model is sharded over them
// as llm::TpRun shards it (runtime/llm/parallel.h), one host program per chip: rank 0 runs the
// scheduler and posts each step to the others (tp_lockstep.h), the all-reduces after o_proj and
// down_proj cross the links, and a step ends when its slowest rank's does.
// Pipeline parallelism per instance (serve.pp P): the instance's T P chips are P stages of T
// ranks (stage-major), its layers split as llm::PpRun splits them (runtime/llm/pipeline.h); every
// chip runs each step's batch on its stage's layers (tp_lockstep.h), a later stage's waiting for
// the activations the previous one sends over the links; up to serve.pp_batches_in_flight steps
// outstanding (scheduler.h), each chip running them in order, so the stages overlap.
// Disaggregated TP instances: each rank of the prefill instance ships its KV shard (its heads) of
// each layer over the links from its own KV stream to the decode ranks that hold those heads
// (rank r to rank r for one TP size), as a layer-wise connector of tensor-parallel workers does; rank 0's stream waits for every rank's copies of a step (a notify
// from each) before the hand-off.
// The prefill instances may have a TP size of their own (serve.prefill_tp): a prefill rank then
// sends each decode rank the KV heads both hold (a row segment per token when the two hold
// different head sets, the whole block when the same), a replicated head from its first holder.
// Simplified: every instance has the same knobs and PP degree, and every decode instance (every
// prefill instance) the same TP size; a PP instance is not disaggregated;
// a mirrored TP follower (--simulate one) runs no kernels, so its copies of a layer start once its
// stream reached that layer's preceding all-reduce, not its own attention; the router's own latency and
// the request's network hop to the instance are not charged; each block segment is its own copy
// task on the KV stream (one host call per layer and decode chip, but the device runs the
// segments one after another); the copies land at the same block offsets of the decode chip's
// cache (timing mode: no data), whose pool allocates its own blocks at admission.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/reuse/timing_reuse.h"
#include "runtime/serve/serve_run.h"

namespace sfumato::serve {

enum class RouterPolicy : uint8_t { RoundRobin, LeastTokens };
RouterPolicy parse_router(const std::string& s);  // InputError naming the known ones
const char* router_name(RouterPolicy p);

// The router: one IArrivals port per instance over one trace.
class Router {
public:
    Router(const RequestTrace& t, RouterPolicy p, size_t instances);
    ~Router();
    // The instance's scheduler (its load), once it exists; until then its load is what the
    // router gave it.
    void attach(size_t instance, const Scheduler* s) { m_sched.at(instance) = s; }
    IArrivals& port(size_t instance);
    // Routes every request that arrived by `now_s`.
    void route_until(double now_s);
    // Each request's instance (-1: not routed).
    const std::vector<int64_t>& assignment() const { return m_assign; }

private:
    class Port;
    size_t pick();
    const RequestTrace& m_t;
    RouterPolicy m_p;
    std::vector<const Scheduler*> m_sched;
    std::vector<std::vector<size_t>> m_inbox;  // routed, not taken
    std::vector<int64_t> m_inbox_tokens, m_assign;
    std::vector<std::unique_ptr<Port>> m_ports;
    size_t m_next = 0, m_rr = 0;
};

class ServeCluster {
public:
    // Places the instances (setup.instances, setup.placement) on the chips (`chips`: the
    // system's DeviceInfo per chip) and plans each one's memory. InputError naming the culprit:
    // an instance on a chip the system does not have, an unknown router, instances whose model,
    // activations and KV cache do not fit their chip together.
    ServeCluster(const llm::ModelConfig& c, const RequestTrace& trace, const ServeSetup& setup,
                 const std::vector<DeviceInfo>& chips);
    ~ServeCluster();
    size_t instances() const { return m_inst.size(); }
    // The chip of each instance, in instance order (one host program each).
    const std::vector<uint32_t>& placement() const { return m_chip; }
    // Each instance's chips in rank order (one unless serve.tp or serve.pp; stage-major).
    const std::vector<std::vector<uint32_t>>& chip_groups() const { return m_group; }
    // The tensor-parallel groups (an instance's, or each stage's of it), chips in rank order;
    // none when serve.tp is 1. The caller makes a communicator over each.
    std::vector<std::vector<uint32_t>> comm_groups() const;
    // The host programs: one per instance and chip (rank 0 runs the instance's scheduler; with
    // stages, rank s T + r is stage s's TP rank r). comm: its index in comm_groups() (-1: none).
    struct Host {
        size_t instance = 0;
        uint32_t rank = 0, chip = 0;
        int64_t comm = -1;
    };
    std::vector<Host> hosts() const;
    // Host program h on its chip (ctx: a context of its own on `dev`; `comm`: its TP group's
    // communicator, comm_groups()[h.comm], null when serve.tp is 1).
    void run_host(const Host& h, rt::Device& dev, rt::Context& ctx, const reuse::ReuseOptions& reuse,
                  comm::Communicator* comm);
    // Instance i's host program on its chip (rank 0).
    void run_instance(size_t i, rt::Device& dev, rt::Context& ctx, const reuse::ReuseOptions& reuse,
                      comm::Communicator* comm = nullptr);
    size_t hosts_count() const;
    size_t tp_of(size_t instance) const;  // its TP size (serve.tp, or serve.prefill_tp)

    // After the run: the merged result (each request from its instance), its metrics, the
    // per-instance and per-chip sections (memory: the weights' copies and bytes held per chip).
    const ServeResult& result() const { return m_res; }
    const ServeRun& instance(size_t i) const { return *m_inst.at(i); }
    const std::vector<size_t>& request_instance() const { return m_req_inst; }
    nlohmann::json summary(double slo_ttft_s, double slo_tpot_s) const;
    std::string requests_csv() const;
    std::string steps_csv() const;  // every instance's steps (serve::steps_csv)
    reuse::ReuseCounters reuse_counters() const;

    // Disaggregation: each request's KV transfer, after the run.
    struct KvTransfer {
        int64_t decode = -1;  // the decode instance (-1: none; finished where it prefilled)
        uint64_t bytes = 0;   // K and V of the prompt, every layer
        size_t copies = 0;
        int64_t shipped = 0;  // prompt tokens whose KV copies are issued
        // Scheduler time: the prompt's last step's end; its last copy landed (the hand-off).
        double issued_s = 0, done_s = 0;
        double copy_begin_s = 0, copy_end_s = 0;  // its first copy's start, its last copy's end
        double seconds() const { return done_s - issued_s; }  // exposed: after the prompt's last step
        double copy_seconds() const { return copy_end_s - copy_begin_s; }
    };
    bool disaggregated() const { return m_s.prefill_instances > 0; }
    // ServeSetup::export_profile: every instance's per-op times and the KV transfers' copies, in
    // Vidur's layouts (vidur_profile.h), written to `dir`.
    void export_profile(const std::string& dir, int64_t devices_per_node) const;
    const std::vector<KvTransfer>& transfers() const { return m_xfer; }

private:
    struct Shared;
    class Handoff;
    class DecodePort;
    void merge();
    void check_disaggregation() const;
    void hand_off(size_t from, size_t id, double now_s, const RequestResult& so_far);
    // Disaggregation (kv_ship.cpp): a prefill step's prompt pieces, and the batched copies of
    // one layer's KV of them once the step's attention of that layer is issued.
    struct Piece {
        size_t id = 0, decode = 0;  // request; decode instance
        int64_t from = 0, to = 0;   // prompt tokens
        std::vector<int64_t> blocks;
    };
    void step_starting(size_t from, const std::vector<StepItem>& items);
    // Rank `rank` of prefill instance `from` (its host thread): its KV shard of the layer.
    void ship_layer(size_t from, uint32_t rank, int64_t layer, uint32_t compute_stream);
    void ship_pair(size_t from, uint32_t rank, int64_t layer, size_t to, uint32_t decode_rank);
    // A prefill instance's chip sets up its KV stream, layer event and hook (and, rank 0, the
    // notifies its followers' copies report to).
    void prefill_chip(size_t i, uint32_t rank, ServeRun& run, rt::Runtime& rt);
    std::vector<std::vector<Piece>> m_pieces;  // per instance: the running step's
    // Per instance and rank (TP ranks; one for a single-chip instance).
    std::vector<std::vector<uint32_t>> m_layer_event;  // prefill instances
    std::vector<std::vector<uint32_t>> m_done_slot;    // prefill rank 0: a notify per follower
    std::map<size_t, std::vector<std::shared_ptr<Task>>> m_req_tasks;  // copies under way per request
    size_t m_copy_calls = 0;
    size_t pick_decode();
    nlohmann::json transfer_json() const;
    std::vector<KvTransfer> m_xfer;
    std::vector<std::vector<rt::Device*>> m_dev;
    std::vector<std::vector<rt::Context*>> m_ctx;
    std::vector<std::vector<uint32_t>> m_kv_stream;  // prefill instances: their transfers' stream
    std::vector<std::unique_ptr<DecodePort>> m_dports;
    std::map<size_t, RequestResult> m_carried;  // handed-off requests' results so far
    std::vector<int64_t> m_dec_pending;         // per decode instance: tokens handed to it, not yet taken
    std::vector<const Scheduler*> m_dec_sched;  // per decode instance, while it runs
    size_t m_prefill_done = 0, m_in_flight = 0, m_rr_decode = 0;
    uint64_t m_origin_ps = 0;
    std::vector<std::shared_ptr<Task>> m_copy_tasks;  // export_profile: the KV transfers' copies
    const RequestTrace& m_trace;
    ServeSetup m_s;
    std::vector<uint32_t> m_chip;
    std::vector<std::vector<uint32_t>> m_group;
    std::vector<std::unique_ptr<ServeRun>> m_inst;
    std::vector<reuse::ReuseCounters> m_follower_reuse;
    std::unique_ptr<Router> m_router;
    std::unique_ptr<Shared> m_sh;
    std::vector<reuse::ReuseCounters> m_reuse;
    std::vector<uint64_t> m_in_use;  // per instance: its context's live device bytes once placed
    ServeResult m_res;
    std::vector<size_t> m_req_inst;
    size_t m_done = 0;
};

}  // namespace sfumato::serve
