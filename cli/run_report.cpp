// RunReport and Progress (see run_report.h).
#include "cli/run_report.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/power/energy_report.h"
#include "runtime/graph/tolerance.h"
#include "sim/sc_time_util.h"

namespace sfumato::cli {

Progress::Progress(size_t total)
    : m_total(total), m_tty(::isatty(2) != 0), m_start(std::chrono::steady_clock::now()) {}

void Progress::update(Session& s) {
    if (!m_tty) return;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    if (wall < 2.0) return;
    const auto& recs = s.runtime().context().tasks();
    for (; m_seen < recs.size(); ++m_seen) {
        if (!recs[m_seen].task->done) break;
        if (recs[m_seen].task->kind == TaskKind::Kernel) ++m_done;
    }
    const double frac = m_total ? static_cast<double>(m_done) / static_cast<double>(m_total) : 0;
    // No kernel done yet: the weights are still uploading (no ETA to give).
    char eta[32] = "loading";
    if (frac > 0) std::snprintf(eta, sizeof eta, "ETA %.0f s", wall * (1 - frac) / frac);
    std::fprintf(stderr, "\r  %zu/%zu kernels, %.3f ms simulated, %.0f s, %s   ", m_done, m_total,
                 static_cast<double>(now_tick().v) / 1e9, wall, eta);
    std::fflush(stderr);
    m_printed = true;
}

void Progress::finish() {
    if (m_printed) std::fprintf(stderr, "\n");
    m_printed = false;
}

RunReport::RunReport(Session& s, const graph::Plan& plan, const graph::Executor& ex,
                     const graph::Graph& imported)
    : m_s(s), m_plan(plan), m_ex(ex), m_imported(imported) {
    const auto& tasks = ex.step_tasks();
    for (size_t i = 0; i < plan.steps.size() && i < tasks.size(); ++i) {
        if (tasks[i].empty()) continue;
        StepRow r;
        r.step = i;
        uint64_t longest = 0;
        for (const auto& t : tasks[i]) {
            if (!t->done) continue;
            nlohmann::json j = s.op_json(*t);
            const graph::PlanStep& st = plan.steps[i];
            j["node"] = st.name;
            j["op"] = st.op_type;
            j["fused_nodes"] = st.fused;
            j["form"] = st.form;
            r.cycles += t->cycles;
            r.roofline_cycles += j["roofline_cycles"].get<double>();
            r.bytes += t->kernel.bytes;
            r.flops += t->kernel.flops;
            if (t->cycles >= longest) {
                longest = t->cycles;
                r.bound = j["bound"].get<std::string>();
            }
            m_ops.push_back(std::move(j));
        }
        m_rows.push_back(r);
    }
}

void RunReport::check(const std::vector<ref::HostTensor>& outs,
                      const std::vector<std::pair<size_t, ref::HostTensor>>& expected,
                      const std::vector<ref::HostTensor>& reference) {
    if (!m_s.functional() || (expected.empty() && reference.empty())) return;
    m_checked = true;
    const std::vector<double> sigma = graph::plan_error_sigma(m_plan);
    auto one = [&](size_t slot, const ref::HostTensor& want, const char* against) {
        OutputCheck c;
        c.name = m_imported.val(m_imported.outputs[slot]).name;
        c.against = against;
        // Whole networks: the rounding budget of the plan's path to this output, against the
        // output's rms (graph::network_tolerance); integer and bool outputs compare exactly.
        if (ref::is_float(want.type)) {
            const size_t t = static_cast<size_t>(m_plan.outputs.at(slot));
            double ss = 0;
            size_t n = 0;
            for (double v : want.data)
                if (std::isfinite(v)) ss += v * v, ++n;
            const graph::Tol tol = graph::network_tolerance(sigma.at(t), n ? std::sqrt(ss / static_cast<double>(n)) : 0.0,
                                                            m_plan.tensors.at(t).ref.dtype);
            c.atol = tol.atol;
            c.rtol = tol.rtol;
        }
        const graph::CompareResult r = graph::compare(outs.at(slot), want, c.atol, c.rtol);
        c.passed = r.passed;
        c.max_abs_err = r.max_abs_err;
        c.max_rel_err = r.max_rel_err;
        c.detail = r.detail;
        m_checks.push_back(c);
    };
    for (const auto& [slot, want] : expected) one(slot, want, "expect");
    for (size_t i = 0; i < reference.size(); ++i) one(i, reference[i], "reference");
}

bool RunReport::passed() const {
    for (const auto& c : m_checks)
        if (!c.passed) return false;
    return true;
}

nlohmann::json RunReport::summary(const std::string& model) const {
    nlohmann::json s = m_s.base_summary();
    s["ops"] = m_ops;
    s["model"] = model;
    // Energy per inference: the kernels' dynamic energy and the static power over the inferences'
    // time, per inference (models/power/energy_report.h).
    double run_s = 0;
    for (uint64_t ps : m_ex.run_ps()) run_s += static_cast<double>(ps) * 1e-12;
    if (s.contains("energy"))
        s["energy"]["per_inference_j"] =
            power::energy_per_unit(s["energy"], static_cast<double>(m_ex.run_ps().size()), run_s);
    uint64_t kernel_cycles = 0;
    for (const auto& r : m_rows) kernel_cycles += r.cycles;
    s["graph"] = {{"nodes_imported", m_imported.nodes.size()},
                  {"steps", m_plan.steps.size()},
                  {"kernels", m_plan.kernel_count()},
                  {"streams", m_plan.num_streams},
                  {"events", m_plan.num_events},
                  {"precision", graph::precision_name(m_plan.precision)},
                  {"input_shapes", m_plan.signature},
                  {"compile_s", compile_s},
                  {"kernel_cycles", kernel_cycles}};
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : m_checks)
        checks.push_back({{"output", c.name},
                          {"against", c.against},
                          {"passed", c.passed},
                          {"max_abs_err", c.max_abs_err},
                          {"max_rel_err", c.max_rel_err},
                          {"atol", c.atol},
                          {"rtol", c.rtol},
                          {"detail", c.detail}});
    double max_abs = 0, max_rel = 0;
    for (const auto& c : m_checks)
        max_abs = std::max(max_abs, c.max_abs_err), max_rel = std::max(max_rel, c.max_rel_err);
    s["check"] = {{"checked", m_checked},
                  {"passed", passed()},
                  {"max_abs_err", max_abs},
                  {"max_rel_err", max_rel},
                  {"outputs", checks}};
    if (m_numerics) {
        nlohmann::json tensors = nlohmann::json::array();
        for (const auto& n : m_numerics->findings())
            tensors.push_back({{"step", n.step}, {"node", n.node}, {"op", n.op_type}, {"tensor", n.tensor},
                               {"dtype", n.dtype}, {"values", n.values}, {"inf", n.inf}, {"nan", n.nan},
                               {"overflow", n.overflow}, {"flushed_to_zero", n.flushed}, {"against_reference", n.compared}});
        auto first = [](const graph::TensorNumerics* n) { return n ? nlohmann::json(n->node) : nlohmann::json(nullptr); };
        s["numerics"] = {{"tensors_checked", m_numerics->tensors_checked()},
                         {"first_overflow", first(m_numerics->first_overflow())},
                         {"first_nan", first(m_numerics->first_nan())},
                         {"first_flush_to_zero", first(m_numerics->first_flush())},
                         {"first_underflow", first(m_numerics->first_underflow())},
                         {"tensors", tensors}};
        if (!passed()) s["check"]["likely_cause"] = m_numerics->likely_cause(graph::precision_name(m_plan.precision));
    }
    const auto& m = m_plan.memory;
    s["memory"] = {{"peak_bytes", m.peak_bytes},
                   {"peak_bytes_no_reuse", m.peak_bytes_no_reuse},
                   {"weight_bytes", m.weight_bytes},
                   {"reuse_ratio", m.peak_bytes_no_reuse ? static_cast<double>(m.peak_bytes) /
                                                               static_cast<double>(m.peak_bytes_no_reuse)
                                                         : 0.0}};
    nlohmann::json passes = nlohmann::json::array();
    for (const auto& p : m_plan.passes)
        passes.push_back({{"name", p.name},
                          {"enabled", p.enabled},
                          {"changes", p.changes},
                          {"patterns", p.patterns},
                          {"notes", p.notes}});
    s["passes"] = passes;
    s["load"] = {{"time_us", static_cast<double>(m_ex.load_ps()) / 1e6}};
    nlohmann::json lat = nlohmann::json::array();
    double sum = 0;
    for (uint64_t ps : m_ex.run_ps())
        lat.push_back(static_cast<double>(ps) / 1e6), sum += static_cast<double>(ps) / 1e6;
    // First inference and steady state (mean of inferences 2..N, a benchmark loop's figure).
    const size_t n = m_ex.run_ps().size();
    const double first = n ? static_cast<double>(m_ex.run_ps()[0]) / 1e6 : 0.0;
    s["inference"] = {{"iterations", n},
                      {"latency_us", lat},
                      {"mean_latency_us", n ? sum / static_cast<double>(n) : 0.0},
                      {"first_latency_us", first},
                      {"steady_latency_us", n > 1 ? (sum - first) / static_cast<double>(n - 1) : first}};
    return s;
}

