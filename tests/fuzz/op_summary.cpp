// Fuzz target `op_summary`: the vendor profiler's op_summary CSV importer (traces/import.h) as
// `sfumato import op-summary` runs it; the same properties as the `kineto` target.
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/import_check.h"
#include "traces/import.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(op_summary) {
    const std::string path = fuzz::write_input("op_summary.csv", data, size);
    fuzz::check_imported(import::import_op_summary(path));
}
