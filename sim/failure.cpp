#include "sim/failure.h"

#include <systemc>

namespace sfumato {

namespace {
std::exception_ptr g_failure;
}

void record_failure(std::exception_ptr e) {
    if (!g_failure) g_failure = e;
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
