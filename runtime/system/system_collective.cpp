// One collective on a system of chips as a library (system_collective.h).
#include "runtime/system/system_collective.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sim/error.h"

namespace sfumato::sys {

namespace {

using comm::Op;

double combine(comm::RedOp op, double a, double b) {
    return op == comm::RedOp::Sum ? a + b : op == comm::RedOp::Max ? std::max(a, b) : std::min(a, b);
}

struct RankData {
    std::vector<uint8_t> send, recv;
    size_t first_task = 0, last_task = 0;
    rt::Context* ctx = nullptr;
};

}  // namespace

double bus_factor(Op op, uint32_t n) {
    const double r = n ? static_cast<double>(n - 1) / n : 0;
    switch (op) {
        case Op::AllReduce: return 2 * r;
        case Op::Broadcast:
        case Op::Reduce: return 1;
        default: return r;
    }
}

CollectiveSpec resolve_collective(const SystemRun& s, const CollectiveSpec& spec) {
    CollectiveSpec c = spec;
    const uint32_t chips = s.size();
    if (c.ranks == 0) c.ranks = chips;
    if (c.ranks > chips)
        throw InputError("--ranks " + std::to_string(c.ranks) + ": the system has " + std::to_string(chips) + " chips");
    const Op op = c.call.op;
    const uint32_t es = isa::dtype_size(c.call.dtype);
    const bool per_rank = op == Op::AllGather || op == Op::ReduceScatter || op == Op::AllToAll;
    const uint64_t unit = static_cast<uint64_t>(es) * (per_rank ? c.ranks : 1);
    if (c.bytes == 0 || c.bytes % unit != 0)
        throw InputError("--bytes " + std::to_string(c.bytes) + " must be a positive multiple of " + std::to_string(unit) +
                         " for " + comm::op_name(op) + " of " + isa::dtype_name(c.call.dtype) + " on " +
                         std::to_string(c.ranks) + " ranks");
    if ((op == Op::Broadcast || op == Op::Reduce) && c.call.root >= c.ranks)
        throw InputError("--root " + std::to_string(c.call.root) + " is not a rank (0.." + std::to_string(c.ranks - 1) + ")");
    c.call.count = c.bytes / unit;  // the vector, per rank, or per pair (all_to_all)
    return c;
}

CollectiveRun run_collective(SystemRun& s, const CollectiveSpec& spec, const comm::CommParams& cp, bool functional) {
    CollectiveRun out;
    out.spec = resolve_collective(s, spec);
    const uint32_t ranks = out.spec.ranks, iters = out.spec.iters;
    comm::Communicator::Call call = out.spec.call;
    const Op op = call.op;
    const isa::DType dt = call.dtype;
    const uint32_t es = isa::dtype_size(dt);
    if (iters == 0 || iters > 1000) throw InputError("--iters must be 1..1000");

    std::vector<rt::Device*> devs;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < ranks; ++i) {
        devs.push_back(&s.device(i));
        if (s.local(i)) ids.push_back(i);  // split over processes: this one's chips
    }
    comm::Communicator comm(s.system().info(), devs, cp);
    if (s.sync()) comm.distribute(*s.sync());
    out.algo = comm.resolve(call);
    std::vector<RankData> rd(ranks);
    const uint64_t send_b = comm.send_bytes(call), recv_b = comm.recv_bytes(call);
    // Every rank's inputs (split over processes, each checks its own ranks against all inputs).
    for (uint32_t r = 0; r < ranks && functional; ++r) {
        rd[r].send.resize(send_b);
        std::mt19937 gen(1000 + r);
        std::uniform_int_distribution<int> v(-8, 8);
        for (uint64_t i = 0; i < send_b / es; ++i) isa::store_from_f32(dt, rd[r].send.data() + i * es, static_cast<float>(v(gen)));
    }
    s.run(ids, [&](uint32_t i, rt::Context& ctx) {
        const uint32_t r = ids[i];
        RankData& me = rd[r];
        me.ctx = &ctx;
        rt::DevPtr send = 0, recv = 0;
        auto check = [&](rt::Status st) {
            if (st != rt::Status::Ok) throw InputError("rank " + std::to_string(r) + ": " + ctx.last_error());
        };
        check(ctx.malloc(&send, send_b));
        check(ctx.malloc(&recv, recv_b));
        // Inputs are copied in both modes (timing mode moves a token), so both take the same cycles.
        check(ctx.copy_explicit(CopyDir::H2D, send, reinterpret_cast<uintptr_t>(me.send.data()), send_b, rt::kDefaultStream, false, true));
        comm.init_rank(r, ctx);
        comm.host_barrier(r);
        comm::Communicator::Call mine = call;
        mine.send = send;
        mine.recv = recv;
        me.first_task = ctx.tasks().size();
        for (uint32_t k = 0; k < iters; ++k) comm.run(r, mine, rt::kDefaultStream);
        me.last_task = ctx.tasks().size();
        check(ctx.device_synchronize());
        if (functional) me.recv.resize(recv_b);
        check(ctx.copy_explicit(CopyDir::D2H, reinterpret_cast<uintptr_t>(me.recv.data()), recv, recv_b, rt::kDefaultStream, false, true));
    });

