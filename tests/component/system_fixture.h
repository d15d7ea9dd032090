// The library tests' rig: a system of tiny chips built from the presets as `sfumato ... --system
// configs/system-tiny.ini --set OVERRIDE` builds it (chip preset, system file, the override, every
// key used), and the sys::SystemRun a user's program hands to the runtime's host programs; the
// chips in functional mode unless `functional` is false (timing mode).
#pragma once
#include <string>

#include "models/link/system.h"
#include "runtime/comm/communicator.h"
#include "runtime/rt/context.h"
#include "runtime/system/system_run.h"
#include "sim/config.h"
#include "sim/sc_time_util.h"
#include "tests/support.h"

namespace sfumato::test {

struct TinySystem {
    explicit TinySystem(const std::string& override, bool functional = true)
        : loaded(load(c, override)),
          sp(c),
          cp(c),
          host(ParamScope(c, "host")),
          cm(ParamScope(c, "comm")),
          checked(finish(c)),
          system("system", sp, cp, functional, trace, root),
          run(system, host, &trace, root) {}

    Config c;
    bool loaded;
    const SystemParams sp;
    const ChipParams cp;
    const rt::RuntimeParams host;
    const comm::CommParams cm;
    bool checked;
    TraceHub trace;
    StatGroup root{nullptr, ""};
    System system;
    sys::SystemRun run;

private:
    static bool load(Config& c, const std::string& override) {
        c.load_ini(config("tiny"));
        c.load_ini(config("system-tiny"));
        c.apply_override(override);
        return true;
    }
    static bool finish(Config& c) {
        c.check_unused();
        init_time_resolution();
        return true;
    }
};

}  // namespace sfumato::test
