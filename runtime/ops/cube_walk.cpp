#include "runtime/ops/cube_walk.h"

#include <algorithm>

#include "runtime/ops/op_util.h"

namespace sfumato::ops {

CubeWalk::CubeWalk(const CubeMatmulPlan& p, uint32_t es, uint32_t block)
    : m_p(p), m_t(p.t), m_es(es), m_segs(block_segments(p.t, block)) {}

uint32_t CubeWalk::m_pad(const Step& s) const { return rup(s.tm, m_t.align_m); }
uint32_t CubeWalk::n_pad(const Step& s) const { return rup(s.tn, m_t.align_n); }
uint32_t CubeWalk::k_rows_pad(uint32_t kc) const { return rup(kc, m_t.align_k); }
uint64_t CubeWalk::a1_stride() const { return rup(m_t.a1_bytes(m_es), 32); }

size_t CubeWalk::a1_slot(const Step& s, uint32_t p) const {
    return m_t.a_slots ? m_t.a_slot(s.part, s.k0 / m_t.k_l1) : p % m_t.buffers;
}

CubeWalk::Step CubeWalk::at(uint32_t seg, uint32_t kidx) const {
    Step s;
    s.seg = seg, s.kidx = kidx;
    if (seg >= m_segs.size()) return s;
    const WorkSeg& g = m_segs[seg];
    const uint32_t split = std::max<uint32_t>(1, m_t.k_split), item = g.item;
    s.item = item, s.tile = item / split, s.part = item % split;
    s.valid = true;
    const TileCoord tc = tile_coord(m_t, s.tile);
    const uint32_t c0 = m_t.part_begin(s.part), pos = g.c_lo + kidx;
    s.nk = g.c_hi - g.c_lo;
    s.tile_first = s.part == 0 && pos == 0;
    const uint32_t k0 = (split > 1 ? c0 + pos : m_t.k_chunk(tc.tm, tc.tn, pos)) * m_t.k_l1;
    s.k0 = k0;
    s.m0 = tc.tm * m_t.base_m, s.n0 = tc.tn * m_t.base_n;
    s.tm = std::min(m_t.base_m, m_t.m - s.m0), s.tn = std::min(m_t.base_n, m_t.n - s.n0);
    s.kc = m_p.skip_ab ? 0 : std::min(m_t.k_l1, m_t.k - k0);
    uint32_t b = tc.batch;
    for (size_t i = m_p.bdims.size(); i-- > 0;) {
        const uint32_t idx = b % m_p.bdims[i];
        b /= m_p.bdims[i];
        s.ao += idx * m_p.a_bs[i], s.bo += idx * m_p.b_bs[i], s.co += idx * m_p.c_bs[i];
    }
    return s;
}

CubeWalk::Step CubeWalk::next(const Step& s) const {
    if (!m_p.skip_ab && s.kidx + 1 < s.nk) return at(s.seg, s.kidx + 1);
    return at(s.seg + 1, 0);
}

bool CubeWalk::swap_key(std::optional<Key>& held, const Key& k) {
    const bool fresh = !held || *held != k;
    held = k;
    return fresh;
}

CubeWalk::NzRun CubeWalk::nz_run_a(const Step& s) const {
    if (!m_t.trans_a) return {m_t.m, s.m0, s.k0, rup(s.kc, 16) / 16, m_pad(s)};
    return {m_t.k, s.k0, s.m0, m_pad(s) / 16, k_rows_pad(s.kc)};
}

CubeWalk::NzRun CubeWalk::nz_run_b(const Step& s) const {
    if (!m_t.trans_b) return {m_t.k, s.k0, s.n0, rup(s.tn, 16) / 16, rup(s.kc, 16)};
    return {m_t.n, s.n0, s.k0, rup(s.kc, 16) / 16, n_pad(s)};
}

bool CubeWalk::zeroes(const std::vector<WorkSeg>& segs, uint32_t split) {
    for (const WorkSeg& g : segs)
        if (g.item % split == 0 && g.c_lo == 0) return true;
    return false;
}

std::vector<CubeWalk::PfItem> CubeWalk::pf_items() const {
    std::vector<PfItem> v;
    if (!m_t.pf_ahead || !m_t.pf_marks || m_t.pf_aiv == 0 || m_p.skip_ab) return v;
    // A panel only one tile reads (B with one tile row, A with one tile column: a small-M
    // shape's B) has no other sharer to lead its other segments: all of it is the tile's.
    const uint32_t lead = m_t.pf_lead(), all = m_t.k_chunks();
    const uint32_t lead_a = m_t.tiles_n > 1 ? lead : all, lead_b = m_t.tiles_m > 1 ? lead : all;
    // Only chunks the cube loads: not one its L1 still holds (the kernel's load keys, replayed).
    std::vector<std::optional<Key>> ka(m_t.a_slots ? m_t.a_slots : m_t.buffers), kb(m_t.buffers);
    uint32_t p = 0;
    for (Step s = at(0, 0); s.valid; s = next(s), ++p) {
        const uint8_t mk = (*m_t.pf_marks)[s.tile];
        const uint64_t kk = uint64_t{s.k0} * 2 + (has_bias(s) ? 1 : 0);
        const bool a_fresh = swap_key(ka[a1_slot(s, p)], {s.ao, s.m0, kk});
        const bool b_fresh = swap_key(kb[p % m_t.buffers], {s.bo, s.n0, kk});
        if ((mk & 1) && s.kidx < lead_a && a_fresh) v.push_back({p, s, false});
        if ((mk & 2) && s.kidx < lead_b && b_fresh) v.push_back({p, s, true});
    }
    return v;
}

uint32_t CubeWalk::pf_signals(const std::vector<PfItem>& v, uint32_t pf_ahead) {
    if (v.empty()) return 0;
    const uint32_t need = v.back().p + 1;
    return need > pf_ahead ? need - pf_ahead : 0;
}

CubeWalk::Region CubeWalk::pf_region(const PfItem& it) const {
    const Step& s = it.s;
    Region r;
    if (m_t.gm_nz) {  // whole fractal-column runs of the stored matrix (see nz_run)
        const NzRun z = it.b ? nz_run_b(s) : nz_run_a(s);
        r.at = (uint64_t{z.c0 / 16} * rup(z.rows, 16) + z.r0) * 16, r.rows = z.groups;
        r.len = z.rows_pad * 32, r.ld = uint64_t{rup(z.rows, 16)} * 16;
        return r;
    }
    if (!it.b) {
        r.ld = m_p.lda;
        if (!m_t.trans_a)
            r.at = s.ao + s.m0 * m_p.lda + s.k0, r.rows = s.tm, r.len = s.kc * m_es;
        else
            r.at = s.ao + uint64_t{s.k0} * m_p.lda + s.m0, r.rows = s.kc, r.len = s.tm * m_es;
    } else {
        r.ld = m_p.ldb;
        if (!m_t.trans_b)
            r.at = s.bo + uint64_t{s.k0} * m_p.ldb + s.n0, r.rows = s.kc, r.len = s.tn * m_es;
        else
            r.at = s.bo + uint64_t{s.n0} * m_p.ldb + s.k0, r.rows = s.tn, r.len = s.kc * m_es;
    }
    return r;
}

// Items alternate between A and B chunks, whose sizes differ (an M-row A chunk against an
// N-column B chunk), so taking every pf_aiv-th item would give one AIV all of B and leave the
// other's GM port idle; balancing bytes keeps every port of the block streaming.
std::vector<uint32_t> CubeWalk::pf_owners(const std::vector<PfItem>& items) const {
    std::vector<uint32_t> owner(items.size());
    std::vector<uint64_t> bytes(std::max<uint32_t>(1, m_t.pf_aiv), 0);
    for (size_t j = 0; j < items.size(); ++j) {
        const Region r = pf_region(items[j]);
        const auto it = std::min_element(bytes.begin(), bytes.end());
        owner[j] = static_cast<uint32_t>(it - bytes.begin());
        *it += uint64_t{r.rows} * rup(r.len, 32);
    }
    return owner;
}

}  // namespace sfumato::ops
