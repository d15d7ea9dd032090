// `sfumato kernel OP [--ARG value ...]`: runs one operator of the library on the simulated chip
// with random inputs (fixed seed), checks it against a host reference in functional mode, and
// prints cycles, time and achieved bandwidth (compulsory GM bytes / kernel time) with the
// roofline (cli/session.h). By default the L2 is cold: written back and invalidated after the
// inputs are uploaded, before the launch and outside the kernel's time, as benchmark harnesses
// flush caches; `--l2 warm` leaves the inputs where the upload put them. Operator arguments come
// from the op's registry entry (`block_dim` is spelled --block-dim).
#include <cstdio>
#include <iostream>

#include "isa/text.h"
#include "runtime/ops/bench_loop.h"
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


// The benchmark loop's figures (summary.json "repeat"): first launch and steady state per launch,
// with the roofline of one launch (the sum over its kernels) against the steady time.
nlohmann::json steady_json(Session& s, const ops::BenchLoop& loop) {
    double rl_cycles = 0, bytes = 0;
    if (!loop.launches.empty())
        for (const auto& t : loop.launches[0]) {
            rl_cycles += roofline(t->kernel, s.chip().info()).cycles;
            bytes += static_cast<double>(t->kernel.bytes);
        }
    const double steady = std::max(1.0, loop.steady_cycles());
    const double us = s.chip_params().clock().to_us(1) * steady;
    nlohmann::json per = nlohmann::json::array();
    for (size_t i = 0; i < loop.launches.size(); ++i) per.push_back(loop.launch_cycles(i));
    return {{"launches", loop.launches.size()},
            {"launch_cycles", per},
            {"first_cycles", loop.first_cycles()},
            {"steady_cycles", steady},
            {"steady_time_us", us},
            {"steady_gbps", bytes / (us * 1e3)},
            {"roofline_cycles", rl_cycles},
            {"steady_roofline_fraction", rl_cycles / steady}};
}

// The options every operator takes besides its own arguments.
void add_kernel_options(po::options_description& d, CommonOptions& common, std::string& l2, uint32_t& repeat) {
    add_run_options(d, common);
    d.add_options()("repeat", po::value<uint32_t>(&repeat)->default_value(1),
                    "launch the op N times back to back (a benchmark loop) and report the first launch and the steady "
                    "state (mean of launches 2..N)")(
"check", "compare against the host reference (always on in functional mode)")(
        "l2", po::value<std::string>(&l2)->default_value("cold"),
        "cold: write back and invalidate the L2 after the inputs are uploaded, before the launch (outside the kernel's time), "
        "as benchmark harnesses flush caches | warm: inputs stay in L2 where the upload left them");
}

