// Device memory the chip keeps for itself, at address 0 (the runtime allocates above it,
// DeviceInfo::reserved_bytes): the page table the cores' TLBs walk, a ring of kernel-argument
// slots (each launch's argument block: GM pointers and tiling data, read by the cores with scalar
// loads at start-up), and the kernels' code images.
// A code image belongs to one kernel type on one core kind (AIC and AIV run different binaries).
// Its size is declared by the kernel (KernelDesc::code_bytes: the whole image is fetched at block
// start), or estimated from the instructions the kernel issues: an entry part every block runs
// (prologue, framework initialisation, argument loads, epilogue) followed by one call site per
// distinct opcode, laid out in the order the kernel first issues them (on any core), so the code
// a core fetches grows with what it executes. Simplified: images are placed in slots of the
// largest size an estimated image can reach; when the region is full, placement wraps around
// (images then share lines: only the L2's hits can tell).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "isa/instr.h"
#include "isa/instr_sink.h"
#include "sim/config.h"

namespace sfumato {

struct SystemRegionParams {
    explicit SystemRegionParams(const ParamScope& chip);
    Param<uint64_t> bytes;
    Param<uint32_t> args_slots, args_slot_bytes;
};

struct CodeImage {
    uint64_t base = 0;
    uint32_t declared = 0;  // > 0: a declared size, fetched whole at block start
    uint32_t entry = 0, site = 0;
    uint32_t size = 0;      // bytes laid out so far (entry + sites)
    std::array<uint32_t, static_cast<size_t>(isa::Opcode::kCount)> site_end{};  // offset + site; 0: not laid out yet
    // Address of the call site of `op`, laying it out after the others on its first use.
    uint64_t site_addr(isa::Opcode op) {
        uint32_t& e = site_end[static_cast<size_t>(op)];
        if (e == 0) {
            size += site;
            e = size;
        }
        return base + e - site;
    }
};

class SystemRegion {
public:
    // `entry`, `site`: the estimated image's parts (chip.aicore.startup.*).
    SystemRegion(const SystemRegionParams& p, uint32_t entry, uint32_t site, uint32_t code_align);
    uint64_t bytes() const { return m_p.bytes; }
    uint64_t page_table() const { return 0; }
    // The argument slot of the n-th kernel launch; throws ModelError naming the kernel when its
    // argument block does not fit a slot.
    uint64_t args_addr(uint64_t launch, uint32_t args_bytes, const std::string& kernel) const;
    // The code image of a kernel type on a core kind (laid out on first use).
    CodeImage& image(const std::string& type, isa::CoreKind kind, uint32_t declared_bytes);

private:
    const SystemRegionParams& m_p;
    uint32_t m_entry, m_site, m_align;
    uint64_t m_args_base = 0, m_code_base = 0, m_next = 0;
    std::map<std::string, std::unique_ptr<CodeImage>> m_images;
};

}  // namespace sfumato
