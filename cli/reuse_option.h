// The `--reuse-timing off|on|auto` switch that run, replay and train-step
// share: the option, the runtime service's options from the chip's parameters
// (runtime/reuse/timing_reuse.h), and the counters as summary.json's
// "reuse_timing" object and a printed line.
#pragma once
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "models/chip/chip.h"
#include "runtime/reuse/timing_reuse.h"

namespace sfumato::cli {

// Adds --reuse-timing to d, writing into v (its default is v's value on entry),
// and, given `log`, --reuse-log FILE (the service's check log) into *log.
void add_reuse_option(boost::program_options::options_description &d,
                      std::string &v, std::string *log = nullptr);
// The service's options for this run: the mode resolved for the mode of the run
// (functional: auto is off, on is an error), off when recording instructions
// (auto; on is an error then).
reuse::ReuseOptions reuse_options(const std::string &arg, bool functional,
                                  bool recording_instructions,
                                  const ChipParams &chip,
                                  const std::string &log = {});
nlohmann::json reuse_json(const reuse::ReuseOptions &o,
                          const reuse::ReuseCounters &c);
// "  timing re-use (auto): ..." when the mode is not off.
void print_reuse(const reuse::ReuseOptions &o, const reuse::ReuseCounters &c);

} // namespace sfumato::cli
