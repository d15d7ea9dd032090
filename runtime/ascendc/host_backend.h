// Contract: how the Ascend C host API (CPU-debug calls, AscendCL, launches) reaches a simulated
// chip. A program using it has its own main() and never sets up a simulation, so the first call
// asks for the backend, which builds the chip and a host thread on demand; run() then executes a
// function in that host thread (runtime calls there take simulated host time) and returns when
// it returned, with simulated time stopped at that point until the next call. The backend is
// registered by the layer that may wire runtime and models together (cli/ascendc_host.cpp), so
// runtime/ never includes models/. Failures end the program with a message and the exit code
// of the error (fatal()), because the program's main cannot catch sfumato's exceptions.
#pragma once
#include <functional>

#include "runtime/rt/runtime.h"
#include "sim/device_if.h"
#include "sim/error.h"

namespace sfumato::ascendc {

class IHostBackend {
public:
    virtual ~IHostBackend() = default;
    virtual void run(const std::function<void(rt::Runtime&)>& fn) = 0;
    virtual const DeviceInfo& info() const = 0;
    virtual IBackingStore* gm() = 0;  // null in timing mode
    [[noreturn]] virtual void fatal(const SimError& e) = 0;
};

// `npu_arch` is the target the program was built for (__NPU_ARCH__, 0 when unknown); a backend
// may use it to choose its default chip.
using BackendFactory = IHostBackend& (*)(int npu_arch);
void set_backend_factory(BackendFactory f);
IHostBackend& backend();
// The architecture the program's kernels were compiled for (set by the headers' launch code).
void set_npu_arch(int arch);

// Runs fn; a SimError thrown by it ends the program through backend().fatal().
void guarded(const std::function<void()>& fn);

}  // namespace sfumato::ascendc
