// Errors raised inside SystemC processes (a kernel overruns a buffer, a model detects a fault)
// are recorded here and the simulation is stopped; the run driver rethrows the first one after
// sc_start returns, so they reach the CLI as ordinary exceptions with their exit code.
#pragma once
#include <exception>

namespace sfumato {

void record_failure(std::exception_ptr e);
// Rethrows and clears the first recorded failure, if any.
void rethrow_failure();
bool has_failure();

}  // namespace sfumato
