// `sfumato collective OP --bytes N --dtype T --system F [--ranks R] [--algo A] [--redop O]
// [--root R] [--iters K] [--mode M] [--out DIR]`: runs one collective (all_reduce, all_gather,
// reduce_scatter, broadcast, reduce, all_to_all) on the first R chips of a system and prints its
// algorithm bandwidth (bytes / time, the vendor test tool's alg_bandwidth) and how busy each link
// was. --bytes is the message as algorithm bandwidth counts it: the vector (all_reduce,
// broadcast, reduce), the gathered output (all_gather), the scattered input (reduce_scatter),
// each rank's send buffer (all_to_all). Functional mode checks every rank's output against the
// collective's definition: inputs are small integers, so every summation order is exact and the
// check is exact. Time is from the first task of the collective to the last, over all ranks.
#include <cmath>
#include <cstdio>
#include <random>

#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/energy_print.h"
#include "cli/system_session.h"
#include "runtime/comm/communicator.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::cli {

namespace {

using comm::Op;

std::string join_args(const std::vector<std::string>& a) {
    std::string s = "sfumato collective";
    for (const auto& x : a) s += " " + x;
    return s;
}

double bus_factor(Op op, uint32_t n) {
    const double r = n ? static_cast<double>(n - 1) / n : 0;
    switch (op) {
        case Op::AllReduce: return 2 * r;
        case Op::Broadcast:
        case Op::Reduce: return 1;
        default: return r;
    }
}

double combine(comm::RedOp op, double a, double b) {
    return op == comm::RedOp::Sum ? a + b : op == comm::RedOp::Max ? std::max(a, b) : std::min(a, b);
}

struct RankData {
    std::vector<uint8_t> send, recv;
    size_t first_task = 0, last_task = 0;
    rt::Context* ctx = nullptr;
};

int cmd_collective(const std::vector<std::string>& args) {
    CommonOptions common;
    common.trace = "task";
    std::string op_s, dtype_s = "fp16", algo_s = "auto", redop_s = "sum", system_file, bytes_s, split_s = "auto";
    uint32_t ranks = 0, root = 0, iters = 1;
    po::options_description d("sfumato collective");
    d.add_options()("op", po::value<std::string>(&op_s), "all_reduce | all_gather | reduce_scatter | broadcast | reduce | all_to_all")(
        "bytes", po::value<std::string>(&bytes_s), "message size (K/M/G suffixes; see the command's help text)")(
        "dtype", po::value<std::string>(&dtype_s)->default_value("fp16"), "fp16 | bf16 | fp32")(
        "ranks", po::value<uint32_t>(&ranks)->default_value(0), "chips 0..R-1 take part (0: all)")(
        "algo", po::value<std::string>(&algo_s)->default_value("auto"),
        "auto | ring | halving_doubling | mesh | double_ring | hierarchical")(
        "redop", po::value<std::string>(&redop_s)->default_value("sum"), "sum | max | min")(
        "root", po::value<uint32_t>(&root)->default_value(0), "root rank (broadcast, reduce)")(
        "iters", po::value<uint32_t>(&iters)->default_value(1), "back-to-back repetitions (time is per repetition)");
    add_system_option(d, system_file);
    add_distributed_option(d, split_s);
    add_run_options(d, common);
    po::positional_options_description pos;
    pos.add("op", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato collective OP --bytes N --system F [options]", d, vm, &pos)) return kExitOk;
    if (op_s.empty()) throw InputError("collective needs an operation (sfumato collective all_reduce --bytes N --system F)");
    if (system_file.empty()) throw InputError("collective needs --system F (a system config, e.g. configs/system-8x910b-like.ini)");
    if (bytes_s.empty()) throw InputError("collective needs --bytes N");
    const Op op = comm::parse_op(op_s, "operation");
    const isa::DType dt = comm::parse_comm_dtype(dtype_s, "--dtype");
    const comm::Algo algo = comm::parse_algo(algo_s, "--algo");
    const comm::RedOp redop = comm::parse_redop(redop_s, "--redop");
    const uint64_t bytes = detail::parse_u64("--bytes", bytes_s);
    if (iters == 0 || iters > 1000) throw InputError("--iters must be 1..1000");

    const std::unique_ptr<IRankTransport> transport = open_transport(split_s);
    SystemSession s(common, system_file, join_args(args));
    s.elaborate();
    if (transport) s.distribute(*transport);
    const uint32_t chips = s.system().size();
    if (ranks == 0) ranks = chips;
    if (ranks > chips)
        throw InputError("--ranks " + std::to_string(ranks) + ": the system has " + std::to_string(chips) + " chips");
    const uint32_t es = isa::dtype_size(dt);
    const bool per_rank = op == Op::AllGather || op == Op::ReduceScatter || op == Op::AllToAll;
    const uint64_t unit = static_cast<uint64_t>(es) * (per_rank ? ranks : 1);
    if (bytes == 0 || bytes % unit != 0)
        throw InputError("--bytes " + std::to_string(bytes) + " must be a positive multiple of " + std::to_string(unit) +
                         " for " + comm::op_name(op) + " of " + dtype_s + " on " + std::to_string(ranks) + " ranks");
    if ((op == Op::Broadcast || op == Op::Reduce) && root >= ranks)
        throw InputError("--root " + std::to_string(root) + " is not a rank (0.." + std::to_string(ranks - 1) + ")");
    comm::Communicator::Call call;
    call.op = op;
    call.dtype = dt;
    call.redop = redop;
    call.root = root;
    call.algo = algo;
    call.count = bytes / unit;  // the vector, per rank, or per pair (all_to_all)

    std::vector<rt::Device*> devs;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < ranks; ++i) {
        devs.push_back(&s.device(i));
        if (s.local(i)) ids.push_back(i);  // split over processes: this one's chips
    }
    comm::Communicator comm(s.system().info(), devs, s.comm_params());
    if (s.sync()) comm.distribute(*s.sync());
    const comm::Algo chosen = comm.resolve(call);
    std::vector<RankData> rd(ranks);
    const bool functional = s.functional();
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
        call.send = send;
        call.recv = recv;
        me.first_task = ctx.tasks().size();
        for (uint32_t k = 0; k < iters; ++k) comm.run(r, call, rt::kDefaultStream);
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
    const double time_us = static_cast<double>(t1 - t0) / 1e6 / iters;
    const double algbw = static_cast<double>(bytes) / (time_us * 1e3);  // bytes per ns = GB/s

    nlohmann::json check = {{"checked", false}};
    bool passed = true;
    if (functional) {
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
        passed = bad == 0;
        check = {{"checked", true}, {"passed", passed}, {"compared", compared}, {"mismatches", bad}};
        if (!passed) check["first_mismatch"] = first_bad;
    }
    const uint64_t loops = (call.count + comm.loop_count(call, chosen) - 1) / comm.loop_count(call, chosen);
    nlohmann::json summary = s.base_summary();
    summary["collective"] = {{"op", comm::op_name(op)},
                             {"bytes", bytes},
                             {"dtype", dtype_s},
                             {"redop", comm::redop_name(redop)},
                             {"ranks", ranks},
                             {"root", root},
                             {"iters", iters},
                             {"count", call.count},
                             {"loops", loops}};
    summary["algo"] = comm::algo_name(chosen);
    summary["time_us"] = time_us;
    summary["algbw_gbps"] = algbw;
    summary["busbw_gbps"] = algbw * bus_factor(op, ranks);
    summary["links"] = s.links_json(t0, t1);
    summary["check"] = check;
    if (s.sync()) summary["split"] = s.split_json();
    s.write_outputs(summary);
    if (!s.leader()) return passed ? kExitOk : kExitFailure;  // rank 0 prints

    std::printf("%s %llu B %s on %u of %u chips (%s, %s mode): algo %s, %llu loop%s\n", comm::op_name(op),
                static_cast<unsigned long long>(bytes), dtype_s.c_str(), ranks, chips, s.system_params().name.get().c_str(),
                s.mode().c_str(), comm::algo_name(chosen), static_cast<unsigned long long>(loops), loops == 1 ? "" : "s");
    std::printf("  time %.3f us, algbw %.2f GB/s, busbw %.2f GB/s\n", time_us, algbw, algbw * bus_factor(op, ranks));
    int shown = 0;
    double max_util = 0;
    for (const auto& l : summary["links"]) max_util = std::max(max_util, l["utilisation"].get<double>());
    for (const auto& l : summary["links"]) {
        if (l["bytes"].get<uint64_t>() == 0) continue;
        if (shown++ < 8)
            std::printf("  link %-18s %12llu B  busy %10.3f us  utilisation %.3f\n", l["link"].get<std::string>().c_str(),
                        static_cast<unsigned long long>(l["bytes"].get<uint64_t>()), l["busy_us"].get<double>(),
                        l["utilisation"].get<double>());
    }
    if (shown > 8) std::printf("  ... %d links carried data (summary.json lists all); busiest utilisation %.3f\n", shown, max_util);
    print_system_energy(summary["energy"], summary["total_time_us"].get<double>());
    if (functional) {
        std::printf("  check: %s (%llu values compared)\n", passed ? "passed" : "FAILED",
                    static_cast<unsigned long long>(check["compared"].get<uint64_t>()));
        if (!passed) std::printf("  first mismatch: %s\n", check["first_mismatch"].get<std::string>().c_str());
    }
    if (s.sync()) std::fputs(s.split_line(summary["split"]).c_str(), stdout);
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return passed ? kExitOk : kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("collective", "run one collective on a system of chips and report its algorithm bandwidth", cmd_collective);

}  // namespace sfumato::cli
