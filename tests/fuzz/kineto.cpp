// Fuzz target `kineto`: the PyTorch-profiler trace importer (traces/import.h) as `sfumato import
// kineto` runs it (the input goes through a file: the importer streams from one). Properties:
// every kernel task of the imported workload is a graph node of a registered node operator, the
// report counts the tasks it made, and the workload survives a to_json/parse round trip.
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/import_check.h"
#include "traces/import.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(kineto) {
    const std::string path = fuzz::write_input("kineto.json", data, size);
    fuzz::check_imported(import::import_kineto(path));
}
