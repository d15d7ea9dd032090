#include "models/mem/l2_tags.h"

namespace sfumato::mem {

L2Tags::L2Tags(const L2Geometry& g, std::unique_ptr<IReplacement> repl)
    : m_g(g), m_repl(std::move(repl)), m_lines(size_t(g.sets) * g.ways) {}

L2Tags::Line* L2Tags::find(uint64_t line_addr, bool touch) {
    const uint32_t s = set_of(line_addr);
    Line* base = &m_lines[size_t(s) * m_g.ways];
    for (uint32_t w = 0; w < m_g.ways; ++w) {
        if (base[w].valid && base[w].line_addr == line_addr) {
            if (touch) m_repl->touch(s, w);
            return &base[w];
        }
    }
    return nullptr;
}

L2Tags::Line* L2Tags::allocate(uint64_t line_addr, Victim& v) {
    const uint32_t s = set_of(line_addr);
    Line* base = &m_lines[size_t(s) * m_g.ways];
    uint32_t way = m_g.ways;
    for (uint32_t w = 0; w < m_g.ways; ++w) {
        if (!base[w].valid) {
            way = w;
            break;
        }
    }
    v = Victim{};
    if (way == m_g.ways) {
        way = m_repl->victim(s);
        v.evicted = true;
        v.line_addr = base[way].line_addr;
        v.dirty = base[way].dirty;
    }
    base[way] = Line{line_addr, 0, 0};
    m_repl->fill(s, way);
    return &base[way];
}

uint64_t L2Tags::sector_mask(uint64_t addr, uint32_t bytes) const {
    const uint64_t off = addr % m_g.line_bytes;
    const uint64_t first = off / m_g.sector_bytes;
    const uint64_t last = (off + bytes - 1) / m_g.sector_bytes;
    const uint64_t n = last - first + 1;
    return (n >= 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1)) << first;
}

}  // namespace sfumato::mem