int cmd_kernel(const std::vector<std::string>& args) {
    std::string l2 = "cold";
    uint32_t repeat = 1;
    CommonOptions common;
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        // Asked for, the help goes to stdout; without an operator it is an error message (stderr).
        std::ostream& os = args.empty() ? std::cerr : std::cout;
        os << "usage: sfumato kernel OP [op arguments] [--config F] [--set k=v] [--out DIR] [--mode M] [--l2 cold|warm]\n\noperators:\n";
        for (const auto& n : ops::op_names()) {
            const ops::OpSpec* s = ops::find_op(n);
            os << "  " << n << ": " << s->summary << "\n";
            for (const auto& a : s->args)
                os << "      --" << dashed(a.name) << (a.default_value.empty() ? " (required)" : " (default " + a.default_value + ")")
                   << "  " << a.help << "\n";
        }
        po::options_description d("options of every operator");
        add_kernel_options(d, common, l2, repeat);
        os << "\n" << d << "\n";
        return args.empty() ? kExitBadInput : kExitOk;
    }
    const std::string op = args[0];
    const ops::OpSpec* spec = ops::find_op(op);
    if (!spec) {
        std::string known;
        for (const auto& n : ops::op_names()) known += " " + n;
        throw InputError("unknown operator '" + op + "' (known:" + known + ")");
    }
    po::options_description d("sfumato kernel " + op);
    std::map<std::string, std::string> values;
    for (const auto& a : spec->args) d.add_options()(dashed(a.name).c_str(), po::value<std::string>(), a.help.c_str());
    add_kernel_options(d, common, l2, repeat);
    po::variables_map vm;
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    const std::string usage = "sfumato kernel " + op + " [options]";
    if (!parse_command(rest, usage.c_str(), d, vm)) return kExitOk;
    if (l2 != "cold" && l2 != "warm") throw InputError("--l2 must be cold or warm, not '" + l2 + "'");
    if (repeat < 1 || repeat > 10000) throw InputError("--repeat must be 1..10000, not " + std::to_string(repeat));
    ops::OpArgs op_args;
    for (const auto& a : spec->args)
        if (vm.count(dashed(a.name))) op_args[a.name] = vm[dashed(a.name)].as<std::string>();

    Session s(common, text::join("sfumato kernel", args));
    s.elaborate();
    std::unique_ptr<ops::IOp> inst = ops::make_op(op, op_args, s.chip().info());
    ops::BenchLoop loop;
    s.run([&](rt::Runtime& rt) { loop = ops::run_bench_loop(rt, *inst, repeat, l2 == "cold"); });
    const ops::CheckResult& check = loop.check;
    nlohmann::json summary = s.base_summary();
    summary["l2"] = l2;
    const nlohmann::json steady = steady_json(s, loop);
    if (repeat > 1) summary["repeat"] = steady;
    // A check that did not run has no verdict: passed is null (and the errors too).
    if (check.checked)
        summary["check"] = {{"checked", true}, {"passed", check.passed}, {"max_abs_err", check.max_abs_err}, {"max_rel_err", check.max_rel_err}};
    else
        summary["check"] = {{"checked", false}, {"passed", nullptr}, {"max_abs_err", nullptr}, {"max_rel_err", nullptr}};
    s.write_outputs(summary);

    std::printf("%s on %s (%s mode, %s L2)\n", op.c_str(), s.chip_params().name.get().c_str(), common.mode.c_str(), l2.c_str());
    const size_t per_launch = loop.launches.empty() ? 0 : loop.launches[0].size();
    for (size_t i = 0; i < per_launch && i < summary["ops"].size(); ++i) {  // the first launch
        const auto& o = summary["ops"][i];
        const double us = o["time_us"].get<double>();
        std::printf("  kernel %s: %llu cycles, %.3f us, %.2f GB/s (GM bytes / kernel time), %s bound, roofline fraction %.3f "
                    "(compute peak and HBM; %.3f against the L2)\n",
                    o["name"].get<std::string>().c_str(), static_cast<unsigned long long>(o["cycles"].get<uint64_t>()), us,
                    us > 0 ? static_cast<double>(o["bytes"].get<uint64_t>()) / (us * 1e3) : 0.0,
                    o["bound"].get<std::string>().c_str(), o["roofline_fraction"].get<double>(),
                    o["roofline_fraction_l2"].get<double>());
        if (o.contains("roofline_note")) std::printf("  roofline fraction %s\n", o["roofline_note"].get<std::string>().c_str());
        std::printf("  task duration (dispatch to completion report): %llu cycles, %.3f us\n",
                    static_cast<unsigned long long>(o["task_duration"].get<uint64_t>()), o["task_duration_us"].get<double>());
        std::printf("  energy: %.4g J, average power %.1f W over the kernel (its events and the chip's static power)\n",
                    o["energy_j"].get<double>(), o["power_w"].get<double>());
        const auto& pu = o["pipe_util"];
        std::printf("  pipe util: scalar %.3f mte2 %.3f vector %.3f mte3 %.3f mte1 %.3f cube %.3f fixpipe %.3f\n",
                    pu["scalar"].get<double>(), pu["mte2"].get<double>(), pu["vector"].get<double>(), pu["mte3"].get<double>(),
                    pu["mte1"].get<double>(), pu["cube"].get<double>(), pu["fixpipe"].get<double>());
    }
    if (repeat > 1)
        std::printf("  steady state (mean of launches 2..%u): %.1f cycles, %.3f us per launch, %.2f GB/s, roofline "
                    "fraction %.3f (first launch %llu cycles)\n",
                    repeat, steady["steady_cycles"].get<double>(), steady["steady_time_us"].get<double>(),
                    steady["steady_gbps"].get<double>(), steady["steady_roofline_fraction"].get<double>(),
                    static_cast<unsigned long long>(steady["first_cycles"].get<uint64_t>()));
    if (check.checked) std::printf("  check: %s (max abs err %.3g, max rel err %.3g)\n", check.passed ? "passed" : "FAILED", check.max_abs_err, check.max_rel_err);
    else std::printf("  check: not run, no verdict (timing mode has no data)\n");
    std::printf("  total: %llu cycles, %.3f us\n", static_cast<unsigned long long>(s.total_cycles()), summary["total_time_us"].get<double>());
    if (summary.contains("energy")) {
        const auto& e = summary["energy"];
        std::printf("  energy: %.4g J (dynamic %.4g J, static %.4g J), average power %.1f W over the run, peak %.1f W "
                    "over %.3g us (static %.1f W)\n",
                    e["total_j"].get<double>(), e["dynamic_j"].get<double>(), e["static_j"].get<double>(),
                    e["average_power_w"].get<double>(), e["peak_power_w"].get<double>(), e["peak_window_us"].get<double>(),
                    e["static_power_w"].get<double>());
    }
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json}\n", common.out.c_str());
    return !check.checked || check.passed ? kExitOk : kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("kernel", "run one operator on the simulated chip and check it", cmd_kernel);

}  // namespace sfumato::cli
