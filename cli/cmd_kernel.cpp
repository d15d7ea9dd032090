// `sfumato kernel OP [--ARG value ...]`: runs one operator of the library on the simulated chip
// with random inputs (fixed seed), checks it against a host reference in functional mode, and
// prints cycles, time and achieved bandwidth. Operator arguments come from the op's registry
// entry (`block_dim` is spelled --block-dim).
#include <cstdio>
#include <iostream>

#include "runtime/ops/i_op.h"
#include "cli/command.h"
#include "cli/session.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

std::string dashed(std::string s) {
    for (auto& c : s)
        if (c == '_') c = '-';
    return s;
}

std::string join_args(const std::vector<std::string>& a) {
    std::string s = "sfumato kernel";
    for (const auto& x : a) s += " " + x;
    return s;
}

int cmd_kernel(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::cout << "usage: sfumato kernel OP [op arguments] [--config F] [--set k=v] [--out DIR] [--mode M]\n\noperators:\n";
        for (const auto& n : ops::op_names()) {
            const ops::OpSpec* s = ops::find_op(n);
            std::cout << "  " << n << ": " << s->summary << "\n";
            for (const auto& a : s->args)
                std::cout << "      --" << dashed(a.name) << (a.default_value.empty() ? " (required)" : " (default " + a.default_value + ")")
                          << "  " << a.help << "\n";
        }
        return args.empty() ? kExitBadInput : kExitOk;
    }
    const std::string op = args[0];
    const ops::OpSpec* spec = ops::find_op(op);
    if (!spec) {
        std::string known;
        for (const auto& n : ops::op_names()) known += " " + n;
        throw InputError("unknown operator '" + op + "' (known:" + known + ")");
    }
    CommonOptions common;
    po::options_description d("sfumato kernel " + op);
    std::map<std::string, std::string> values;
    for (const auto& a : spec->args) d.add_options()(dashed(a.name).c_str(), po::value<std::string>(), a.help.c_str());
    add_run_options(d, common);
    d.add_options()("check", "compare against the host reference (always on in functional mode)");
    po::variables_map vm;
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    const std::string usage = "sfumato kernel " + op + " [options]";
    if (!parse_command(rest, usage.c_str(), d, vm)) return kExitOk;
    ops::OpArgs op_args;
    for (const auto& a : spec->args)
        if (vm.count(dashed(a.name))) op_args[a.name] = vm[dashed(a.name)].as<std::string>();

    Session s(common, join_args(args));
    s.elaborate();
    std::unique_ptr<ops::IOp> inst = ops::make_op(op, op_args, s.chip().info());
    ops::CheckResult check;
    std::vector<std::shared_ptr<Task>> tasks;
    s.run([&](rt::Runtime& rt) {
        inst->prepare(rt);
        for (KernelDesc& k : inst->kernels()) tasks.push_back(rt.launch(std::move(k), rt.default_stream()));
        rt.synchronize(rt.default_stream());
        check = inst->check(rt);
        inst->release(rt);
    });
    nlohmann::json summary = s.base_summary();
    summary["check"] = {{"checked", check.checked}, {"passed", check.passed}, {"max_abs_err", check.max_abs_err}, {"max_rel_err", check.max_rel_err}};
    s.write_outputs(summary);

    std::printf("%s on %s (%s mode)\n", op.c_str(), s.chip_params().name.get().c_str(), common.mode.c_str());
    for (const auto& o : summary["ops"]) {
        const double us = o["time_us"].get<double>();
        std::printf("  kernel %s: %llu cycles, %.3f us, %.2f GB/s, %s bound, roofline fraction %.3f\n",
                    o["name"].get<std::string>().c_str(), static_cast<unsigned long long>(o["cycles"].get<uint64_t>()), us,
                    us > 0 ? static_cast<double>(o["bytes"].get<uint64_t>()) / (us * 1e3) : 0.0,
                    o["bound"].get<std::string>().c_str(), o["roofline_fraction"].get<double>());
        std::printf("  task duration (dispatch to completion report): %llu cycles, %.3f us\n",
                    static_cast<unsigned long long>(o["task_duration"].get<uint64_t>()), o["task_duration_us"].get<double>());
        const auto& pu = o["pipe_util"];
        std::printf("  pipe util: scalar %.3f mte2 %.3f vector %.3f mte3 %.3f mte1 %.3f cube %.3f fixpipe %.3f\n",
                    pu["scalar"].get<double>(), pu["mte2"].get<double>(), pu["vector"].get<double>(), pu["mte3"].get<double>(),
                    pu["mte1"].get<double>(), pu["cube"].get<double>(), pu["fixpipe"].get<double>());
    }
    if (check.checked) std::printf("  check: %s (max abs err %.3g, max rel err %.3g)\n", check.passed ? "passed" : "FAILED", check.max_abs_err, check.max_rel_err);
    else std::printf("  check: skipped (timing mode has no data)\n");
    std::printf("  total: %llu cycles, %.3f us\n", static_cast<unsigned long long>(s.total_cycles()), summary["total_time_us"].get<double>());
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return check.passed ? kExitOk : kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("kernel", "run one operator on the simulated chip and check it", cmd_kernel);

}  // namespace sfumato::cli
