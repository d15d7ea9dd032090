// Host memory of a functional run (see host_memory.h).
#include "runtime/ops/host_memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/error.h"

namespace sfumato::ops {

uint64_t host_memory_available() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        std::string key;
        uint64_t kib = 0;
        if (s >> key >> kib && key == "MemAvailable:") return kib * 1024;
    }
    return 0;
}

void require_host_memory(const std::string& what, uint64_t bytes) {
    const double gib = static_cast<double>(bytes) / (1ull << 30);
    const uint64_t avail = host_memory_available();
    if (avail && bytes > avail) {
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "%s in functional mode needs about %.1f GiB of host memory (inputs, their device image, the output "
                      "and the host reference); %.1f GiB is available. --mode timing runs it without data (the same "
                      "cycles)",
                      what.c_str(), gib, static_cast<double>(avail) / (1ull << 30));
        throw InputError(buf);
    }
    if (bytes >= (1ull << 30))
        std::fprintf(stderr, "host memory: %s in functional mode needs about %.1f GiB\n", what.c_str(), gib);
}

}  // namespace sfumato::ops
