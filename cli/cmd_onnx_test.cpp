// `sfumato onnx-test DIR... [--config F]`: runs ONNX backend test cases (a
// directory holding model.onnx and test_data_set_*/input_*.pb, output_*.pb; a
// directory of such directories is expanded) on the simulated chip through the
// graph executor, one simulation for all cases. Prints one line per case: `PASS
// name max_abs_err=E`, `FAIL name reason` or `UNSUPPORTED name op (reason)`,
// then `N passed, M failed, K unsupported`. Outputs are compared with the
// per-op tolerances of runtime/graph/tolerance.h. A case that kills the
// simulation (a kernel fault, a deadlock) is reported as FAIL and the command
// restarts itself on the remaining cases, so one broken kernel does not hide
// the rest.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/session.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/infer.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/tensor_io.h"
#include "runtime/graph/tolerance.h"

namespace sfumato::cli {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> expand_cases(const std::vector<std::string>& dirs) {
    std::vector<std::string> out;
    for (const auto& d : dirs) {
        if (!fs::is_directory(d)) throw InputError("onnx-test: '" + d + "' is not a directory");
        if (fs::exists(fs::path(d) / "model.onnx")) {
            out.push_back(d);
            continue;
        }
        std::vector<std::string> sub;
        for (const auto& e : fs::directory_iterator(d))
            if (e.is_directory() && fs::exists(e.path() / "model.onnx")) sub.push_back(e.path().string());
        if (sub.empty())
            throw InputError("onnx-test: '" + d + "' holds no model.onnx (and no test case directories)");
        std::sort(sub.begin(), sub.end());
        out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
}

// input_0.pb, input_1.pb, ... in numeric order.
std::vector<std::string> numbered(const fs::path& dir, const std::string& prefix) {
    std::vector<std::pair<int, std::string>> v;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string f = e.path().filename().string();
        if (f.rfind(prefix, 0) != 0 || f.size() < prefix.size() + 4 || f.substr(f.size() - 3) != ".pb")
            continue;
        v.push_back({std::atoi(f.c_str() + prefix.size()), e.path().string()});
    }
    std::sort(v.begin(), v.end());
    std::vector<std::string> out;
    for (auto& [i, p] : v) out.push_back(p);
    return out;
}

// The backend tests store bfloat16 tensors as uint16 bit patterns (numpy has no bfloat16).
void bf16_bits(ref::HostTensor& t, ref::ElemType want) {
    if (t.type != ref::ElemType::Uint16 || want != ref::ElemType::Bfloat16) return;
    for (double& d : t.data) d = isa::bf16_to_f32(static_cast<uint16_t>(d));
    t.type = ref::ElemType::Bfloat16;
}

struct CaseResult {
    enum Kind { Pass, Fail, Unsupported } kind = Pass;
    std::string text;
};

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n') c = ' ';
    return s;
}

class CaseRunner {
public:
    CaseRunner(rt::Runtime& rt, const graph::CompileOptions& opt) : m_rt(rt), m_opt(opt) {}

