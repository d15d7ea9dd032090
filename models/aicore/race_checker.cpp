#include "models/aicore/race_checker.h"

#include <algorithm>

#include "isa/asm.h"
#include "isa/semantics.h"
#include "isa/text.h"
#include "sim/error.h"

namespace sfumato {

using isa::Pipe;

namespace {
constexpr size_t kMaxIds = 64;
size_t flag_index(Pipe src, Pipe dst, uint8_t id) {
    return (static_cast<size_t>(src) * isa::kNumPipes + static_cast<size_t>(dst)) * kMaxIds + id;
}
using text::hex;
constexpr uint64_t kUnitFlagBlock = 512;  // bytes of L0C one unit bit covers (ai_core.cpp)
}  // namespace

RaceChecker::RaceChecker(std::string core_name) : m_core(std::move(core_name)) {
    m_flags.resize(static_cast<size_t>(isa::kNumPipes) * isa::kNumPipes * kMaxIds);
}

void RaceChecker::reset(uint32_t block) {
    m_block = block;
    for (auto& c : m_clock) c.fill(0);
    m_scalar.fill(0);
    for (auto& f : m_flags) f.clear();
    for (auto& p : m_pending) p.clear();
    m_pending_pos.fill(0);
    for (auto& a : m_access) a.clear();
    for (auto& u : m_unit) u.clear();
}

void RaceChecker::join(Clock& a, const Clock& b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
}

void RaceChecker::advance(Pipe p, uint32_t seq) {
    const size_t i = static_cast<size_t>(p);
    auto& pend = m_pending[i];
    while (m_pending_pos[i] < pend.size() && pend[m_pending_pos[i]].seq <= seq) join(m_clock[i], pend[m_pending_pos[i]++].clock);
}

void RaceChecker::on_set_flag(const isa::Instr& in) {
    const Pipe src = in.flag.src;
    if (src == Pipe::S) {
        m_flags[flag_index(src, in.flag.dst, in.flag.event_id)].push_back(m_scalar);
        return;
    }
    publish_flag(in, set_flag_clock(in));
}

RaceChecker::Clock RaceChecker::set_flag_clock(const isa::Instr& in) {
    advance(in.flag.src, in.seq);
    return m_clock[static_cast<size_t>(in.flag.src)];
}

void RaceChecker::publish_flag(const isa::Instr& in, const Clock& c) {
    m_flags[flag_index(in.flag.src, in.flag.dst, in.flag.event_id)].push_back(c);
}

void RaceChecker::on_wait_flag(const isa::Instr& in) {
    advance(in.flag.dst, in.seq);
    take_flag(in, m_clock[static_cast<size_t>(in.flag.dst)]);
}

void RaceChecker::take_flag(const isa::Instr& in, Clock& into) {
    auto& sets = m_flags[flag_index(in.flag.src, in.flag.dst, in.flag.event_id)];
    if (sets.empty()) return;  // set in an earlier block (its clocks are gone)
    join(into, sets.front());
    sets.erase(sets.begin());
}

void RaceChecker::on_scalar_wait(const isa::Instr& in, uint32_t next_seq) {
    take_flag(in, m_scalar);
    for (auto& p : m_pending) p.push_back({next_seq, m_scalar});
}

void RaceChecker::on_barrier_all(uint32_t next_seq) {
    for (size_t i = 0; i < m_clock.size(); ++i) {
        advance(static_cast<Pipe>(i), next_seq - 1);
        join(m_scalar, m_clock[i]);
    }
    for (auto& p : m_pending) p.push_back({next_seq, m_scalar});
}

void RaceChecker::prune(std::vector<Access>& v) {
    // An access every pipe is already ordered after can never race again.
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](const Access& a) {
                               for (const auto& c : m_clock)
                                   if (c[static_cast<size_t>(a.pipe)] < a.epoch) return false;
                               return true;
                           }),
            v.end());
}

void RaceChecker::unit_flags(const isa::Instr& in, Clock& me, bool publish) {
    const uint8_t uf = isa::unit_flag(in);
    if (uf < 2) return;
    const size_t side = in.op == isa::Opcode::MAD ? 0 : 1;
    isa::Extent ext[isa::kMaxExtents];
    const int n = isa::footprint(in, ext);
    for (int i = 0; i < n; ++i) {
        const isa::Extent& e = ext[i];
        if (e.pos != isa::Pos::L0C || e.hi <= e.lo) continue;
        const size_t last = static_cast<size_t>((e.hi - 1) / kUnitFlagBlock);
        for (auto& u : m_unit)
            if (u.size() <= last) u.resize(last + 1, Clock{});
        for (size_t b = static_cast<size_t>(e.lo / kUnitFlagBlock); b <= last; ++b) {
            if (!publish)
                join(me, m_unit[1 - side][b]);
            else if (uf == 3)
                m_unit[side][b] = me;
        }
    }
}

void RaceChecker::on_start(Pipe p, const isa::Instr& in) {
    advance(p, in.seq);
    Clock& me = m_clock[static_cast<size_t>(p)];
    unit_flags(in, me, false);
    const uint32_t epoch = ++me[static_cast<size_t>(p)];
    unit_flags(in, me, true);
    isa::Extent ext[isa::kMaxExtents];
    const int n = isa::footprint(in, ext);
    for (int i = 0; i < n; ++i) {
        const isa::Extent& e = ext[i];
        if (e.hi <= e.lo) continue;
        auto& v = m_access[static_cast<size_t>(e.pos)];
        for (const Access& a : v) {
            if (a.pipe == p || a.hi <= e.lo || e.hi <= a.lo || !(a.write || e.write)) continue;
            if (a.epoch <= me[static_cast<size_t>(a.pipe)]) continue;
            const uint64_t lo = std::max(a.lo, e.lo), hi = std::min(a.hi, e.hi);
            throw SimError(kExitRace, "race: " + m_core + " block " + std::to_string(m_block) + ": " +
                                          isa::pipe_name(a.pipe) + " instr #" + std::to_string(a.instr.seq) + " '" +
                                          isa::disassemble(a.instr) + "' (" + (a.write ? "writes" : "reads") + ") and " +
                                          isa::pipe_name(p) + " instr #" + std::to_string(in.seq) + " '" +
                                          isa::disassemble(in) + "' (" + (e.write ? "writes" : "reads") + ") touch " +
                                          isa::pos_name(e.pos) + " [" + hex(lo) + ", " + hex(hi) +
                                          ") with no flag or barrier ordering them");
        }
    }
    for (int i = 0; i < n; ++i) {
        const isa::Extent& e = ext[i];
        if (e.hi <= e.lo) continue;
        auto& v = m_access[static_cast<size_t>(e.pos)];
        // A newer access of the same pipe covering an older one makes the older redundant.
        v.erase(std::remove_if(v.begin(), v.end(),
                               [&](const Access& a) { return a.pipe == p && e.lo <= a.lo && a.hi <= e.hi && (e.write || !a.write); }),
                v.end());
        v.push_back({p, epoch, e.lo, e.hi, e.write, in});
        if (v.size() > 512) prune(v);
    }
}

}  // namespace sfumato
