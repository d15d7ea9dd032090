#include "runtime/comm/communicator.h"

#include <algorithm>
#include <set>
#include <systemc>

#include "runtime/comm/kernels.h"
#include "runtime/comm/remote_rendezvous.h"
#include "runtime/comm/select.h"
#include "sim/error.h"

namespace sfumato::comm {

CommParams::CommParams(const ParamScope& s)
    : buffer_bytes(s, "buffer_bytes", 200ull << 20, "B",
                   "size of each staging buffer (In, Out; Scratch is twice this) per rank (the vendor's HCCL_BUFFSIZE)",
                   {4096, 1ull << 40}),
      algo(s, "algo", "auto", "collective algorithm unless a call forces one: auto (cheapest by the cost model), ring, "
                              "halving_doubling, mesh, double_ring, hierarchical",
           {"auto", "ring", "halving_doubling", "mesh", "double_ring", "hierarchical"}),
      step_overhead_ns(s, "step_overhead_ns", 3000.0, "ns",
                       "cost model only (algorithm choice): fixed time per algorithm step (task dispatch, notifies)",
                       {0.0, 1e9}),
      align_bytes(s, "align_bytes", 512, "B", "blocks of large messages are multiples of this", {1, 1u << 20}) {}

// Host programs of different ranks meet here (SystemC host threads).
class HostBarrier {
public:
    explicit HostBarrier(uint32_t n) : m_n(n) {}
    void wait() {
        const uint64_t gen = m_generation;
        if (++m_arrived == m_n) {
            m_arrived = 0;
            ++m_generation;
            m_event.notify(sc_core::SC_ZERO_TIME);
            return;
        }
        while (m_generation == gen) sc_core::wait(m_event);
    }

private:
    uint32_t m_n, m_arrived = 0;
    uint64_t m_generation = 0;
    sc_core::sc_event m_event;
};

Communicator::~Communicator() = default;

Communicator::Communicator(const SystemInfo& sys, std::vector<rt::Device*> devices, const CommParams& p)
    : m_sys(sys), m_p(p), m_ranks(devices.size()) {
    if (devices.empty()) throw InputError("a communicator needs at least one device");
    std::set<uint32_t> seen;
    for (size_t i = 0; i < devices.size(); ++i) {
        const uint32_t id = devices[i]->dev().info().device_id;
        if (id >= sys.chips) throw InputError("communicator: device " + std::to_string(id) + " is not in the system");
        if (!seen.insert(id).second) throw InputError("communicator: device " + std::to_string(id) + " is given twice");
        m_chip.push_back(id);
        m_ranks[i].dev = devices[i];
    }
    m_barrier = std::make_unique<HostBarrier>(size());
}


void Communicator::check(uint32_t rank, rt::Status s) const {
    if (s != rt::Status::Ok) throw InputError("communicator rank " + std::to_string(rank) + ": " + m_ranks[rank].ctx->last_error());
}

void Communicator::init_rank(uint32_t rank, rt::Context& ctx) {
    if (rank >= size()) throw InputError("communicator: rank " + std::to_string(rank) + " of " + std::to_string(size()));
    RankState& st = m_ranks[rank];
    st.ctx = &ctx;
    const uint64_t b = m_p.buffer_bytes;
    const uint64_t sizes[3] = {b, b, 2 * b};
    for (int i = 0; i < 3; ++i) check(rank, ctx.malloc(&st.buf[i], sizes[i]));
    const uint32_t n = size();
    st.sub.assign(n, 0);
    st.data_slot.assign(n, 0);
    st.ack_slot.assign(n, 0);
    st.join.assign(n, 0);
    check(rank, ctx.event_create(&st.fork));
    for (uint32_t q = 0; q < n; ++q) {
        if (q == rank) continue;
        check(rank, ctx.stream_create(&st.sub[q], 0));
        check(rank, ctx.notify_create(&st.data_slot[q]));
        check(rank, ctx.notify_create(&st.ack_slot[q]));
        check(rank, ctx.event_create(&st.join[q]));
    }
    st.ready = true;
    if (m_remote) {
        remote_barrier(rank, true);
        return;
    }
    m_barrier->wait();
}

void Communicator::host_barrier() {
    if (m_remote) throw InputError("communicator: a barrier split over processes needs the calling rank (host_barrier(rank))");
    m_barrier->wait();
}

void Communicator::host_barrier(uint32_t rank) {
    if (rank >= size()) throw InputError("communicator: rank " + std::to_string(rank) + " of " + std::to_string(size()));
    if (m_remote) remote_barrier(rank, false);
    else m_barrier->wait();
}

PlanRequest Communicator::request(const Call& c, Algo a, uint64_t count) const {
    PlanRequest r;
    r.op = c.op;
    r.algo = a;
    r.ranks = size();
    r.count = count;
    r.root = c.root;
    r.align = std::max<uint64_t>(1, m_p.align_bytes / isa::dtype_size(c.dtype));
    for (uint32_t q = 0; q < size(); ++q) r.group.push_back(m_chip[q] / m_sys.group_size);
    r.group_full_mesh = m_sys.topology == "full_mesh" || m_sys.topology == "groups";
    return r;
}

const Plan& Communicator::plan(const Call& c, Algo a, uint64_t count) const {
    const auto key = std::make_tuple(static_cast<int>(c.op), static_cast<int>(a), count, c.root);
    auto it = m_plans.find(key);
    if (it == m_plans.end()) it = m_plans.emplace(key, build_plan(request(c, a, count))).first;
    return it->second;
}

Algo Communicator::resolve(const Call& c) const {
    Algo a = c.algo;
    if (a == Algo::Auto) a = parse_algo(m_p.algo.get(), "comm.algo");
    if (a != Algo::Auto) return a;
    CostModel m;
    m.sys = &m_sys;
    m.chip_of_rank = m_chip;
    m.step_overhead_ns = m_p.step_overhead_ns;
    const DeviceInfo& d = m_ranks[0].dev->dev().info();
    m.local_gbps = d.gm_bytes_per_cycle * d.clock.freq_ghz() / 2;  // reads and writes share it
    m.elem_bytes = isa::dtype_size(c.dtype);
    return choose(request(c, Algo::Ring, std::max<uint64_t>(1, std::min(c.count, loop_count(c, Algo::Ring)))), m);
}

uint64_t Communicator::loop_count(const Call& c, Algo a) const {
    const uint32_t es = isa::dtype_size(c.dtype);
    const uint64_t cap = m_p.buffer_bytes / es, scratch_cap = 2 * cap;
    const uint64_t per = std::max(in_elems(c.op, size(), 1), out_elems(c.op, size(), 1));
    if (cap < per)
        throw InputError("comm.buffer_bytes = " + std::to_string(m_p.buffer_bytes.get()) + " is too small for a " +
                         std::to_string(size()) + "-rank " + op_name(c.op) + " (needs " + std::to_string(per * es) + " bytes)");
    uint64_t n = std::min(c.count, cap / per);
    for (int guard = 0; guard < 64; ++guard) {
        const uint64_t need = build_plan(request(c, a, n)).scratch;
        if (need <= scratch_cap) break;
        if (n == 1) throw InputError("comm.buffer_bytes is too small for algorithm " + std::string(algo_name(a)));
        n = std::max<uint64_t>(1, n * scratch_cap / need - 1);
    }
    return n;
}

uint64_t Communicator::send_bytes(const Call& c) const {
    return in_elems(c.op, size(), c.count) * isa::dtype_size(c.dtype);
}

uint64_t Communicator::recv_bytes(const Call& c) const {
    return out_elems(c.op, size(), c.count) * isa::dtype_size(c.dtype);
}

uint64_t Communicator::addr(uint32_t rank, const Region& r, uint32_t es) const {
    return m_ranks[rank].buf[static_cast<int>(r.buf)] + r.off * es;
}

void Communicator::run(uint32_t rank, const Call& c, rt::StreamId s) {
    if (rank >= size()) throw InputError("collective on rank " + std::to_string(rank) + " of a " + std::to_string(size()) + "-rank communicator");
    RankState& st = m_ranks[rank];
    if (!st.ready) throw InputError("communicator rank " + std::to_string(rank) + " is not initialised");
    if (c.dtype != isa::DType::FP16 && c.dtype != isa::DType::BF16 && c.dtype != isa::DType::FP32)
        throw InputError(std::string(op_name(c.op)) + ": dtype " + isa::dtype_name(c.dtype) + " (valid: fp16, bf16, fp32)");
    if ((c.op == Op::Broadcast || c.op == Op::Reduce) && c.root >= size())
        throw InputError(std::string(op_name(c.op)) + ": root " + std::to_string(c.root) + " is not a rank (0.." +
                         std::to_string(size() - 1) + ")");
    if (c.count == 0) return;
    const bool uses_send = c.op != Op::Broadcast || rank == c.root;
    const bool uses_recv = c.op != Op::Reduce || rank == c.root;
    if (uses_send && !st.dev->range_allocated(c.send, send_bytes(c)))
        throw InputError(std::string(op_name(c.op)) + " on rank " + std::to_string(rank) + ": the send buffer is not " +
                         std::to_string(send_bytes(c)) + " bytes of device memory");
    if (uses_recv && !st.dev->range_allocated(c.recv, recv_bytes(c)))
        throw InputError(std::string(op_name(c.op)) + " on rank " + std::to_string(rank) + ": the receive buffer is not " +
                         std::to_string(recv_bytes(c)) + " bytes of device memory");
    const Algo a = resolve(c);
    if (a == Algo::Hierarchical) build_plan(request(c, a, 1));  // throws when it does not apply
    const uint64_t per_loop = loop_count(c, a);
    for (uint64_t first = 0; first < c.count; first += per_loop) {
        const uint64_t n = std::min(per_loop, c.count - first);
        run_loop(rank, c, plan(c, a, n), first, n, s);
    }
}

// Copies between the user's buffers and In (in = true) or Out, for the loop's slice.
void Communicator::stage(uint32_t rank, const Call& c, bool in, uint64_t first, uint64_t n, rt::StreamId s) {
    const RankState& st = m_ranks[rank];
    const uint32_t es = isa::dtype_size(c.dtype), k = size();
    const uint64_t total = c.count;
    std::vector<CopyRun> runs;
    const rt::DevPtr in_buf = st.buf[0], out_buf = st.buf[1];
    auto run = [&](rt::DevPtr dst, rt::DevPtr src, uint64_t count) { runs.push_back({dst, src, count}); };
    const bool blocks_in = c.op == Op::ReduceScatter || c.op == Op::AllToAll;
    const bool blocks_out = c.op == Op::AllGather || c.op == Op::AllToAll;
    if (in) {
        if (c.op == Op::Broadcast && rank != c.root) return;
        if (blocks_in) {
            for (uint32_t j = 0; j < k; ++j) run(in_buf + j * n * es, c.send + (j * total + first) * es, n);
        } else {
            run(in_buf, c.send + first * es, n);
        }
    } else {
        if (c.op == Op::Reduce && rank != c.root) return;
        if (blocks_out) {
            for (uint32_t j = 0; j < k; ++j) run(c.recv + (j * total + first) * es, out_buf + j * n * es, n);
        } else {
            run(c.recv + first * es, out_buf, n);
        }
    }
    check(rank, st.ctx->launch(copy_kernel(st.dev->dev().info(), c.dtype, std::move(runs), in ? "comm stage in" : "comm stage out"), s));
}

// A region of rank `rank`'s buffers for the loop [first, first + n). A direct plan's In and Out
// are the caller's own send and receive buffers (only the calling rank touches them; peers reach
// each other's Scratch only).
uint64_t Communicator::loop_addr(uint32_t rank, uint32_t self, const Call& c, const Plan& p, uint64_t first, uint64_t n,
                                 const Region& r, uint64_t count) const {
    const uint32_t es = isa::dtype_size(c.dtype);
    if (!p.direct || r.buf == Buf::Scratch) return addr(rank, r, es);
    if (rank != self) throw ModelError("comm", "a direct plan reaches another rank's user buffer");
    const bool blocks = r.buf == Buf::In ? (c.op == Op::ReduceScatter || c.op == Op::AllToAll)
                                         : (c.op == Op::AllGather || c.op == Op::AllToAll);
    const rt::DevPtr base = r.buf == Buf::In ? c.send : c.recv;
    if (!blocks) return base + (first + r.off) * es;
    const uint64_t j = r.off / n, k = r.off % n;
    if (k + count > n) throw ModelError("comm", "a direct plan's region crosses a block of the user's buffer");
    return base + (j * c.count + first + k) * es;
}

void Communicator::run_loop(uint32_t rank, const Call& c, const Plan& p, uint64_t first, uint64_t n, rt::StreamId s) {
    RankState& st = m_ranks[rank];
    rt::Context& ctx = *st.ctx;
    const uint32_t es = isa::dtype_size(c.dtype), k = size();
    auto at = [&](uint32_t r, const Region& g, uint64_t count) { return loop_addr(r, rank, c, p, first, n, g, count); };
    if (!p.direct) stage(rank, c, true, first, n, s);
    const uint8_t red = c.redop == RedOp::Sum ? 1 : c.redop == RedOp::Max ? 2 : 3;
    for (size_t si = 0; si < p.steps.size(); ++si) {
        const Step& step = p.steps[si];
        // Transfers this rank issues, per partner, and the partners that issue one with it.
        std::vector<std::vector<const Xfer*>> out(k);
        std::vector<bool> in(k, false);
        bool any_out = false;
        for (const Xfer& x : step.xfers) {
            if (x.issuer() == rank) {
                out[x.partner()].push_back(&x);
                any_out = true;
            }
            if (x.partner() == rank) in[x.issuer()] = true;
        }
        // Every step opens with a handshake per pair, as the vendor's mesh and ring executors do
        // (an ack each way before the step's transfers, a data notify after them): this rank
        // tells every rank that issues a transfer with it in this step that its buffers are ready
        // (to be written, or read by a pull), once its earlier steps' local operations are done
        // (the stream's order), and each sub-stream waits for the partner's ack before its copies.
        // The previous step's ack was consumed before that step's data notify reached this rank,
        // so a slot never holds two.
        for (uint32_t q = 0; q < k; ++q)
            if (in[q]) check(rank, ctx.notify_record(*m_ranks[q].dev, m_ranks[q].ack_slot[rank], s));
        if (any_out) check(rank, ctx.event_record(st.fork, s));
        for (uint32_t q = 0; q < k; ++q) {
            if (out[q].empty()) continue;
            const rt::StreamId sub = st.sub[q];
            check(rank, ctx.stream_wait_event(sub, st.fork));
            check(rank, ctx.notify_wait(st.ack_slot[q], sub));
            for (const Xfer* x : out[q]) {
                const uint64_t bytes = x->count * es;
                const uint64_t from = at(x->src, x->from, x->count), to = at(x->dst, x->to, x->count);
                if (x->pull) check(rank, ctx.memcpy_from_peer(*m_ranks[q].dev, to, from, bytes, sub));
                else if (x->reduce) check(rank, ctx.memcpy_peer_reduce(*m_ranks[q].dev, to, from, bytes, c.dtype, red, sub));
                else check(rank, ctx.memcpy_peer(*m_ranks[q].dev, to, from, bytes, sub));
            }
            check(rank, ctx.notify_record(*m_ranks[q].dev, m_ranks[q].data_slot[rank], sub));
            check(rank, ctx.event_record(st.join[q], sub));
        }
        // A direct plan's local copies of a step touch nothing its transfers touch (the plan
        // checker holds it), so they run on the main stream beside the sub-streams' transfers,
        // as the vendor's executors overlap the own block's copy with the peers'.
        auto local_ops = [&]() {
            for (const LocalOp& o : step.ops)
                if (o.rank == rank) run_local(rank, c, p, first, n, o, s);
        };
        if (p.direct) local_ops();
        for (uint32_t q = 0; q < k; ++q)
            if (in[q]) check(rank, ctx.notify_wait(st.data_slot[q], s));
        for (uint32_t q = 0; q < k; ++q)
            if (!out[q].empty()) check(rank, ctx.stream_wait_event(s, st.join[q]));
        if (!p.direct) local_ops();
    }
    if (!p.direct) stage(rank, c, false, first, n, s);
}

void Communicator::run_local(uint32_t rank, const Call& c, const Plan& p, uint64_t first, uint64_t n, const LocalOp& o,
                             rt::StreamId s) {
    RankState& st = m_ranks[rank];
    rt::Context& ctx = *st.ctx;
    const uint32_t es = isa::dtype_size(c.dtype);
    const DeviceInfo& info = st.dev->dev().info();
    auto at = [&](const Region& g) { return loop_addr(rank, rank, c, p, first, n, g, o.count); };
    const uint64_t dst = at(o.dst);
    if (o.kind == LocalOp::Kind::Copy) {
        const uint64_t src = at(o.srcs[0]);
        if (p.direct) {  // the vendor's executors copy with the SDMA
            if (src != dst) check(rank, ctx.memcpy_d2d(dst, src, o.count * es, s, true));
        } else {
            check(rank, ctx.launch(copy_kernel(info, c.dtype, {{dst, src, o.count}}, "comm copy"), s));
        }
        return;
    }
    std::vector<uint64_t> srcs;
    for (const Region& g : o.srcs) srcs.push_back(at(g));
    check(rank, ctx.launch(reduce_kernel(info, c.dtype, c.redop, dst, std::move(srcs), o.count, "comm reduce"), s));
}

void Communicator::all_reduce(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, RedOp op,
                              rt::StreamId s, Algo a) {
    run(rank, {Op::AllReduce, count, t, op, 0, a, send, recv}, s);
}
void Communicator::all_gather(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t,
                              rt::StreamId s, Algo a) {
    run(rank, {Op::AllGather, count, t, RedOp::Sum, 0, a, send, recv}, s);
}
void Communicator::reduce_scatter(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t,
                                  RedOp op, rt::StreamId s, Algo a) {
    run(rank, {Op::ReduceScatter, count, t, op, 0, a, send, recv}, s);
}
void Communicator::broadcast(uint32_t rank, rt::DevPtr buf, uint64_t count, isa::DType t, uint32_t root,
                             rt::StreamId s, Algo a) {
    run(rank, {Op::Broadcast, count, t, RedOp::Sum, root, a, buf, buf}, s);
}
void Communicator::reduce(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t, RedOp op,
                          uint32_t root, rt::StreamId s, Algo a) {
    run(rank, {Op::Reduce, count, t, op, root, a, send, recv}, s);
}
void Communicator::all_to_all(uint32_t rank, rt::DevPtr send, rt::DevPtr recv, uint64_t count, isa::DType t,
                              rt::StreamId s, Algo a) {
    run(rank, {Op::AllToAll, count, t, RedOp::Sum, 0, a, send, recv}, s);
}

}  // namespace sfumato::comm
