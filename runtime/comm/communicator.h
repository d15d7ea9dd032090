// The collective library (the role of the vendor's HCCL): a communicator over a set of devices
// (rank i = devices[i]) with all_reduce, all_gather, reduce_scatter, broadcast, reduce and
// all_to_all (sum/max/min; fp16, bf16, fp32). Each rank's host program initialises its rank
// (buffers, streams, notifies; a rendezvous with the other ranks, as communicator init is) and
// issues each collective on one of its streams; the call returns once the tasks are enqueued.
// A collective runs as tasks on the rank's streams, like any other device work. Mesh all-reduce,
// reduce-scatter and all-gather take the vendor's direct form (Plan::direct: no staging, the own
// block copied by the SDMA, reductions inline in the peer copies, all-gather as pulls); the other
// plans stage the user data through the rank's communication buffers (In, Out:
// comm.buffer_bytes each, Scratch twice that; larger messages run in loops), with copies and
// reductions as vector kernels on the rank's own AIV cores. Transfers are peer copies over the
// links (one stream per peer, so a
// rank sends to several peers at once), and ranks synchronise with notifies per step and per
// sending pair: an "ack" from the receiver (its earlier steps are done) that the sender waits for
// before the step's copies, and a "data" notify after them. The algorithm is chosen per call (comm/select.h) unless forced.
// Simplified: staged plans' staging copies are not overlapped with the transfers of the same loop.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/comm/algorithms.h"
#include "runtime/comm/comm_types.h"
#include "runtime/rt/context.h"
#include "sim/config.h"
#include "sim/system_info.h"
#include "sim/window_sync.h"

namespace sfumato::comm {

struct CommParams {
    explicit CommParams(const ParamScope& s);
    Param<uint64_t> buffer_bytes;
    ChoiceParam algo;
    Param<double> step_overhead_ns;
    Param<uint32_t> align_bytes;
};

class HostBarrier;
class RemoteRendezvous;

class Communicator {
public:
    // devices: rank order; each must be a device of `sys` (its device_id indexes the system).
    Communicator(const SystemInfo& sys, std::vector<rt::Device*> devices, const CommParams& p);
    ~Communicator();
    uint32_t size() const { return static_cast<uint32_t>(m_ranks.size()); }
    const SystemInfo& system() const { return m_sys; }
    uint32_t chip_of(uint32_t rank) const { return m_chip[rank]; }

    // From rank `rank`'s host thread, with a context on its device: returns once every rank has
    // initialised. Throws InputError on a runtime error.
    void init_rank(uint32_t rank, rt::Context& ctx);
    // Device memory init_rank takes on each rank: the In, Out and Scratch buffers.
    static uint64_t rank_buffer_bytes(uint64_t buffer_bytes) { return 4 * buffer_bytes; }
    // A host-side rendezvous of the ranks' host programs (no device work), e.g. to start timing
    // together. The form with the calling rank also works split over processes.
    void host_barrier();
    void host_barrier(uint32_t rank);
    // Split over window-synchronised processes (sim/window_sync.h; comm_remote.cpp): the ranks
    // whose chips another process simulates are reached through messages. init_rank and
    // host_barrier then meet as over a network: each rank's arrival (with its buffers' addresses
    // and notify slots, from init_rank) reaches every other rank one window lookahead later, and
    // a rank leaves when every other rank's arrival has reached it. The same on one process or
    // many. Call before the simulation starts, on every process alike.
    void distribute(WindowSync& sync);

    struct Call {
        Op op = Op::AllReduce;
        uint64_t count = 0;  // elements: the vector (all_reduce, broadcast, reduce), per rank
                             // (all_gather input, reduce_scatter output), per pair (all_to_all)
        isa::DType dtype = isa::DType::FP16;
        RedOp redop = RedOp::Sum;
        uint32_t root = 0;
        Algo algo = Algo::Auto;  // Auto: comm.algo, or chosen by cost
        rt::DevPtr send = 0, recv = 0;
    };
    // Enqueues rank `rank`'s part of a collective on stream s. Every rank issues the same calls in
    // the same order. Throws InputError (naming the argument) on bad arguments or runtime errors.
    void run(uint32_t rank, const Call& c, rt::StreamId s);
    void all_reduce(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, RedOp op,
                    rt::StreamId s, Algo a = Algo::Auto);
    void all_gather(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, rt::StreamId s,
                    Algo a = Algo::Auto);
    void reduce_scatter(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, RedOp op,
                        rt::StreamId s, Algo a = Algo::Auto);
    void broadcast(uint32_t rank, rt::DevPtr buf, uint64_t count, isa::DType t, uint32_t root, rt::StreamId s,
                   Algo a = Algo::Auto);
    void reduce(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, RedOp op, uint32_t root,
                rt::StreamId s, Algo a = Algo::Auto);
    void all_to_all(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, rt::StreamId s,
                    Algo a = Algo::Auto);

    // The algorithm a call runs with (the same on every rank), and its elements per loop.
    Algo resolve(const Call& c) const;
    uint64_t loop_count(const Call& c, Algo a) const;
    // The plan of one loop (cached).
    const Plan& plan(const Call& c, Algo a, uint64_t count) const;
    // Bytes of the user's send and receive buffers a call uses on a rank.
    uint64_t send_bytes(const Call& c) const;
    uint64_t recv_bytes(const Call& c) const;

private:
    struct RankState {
        rt::Device* dev = nullptr;
        rt::Context* ctx = nullptr;
        rt::DevPtr buf[3] = {0, 0, 0};  // In, Out, Scratch
        std::vector<rt::StreamId> sub;  // per peer
        std::vector<uint32_t> data_slot, ack_slot;  // on this device, per sending rank
        rt::EventId fork = 0;
        std::vector<rt::EventId> join;  // per peer
        bool ready = false;
    };
    PlanRequest request(const Call& c, Algo a, uint64_t count) const;
    void remote_barrier(uint32_t rank, bool with_state);
    void check(uint32_t rank, rt::Status s) const;
    void run_loop(uint32_t rank, const Call& c, const Plan& p, uint64_t first, uint64_t n, rt::StreamId s);
    void stage(uint32_t rank, const Call& c, bool in, uint64_t first, uint64_t n, rt::StreamId s);
    void run_local(uint32_t rank, const Call& c, const Plan& p, uint64_t first, uint64_t n, const LocalOp& o,
                   rt::StreamId s);
    uint64_t addr(uint32_t rank, const Region& r, uint32_t es) const;
    uint64_t loop_addr(uint32_t rank, uint32_t self, const Call& c, const Plan& p, uint64_t first, uint64_t n,
                       const Region& r, uint64_t count) const;

    SystemInfo m_sys;
    const CommParams& m_p;
    std::vector<uint32_t> m_chip;
    std::vector<RankState> m_ranks;
    std::unique_ptr<HostBarrier> m_barrier;
    std::unique_ptr<RemoteRendezvous> m_remote;
    friend class RemoteRendezvous;
    mutable std::map<std::tuple<int, int, uint64_t, uint32_t>, Plan> m_plans;
};

}  // namespace sfumato::comm
