#include "runtime/system/simulate.h"

#include "sim/error.h"

namespace sfumato::sys {

bool mirror_ranks(const std::string& simulate, bool functional) {
    if (simulate != "auto" && simulate != "all" && simulate != "one")
        throw InputError("--simulate must be auto, all or one, not '" + simulate + "'");
    if (simulate == "one" && functional)
        throw InputError("--simulate one needs timing mode (functional mode computes every rank's values)");
    return simulate == "one";
}

}  // namespace sfumato::sys
