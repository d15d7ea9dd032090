// What `sfumato run` reports about a graph run: the output check (against
// --expect files and/or the host reference interpreter), the per-op table of
// the last inference, summary.json's graph sections, the stats.h5 tables of the
// memory plan and steps, and progress on stderr while a long run is under way
// (only when stderr is a terminal).
#pragma once
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/session.h"
#include "runtime/graph/executor.h"
#include "runtime/graph/numerics.h"
#include "runtime/graph/plan.h"

namespace sfumato::cli {

class Progress {
public:
    explicit Progress(size_t total_kernels);
    // Between simulation slices: prints kernels done, simulated time and an ETA
    // (after 2 s of wall time, on a terminal).
    void update(Session& s);
    void finish();

private:
    size_t m_total;
    bool m_tty;
    bool m_printed = false;
    size_t m_seen = 0, m_done = 0;
    std::chrono::steady_clock::time_point m_start;
};

struct OutputCheck {
    std::string name;
    std::string against;  // "expect" or "reference"
    bool passed = true;
    double max_abs_err = 0, max_rel_err = 0, atol = 0, rtol = 0;
    std::string detail;
};

class RunReport {
public:
    RunReport(Session& s, const graph::Plan& plan, const graph::Executor& ex, const graph::Graph& imported);
    double compile_s = 0;
    void check(const std::vector<ref::HostTensor>& outs,
               const std::vector<std::pair<size_t, ref::HostTensor>>& expected,
               const std::vector<ref::HostTensor>& reference);
    nlohmann::json summary(const std::string& model) const;
    void add_tables();
    void print(const std::string& mode) const;
    bool passed() const;
    // Functional runs: the numerics diagnostics (summary.json `numerics`, printed findings, and
    // the likely cause of a failed check).
    void set_numerics(const graph::NumericsWatch* n) { m_numerics = n; }

private:
    struct StepRow {
        size_t step;
        uint64_t cycles = 0;
        double roofline_cycles = 0;
        std::string bound;
        uint64_t bytes = 0;
        double flops = 0;
    };
    Session& m_s;
    const graph::Plan& m_plan;
    const graph::Executor& m_ex;
    const graph::Graph& m_imported;
    std::vector<StepRow> m_rows;
    nlohmann::json m_ops = nlohmann::json::array();
    std::vector<OutputCheck> m_checks;
    bool m_checked = false;
    const graph::NumericsWatch* m_numerics = nullptr;
    void print_numerics() const;
};

}  // namespace sfumato::cli
