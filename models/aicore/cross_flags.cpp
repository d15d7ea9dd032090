#include "models/aicore/cross_flags.h"

#include "models/aicore/ai_core.h"

namespace sfumato {

namespace {
constexpr size_t kIds = isa::kMaxCrossFlag + 1;
}

CrossFlags::CrossFlags(uint32_t groups, uint32_t aiv_per_aic, uint32_t latency)
    : m_groups(groups), m_aiv(aiv_per_aic), m_latency(latency) {
    // mode 0: 2 kinds; mode 1: one per group; mode 2: one per core of each group.
    m_counters.resize(kIds * (2 + groups + static_cast<size_t>(groups) * (aiv_per_aic + 1)));
}

size_t CrossFlags::key(isa::CoreKind kind, uint32_t group, uint32_t slot, uint8_t mode, uint8_t id) const {
    switch (mode) {
        case 0: return (kind == isa::CoreKind::Cube ? 0 : 1) * kIds + id;
        case 1: return (2 + group) * kIds + id;
        default: return (2 + m_groups + static_cast<size_t>(group) * (m_aiv + 1) + slot) * kIds + id;
    }
}

size_t CrossFlags::own_key(const AiCore& core, uint8_t id) const {
    const bool cube = core.core_kind() == isa::CoreKind::Cube;
    return key(core.core_kind(), core.group(), cube ? m_aiv : core.sub_index(), 2, id);
}

size_t CrossFlags::wait_key(const AiCore& core, const isa::Instr& in) const {
    if (in.xflag.all) return own_key(core, in.xflag.flag_id);
    const bool cube = core.core_kind() == isa::CoreKind::Cube;
    return key(core.core_kind(), core.group(), cube ? m_aiv : core.sub_index(), in.xflag.mode, in.xflag.flag_id);
}

void CrossFlags::set_all(const AiCore& core, const isa::Instr& in, const Count& c) {
    const uint8_t mode = in.xflag.mode, id = in.xflag.flag_id;
    const bool cube = core.core_kind() == isa::CoreKind::Cube;
    if (mode == 2 && cube) {  // the AIC's set: one count for each of its AIVs
        for (uint32_t s = 0; s < m_aiv; ++s)
            m_counters[key(isa::CoreKind::Vector, core.group(), s, 2, id)].ready.push_back(c);
        return;
    }
    // A barrier: mode 0 over the launch's cores of this kind, 1 and 2 over the core's AIVs.
    const uint32_t parties = mode == 0 ? core.launch_kind_cores() : m_aiv;
    const BarrierKey bk{core.launch_seq(), static_cast<int>(core.core_kind()), mode == 0 ? ~0u : core.group(),
                        mode, id};
    auto& arr = m_arrivals[bk];
    arr[own_key(core, 0)].push_back(c);
    if (arr.size() < parties) return;
    for (const auto& [who, q] : arr)
        if (q.empty()) return;
    Count last = c;
    last.ready = 0;
    for (auto& [who, q] : arr)
        if (q.front().ready >= last.ready) last = q.front();
    for (auto& [who, q] : arr) {
        q.pop_front();
        if (mode != 2) m_counters[who + id].ready.push_back(last);  // own key of flag id = of flag 0 + id
    }
    if (mode == 2) m_counters[key(isa::CoreKind::Cube, core.group(), m_aiv, 2, id)].ready.push_back(last);
    bool pending = false;
    for (const auto& [who, q] : arr) pending = pending || !q.empty();
    if (!pending) m_arrivals.erase(bk);
}

void CrossFlags::wake() {
    std::vector<AiCore*> w;
    w.swap(m_waiters);
    for (AiCore* c : w) c->cross_flag_changed();
}

void CrossFlags::set(const AiCore& core, const isa::Instr& in, Cycle at, TrackId track) {
    const Count ready{(at + Cycle(m_latency)).v, {track, core.clock().to_tick(at), true}};
    const uint8_t mode = in.xflag.mode, id = in.xflag.flag_id;
    if (in.xflag.all) {
        set_all(core, in, ready);
        wake();
        return;
    }
    if (mode == 2) {
        if (core.core_kind() == isa::CoreKind::Cube) {
            for (uint32_t s = 0; s < m_aiv; ++s) m_counters[key(core.core_kind(), core.group(), s, 2, id)].ready.push_back(ready);
        } else {
            m_counters[key(core.core_kind(), core.group(), m_aiv, 2, id)].ready.push_back(ready);
        }
    } else {
        m_counters[key(core.core_kind(), core.group(), 0, mode, id)].ready.push_back(ready);
    }
    wake();
}

bool CrossFlags::try_wait(AiCore& core, const isa::Instr& in, Cycle now, Cycle& ready, Origin* from) {
    Counter& c = m_counters[wait_key(core, in)];
    if (!c.ready.empty() && c.ready.front().ready <= now.v) {
        if (from) *from = c.ready.front().origin;
        c.ready.pop_front();
        return true;
    }
    if (!c.ready.empty()) {
        ready = Cycle(c.ready.front().ready);
        return false;
    }
    ready = Cycle(0);
    for (AiCore* x : m_waiters)
        if (x == &core) return false;
    m_waiters.push_back(&core);
    return false;
}

uint32_t CrossFlags::count(const AiCore& core, const isa::Instr& in) const {
    return static_cast<uint32_t>(m_counters[wait_key(core, in)].ready.size());
}

}  // namespace sfumato
