// Kernels that read GM through a plain __gm__ pointer (`*(tilingGm + i)`, the vendor's examples'
// CopyTiling) instead of a GlobalTensor. Device pointers (aclrtMalloc) lie in an address range
// reserved without access (runtime/ascendc/acl.cpp), so such a load faults; the handler here maps
// the page, fills it with the device memory's current content (functional mode: the chip's GM;
// timing mode: what scalar reads see, GmAlloc memory and small host-to-device copies) and lets the
// load run again. The page stays readable until the next block starts or ends, when every such
// page is dropped again, so a block reads GM as it was when it (or a block running beside it)
// first touched that page. These loads are not timed (the kernel's own scalar code is not charged,
// README "Simplifications"). A store through such a pointer, or a device pointer dereferenced
// outside a kernel, stops the program with a message naming it, exit 2.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "isa/semantics.h"
#include "runtime/ascendc/host_state.h"
#include "sfumato_ascendc/core_state.h"

namespace sfumato::ascendc {

namespace {

constexpr uintptr_t kPage = 4096;
constexpr size_t kMaxPages = 4096;  // pages readable at once (16 MiB); past it the oldest are dropped
uintptr_t g_lo = 0, g_hi = 0;
struct sigaction g_previous;
uintptr_t g_pages[kMaxPages];
size_t g_count = 0;

[[noreturn]] void die(const char* msg) {
    const char head[] = "sfumato: error: ";
    (void)!write(2, head, sizeof head - 1);
    (void)!write(2, msg, std::strlen(msg));
    (void)!write(2, "\n", 1);
    _exit(2);
}

void drop(uintptr_t page) {
    madvise(reinterpret_cast<void*>(page), kPage, MADV_DONTNEED);
    mprotect(reinterpret_cast<void*>(page), kPage, PROT_NONE);
}

// Timing mode: the parts of the page that GmAlloc buffers and host-to-device copies cover.
void fill_from_shadows(uint64_t dev, uint8_t* dst) {
    const HostState& h = host_state();
    for (const auto& [host, b] : h.bufs) {
        if (!b.storage || b.dev + b.bytes <= dev || b.dev >= dev + kPage) continue;
        const uint64_t lo = std::max(dev, b.dev), hi = std::min(dev + kPage, b.dev + b.bytes);
        std::memcpy(dst + (lo - dev), b.storage + (lo - b.dev), hi - lo);
    }
    for (const auto& [d, bytes] : h.shadows) {
        if (d + bytes.size() <= dev || d >= dev + kPage) continue;
        const uint64_t lo = std::max(dev, d), hi = std::min<uint64_t>(dev + kPage, d + bytes.size());
        std::memcpy(dst + (lo - dev), bytes.data() + (lo - d), hi - lo);
    }
}

void on_fault(int sig, siginfo_t* si, void* uc) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(si->si_addr);
    if (a < g_lo || a >= g_hi) {  // not a device pointer: whoever handled it before
        if (g_previous.sa_flags & SA_SIGINFO) return g_previous.sa_sigaction(sig, si, uc);
        if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN)
            return g_previous.sa_handler(sig);
        signal(sig, SIG_DFL);
        return;  // the access faults again and the default action ends the program
    }
    const uintptr_t page = a & ~(kPage - 1);
    if (!g_current)
        die("a device pointer (aclrtMalloc) dereferenced outside a kernel: copy the data with aclrtMemcpy");
    if (std::find(g_pages, g_pages + g_count, page) != g_pages + g_count)
        die("a store to GM through a plain __gm__ pointer in a kernel: use GlobalTensor::SetValue or "
            "DataCopy "
            "(plain loads are read, stores are not modelled)");
    if (g_count == kMaxPages) {
        drop(g_pages[0]);
        std::copy(g_pages + 1, g_pages + g_count, g_pages);
        --g_count;
    }
    mprotect(reinterpret_cast<void*>(page), kPage, PROT_READ | PROT_WRITE);
    uint8_t* p = reinterpret_cast<uint8_t*>(page);
    const uint64_t dev = page - g_lo;
    if (g_current->mem)
        g_current->mem->gm_read(dev, p, kPage);
    else
        fill_from_shadows(dev, p);
    mprotect(reinterpret_cast<void*>(page), kPage, PROT_READ);
    g_pages[g_count++] = page;
}

}  // namespace

void raw_gm_install(uint8_t* base, uint64_t size) {
    g_lo = reinterpret_cast<uintptr_t>(base);
    g_hi = g_lo + size / kPage * kPage;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous);
}

void raw_gm_reset() {
    for (size_t i = 0; i < g_count; ++i) drop(g_pages[i]);
    g_count = 0;
}

}  // namespace sfumato::ascendc
