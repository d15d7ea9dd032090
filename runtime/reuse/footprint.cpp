// A launch's GM footprint for timing re-use (footprint.h): recording from instructions, kept as
// disjoint offset ranges per operand, and its translation to another launch's operands.
#include "runtime/reuse/footprint.h"

#include <algorithm>

#include "isa/semantics.h"

namespace sfumato::reuse {

namespace {

bool touches_gm(isa::Opcode op) {
    using isa::Opcode;
    switch (op) {
        case Opcode::COPY_GM_TO_UB:
        case Opcode::COPY_GM_TO_L1:
        case Opcode::COPY_GM_TO_L1_ND2NZ:
        case Opcode::LOAD2D_GM:
        case Opcode::FIXPIPE:
        case Opcode::COPY_UB_TO_GM:
        case Opcode::COPY_L1_TO_GM:
        case Opcode::LD_GM:
        case Opcode::ST_GM: return true;
        default: return false;
    }
}

}  // namespace

void Footprint::record(const isa::Instr& in) {
    if (!touches_gm(in.op)) return;
    isa::Extent ex[isa::kMaxExtents];
    const int n = isa::footprint(in, ex);
    for (int i = 0; i < n; ++i)
        if (ex[i].pos == isa::Pos::GM && ex[i].hi > ex[i].lo) add(ex[i].lo, ex[i].hi, ex[i].write);
}

void Footprint::add(uint64_t lo, uint64_t hi, bool write) {
    // The operand holding `lo`: one read for a read (written for a write) first, as an in-place
    // operator's input and output share their bytes.
    int op = -1;
    for (int pass = 0; pass < 2 && op < 0; ++pass)
        for (size_t i = 0; i < m_ops.size(); ++i) {
            const OperandRange& o = m_ops[i];
            if (lo >= o.addr && lo < o.addr + o.bytes && (pass == 1 || o.written == write)) {
                op = static_cast<int>(i);
                break;
            }
        }
    uint64_t base = 0;
    if (op >= 0) {
        base = m_ops[static_cast<size_t>(op)].addr;
        hi = std::min(hi, base + m_ops[static_cast<size_t>(op)].bytes);
    }
    lo -= base;
    hi -= base;
    std::map<uint64_t, uint64_t>& s = m_sets[{op + 1, write}];
    // Merge with every range that overlaps or touches [lo, hi).
    auto it = s.upper_bound(lo);
    if (it != s.begin() && std::prev(it)->second >= lo) --it;
    while (it != s.end() && it->first <= hi) {
        lo = std::min(lo, it->first);
        hi = std::max(hi, it->second);
        it = s.erase(it);
    }
    s.emplace(lo, hi);
}

void Footprint::ranges_for(const std::vector<OperandRange>& ops, std::vector<GmRange>& out) const {
    for (int pass = 0; pass < 2; ++pass)
        for (const auto& kv : m_sets) {
            if (kv.first.second != (pass == 1)) continue;
            const int op = kv.first.first - 1;
            if (op >= static_cast<int>(ops.size())) continue;  // not the same operand list
            const uint64_t base = op >= 0 ? ops[static_cast<size_t>(op)].addr : 0;
            for (const auto& r : kv.second) out.push_back({base + r.first, r.second - r.first, kv.first.second});
        }
}

uint64_t Footprint::bytes() const {
    uint64_t b = 0;
    for (const auto& kv : m_sets)
        for (const auto& r : kv.second) b += r.second - r.first;
    return b;
}

}  // namespace sfumato::reuse
