#include "models/aicore/system_region.h"

#include "sim/error.h"

namespace sfumato {

namespace {
constexpr uint64_t kPageTableBytes = 64 * 1024;  // up to 16 levels of 4 KiB
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

SystemRegionParams::SystemRegionParams(const ParamScope& chip)
    : bytes(chip.sub("system"), "bytes", 2ull << 20, "B",
            "device memory the chip reserves at address 0 for the page table, kernel arguments and kernel code",
            {256 * 1024, 1ull << 40}),
      args_slots(chip.sub("system"), "args_slots", 64, "slot", "kernel-argument blocks in flight (a ring, one per launch)",
                 {1, 1u << 20}),
      args_slot_bytes(chip.sub("system"), "args_slot_bytes", 4096, "B",
                      "largest argument block of one launch (GM pointers and tiling data)", {64, 1u << 24}) {
    if (kPageTableBytes + uint64_t{args_slots} * args_slot_bytes >= bytes)
        throw ConfigError(chip.sub("system").key("bytes"),
                          "leaves no room for code after the page table and args_slots x args_slot_bytes");
}

SystemRegion::SystemRegion(const SystemRegionParams& p, uint32_t entry, uint32_t site, uint32_t code_align)
    : m_p(p), m_entry(entry), m_site(site), m_align(code_align) {
    m_args_base = kPageTableBytes;
    m_code_base = round_up(m_args_base + uint64_t{p.args_slots} * p.args_slot_bytes, code_align);
    m_next = m_code_base;
}

uint64_t SystemRegion::args_addr(uint64_t launch, uint32_t args_bytes, const std::string& kernel) const {
    if (args_bytes > m_p.args_slot_bytes)
        throw ModelError("chip", "kernel '" + kernel + "' has an argument block of " + std::to_string(args_bytes) +
                                     " B, more than chip.system.args_slot_bytes = " + std::to_string(m_p.args_slot_bytes));
    return m_args_base + (launch % m_p.args_slots) * m_p.args_slot_bytes;
}

CodeImage& SystemRegion::image(const std::string& type, isa::CoreKind kind, uint32_t declared_bytes) {
    const std::string key = type + (kind == isa::CoreKind::Vector ? "/aiv" : kind == isa::CoreKind::Cube ? "/aic" : "/core") +
                            "/" + std::to_string(declared_bytes);
    auto [it, fresh] = m_images.try_emplace(key);
    if (!fresh) return *it->second;
    auto img = std::make_unique<CodeImage>();
    const uint64_t span = round_up(declared_bytes ? declared_bytes
                                                  : m_entry + uint64_t{m_site} * static_cast<uint64_t>(isa::Opcode::kCount),
                                   m_align);
    if (m_next + span > m_p.bytes) m_next = m_code_base;  // full: wrap (see the header)
    if (m_next + span > m_p.bytes)
        throw ModelError("chip", "kernel '" + type + "': a code image of " + std::to_string(span) +
                                     " B does not fit chip.system.bytes");
    img->base = m_next;
    img->declared = declared_bytes;
    img->entry = m_entry;
    img->site = m_site;
    img->size = m_entry;
    m_next += span;
    it->second = std::move(img);
    return *it->second;
}

}  // namespace sfumato
