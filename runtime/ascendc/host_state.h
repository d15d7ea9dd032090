// Host-side state of the Ascend C layer, shared by the CPU-debug calls, the AscendCL calls and
// launches: every buffer a kernel may point into (GmAlloc host buffers, aclrtMalloc device
// buffers, both keyed by the pointer the program holds), timing mode's copies of small
// host-to-device transfers (so tiling data stays readable where no device data exists), and the
// CPU-debug kernel mode.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "sfumato_ascendc/defs.h"
#include "sfumato_ascendc/launch.h"
#include "sim/device_if.h"

namespace sfumato::ascendc {

struct CoreState;

struct HostState {
    struct Buffer {
        uint64_t dev = 0;
        uint64_t bytes = 0;
        uint8_t* storage = nullptr;  // GmAlloc: the program's memory; null for device buffers
        // Kernels may touch whole 32-byte blocks at the end (the device rounds allocations up).
        uint64_t span() const { return (bytes + 31) / 32 * 32; }
    };
    std::map<uintptr_t, Buffer> bufs;  // by the program's pointer
    std::map<uint64_t, uintptr_t> by_dev;
    std::map<uint64_t, std::vector<uint8_t>> shadows;  // timing mode: device address -> bytes
    KernelMode mode = KernelMode::MIX_MODE;

    void add(uintptr_t host, uint64_t dev, uint64_t bytes, uint8_t* storage);
    void remove(uintptr_t host);
    const Buffer* find_host(uintptr_t p, uintptr_t* start) const;
    const Buffer* find_dev(uint64_t dev) const;
    void shadow_read(uint64_t dev, void* dst, uint32_t bytes) const;
    void shadow_write(uint64_t dev, const void* src, uint32_t bytes);  // the same memory, written
};
HostState& host_state();

// Scalar GM access of the running block (runtime/ascendc/scalar_gm.cpp): the scalar unit's load
// or store instruction for it (its timing through the data cache; the block's code continues at
// the scalar unit's time, so other blocks run meanwhile), and the poll check after a read.
void scalar_gm_access(bool store, uint64_t dev, const void* bytes, uint32_t n);
void note_poll(uint64_t dev, const void* bytes, uint32_t n);
// Blocks of Ascend C kernels running now (run_block counts them).
void block_started();
void block_ended(CoreState& st);
// Plain loads through __gm__ pointers in kernels (runtime/ascendc/raw_gm.cpp): the fault handler on
// the device pointers' range, and dropping the pages it made readable (at each block's start and end).
void raw_gm_install(uint8_t* base, uint64_t size);
void raw_gm_reset();
// Integer division by zero in kernel code completes as on the chip (no trap; runtime/ascendc/scalar_div.cpp).
void scalar_div_install();

// A launch as the device runtime takes it (exposed for tests that compare instruction streams).
KernelDesc make_kernel_desc(const LaunchRequest& r, const DeviceInfo& dev);
// The runtime stream of an aclrtStream (null: the default stream); throws for unknown streams.
uint32_t stream_id(void* stream);

}  // namespace sfumato::ascendc
