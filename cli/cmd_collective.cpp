// `sfumato collective OP --bytes N --dtype T --system F [--ranks R] [--algo A] [--redop O]
// [--root R] [--iters K] [--mode M] [--out DIR]`: runs one collective (all_reduce, all_gather,
// reduce_scatter, broadcast, reduce, all_to_all) on the first R chips of a system and prints its
// algorithm bandwidth (bytes / time, the vendor test tool's alg_bandwidth) and how busy each link
// was. --bytes is the message as algorithm bandwidth counts it: the vector (all_reduce,
// broadcast, reduce), the gathered output (all_gather), the scattered input (reduce_scatter),
// each rank's send buffer (all_to_all). Functional mode checks every rank's output against the
// collective's definition: inputs are small integers, so every summation order is exact and the
// check is exact. Time is from the first task of the collective to the last, over all ranks.
#include <cstdio>

#include "cli/command.h"
#include "cli/distributed.h"
#include "cli/energy_print.h"
#include "cli/system_session.h"
#include "runtime/comm/communicator.h"
#include "runtime/system/system_collective.h"
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
    sys::CollectiveSpec spec;
    spec.call.op = op;
    spec.call.dtype = dt;
    spec.call.redop = redop;
    spec.call.root = root;
    spec.call.algo = algo;
    spec.bytes = bytes;
    spec.ranks = ranks;
    spec.iters = iters;
    const bool functional = s.functional();
    const sys::CollectiveRun run = sys::run_collective(s.host(), spec, s.comm_params(), functional);
    ranks = run.spec.ranks;
    const comm::Algo chosen = run.algo;
    const uint64_t loops = run.loops;
    const double time_us = run.time_us, algbw = run.algbw_gbps;
    const bool passed = run.passed;
    const nlohmann::json& check = run.check;
    nlohmann::json summary = s.base_summary();
    summary.update(sys::collective_json(s.host(), run));
    if (s.sync()) summary["split"] = s.split_json();
    s.write_outputs(summary);
    if (!s.leader()) return passed ? kExitOk : kExitFailure;  // rank 0 prints

    std::printf("%s %llu B %s on %u of %u chips (%s, %s mode): algo %s, %llu loop%s\n", comm::op_name(op),
                static_cast<unsigned long long>(bytes), dtype_s.c_str(), ranks, chips, s.system_params().name.get().c_str(),
                s.mode().c_str(), comm::algo_name(chosen), static_cast<unsigned long long>(loops), loops == 1 ? "" : "s");
    std::printf("  time %.3f us, algbw %.2f GB/s, busbw %.2f GB/s\n", time_us, algbw, run.busbw_gbps);
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
