// Replay's host program (replay_host.h): one device's re-use service and Replayer, and the
// communicators of a workload's collective tasks.
#include "runtime/replay/replay_host.h"

#include <algorithm>

#include "sim/error.h"

namespace sfumato::replay {

DeviceReplay::DeviceReplay(rt::Runtime& rt, const workload::Workload& w, ReplayKernels& kernels,
                           const reuse::ReuseOptions& o, const std::string& dir, uint32_t device,
                           workload::CollectiveHook coll)
    // The service first: it must see the workload's first launch.
    : m_reuse(std::make_unique<reuse::TimingReuse>(rt.context(), rt.device_info(), o)),
      m_rep(std::make_unique<workload::Replayer>(rt.context(), w, kernels.factory(rt), dir, device,
                                                 std::move(coll))) {}

DeviceReplay::~DeviceReplay() = default;

void DeviceReplay::run() {
    m_rep->run();
    m_reuse->settle();  // the last stand-ins' traffic, before the stats are read
}

namespace {

comm::Communicator::Call call_of(const workload::Task& t) {
    comm::Communicator::Call c;
    c.op = comm::parse_op(t.coll_op, "op");
    c.dtype = comm::parse_comm_dtype(t.dtype, "dtype");
    c.redop = comm::parse_redop(t.redop, "redop");
    c.algo = comm::parse_algo(t.algo, "algo");
    c.root = t.root;
    c.count = t.count;
    return c;
}

std::string where(const workload::Task& t) {
    return "workload task " + std::to_string(t.index) + " (collective)";
}

}  // namespace

Collectives::Collectives(const SystemInfo& sys, const std::vector<rt::Device*>& devices,
                         const comm::CommParams& p, const workload::Workload& w) {
    for (const workload::Task& t : w.tasks) {
        if (t.kind != workload::Kind::Collective || m_comms.count(t.ranks)) continue;
        std::vector<rt::Device*> devs;
        for (uint32_t d : t.ranks) devs.push_back(devices.at(d));
        Group& g = m_comms[t.ranks];
        g.comm = std::make_unique<comm::Communicator>(sys, devs, p);
        g.ready.assign(t.ranks.size(), false);
    }
}

Collectives::~Collectives() = default;

void Collectives::distribute(WindowSync& sync) {
    for (auto& [ranks, g] : m_comms) g.comm->distribute(sync);
}

workload::CollectiveHook Collectives::hook() {
    workload::CollectiveHook h;
    h.init = [this](rt::Context& ctx, const workload::Task& t, uint32_t rank) { init(ctx, t, rank); };
    h.issue = [this](rt::Context&, const workload::Task& t, uint32_t rank, const workload::Placer& p,
                     rt::StreamId s) { issue(t, rank, p, s); };
    return h;
}

void Collectives::init(rt::Context& ctx, const workload::Task& t, uint32_t rank) {
    Group& g = m_comms.at(t.ranks);
    try {
        if (!g.ready[rank]) {
            g.comm->init_rank(rank, ctx);
            g.ready[rank] = true;
        }
        const comm::Communicator::Call c = call_of(t);
        auto place = [&](uint64_t bytes, int which) {
            rt::DevPtr p = 0;
            if (ctx.malloc(&p, std::max<uint64_t>(bytes, 1)) != rt::Status::Ok)
                throw InputError("cannot place a buffer of " + std::to_string(bytes) +
                                 " bytes: " + ctx.last_error());
            m_anon[{t.index, rank, which}] = p;
        };
        if (t.src.empty()) place(g.comm->send_bytes(c), 0);
        if (t.dst.empty()) place(g.comm->recv_bytes(c), 1);
    } catch (const InputError& e) {
        throw InputError(where(t) + ", rank " + std::to_string(rank) + ": " + e.what());
    }
}

void Collectives::issue(const workload::Task& t, uint32_t rank, const workload::Placer& p, rt::StreamId s) {
    Group& g = m_comms.at(t.ranks);
    try {
        comm::Communicator::Call c = call_of(t);
        c.send = t.src.empty() ? m_anon.at({t.index, rank, 0}) : p.addr(t.src, t.src_offset);
        c.recv = t.dst.empty() ? m_anon.at({t.index, rank, 1}) : p.addr(t.dst, t.dst_offset);
        g.comm->run(rank, c, s);
    } catch (const InputError& e) {
        throw InputError(where(t) + ", rank " + std::to_string(rank) + ": " + e.what());
    }
}

}  // namespace sfumato::replay
