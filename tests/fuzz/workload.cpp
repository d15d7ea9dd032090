// Fuzz target `workload`: the workload-file reader (traces/workload.h) with the operator check
// `sfumato replay` uses, then the host side of every kernel task as replay's setup builds it:
// the operator from the library with the file's arguments and block_dim, tiled for the tiny
// preset in timing mode (no device memory). Property: an accepted workload serialises to a file
// that parses back to the same tasks.
#include "models/chip/chip_params.h"
#include "runtime/ops/i_op.h"
#include "sim/config.h"
#include "tests/fuzz/fuzz_target.h"
#include "traces/workload.h"

using namespace sfumato;

namespace {

std::string validate_op(const std::string& op, const std::map<std::string, std::string>& args) {
    const ops::OpSpec* spec = ops::find_op(op);
    if (!spec) return "unknown op '" + op + "'";
    for (const auto& [k, v] : args) {
        bool ok = false;
        for (const auto& a : spec->args) ok = ok || a.name == k;
        if (!ok) return "op '" + op + "' has no argument '" + k + "'";
    }
    return {};
}

const DeviceInfo& tiny() {
    static const DeviceInfo info = [] {
        Config c;
        c.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini");
        ChipParams p(c);
        return device_info(p, false);
    }();
    return info;
}

}  // namespace

SFUMATO_FUZZ_TARGET(workload) {
    const workload::Workload w = workload::parse(std::string(fuzz::as_text(data, size)), validate_op, "fuzz.json");
    const workload::Workload again = workload::parse(workload::to_json(w), validate_op, "round-trip");
    if (again.tasks.size() != w.tasks.size() || again.streams.size() != w.streams.size())
        fuzz::fail("workload changes in a to_json/parse round trip");
    for (size_t i = 0; i < w.tasks.size(); ++i) {
        const workload::Task &a = w.tasks[i], &b = again.tasks[i];
        if (a.kind != b.kind || a.stream != b.stream || a.bytes != b.bytes || a.op != b.op || a.args != b.args ||
            a.event != b.event || a.us != b.us || a.block_dim != b.block_dim)
            fuzz::fail("task " + std::to_string(i) + " changes in a to_json/parse round trip");
    }
    for (const workload::Task& t : w.tasks) {
        if (t.kind != workload::Kind::Kernel) continue;
        ops::OpArgs a = t.args;
        bool takes_block_dim = false;
        for (const auto& spec : ops::find_op(t.op)->args) takes_block_dim = takes_block_dim || spec.name == "block_dim";
        if (t.block_dim && takes_block_dim) a["block_dim"] = std::to_string(t.block_dim);
        (void)ops::make_op(t.op, a, tiny());
    }
}
