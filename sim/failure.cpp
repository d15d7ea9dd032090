#include "sim/failure.h"

#include <systemc>

namespace sfumato {

namespace {
std::exception_ptr g_failure;
}

// The first failure stops the simulation; a later one in the same delta (another block failing
// the same way) is not recorded and does not call sc_stop again (SystemC would warn W545).
void record_failure(std::exception_ptr e) {
    if (g_failure) return;
    g_failure = e;
    sc_core::sc_stop();
}

void rethrow_failure() {
    if (g_failure) {
        auto e = g_failure;
        g_failure = nullptr;
        std::rethrow_exception(e);
    }
}

bool has_failure() { return static_cast<bool>(g_failure); }

}  // namespace sfumato
