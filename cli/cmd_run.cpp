// `sfumato run MODEL.onnx|zoo:NAME --config F [--input NAME=FILE] [--expect
// NAME=FILE] [--mode M]
// [--passes LIST] [--precision P] [--streams N] [--batch N] [--iterations N]
// [--reference]
// --out DIR`: the graph executor end to end. The model is imported, validated
// and compiled (passes, operators, memory and stream plans) before the
// simulation starts, so bad input exits 2 with nothing written; then the
// executor loads it once (timed apart) and runs N inferences. Prints the
// passes, the memory plan and a per-op table (node, op, shape, cycles, share,
// bound, roofline fraction) of the last inference; summary.json gains `ops`
// (its kernels, named after their nodes), `check`, `memory`, `passes`, `load`
// and `inference`; stats.h5 the memory plan (/graph/memory_plan) and the steps
// (/graph/steps); trace.json a graph-op track per stream. Missing inputs get
// random data from a fixed seed.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>

#include "cli/command.h"
#include "cli/reuse_option.h"
#include "cli/run_report.h"
#include "cli/session.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/numerics.h"
#include "runtime/graph/infer.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/ref_interp.h"
#include "runtime/graph/tensor_io.h"
#include "runtime/graph/zoo.h"
#include "traces/atomic_file.h"

