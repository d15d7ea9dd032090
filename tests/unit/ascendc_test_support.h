// Helpers of the Ascend C layer's unit tests: a kernel-API test sink whose memories a kernel's
// scalar code can read, GM buffers registered with the layer, and running one block.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "kapi_sink.h"
#include "runtime/ascendc/core_run.h"
#include "runtime/ascendc/host_state.h"
#include "sim/error.h"

namespace sa = sfumato::ascendc;
using sfumato::isa::Opcode;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;

namespace ascendc_test {

// The test sink with memories a kernel's scalar code can read (GetValue/SetValue).
struct MemSink : KapiSink, sfumato::isa::IMemView {
    explicit MemSink(sfumato::isa::CoreKind k, sfumato::isa::test::TestMem& m) : KapiSink(k, &m), mem(m) {}
    uint8_t* local(Pos p, uint64_t a, uint64_t n) override { return mem.local(p, a, n); }
    void gm_read(uint64_t a, void* d, uint64_t n) override { mem.gm_read(a, d, n); }
    void gm_write(uint64_t a, const void* s, uint64_t n) override { mem.gm_write(a, s, n); }
    sfumato::isa::test::TestMem& mem;
};

// A GM buffer the kernel sees at host pointer `host` and device address `dev`.
struct GmBuf {
    std::vector<uint8_t> host;
    uint64_t dev;
    GmBuf(uint64_t bytes, uint64_t dev_) : host(bytes), dev(dev_) {
        sa::host_state().add(reinterpret_cast<uintptr_t>(host.data()), dev, bytes, nullptr);
    }
    ~GmBuf() { sa::host_state().remove(reinterpret_cast<uintptr_t>(host.data())); }
    uint8_t* ptr() { return host.data(); }
};

inline sa::BlockSetup vector_setup() {
    sa::BlockSetup s;
    s.functional = true;
    return s;
}

// Runs `body` as one block on `sink`; returns the error it stopped with ("" if none) and its code.
inline std::pair<std::string, int> run(sfumato::isa::IInstrSink& sink, const std::function<void()>& body) {
    try {
        sa::run_block(sink, vector_setup(), body);
    } catch (const sfumato::SimError& e) {
        return {e.what(), e.code()};
    }
    return {"", 0};
}

inline sfumato::DeviceInfo vector_device() {
    sfumato::DeviceInfo d;
    d.arch = "split";
    d.vector_cores = 8;
    d.cube_cores = 4;
    d.ub_bytes = 32 * 1024;
    d.vector_bytes_per_cycle = 256;
    d.event_ids = 8;
    return d;
}

}  // namespace ascendc_test
using namespace ascendc_test;
