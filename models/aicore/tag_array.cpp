#include "models/aicore/tag_array.h"

namespace sfumato {

void TagArray::configure(uint64_t lines, uint32_t ways) {
    m_ways = ways;
    m_sets = lines / ways;
    m_entries.assign(m_sets * ways, Entry{});
    m_clock = 0;
    m_epoch = 0;
}

TagArray::Entry* TagArray::find(uint64_t line) {
    Entry* set = &m_entries[(line & (m_sets - 1)) * m_ways];
    for (uint32_t w = 0; w < m_ways; ++w)
        if (holds(set[w]) && set[w].line == line) return &set[w];
    return nullptr;
}

bool TagArray::lookup(uint64_t line) {
    Entry* e = find(line);
    if (!e) return false;
    e->used = ++m_clock;
    return true;
}

TagArray::Victim TagArray::insert(uint64_t line) {
    Entry* set = &m_entries[(line & (m_sets - 1)) * m_ways];
    Entry* v = &set[0];
    for (uint32_t w = 0; w < m_ways; ++w) {
        if (!holds(set[w])) {
            v = &set[w];
            break;
        }
        if (set[w].used < v->used) v = &set[w];
    }
    const bool held = holds(*v);
    Victim out{held, held && v->dirty, v->line};
    *v = Entry{line, ++m_clock, m_epoch, true, false};
    return out;
}

void TagArray::set_dirty(uint64_t line) {
    if (Entry* e = find(line)) e->dirty = true;
}

bool TagArray::invalidate(uint64_t line) {
    Entry* e = find(line);
    if (!e) return false;
    const bool dirty = e->dirty;
    *e = Entry{};
    return dirty;
}

void TagArray::clear() {
    if (++m_epoch == 0)  // wrapped: entries of the epoch 2^32 clears ago would look held again
        for (Entry& e : m_entries) e = Entry{};
}

std::vector<uint64_t> TagArray::take_dirty() {
    std::vector<uint64_t> out;
    for (Entry& e : m_entries)
        if (holds(e) && e.dirty) {
            out.push_back(e.line);
            e.dirty = false;
        }
    return out;
}

}  // namespace sfumato