    CaseResult run(const std::string& dir) {
        const std::string name = fs::path(dir).filename().string();
        try {
            return {CaseResult::Pass, "PASS " + name + " max_abs_err=" + run_case(dir)};
        } catch (const graph::UnsupportedOp& e) {
            return {CaseResult::Unsupported,
                    "UNSUPPORTED " + name + " " + e.op_type() + " (" + one_line(e.what()) + ")"};
        } catch (const SimError& e) {
            return {CaseResult::Fail, "FAIL " + name + " " + one_line(e.what())};
        }
    }

private:
    std::string run_case(const std::string& dir) {
        graph::Model model(graph::import_onnx_file(dir + "/model.onnx"));
        const graph::Graph& g = model.graph();
        std::vector<fs::path> sets;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
                sets.push_back(e.path());
        std::sort(sets.begin(), sets.end());
        if (sets.empty()) throw InputError("no test_data_set_* directory");
        double worst = 0;
        for (const fs::path& set : sets) {
            std::vector<ref::HostTensor> inputs(g.inputs.size());
            const auto in_files = numbered(set, "input_");
            if (in_files.size() != g.inputs.size())
                throw InputError(set.filename().string() + " has " + std::to_string(in_files.size()) +
                                 " inputs, the model " + std::to_string(g.inputs.size()));
            for (size_t i = 0; i < in_files.size(); ++i) {
                std::string pb_name;
                ref::HostTensor t = graph::read_pb(in_files[i], &pb_name);
                size_t slot = i;
                for (size_t k = 0; k < g.inputs.size(); ++k)
                    if (!pb_name.empty() && g.val(g.inputs[k]).name == pb_name) slot = k;
                const graph::Value& v = g.val(g.inputs[slot]);
                bf16_bits(t, v.elem);
                if (t.type != v.elem)
                    throw InputError("input '" + v.name + "' is " + ref::elem_type_name(t.type) +
                                     ", the model expects " + ref::elem_type_name(v.elem));
                inputs[slot] = std::move(t);
            }
            std::vector<std::vector<int64_t>> shapes;
            for (const auto& t : inputs) shapes.push_back(t.shape);
            const graph::Plan& plan = model.plan(shapes, m_rt.device_info(), m_opt, &inputs);
            std::vector<std::string> ops;
            for (const auto& s : plan.steps) ops.push_back(s.op_type);
            graph::Executor ex(m_rt, plan);
            std::vector<ref::HostTensor> outs;
            try {
                ex.load();
                ex.run(inputs);
                outs = ex.outputs();
            } catch (...) {
                m_rt.synchronize_device();
                ex.unload();
                throw;
            }
            ex.unload();
            const auto out_files = numbered(set, "output_");
            if (out_files.size() != outs.size())
                throw InputError(set.filename().string() + " has " + std::to_string(out_files.size()) +
                                 " outputs, the model " + std::to_string(outs.size()));
            for (size_t i = 0; i < outs.size(); ++i) {
                ref::HostTensor want = graph::read_pb(out_files[i]);
                bf16_bits(want, g.val(g.outputs[i]).elem);
                const graph::Tol tol = ref::is_float(want.type)
                                           ? graph::model_tolerance(ops, g.val(g.outputs[i]).elem)
                                           : graph::Tol{0, 0, "exact"};
                const graph::CompareResult c = graph::compare(outs[i], want, tol.atol, tol.rtol);
                if (!c.passed) {
                    char buf[96];
                    std::snprintf(buf, sizeof buf, " (max_abs_err=%.3g, atol %.0e, rtol %.0e)", c.max_abs_err,
                                  tol.atol, tol.rtol);
                    throw InputError("output '" + g.val(g.outputs[i]).name + "' differs: " + c.detail + buf);
                }
                worst = std::max(worst, c.max_abs_err);
            }
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g", worst);
        return buf;
    }

    rt::Runtime& m_rt;
    graph::CompileOptions m_opt;
};

int cmd_onnx_test(const std::vector<std::string>& args) {
    CommonOptions common;
    std::vector<std::string> dirs;
    std::string precision = "fp32", passes = "all", resume;
    int streams = 0;
    po::options_description d("sfumato onnx-test");
    add_config_options(d, common);
    d.add_options()("dir", po::value<std::vector<std::string>>(&dirs),
                    "test case directory (or a directory of them)")(
        "precision", po::value<std::string>(&precision)->default_value("fp32"), "fp32 | fp16 | bf16 | mixed")(
        "passes", po::value<std::string>(&passes)->default_value("all"),
        "graph passes: all | none | comma list (-name removes)")(
        "streams", po::value<int>(&streams)->default_value(0), "streams (0 = the planner chooses)")(
        "resume-counts", po::value<std::string>(&resume), "(internal) passed,failed,unsupported so far");
    po::positional_options_description pos;
    pos.add("dir", -1);
    po::variables_map vm;
    if (!parse_command(args,
                       "sfumato onnx-test DIR... [--config F] [--precision P] "
                       "[--passes LIST]",
                       d, vm, &pos))
        return kExitOk;
    if (dirs.empty()) throw InputError("onnx-test: give at least one test case directory");
    graph::CompileOptions opt;
    if (!graph::parse_precision(precision, opt.precision))
        throw InputError("--precision must be fp32, fp16, bf16 or mixed, not '" + precision + "'");
    opt.passes = graph::parse_passes(passes);
    opt.streams = streams;
    const std::vector<std::string> cases = expand_cases(dirs);
    size_t passed = 0, failed = 0, unsupported = 0;
    if (!resume.empty() && std::sscanf(resume.c_str(), "%zu,%zu,%zu", &passed, &failed, &unsupported) != 3)
        throw InputError("--resume-counts: expected three counts");

    common.trace = "off";
    std::string cmdline = "sfumato onnx-test";
    for (const auto& a : args) cmdline += " " + a;
    Session s(common, cmdline);
    s.elaborate();
    size_t next = 0;
    try {
        s.run([&](rt::Runtime& rt) {
            CaseRunner runner(rt, opt);
            for (; next < cases.size(); ++next) {
                const CaseResult r = runner.run(cases[next]);
                std::printf("%s\n", r.text.c_str());
                std::fflush(stdout);
                (r.kind == CaseResult::Pass ? passed : r.kind == CaseResult::Fail ? failed : unsupported)++;
            }
        });
    } catch (const SimError& e) {
        if (next >= cases.size()) throw;
        std::string msg = e.what();
        msg = msg.substr(0, msg.find('\n'));
        std::printf("FAIL %s simulation stopped: %s\n", fs::path(cases[next]).filename().string().c_str(),
                    msg.c_str());
        std::fflush(stdout);
        ++failed;
        ++next;
        if (next < cases.size()) {
            // SystemC cannot elaborate twice in one process: continue in a fresh one.
            std::vector<std::string> again;
            for (const auto& a : common.configs) again.insert(again.end(), {"--config", a});
            for (const auto& a : common.sets) again.insert(again.end(), {"--set", a});
            again.insert(again.end(), {"--precision", precision, "--passes", passes, "--streams",
                                       std::to_string(streams), "--resume-counts",
                                       std::to_string(passed) + "," + std::to_string(failed) + "," +
                                           std::to_string(unsupported)});
            for (size_t i = next; i < cases.size(); ++i) again.push_back(cases[i]);
            std::vector<char*> argv;
            static char self[] = "sfumato", cmd[] = "onnx-test";
            argv.push_back(self);
            argv.push_back(cmd);
            for (auto& a : again) argv.push_back(a.data());
            argv.push_back(nullptr);
            std::fflush(stderr);
            ::execv("/proc/self/exe", argv.data());
            throw SimError(kExitFailure, "onnx-test: cannot restart itself for the remaining cases");
        }
    }
    std::printf("%zu passed, %zu failed, %zu unsupported\n", passed, failed, unsupported);
    return failed ? kExitFailure : kExitOk;
}

}  // namespace

SFUMATO_COMMAND("onnx-test", "run ONNX backend test cases on the simulated chip", cmd_onnx_test);

}  // namespace sfumato::cli
