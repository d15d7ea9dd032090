// Placement of an elementwise plan's UB buffers for the 220x bank rules (docs/fidelity.md, "UB
// bank conflicts: the vendor's 220x rules"; runtime/ops/norm/ub_place.h): each buffer (the input
// and output queues' buffers, the operands' staging area, every temporary slot) whole inside
// one 64 KiB bank span, so that a step's destination lies in another span than its sources,
// and each slot at the phase (address modulo 512) that puts two tile sources of one step in
// different halves of the 16 bank groups.
#include "runtime/ops/ew/ub_layout.h"

#include <map>

#include "runtime/ops/norm/ub_place.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::ew {

namespace {

// The program's view of the UB: items in place_apart's order.
struct Items {
    const Plan& p;
    int in0 = 0, out0 = 0, fixed = 0, slot0 = 0, n = 0;
    explicit Items(const Plan& plan) : p(plan) {
        in0 = 0;
        out0 = in0 + (p.in_bytes ? static_cast<int>(p.nbuf) : 0);
        fixed = out0 + static_cast<int>(p.nbuf);
        slot0 = fixed + 1;
        n = slot0 + static_cast<int>(p.prog.slot_bits.size());
    }
    // The items a register's tile lives in (stride-0 blocks and scalars: none, they read one
    // block a repeat).
    std::vector<int> of(int reg) const {
        if (reg < 0) return {};
        const RegInfo& g = p.prog.regs[static_cast<size_t>(reg)];
        std::vector<int> v;
        switch (g.src) {
            case RegSrc::Temp: return {slot0 + g.slot};
            case RegSrc::Out:
                for (uint32_t b = 0; b < p.nbuf; ++b) v.push_back(out0 + static_cast<int>(b));
                return v;
            case RegSrc::Const: return {};
            default: break;
        }
        const OperandPlan& o = p.in[static_cast<size_t>(g.input)];
        if (o.form == Form::Stream) {
            for (uint32_t b = 0; b < p.nbuf; ++b) v.push_back(in0 + static_cast<int>(b));
            return v;
        }
        if (o.form == Form::Row || o.form == Form::Col || o.form == Form::Gather) return {fixed};
        return {};
    }
};

// A step's tile sources (the selector of a VSEL is a bitmask the rules do not charge).
std::vector<int> tile_sources(const Plan& p, const Step& s) {
    std::vector<int> v;
    for (int r : {s.a, s.b}) {
        if (r < 0) continue;
        const RegInfo& g = p.prog.regs[static_cast<size_t>(r)];
        if (g.src == RegSrc::Const || g.kind == RegKind::Block) continue;
        if (g.src == RegSrc::Input && p.in[static_cast<size_t>(g.input)].form == Form::Scalar) continue;
        v.push_back(r);
    }
    return v;
}

// Phase variables: one per slot, one (index slots) for the staging area; a register's tile
// starts at its variable's phase plus its offset there.
struct PhaseRef {
    int var = -1;     // -1: the phase is fixed
    uint32_t off = 0;  // offset (var >= 0) or the fixed phase; 512 = no tile
};

PhaseRef phase_ref(const Plan& p, int reg) {
    const RegInfo& g = p.prog.regs[static_cast<size_t>(reg)];
    if (g.src == RegSrc::Temp) return {g.slot, 0};
    if (g.src == RegSrc::Out) return {-1, 0};
    if (g.src != RegSrc::Input) return {-1, 512};
    const OperandPlan& o = p.in[static_cast<size_t>(g.input)];
    if (o.form == Form::Stream) return {-1, o.in_off % 512};
    if (o.form == Form::Row || o.form == Form::Col || o.form == Form::Gather)
        return {static_cast<int>(p.prog.slot_bits.size()), o.calc_off % 512};
    return {-1, 512};
}

}  // namespace

