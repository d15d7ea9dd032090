#include "sim/sc_time_util.h"

namespace sfumato {

void init_time_resolution() {
    static bool done = false;
    if (!done) {
        sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
        done = true;
    }
}

}  // namespace sfumato
