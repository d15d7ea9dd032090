// Gathers a sweep's results into one table: a row per point with its parameters, state, exit
// code, the figures of its summary.json (total cycles and time, every numeric field, and per op:
// cycles, time, FLOPs, bytes, TFLOPS, GB/s, bound, roofline fraction, pipe utilisation), wall
// time and, for a failed point, the tail of its error. Written as DIR/sweep.csv and
// DIR/sweep.h5 (dataset /sweep, attributes naming the spec, the command and the varied
// parameters with their dimensions, for the report). Figures that depend on the host (wall
// times) are kept apart from the simulated ones so that two runs of a sweep compare equal.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/spec.h"
#include "traces/table.h"

namespace sfumato::sweep {

// The figures of one summary.json, flattened to "name" -> number or text, in a stable order.
// Keys: top-level numbers and booleans ("total_cycles"), one level of objects ("check.passed"),
// and per op "<op>.<field>" (a repeated op name gets "#2", "#3" ...).
std::vector<std::pair<std::string, nlohmann::json>> summary_figures(const nlohmann::json& summary);

// extra_errors/extra_states: points without a status.json (a Slurm task that ended without a
// result) and what to report for them.
Table gather(const Spec& spec, const std::vector<Point>& points, const std::string& out_dir,
             const std::map<size_t, std::string>& extra_errors = {},
             const std::map<size_t, std::string>& extra_states = {});
void write_results(const std::string& out_dir, const Table& t);

// Names of the columns that are neither bookkeeping nor parameters nor host-dependent: the
// figures a sweep compares.
std::vector<std::string> figure_columns(const Table& t);

}  // namespace sfumato::sweep