void RunReport::add_tables() {
    using Kind = TableColumn::Kind;
    auto col = [](const char* name, Kind kind, const char* unit) {
        TableColumn c;
        c.name = name;
        c.kind = kind;
        c.unit = unit;
        return c;
    };
    H5Table mem{"/graph/memory_plan", {}};
    mem.table.attrs["description"] = "device tensors: placement and lifetime (steps; -1 = before the first, steps = read back)";
    TableColumn name = col("tensor", Kind::Text, ""), kind = col("kind", Kind::Text, ""), off = col("offset", Kind::Float, "B"),
                size = col("bytes", Kind::Float, "B"), first = col("first_step", Kind::Float, "step"),
                last = col("last_step", Kind::Float, "step");
    for (const auto& t : m_plan.tensors) {
        static const char* kinds[] = {"weight", "activation", "view", "workspace"};
        name.texts.push_back(t.name);
        kind.texts.push_back(kinds[static_cast<int>(t.kind)]);
        off.floats.push_back(static_cast<double>(t.offset));
        size.floats.push_back(static_cast<double>(t.bytes));
        first.floats.push_back(t.def_step);
        last.floats.push_back(t.last_step);
    }
    mem.table.columns = {name, kind, off, size, first, last};
    m_s.add_h5_table(std::move(mem));
    H5Table steps{"/graph/steps", {}};
    steps.table.attrs["description"] = "plan steps in issue order";
    TableColumn sn = col("name", Kind::Text, ""), so = col("op", Kind::Text, ""), ss = col("stream", Kind::Float, ""),
                sk = col("kernels", Kind::Float, "");
    for (const auto& st : m_plan.steps) {
        sn.texts.push_back(st.name);
        so.texts.push_back(st.op_type);
        ss.floats.push_back(st.stream);
        sk.floats.push_back(static_cast<double>(st.kernels));
    }
    steps.table.columns = {sn, so, ss, sk};
    m_s.add_h5_table(std::move(steps));
}