    // Time: first task start to last task end over all ranks.
    uint64_t t0 = ~uint64_t(0), t1 = 0;
    for (const RankData& me : rd) {
        if (!me.ctx) continue;  // another process's rank
        for (size_t i = me.first_task; i < me.last_task; ++i) {
            const Task& t = *me.ctx->tasks()[i].task;
            t0 = std::min(t0, t.start_tick.v);
            t1 = std::max(t1, t.end_tick.v);
        }
    }
    if (s.sync()) {  // over every process's ranks
        std::vector<uint64_t> v = {t0, ~t1};
        s.sync()->transport().all_min(v);
        t0 = v[0];
        t1 = ~v[1];
    }
    out.t0_ps = t0, out.t1_ps = t1;
    out.time_us = static_cast<double>(t1 - t0) / 1e6 / iters;
    out.algbw_gbps = static_cast<double>(out.spec.bytes) / (out.time_us * 1e3);  // bytes per ns = GB/s
    out.busbw_gbps = out.algbw_gbps * bus_factor(op, ranks);
    out.loops = (call.count + comm.loop_count(call, out.algo) - 1) / comm.loop_count(call, out.algo);

    if (functional) {
        const comm::RedOp redop = call.redop;
        const uint32_t root = call.root;
        uint64_t bad = 0, compared = 0;
        std::string first_bad;
        const uint64_t c = call.count;
        auto in = [&](uint32_t q, uint64_t i) { return static_cast<double>(isa::load_as_f32(dt, rd[q].send.data() + i * es)); };
        auto reduced = [&](uint64_t i) {
            double v = in(0, i);
            for (uint32_t q = 1; q < ranks; ++q) v = combine(redop, v, in(q, i));
            return v;
        };
        for (uint32_t q = 0; q < ranks; ++q) {
            if ((op == Op::Reduce && q != root) || !rd[q].ctx) continue;  // (another process's rank)
            for (uint64_t i = 0; i < recv_b / es; ++i) {
                double want = 0;
                switch (op) {
                    case Op::AllReduce:
                    case Op::Reduce: want = reduced(i); break;
                    case Op::ReduceScatter: want = reduced(q * c + i); break;
                    case Op::AllGather: want = in(static_cast<uint32_t>(i / c), i % c); break;
                    case Op::Broadcast: want = in(root, i); break;
                    case Op::AllToAll: want = in(static_cast<uint32_t>(i / c), q * c + i % c); break;
                }
                const double got = isa::load_as_f32(dt, rd[q].recv.data() + i * es);
                ++compared;
                if (got != want) {
                    if (!bad++) first_bad = "rank " + std::to_string(q) + " element " + std::to_string(i) + ": " +
                                            std::to_string(got) + ", expected " + std::to_string(want);
                }
            }
        }
        if (s.sync()) {
            std::vector<uint64_t> v = {bad, compared};
            s.sync()->transport().all_sum(v);
            if (v[0] > 0 && bad == 0) first_bad = "on another process's rank";
            bad = v[0];
            compared = v[1];
        }
        out.passed = bad == 0;
        out.check = {{"checked", true}, {"passed", out.passed}, {"compared", compared}, {"mismatches", bad}};
        if (!out.passed) out.check["first_mismatch"] = first_bad;
    }
    return out;
}

nlohmann::json collective_json(const SystemRun& s, const CollectiveRun& run) {
    const CollectiveSpec& c = run.spec;
    nlohmann::json j;
    j["collective"] = {{"op", comm::op_name(c.call.op)},
                       {"bytes", c.bytes},
                       {"dtype", isa::dtype_name(c.call.dtype)},
                       {"redop", comm::redop_name(c.call.redop)},
                       {"ranks", c.ranks},
                       {"root", c.call.root},
                       {"iters", c.iters},
                       {"count", c.call.count},
                       {"loops", run.loops}};
    j["algo"] = comm::algo_name(run.algo);
    j["time_us"] = run.time_us;
    j["algbw_gbps"] = run.algbw_gbps;
    j["busbw_gbps"] = run.busbw_gbps;
    j["links"] = s.links_json(run.t0_ps, run.t1_ps);
    j["check"] = run.check;
    return j;
}

}  // namespace sfumato::sys