std::vector<uint32_t> phase_vars(const Plan& p) {
    // Two tile sources of one step want phases 256 apart: each variable takes the phase that
    // puts its tile opposite a source it is read beside whose phase is known, in step order
    // until nothing changes; an undecided variable then starts at 0 and the rest follows.
    std::vector<int> ph(p.prog.slot_bits.size() + 1, -1);
    auto phase_of = [&](const PhaseRef& r) {
        if (r.var < 0) return r.off == 512 ? -1 : static_cast<int>(r.off);
        return ph[static_cast<size_t>(r.var)] < 0 ? -1 : static_cast<int>((ph[static_cast<size_t>(r.var)] + r.off) % 512);
    };
    std::vector<std::pair<PhaseRef, PhaseRef>> pairs;
    for (const Step& s : p.prog.steps) {
        const std::vector<int> src = tile_sources(p, s);
        if (src.size() == 2 && src[0] != src[1]) pairs.push_back({phase_ref(p, src[0]), phase_ref(p, src[1])});
    }
    for (bool open = true; open;) {
        for (bool changed = true; changed;) {
            changed = false;
            for (const auto& [x, y] : pairs)
                for (const auto& [me, other] : {std::pair{x, y}, std::pair{y, x}}) {
                    const int o = phase_of(other);
                    if (me.var < 0 || ph[static_cast<size_t>(me.var)] >= 0 || o < 0 || me.var == other.var) continue;
                    ph[static_cast<size_t>(me.var)] = static_cast<int>((static_cast<uint32_t>(o) + 256 + 512 - me.off) % 512);
                    changed = true;
                }
        }
        open = false;
        for (const auto& [x, y] : pairs)
            for (const PhaseRef& r : {x, y})
                if (!open && r.var >= 0 && ph[static_cast<size_t>(r.var)] < 0) ph[static_cast<size_t>(r.var)] = 0, open = true;
    }
    std::vector<uint32_t> out(ph.size());
    for (size_t i = 0; i < ph.size(); ++i) out[i] = ph[i] < 0 ? 0 : static_cast<uint32_t>(ph[i]);
    return out;
}

bool place_ub(Plan& p, uint64_t ub) {
    p.placed = false;
    const Items it(p);
    std::vector<norm::UbItem> items(static_cast<size_t>(it.n));
    for (uint32_t b = 0; p.in_bytes && b < p.nbuf; ++b) items[static_cast<size_t>(it.in0) + b] = {p.in_bytes, 0};
    for (uint32_t b = 0; b < p.nbuf; ++b) items[static_cast<size_t>(it.out0) + b] = {p.out_bytes, 0};
    const std::vector<uint32_t> phase = phase_vars(p);
    items[static_cast<size_t>(it.fixed)] = {p.fixed_bytes, phase.back()};
    for (size_t s = 0; s < p.prog.slot_bits.size(); ++s)
        items[static_cast<size_t>(it.slot0) + s] = {(uint64_t{p.T} * p.prog.slot_bits[s] / 8 + 31) / 32 * 32, phase[s]};
    // Pairs: a step's destination against each of its sources, weighted by its repeats per
    // 256 elements (the wider of its types); the per-tile staging (Col values spread, gathered
    // elements packed) writes the staging area from the input buffers.
    std::map<std::pair<int, int>, uint32_t> w;
    auto pair = [&](int a, int b, uint32_t wt) {
        if (a == b) return;
        w[{std::min(a, b), std::max(a, b)}] += wt;
    };
    for (const Step& s : p.prog.steps) {
        const int typed = s.op == isa::Opcode::VCMP || s.op == isa::Opcode::VCMPS ? s.a : s.dst;
        uint32_t wt = isa::dtype_size(p.prog.regs[static_cast<size_t>(typed)].dt);
        if (s.op == isa::Opcode::VCONV) wt = std::max(wt, isa::dtype_size(p.prog.regs[static_cast<size_t>(s.a)].dt));
        for (int d : it.of(s.dst))
            for (int r : {s.a, s.b})
                for (int x : it.of(r)) pair(d, x, wt);
    }
    for (const OperandPlan& o : p.in)
        if (o.form == Form::Col || o.form == Form::Gather)
            for (uint32_t b = 0; p.in_bytes && b < p.nbuf; ++b) pair(it.fixed, it.in0 + static_cast<int>(b), 1);
    std::vector<norm::UbApart> apart;
    for (const auto& [k, wt] : w) apart.push_back({k.first, k.second, wt});
    const std::vector<uint64_t> at = norm::place_apart(items, apart, ub, norm::kBankSpan);
    if (at.empty()) return false;
    p.placed = true;
    p.ub_reserve = ub;
    p.shared_weight = norm::shared_weight(items, apart, at, norm::kBankSpan);
    p.in_at.clear(), p.out_at.clear();
    for (uint32_t b = 0; p.in_bytes && b < p.nbuf; ++b) p.in_at.push_back(static_cast<uint32_t>(at[static_cast<size_t>(it.in0) + b]));
    for (uint32_t b = 0; b < p.nbuf; ++b) p.out_at.push_back(static_cast<uint32_t>(at[static_cast<size_t>(it.out0) + b]));
    // The staging area's offsets were relative to the calc area; they now count from the UB
    // reserve's base, as the slots do.
    const uint32_t f = static_cast<uint32_t>(at[static_cast<size_t>(it.fixed)]);
    for (OperandPlan& o : p.in) o.calc_off += f, o.stage_off += f, o.x_off += f;
    for (size_t r = 0; r < p.prog.regs.size(); ++r)
        if (p.prog.regs[r].src == RegSrc::Const) p.const_off[r] += f;
    for (size_t s = 0; s < p.slot_off.size(); ++s) p.slot_off[s] = static_cast<uint32_t>(at[static_cast<size_t>(it.slot0) + s]);
    return true;
}

}  // namespace sfumato::ops::ew
