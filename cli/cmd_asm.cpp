// `sfumato asm FILE.s`: assembles a program (isa/asm.h) and runs it as the body of a kernel on
// the simulated chip, block_dim blocks; writes summary.json (with pipe_util), trace.json,
// stats.h5 and instr.csv. The kernel kind (vector, cube or mix) comes from `--kind`, a `.kind`
// line in the file, or the pipes the program uses. In a mix program, lines after `.aic` run on
// the cube core and lines after `.aiv` on the vector cores (`.all`: both; the default); each
// core skips instructions for pipes it does not have. `--check-races` turns on race detection
// (exit 3 on the first unordered pair); a wait that can never be satisfied exits 4.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "isa/asm.h"
#include "isa/text.h"
#include "models/aicore/core_timing.h"
#include "cli/command.h"
#include "cli/session.h"
#include "sim/error.h"

namespace sfumato::cli {

namespace {

using isa::Pipe;

struct Program {
    std::vector<isa::Instr> aic, aiv;  // per core kind (identical unless sections are used)
    std::string kind;                  // from a .kind line ("" if none)
    bool sections = false;
};

using text::trim;

Program load_program(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw InputError("cannot read assembly file '" + path + "'");
    Program prog;
    std::string line, aic, aiv;
    int section = 0;  // 0 all, 1 aic, 2 aiv
    int no = 0;
    while (std::getline(f, line)) {
        ++no;
        const std::string t = trim(line);
        if (t.rfind(".kind", 0) == 0) {
            prog.kind = trim(t.substr(5));
            if (prog.kind != "vector" && prog.kind != "cube" && prog.kind != "mix")
                throw InputError(path + ":" + std::to_string(no) + ": .kind must be vector, cube or mix, not '" + prog.kind + "'");
            line.clear();
        } else if (t == ".aic" || t == ".aiv" || t == ".all") {
            section = t == ".aic" ? 1 : t == ".aiv" ? 2 : 0;
            prog.sections = true;
            line.clear();
        }
        const bool structural = t.rfind(".rep", 0) == 0 || t.rfind(".endr", 0) == 0 || t.rfind(".set", 0) == 0;
        aic += (structural || section != 2 ? line : "") + "\n";
        aiv += (structural || section != 1 ? line : "") + "\n";
    }
    try {
        prog.aic = isa::assemble(aic);
        prog.aiv = prog.sections ? isa::assemble(aiv) : prog.aic;
    } catch (const isa::AsmError& e) {
        throw InputError(path + ": " + e.what());
    }
    return prog;
}

bool cube_side(Pipe p) { return p == Pipe::MTE1 || p == Pipe::M || p == Pipe::FIX; }
bool vector_side(Pipe p) { return p == Pipe::V || p == Pipe::MTE3; }

KernelKind infer_kind(const Program& prog) {
    bool cube = false, vec = false;
    for (const auto* v : {&prog.aic, &prog.aiv})
        for (const auto& in : *v) {
            const Pipe p = isa::exec_pipe(in);
            cube = cube || cube_side(p);
            vec = vec || vector_side(p);
        }
    return cube && vec ? KernelKind::Mix : cube ? KernelKind::Cube : KernelKind::Vector;
}

bool core_has(isa::CoreKind k, Pipe p) {
    if (p == Pipe::S || p == Pipe::ALL || k == isa::CoreKind::Coupled) return true;
    return k == isa::CoreKind::Cube ? (cube_side(p) || p == Pipe::MTE2) : (vector_side(p) || p == Pipe::MTE2);
}

// The instructions one core kind runs: in mix kernels, those whose pipes it has.
std::vector<isa::Instr> for_core(const std::vector<isa::Instr>& prog, isa::CoreKind k, bool filter) {
    if (!filter) return prog;
    std::vector<isa::Instr> out;
    for (const auto& in : prog) {
        bool ok = core_has(k, isa::exec_pipe(in));
        if (in.op == isa::Opcode::SET_FLAG || in.op == isa::Opcode::WAIT_FLAG) ok = core_has(k, in.flag.src) && core_has(k, in.flag.dst);
        if (ok) out.push_back(in);
    }
    return out;
}


int cmd_asm(const std::vector<std::string>& args) {
    CommonOptions common;
    std::string file, kind_opt = "auto";
    uint32_t block_dim = 1;
    po::options_description d("sfumato asm");
    d.add_options()("file", po::value<std::string>(&file), "assembly file")(
        "block-dim", po::value<uint32_t>(&block_dim)->default_value(1), "number of blocks (1..65535)")(
        "kind", po::value<std::string>(&kind_opt)->default_value("auto"), "kernel kind: auto | vector | cube | mix")(
        "check-races", "report unordered accesses of different pipes to the same bytes (exit 3)");
    add_run_options(d, common);
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato asm FILE.s --config F [--block-dim B] [--check-races] [--out DIR]", d, vm, &pos))
        return kExitOk;
    if (file.empty()) throw InputError("sfumato asm needs an assembly file (see --help)");
    if (block_dim < 1 || block_dim > 65535) throw InputError("--block-dim must be 1..65535");
    if (vm.count("check-races")) common.sets.push_back("chip.aicore.check_races=true");

    const Program prog = load_program(file);
    std::string kname = kind_opt == "auto" ? prog.kind : kind_opt;
    KernelKind kind = infer_kind(prog);
    if (kname == "vector") kind = KernelKind::Vector;
    else if (kname == "cube") kind = KernelKind::Cube;
    else if (kname == "mix") kind = KernelKind::Mix;
    else if (!kname.empty()) throw InputError("--kind must be auto, vector, cube or mix, not '" + kname + "'");

    Session s(common, text::join("sfumato asm", args));
    s.elaborate();
    const bool split = s.chip().info().arch == "split";
    const bool filter = split && kind == KernelKind::Mix;
    const auto aic = for_core(prog.aic, split ? isa::CoreKind::Cube : isa::CoreKind::Coupled, filter);
    const auto aiv = for_core(prog.aiv, split ? isa::CoreKind::Vector : isa::CoreKind::Coupled, filter);

    KernelDesc k;
    k.name = std::filesystem::path(file).stem().string();
    k.type = "asm";
    k.block_dim = block_dim;
    k.kind = kind;
    // The program is known up front: declare its code (the estimate a kernel's code would get,
    // entry code plus one call site per distinct opcode), so it is fetched whole at start-up.
    {
        const ScalarMemParams& sm = s.chip_params().core.smem;
        size_t sites = 0;
        for (const auto* v : {&aic, &aiv}) {
            std::set<isa::Opcode> ops;
            for (const auto& in : *v) ops.insert(in.op);
            sites = std::max(sites, ops.size());
        }
        k.code_bytes = static_cast<uint32_t>(sm.code_entry_bytes + sites * sm.code_site_bytes);
    }
    k.body = [&aic, &aiv](isa::IInstrSink& sink) {
        const auto& v = sink.core_kind() == isa::CoreKind::Vector ? aiv : aic;
        for (const auto& in : v) sink.issue(in);
    };
    // Roofline inputs: work, compulsory GM bytes and the busiest compute pipe of one block.
    const CoreParams& cp = s.chip_params().core;
    uint64_t pipe_cycles[isa::kNumPipes] = {}, bytes = 0;
    double flops = 0;
    for (const auto* v : {&aic, &aiv}) {
        if (v == &aiv && !filter && kind != KernelKind::Vector) continue;
        if (v == &aic && !filter && kind == KernelKind::Vector) continue;
        const double mult = (v == &aiv && filter) ? s.chip_params().aiv_per_aic : 1;
        for (const auto& in : *v) {
            const Pipe p = isa::exec_pipe(in);
            const uint64_t gm = isa::gm_bytes(in);
            bytes += static_cast<uint64_t>(mult * gm);
            if (in.op == isa::Opcode::MAD) flops += 2.0 * in.mad.m * in.mad.k * in.mad.n;
            // On-chip work: the busiest pipe bounds the block (GM traffic is the memory bound).
            if (gm == 0 && p != Pipe::S && p != Pipe::ALL && param_kind(in.op) != isa::ParamKind::Flag &&
                param_kind(in.op) != isa::ParamKind::CrossFlag)
                pipe_cycles[static_cast<int>(p)] += compute_timing(in, cp).occupancy;
        }
    }
    const uint64_t busiest = *std::max_element(std::begin(pipe_cycles), std::end(pipe_cycles));
    const DeviceInfo& di = s.chip().info();
    const uint32_t units = kind == KernelKind::Vector && split ? di.vector_cores : di.cube_cores;
    k.flops = flops * block_dim;
    k.bytes = bytes * block_dim;
    // The roofline's compute bound (Roofline in cli/session.h): every block's busiest pipe at the
    // chip's peak, all cores of the kernel's kind sharing the work (not whole waves: a last,
    // partial wave is the kernel's inefficiency, as pipe utilisation shows).
    k.min_compute_cycles = static_cast<double>(busiest) * block_dim / units;

    std::shared_ptr<Task> task;
    s.run([&](rt::Runtime& rt) {
        task = rt.launch(k, rt.default_stream());
        rt.synchronize(rt.default_stream());
    });
    nlohmann::json summary = s.base_summary();
    summary["program"] = file;
    summary["instructions"] = {{"aic", aic.size()}, {"aiv", aiv.size()}};
    summary["kind"] = kind == KernelKind::Vector ? "vector" : kind == KernelKind::Cube ? "cube" : "mix";
    summary["check_races"] = vm.count("check-races") > 0;
    if (!summary["ops"].empty()) summary["pipe_util"] = summary["ops"][0]["pipe_util"];
    s.write_outputs(summary);

    const auto& o = summary["ops"][0];
    std::printf("%s on %s (%s mode, %s kernel, block_dim %u)\n", file.c_str(), s.chip_params().name.get().c_str(),
                common.mode.c_str(), summary["kind"].get<std::string>().c_str(), block_dim);
    std::printf("  kernel: %llu cycles, %.3f us, %s bound, roofline fraction %.3f (compute peak and HBM; %.3f against the L2)\n",
                static_cast<unsigned long long>(o["cycles"].get<uint64_t>()), o["time_us"].get<double>(),
                o["bound"].get<std::string>().c_str(), o["roofline_fraction"].get<double>(),
                o["roofline_fraction_l2"].get<double>());
    const auto& pu = o["pipe_util"];
    std::printf("  pipe util: scalar %.3f mte2 %.3f vector %.3f mte3 %.3f mte1 %.3f cube %.3f fixpipe %.3f\n",
                pu["scalar"].get<double>(), pu["mte2"].get<double>(), pu["vector"].get<double>(), pu["mte3"].get<double>(),
                pu["mte1"].get<double>(), pu["cube"].get<double>(), pu["fixpipe"].get<double>());
    if (!common.out.empty()) std::printf("  wrote %s/{trace.json,stats.h5,summary.json,instr.csv}\n", common.out.c_str());
    return kExitOk;
}

}  // namespace

SFUMATO_COMMAND("asm", "assemble a program and run it on the simulated chip", cmd_asm);

}  // namespace sfumato::cli