void RunReport::print(const std::string& mode) const {
    const auto& chip = m_s.chip_params().name.get();
    std::printf("%s on %s (%s mode, precision %s, %d stream%s)\n", m_plan.graph.name.c_str(), chip.c_str(),
                mode.c_str(), graph::precision_name(m_plan.precision), m_plan.num_streams,
                m_plan.num_streams == 1 ? "" : "s");
    std::printf("  passes:\n");
    for (const auto& p : m_plan.passes) {
        if (!p.enabled) {
            std::printf("    %-16s off\n", p.name.c_str());
            continue;
        }
        std::string pats;
        for (const auto& [k, v] : p.patterns)
            pats += (pats.empty() ? "" : ", ") + k + " x" + std::to_string(v);
        std::printf("    %-16s %3d change%s%s%s\n", p.name.c_str(), p.changes, p.changes == 1 ? "" : "s",
                    pats.empty() ? "" : ": ", pats.c_str());
    }
    const auto& m = m_plan.memory;
    std::printf(
        "  memory: activations %.2f MiB with reuse, %.2f MiB without "
        "(%.0f %%), weights %.2f MiB\n",
        static_cast<double>(m.peak_bytes) / 1048576.0, static_cast<double>(m.peak_bytes_no_reuse) / 1048576.0,
        m.peak_bytes_no_reuse
            ? 100.0 * static_cast<double>(m.peak_bytes) / static_cast<double>(m.peak_bytes_no_reuse)
            : 0.0,
        static_cast<double>(m.weight_bytes) / 1048576.0);
    uint64_t total = 0;
    for (const auto& r : m_rows) total += r.cycles;
    std::printf("  %-28s %-18s %-20s %10s %6s %-7s %8s\n", "node", "op", "shape", "cycles", "share", "bound",
                "roofline");
    for (const auto& r : m_rows) {
        const graph::PlanStep& st = m_plan.steps[r.step];
        std::string shape;
        if (!st.out.empty() && st.out[0] >= 0)
            shape = ref::shape_str(m_plan.tensors[static_cast<size_t>(st.out[0])].ref.shape);
        std::string name = st.name.size() > 28 ? st.name.substr(0, 25) + "..." : st.name;
        std::string op = st.op_type + (st.fused.size() > 1 ? "+" + std::to_string(st.fused.size() - 1) : "");
        std::printf("  %-28s %-18s %-20s %10llu %5.1f%% %-7s %8.3f\n", name.c_str(), op.c_str(),
                    shape.c_str(), static_cast<unsigned long long>(r.cycles),
                    total ? 100.0 * static_cast<double>(r.cycles) / static_cast<double>(total) : 0.0,
                    r.bound.c_str(), r.cycles ? r.roofline_cycles / static_cast<double>(r.cycles) : 0.0);
    }
    double lat = 0;
    for (uint64_t ps : m_ex.run_ps()) lat += static_cast<double>(ps) / 1e6;
    lat /= std::max<size_t>(1, m_ex.run_ps().size());
    if (m_ex.run_ps().size() > 1) {
        const double first = static_cast<double>(m_ex.run_ps()[0]) / 1e6;
        const double n = static_cast<double>(m_ex.run_ps().size());
        std::printf("  benchmark loop: first inference %.1f us, steady state %.1f us (mean of inferences 2..%zu; the "
                    "table above is the last)\n",
                    first, (lat * n - first) / (n - 1), m_ex.run_ps().size());
    }
    std::printf(
        "  total: %zu kernels, %llu kernel cycles; load %.1f us; "
        "inference %.1f us (mean of %zu); %llu cycles simulated\n",
        m_plan.kernel_count(), static_cast<unsigned long long>(total),
        static_cast<double>(m_ex.load_ps()) / 1e6, lat, m_ex.run_ps().size(),
        static_cast<unsigned long long>(m_s.total_cycles()));
    print_numerics();
    if (!m_checked) {
        std::printf("  check: %s\n", m_s.functional() ? "none (give --expect or --reference)"
                                                      : "skipped (timing mode has no data)");
        return;
    }
    for (const auto& c : m_checks)
        std::printf(
            "  check %s vs %s: %s (max abs err %.3g, max rel err %.3g, "
            "atol %.3g, rtol %.3g)%s%s\n",
            c.name.c_str(), c.against.c_str(), c.passed ? "passed" : "FAILED", c.max_abs_err, c.max_rel_err,
            c.atol, c.rtol, c.detail.empty() ? "" : ": ", c.detail.c_str());
    if (!passed() && m_numerics)
        std::printf("  likely cause: %s\n", m_numerics->likely_cause(graph::precision_name(m_plan.precision)).c_str());
}

