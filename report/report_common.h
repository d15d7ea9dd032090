// Helpers shared by the report pages (internal to report/): reading JSON files, number cells,
// and the memory-timeline plots of a run directory.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "report/html_page.h"
#include "report/report.h"

namespace sfumato::report {

// Parses a JSON file; throws InputError naming it when it is unreadable or malformed.
nlohmann::json read_json_file(const std::string& path);
bool file_exists(const std::string& path);
// A number for a table cell ("-" for a missing one).
std::string cell(const nlohmann::json& v);
std::string fixed(double v, int digits);
// Adds the memory timeline of DIR/trace.json (if any) to the page, or a note saying why not.
// A serving run's section (summary.json's `serve`, `sv`): latency figures, the CDFs of TTFT,
// TPOT and E2E (DIR/requests.csv) and the queue, batch and KV time series (DIR/steps.csv).
void add_serve_section(HtmlPage& page, const std::string& dir, const nlohmann::json& sv,
                       const ReportOptions& o);
void add_memory_timeline(HtmlPage& page, const std::string& dir, const ReportOptions& o, const std::string& id_prefix);

}  // namespace sfumato::report
