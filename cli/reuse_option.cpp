// The shared --reuse-timing switch (reuse_option.h).
#include "cli/reuse_option.h"

#include <cstdio>

#include "sim/error.h"

namespace sfumato::cli {

void add_reuse_option(boost::program_options::options_description &d,
                      std::string &v, std::string *log) {
  if (log)
    d.add_options()("reuse-log", boost::program_options::value<std::string>(log),
                    "append one CSV line per kernel simulated in full with --reuse-timing "
                    "on|auto: the run, the previous full run of its identity and the facts "
                    "about both (docs/timing_reuse.md)");
  d.add_options()(
      "reuse-timing",
      boost::program_options::value<std::string>(&v)->default_value(v),
      "kernel timing re-use (timing mode; docs/timing_reuse.md): off: every "
      "kernel simulated | on: a launch "
      "identical to an earlier one (operator, shapes, layout, alignment, "
      "launch, L2 state) takes the first "
      "one's time | auto: an identity is re-used once two full runs of it "
      "agree within 1 %");
}

reuse::ReuseOptions reuse_options(const std::string &arg, bool functional,
                                  bool recording_instructions,
                                  const ChipParams &chip,
                                  const std::string &log) {
  reuse::ReuseOptions o;
  o.check_log = log;
  o.mode = reuse::resolve_mode(reuse::parse_reuse_mode(arg), functional);
  if (recording_instructions && o.mode != reuse::ReuseMode::Off) {
    if (o.mode == reuse::ReuseMode::On)
      throw InputError("--reuse-timing on cannot be combined with "
                       "--record-level instructions (a recording needs "
                       "every kernel's instructions)");
    o.mode = reuse::ReuseMode::Off;
  }
  o.block_dispatch_cycles = chip.ts.block_dispatch_cycles;
  o.core_start_cycles = chip.ts.core_start_cycles;
  return o;
}

nlohmann::json reuse_json(const reuse::ReuseOptions &o,
                          const reuse::ReuseCounters &c) {
  nlohmann::json j = {{"mode", reuse::reuse_mode_name(o.mode)},
                      {"enabled", o.mode != reuse::ReuseMode::Off},
                      {"tolerance", o.tolerance},
                      {"launches", c.launches},
                      {"candidates", c.candidates},
                      {"reused", c.reused},
                      {"unique", c.unique},
                      {"checks", c.checks},
                      {"unverified", c.unverified},
                      {"replayed_bytes", c.replayed_bytes},
                      {"across_chips", c.across_chips},
                      {"twins", c.twins},
                      {"twins_in_step", c.twins_in_step},
                      {"samples_in_step", c.samples_in_step},
                      {"energy_charged", c.energy_charged},
                      {"reused_cycles", c.reused_cycles},
                      {"kernel_cycles", c.kernel_cycles},
                      // A re-used launch issues no instructions and moves no data: the run's
                      // energy holds its dynamic energy only where it was charged its template's.
                      {"energy_complete", c.energy_complete()}};
  if (c.error_bound_known) {
    j["error_bound_cycles"] = c.error_bound_cycles;
    j["error_bound_fraction"] = c.error_bound_fraction();
  } else {
    j["error_bound_cycles"] = nullptr;
    j["error_bound_fraction"] = nullptr;
  }
  return j;
}

void print_reuse(const reuse::ReuseOptions &o, const reuse::ReuseCounters &c) {
  if (o.mode == reuse::ReuseMode::Off)
    return;
  std::printf("  APPROXIMATION --reuse-timing %s: %llu of %llu kernel launches "
              "took the time of an identical earlier "
              "launch (%llu identities, %llu simulated in full)",
              reuse::reuse_mode_name(o.mode),
              static_cast<unsigned long long>(c.reused),
              static_cast<unsigned long long>(c.launches),
              static_cast<unsigned long long>(c.unique),
              static_cast<unsigned long long>(c.launches - c.reused));
  if (c.across_chips)
    std::printf("; %llu of them another chip's (%llu of a run still running: "
                "lockstep; %llu while the chips were in step)",
                static_cast<unsigned long long>(c.across_chips),
                static_cast<unsigned long long>(c.twins),
                static_cast<unsigned long long>(c.twins_in_step));
  if (c.error_bound_known)
    std::printf("; estimated error bound %.3g %% of kernel time\n",
                100.0 * c.error_bound_fraction());
  else
    std::printf("; error bound unknown (no identity simulated twice)\n");
  if (c.reused && c.energy_charged)
    std::printf("  energy: %llu re-used launches are charged their templates' dynamic "
                "energy (the events of the run whose time they took)\n",
                static_cast<unsigned long long>(c.energy_charged));
  if (!c.energy_complete())
    std::printf("  energy leaves out the dynamic energy of %llu re-used launches "
                "(they issue no instructions and move no data and could not be charged "
                "their templates'; their leakage is counted): use --reuse-timing off for "
                "energy figures\n",
                static_cast<unsigned long long>(c.reused - c.energy_charged));
}

} // namespace sfumato::cli