namespace sfumato::cli {

namespace {

std::pair<std::string, std::string> split_assign(const std::string& s, const char* opt) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return {"", s};
    (void)opt;
    return {s.substr(0, eq), s.substr(eq + 1)};
}

std::string names_of(const graph::Graph& g, const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += (s.empty() ? "" : ", ") + g.val(id).name;
    return s;
}

ref::HostTensor random_input(ref::ElemType t, const std::vector<int64_t>& shape, std::mt19937& rng) {
    ref::HostTensor h(t, shape);
    if (ref::is_float(t)) {
        std::uniform_real_distribution<double> d(-1.0, 1.0);
        for (double& v : h.data) v = d(rng);
    } else {
        std::uniform_int_distribution<int> d(0, t == ref::ElemType::Bool ? 1 : 99);
        for (double& v : h.data) v = d(rng);
    }
    ref::round_to_type(h);
    return h;
}

int cmd_run(const std::vector<std::string>& args) {
    CommonOptions common;
    std::string model_path, precision = "mixed", passes = "all", reuse_arg = "off", reuse_log;
    std::vector<std::string> input_args, expect_args;
    int streams = 0;
    int64_t batch = 1, iterations = 1;
    po::options_description d("sfumato run");
    add_run_options(d, common);
    add_reuse_option(d, reuse_arg, &reuse_log);
    d.add_options()("model", po::value<std::string>(&model_path),
                    "MODEL.onnx, or zoo:NAME (sfumato zoo list)")(
        "input", po::value<std::vector<std::string>>(&input_args)->composing(),
        "NAME=FILE (.npy or .pb); repeatable")("expect",
                                               po::value<std::vector<std::string>>(&expect_args)->composing(),
                                               "NAME=FILE: expected output; repeatable")(
        "precision", po::value<std::string>(&precision)->default_value("mixed"),
        "fp32 | fp16 | bf16 | mixed")("passes", po::value<std::string>(&passes)->default_value("all"),
                                      "all | none | comma list of passes (-name removes one)")(
        "streams", po::value<int>(&streams)->default_value(0),
        "streams (0 = the planner chooses, 1 = one stream)")(
        "batch", po::value<int64_t>(&batch)->default_value(1), "size of a symbolic batch dimension")(
        "iterations", po::value<int64_t>(&iterations)->default_value(1), "inferences after one load")(
        "repeat", po::value<int64_t>(),
        "the same as --iterations N: a benchmark loop; the report gives the first inference and the steady state "
        "(mean of inferences 2..N), and the per-op table is the last inference's")(
        "reference",
        "also run the host reference interpreter "
        "(fp64) and compare the outputs with it");
    po::positional_options_description pos;
    pos.add("model", 1);
    po::variables_map vm;
    if (!parse_command(args, "sfumato run MODEL.onnx|zoo:NAME --config F [options]", d, vm, &pos))
        return kExitOk;
    if (model_path.empty()) throw InputError("run: give a model (MODEL.onnx or zoo:NAME)");
    graph::CompileOptions opt;
    if (!graph::parse_precision(precision, opt.precision))
        throw InputError("--precision must be fp32, fp16, bf16 or mixed, not '" + precision + "'");
    opt.passes = graph::parse_passes(passes);
    if (streams < 0 || streams > 64) throw InputError("--streams must be 0..64");
    opt.streams = streams;
    if (batch < 1 || batch > 65536) throw InputError("--batch must be 1..65536");
    if (vm.count("repeat")) {
        if (!vm["iterations"].defaulted()) throw InputError("give --repeat or --iterations, not both");
        iterations = vm["repeat"].as<int64_t>();
    }
    if (iterations < 1 || iterations > 100000) throw InputError("--iterations must be 1..100000");
    const bool use_reference = vm.count("reference") != 0;

    // Import and inputs: every bad input is found before the simulation starts.
    graph::Graph imported = model_path.rfind("zoo:", 0) == 0 ? graph::zoo_graph(model_path.substr(4))
                                                             : graph::import_onnx_file(model_path);
    graph::Model model(std::move(imported));
    const graph::Graph& g = model.graph();
    std::vector<std::optional<ref::HostTensor>> given(g.inputs.size());
    for (const auto& a : input_args) {
        auto [name, file] = split_assign(a, "--input");
        if (name.empty() && g.inputs.size() == 1) name = g.val(g.inputs[0]).name;
        size_t slot = g.inputs.size();
        for (size_t i = 0; i < g.inputs.size(); ++i)
            if (g.val(g.inputs[i]).name == name) slot = i;
        if (slot == g.inputs.size())
            throw InputError("--input " + a + ": the model has no input '" + name +
                             "' (inputs: " + names_of(g, g.inputs) + ")");
        ref::HostTensor t = graph::read_tensor_file(file);
        const graph::Value& v = g.val(g.inputs[slot]);
        if (t.type != v.elem)
            throw InputError("--input " + a + ": the file holds " + ref::elem_type_name(t.type) +
                             ", input '" + name + "' is " + ref::elem_type_name(v.elem));
        given[slot] = std::move(t);
    }
    std::vector<std::pair<size_t, ref::HostTensor>> expected;
    for (const auto& a : expect_args) {
        auto [name, file] = split_assign(a, "--expect");
        if (name.empty() && g.outputs.size() == 1) name = g.val(g.outputs[0]).name;
        size_t slot = g.outputs.size();
        for (size_t i = 0; i < g.outputs.size(); ++i)
            if (g.val(g.outputs[i]).name == name) slot = i;
        if (slot == g.outputs.size())
            throw InputError("--expect " + a + ": the model has no output '" + name +
                             "' (outputs: " + names_of(g, g.outputs) + ")");
        expected.push_back({slot, graph::read_tensor_file(file)});
    }
    std::map<std::string, int64_t> dims;
    std::vector<std::vector<int64_t>> shapes;
    {
        std::vector<std::vector<int64_t>> defaults;
        bool need_defaults = false;
        for (const auto& t : given) need_defaults = need_defaults || !t;
        if (need_defaults) defaults = graph::default_input_shapes(g, batch, dims);
        for (size_t i = 0; i < g.inputs.size(); ++i)
            shapes.push_back(given[i] ? given[i]->shape : defaults[i]);
    }
    std::vector<ref::HostTensor> inputs;
    std::mt19937 rng(1234);
    for (size_t i = 0; i < g.inputs.size(); ++i)
        inputs.push_back(given[i] ? *given[i] : random_input(g.val(g.inputs[i]).elem, shapes[i], rng));

    std::string cmdline = "sfumato run";
    for (const auto& a : args) cmdline += " " + a;
    Session s(common, cmdline);
    if (model_path.rfind("zoo:", 0) != 0) s.add_input("model", model_path);
    s.elaborate();
    const reuse::ReuseOptions ropt = reuse_options(reuse_arg, s.functional(),
                                                   !common.record.empty() && common.record_level == "instructions",
                                                   s.chip_params(), reuse_log);
    std::unique_ptr<reuse::TimingReuse> reuse;
    const auto wall0 = std::chrono::steady_clock::now();
    const graph::Plan& plan = model.plan(shapes, s.chip().info(), opt, &inputs);
    const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

    // Numerics diagnostics (functional mode): every step's outputs against the reference's.
    graph::NumericsWatch numerics(plan);
    if (s.functional()) numerics.observe_inputs(inputs);
    // Reference outputs (host, fp64) before the simulation.
    std::vector<ref::HostTensor> ref_out;
    if (use_reference) {
        if (!s.functional()) throw InputError("--reference needs functional mode");
        graph::Graph spec = g;
        for (size_t i = 0; i < g.inputs.size(); ++i) {
            spec.val(spec.inputs[i]).shape = graph::make_shape(shapes[i]);
            spec.val(spec.inputs[i]).has_shape = true;
        }
        graph::infer_shapes(spec);
        graph::RefOptions ropt;
        ropt.on_value = [&numerics](const std::string& name, const ref::HostTensor& t) { numerics.add_reference(name, t); };
        ref_out = graph::run_reference(spec, inputs, ropt);
    }

    Progress progress(plan.kernel_count() * static_cast<size_t>(iterations));
    std::vector<ref::HostTensor> outs;
    std::unique_ptr<graph::Executor> ex;
    s.run(
        [&](rt::Runtime& rt) {
            ex = std::make_unique<graph::Executor>(rt, plan);
            if (rt.functional())
                ex->watch_steps([&numerics](size_t st, const std::vector<ref::HostTensor>& o) { numerics.observe(st, o); });
            ex->load();
            reuse = std::make_unique<reuse::TimingReuse>(rt.context(), rt.device_info(), ropt);
            for (int64_t it = 0; it < iterations; ++it) ex->run(inputs);
            reuse->settle();  // the last stand-ins' traffic, before the stats are read
            outs = ex->outputs();
            ex->emit_trace();
            progress.finish();
        },
        [&] { progress.update(s); });

    RunReport report(s, plan, *ex, g);
    report.compile_s = compile_s;
    report.check(outs, expected, ref_out);
    if (s.functional()) report.set_numerics(&numerics);
    nlohmann::json summary = report.summary(model_path);
    const reuse::ReuseCounters rc = reuse->counters();
    summary["reuse_timing"] = reuse_json(ropt, rc);
    report.add_tables();
    s.write_outputs(summary);
    if (!common.out.empty() && s.functional()) {
        std::filesystem::create_directories(common.out + "/outputs");
        for (size_t i = 0; i < outs.size(); ++i)
            write_text_atomically(
                common.out + "/outputs/" + graph::safe_file_name(g.val(g.outputs[i]).name) + ".npy",
                graph::npy_bytes(outs[i]));
    }
    report.print(common.mode);
    if (summary.contains("energy")) {
        const auto& e = summary["energy"];
        std::printf("  energy: %.4g J per inference; run %.4g J, average power %.1f W, peak %.1f W (static %.1f W)\n",
                    e["per_inference_j"].get<double>(), e["total_j"].get<double>(), e["average_power_w"].get<double>(),
                    e["peak_power_w"].get<double>(), e["static_power_w"].get<double>());
    }
    print_reuse(ropt, rc);
    if (!common.out.empty())
        std::printf("  wrote %s/{summary.json,trace.json,stats.h5,instr.csv}\n", common.out.c_str());
    return report.passed() ? kExitOk : kExitFailure;
}

}  // namespace

SFUMATO_COMMAND("run", "run an ONNX model (or a zoo model) on the simulated chip", cmd_run);

}  // namespace sfumato::cli
