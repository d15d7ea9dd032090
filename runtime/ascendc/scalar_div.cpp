// Integer division by zero in a kernel's scalar code. The chip's scalar unit does not trap on it, and
// kernels rely on that: catlass's BlockMmad computes `startTileIdx % kTileCountNext` on a core's last
// block, where kTileCountNext is 0, and discards the result. The host CPU (x86-64) traps (SIGFPE), so
// the handler here completes the faulting DIV/IDIV instruction the way a non-trapping divider does —
// quotient all ones, remainder the dividend (RISC-V's definition; the chip's own result is not
// documented, and code that uses it is reading an undefined value) — and resumes after it. Only while
// a block runs (g_current) and only for a zero divisor; anything else (a division overflow, a fault
// outside a kernel, another CPU) keeps the default action.
#include <signal.h>
#include <ucontext.h>

#include <cstdint>
#include <cstring>

#include "sfumato_ascendc/core_state.h"

namespace sfumato::ascendc {

#if defined(__x86_64__) && defined(__linux__)
namespace {

struct sigaction g_previous_fpe;
bool g_fpe_installed = false;

// gregs index of general register n (the ModRM/REX numbering: rax rcx rdx rbx rsp rbp rsi rdi r8..r15).
constexpr int kFpeRegs[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                           REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

void fpe_pass_on(int sig, siginfo_t* si, void* uc) {
    if (g_previous_fpe.sa_flags & SA_SIGINFO) return g_previous_fpe.sa_sigaction(sig, si, uc);
    if (g_previous_fpe.sa_handler != SIG_DFL && g_previous_fpe.sa_handler != SIG_IGN) return g_previous_fpe.sa_handler(sig);
    signal(sig, SIG_DFL);  // the instruction traps again and the default action ends the program
}

// Decodes the DIV/IDIV at rip: operand size in bytes, the divisor, the instruction's length. False when
// the bytes are not one.
bool fpe_decode(const uint8_t* ip, greg_t* g, int& size, uint64_t& divisor, int& len) {
    int i = 0;
    bool opsize16 = false;
    uint8_t rex = 0;
    for (;; ++i) {  // legacy prefixes, then REX
        const uint8_t b = ip[i];
        if (b == 0x66) opsize16 = true;
        else if (b == 0x67 || b == 0xF0 || b == 0xF2 || b == 0xF3 || b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 ||
                 b == 0x64 || b == 0x65)
            continue;
        else break;
    }
    if ((ip[i] & 0xF0) == 0x40) rex = ip[i++];
    const uint8_t op = ip[i++];
    if (op != 0xF6 && op != 0xF7) return false;
    const uint8_t modrm = ip[i++];
    const int mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
    if (reg != 6 && reg != 7) return false;  // DIV, IDIV
    size = op == 0xF6 ? 1 : (rex & 8) ? 8 : opsize16 ? 2 : 4;
    uint64_t value = 0;
    if (mod == 3) {
        const int r = rm | ((rex & 1) << 3);
        uint64_t v = static_cast<uint64_t>(g[kFpeRegs[r]]);
        if (size == 1 && !rex && rm >= 4) v = static_cast<uint64_t>(g[kFpeRegs[rm - 4]]) >> 8;  // AH CH DH BH
        value = v;
    } else {
        uint64_t addr = 0;
        int base = rm;
        if (rm == 4) {  // SIB
            const uint8_t sib = ip[i++];
            const int scale = sib >> 6, index = ((sib >> 3) & 7) | ((rex & 2) << 2);
            base = sib & 7;
            if (index != 4) addr += static_cast<uint64_t>(g[kFpeRegs[index]]) << scale;
            if (base == 5 && mod == 0) {
                int32_t d;
                std::memcpy(&d, ip + i, 4);
                i += 4;
                addr += static_cast<uint64_t>(static_cast<int64_t>(d));
                base = -1;
            }
        } else if (rm == 5 && mod == 0) {  // RIP-relative: from the next instruction
            int32_t d;
            std::memcpy(&d, ip + i, 4);
            i += 4;
            addr = reinterpret_cast<uint64_t>(ip) + static_cast<uint64_t>(i) + static_cast<uint64_t>(static_cast<int64_t>(d));
            base = -1;
        }
        if (base >= 0) addr += static_cast<uint64_t>(g[kFpeRegs[base | ((rex & 1) << 3)]]);
        if (mod == 1) {
            addr += static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(ip[i])));
            i += 1;
        } else if (mod == 2) {
            int32_t d;
            std::memcpy(&d, ip + i, 4);
            i += 4;
            addr += static_cast<uint64_t>(static_cast<int64_t>(d));
        }
        std::memcpy(&value, reinterpret_cast<const void*>(addr), static_cast<size_t>(size));
    }
    divisor = size == 8 ? value : value & ((uint64_t{1} << (8 * size)) - 1);
    len = i;
    return true;
}

void on_fpe(int sig, siginfo_t* si, void* ucv) {
    auto* uc = static_cast<ucontext_t*>(ucv);
    greg_t* g = uc->uc_mcontext.gregs;
    const auto* ip = reinterpret_cast<const uint8_t*>(g[REG_RIP]);
    int size = 0, len = 0;
    uint64_t divisor = 1;
    if (si->si_code != FPE_INTDIV || !g_current || !fpe_decode(ip, g, size, divisor, len) || divisor != 0)
        return fpe_pass_on(sig, si, ucv);
    const uint64_t rax = static_cast<uint64_t>(g[REG_RAX]), rdx = static_cast<uint64_t>(g[REG_RDX]);
    switch (size) {
        case 1:  // AX / r8: AL quotient, AH remainder (the dividend's low byte)
            g[REG_RAX] = static_cast<greg_t>((rax & ~uint64_t{0xFFFF}) | ((rax & 0xFF) << 8) | 0xFF);
            break;
        case 2:  // DX:AX: AX quotient, DX remainder (AX, the dividend's low half)
            g[REG_RDX] = static_cast<greg_t>((rdx & ~uint64_t{0xFFFF}) | (rax & 0xFFFF));
            g[REG_RAX] = static_cast<greg_t>(rax | 0xFFFF);
            break;
        case 4:  // EDX:EAX (32-bit results zero-extend)
            g[REG_RDX] = static_cast<greg_t>(rax & 0xFFFFFFFF);
            g[REG_RAX] = static_cast<greg_t>(uint64_t{0xFFFFFFFF});
            break;
        default:  // RDX:RAX
            g[REG_RDX] = static_cast<greg_t>(rax);
            g[REG_RAX] = static_cast<greg_t>(~uint64_t{0});
            break;
    }
    g[REG_RIP] += len;
}

}  // namespace

void scalar_div_install() {
    if (g_fpe_installed) return;
    g_fpe_installed = true;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGFPE, &sa, &g_previous_fpe);
}
#else
void scalar_div_install() {}
#endif

}  // namespace sfumato::ascendc