// Findings of the numerics watch, one line per kind (the first tensor where it happened) and a
// count of the tensors affected.
void RunReport::print_numerics() const {
    if (!m_numerics) return;
    const auto f = m_numerics->findings();
    // Overflow and NaN are always worth a line; flushes only where they take a good part of a
    // tensor (NumericsWatch::first_underflow); every count is in summary.json.
    if (!m_numerics->first_underflow() && !m_numerics->first_overflow() && !m_numerics->first_nan()) return;
    auto line = [](const char* what, const graph::TensorNumerics* n, uint64_t graph::TensorNumerics::*field) {
        if (!n) return;
        std::printf("  numerics: %s first at %s%s (%s), tensor %s (%s): %llu of %llu values\n", what,
                    n->op_type == "upload" ? "" : "node ", n->node.c_str(),
                    n->op_type.c_str(), n->tensor.c_str(), n->dtype.c_str(), static_cast<unsigned long long>(n->*field),
                    static_cast<unsigned long long>(n->values));
    };
    line("flushed to zero by the narrower type", m_numerics->first_underflow(), &graph::TensorNumerics::flushed);
    line("overflow to inf", m_numerics->first_overflow(), &graph::TensorNumerics::overflow);
    line("NaN", m_numerics->first_nan(), &graph::TensorNumerics::nan);
    std::printf("  numerics: %zu of %zu tensors affected (summary.json `numerics` lists them)\n", f.size(),
                m_numerics->tensors_checked());
}

}  // namespace sfumato::cli
