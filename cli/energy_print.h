// Printing the energy figures of a system run (summary.json "energy" of a SystemSession,
// models/power/energy_report.h): the run's energy split into the chips' and the links', the
// links' by kind, the average power, and the chips' range with their links. Printing only.
#pragma once
#include <nlohmann/json.hpp>

namespace sfumato::cli {

// `time_us`: the run's simulated time the energy covers.
void print_system_energy(const nlohmann::json& energy, double time_us);
// `sfumato serve`: energy.per_output_token_j (the kernels' and links' dynamic energy and the static
// power over the serving time, per output token served), stored in the summary and printed.
void add_serve_energy(nlohmann::json& summary);

}  // namespace sfumato::cli
