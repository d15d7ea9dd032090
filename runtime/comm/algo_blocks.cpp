// The building blocks of comm/algorithms.h: reduce-scatter and all-gather (ring, mesh,
// halving-doubling, double ring), broadcast (chain, binomial tree, scatter + all-gather) and
// reduce (tree, reduce-scatter + gather).
#include <algorithm>

#include "runtime/comm/algorithms.h"

namespace sfumato::comm {

namespace {

uint64_t max_of(const std::vector<uint64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// Halving-doubling over the largest power of two p <= k: the first 2e participants (e = k - p)
// pair up, the odd one of each pair (the keeper) standing for both.
struct Fold {
    explicit Fold(uint32_t k) : k(k) {
        p = 1;
        while (p * 2 <= k) p *= 2;
        e = k - p;
        for (uint32_t x = p; x > 1; x /= 2) ++levels;
    }
    uint32_t keeper(uint32_t v) const { return v < e ? 2 * v + 1 : v + e; }
    // Virtual rank v stands for blocks [first(v), first(v + 1)).
    uint32_t first(uint32_t v) const { return v >= p ? k : (v < e ? 2 * v : v + e); }
    uint32_t k, p = 1, e = 0, levels = 0;
};

}  // namespace

size_t rs_mesh(PlanBuilder& pb, size_t s0, const RsSpec& s) {
    const uint32_t k = static_cast<uint32_t>(s.ranks.size());
    if (k == 1) {
        pb.copy(s0, s.ranks[0], s.dst(0), s.src(0, 0), s.size[0]);
        return s0 + 1;
    }
    const uint64_t maxb = max_of(s.size);
    const uint64_t base = pb.alloc(static_cast<uint64_t>(k - 1) * maxb);
    for (uint32_t b = 0; b < k; ++b) {
        std::vector<Region> srcs;
        for (uint32_t q = 0; q < k; ++q) {
            if (q == b) {
                srcs.push_back(s.src(b, b));
                continue;
            }
            const Region slot{Buf::Scratch, base + (q < b ? q : q - 1) * maxb};
            pb.xfer(s0, s.ranks[q], s.src(q, b), s.ranks[b], slot, s.size[b]);
            srcs.push_back(slot);
        }
        pb.reduce(s0, s.ranks[b], s.dst(b), std::move(srcs), s.size[b]);
    }
    return s0 + 1;
}

size_t rs_ring(PlanBuilder& pb, size_t s0, const RsSpec& s, bool reverse) {
    const uint32_t k = static_cast<uint32_t>(s.ranks.size());
    if (k == 1) {
        pb.copy(s0, s.ranks[0], s.dst(0), s.src(0, 0), s.size[0]);
        return s0 + 1;
    }
    const uint64_t maxb = max_of(s.size);
    const uint64_t base = pb.alloc(static_cast<uint64_t>(k - 1) * maxb);
    std::vector<std::vector<Region>> cur(k, std::vector<Region>(k));
    for (uint32_t q = 0; q < k; ++q)
        for (uint32_t b = 0; b < k; ++b) cur[q][b] = s.src(q, b);
    for (uint32_t i = 0; i + 1 < k; ++i) {
        const Region slot{Buf::Scratch, base + i * maxb};
        for (uint32_t q = 0; q < k; ++q) {
            const uint32_t to = reverse ? (q + k - 1) % k : (q + 1) % k;
            const uint32_t b = reverse ? (q + i + 1) % k : (q + k - i - 1) % k;
            pb.xfer(s0 + i, s.ranks[q], cur[q][b], s.ranks[to], slot, s.size[b]);
            const Region d = i + 2 == k ? s.dst(b) : slot;
            pb.reduce(s0 + i, s.ranks[to], d, {slot, s.src(to, b)}, s.size[b]);
            cur[to][b] = d;
        }
    }
    return s0 + k - 1;
}

size_t rs_hd(PlanBuilder& pb, size_t s0, const RsSpec& s) {
    const uint32_t k = static_cast<uint32_t>(s.ranks.size());
    if (k == 1) {
        pb.copy(s0, s.ranks[0], s.dst(0), s.src(0, 0), s.size[0]);
        return s0 + 1;
    }
    const Fold f(k);
    std::vector<uint64_t> off = offsets(s.size);
    off.push_back(off.back() + s.size.back());
    std::vector<std::vector<Region>> cur(k, std::vector<Region>(k));
    for (uint32_t q = 0; q < k; ++q)
        for (uint32_t b = 0; b < k; ++b) cur[q][b] = s.src(q, b);
    size_t t = s0;
    if (f.e > 0) {
        const uint64_t fold = pb.alloc(off[k]);
        for (uint32_t v = 0; v < f.e; ++v) {
            const uint32_t x = 2 * v, y = 2 * v + 1;
            for (uint32_t b = 0; b < k; ++b) {
                const Region r{Buf::Scratch, fold + off[b]};
                pb.xfer(t, s.ranks[x], cur[x][b], s.ranks[y], r, s.size[b]);
                pb.reduce(t, s.ranks[y], r, {r, cur[y][b]}, s.size[b]);
                cur[y][b] = r;
            }
        }
        ++t;
    }
    for (uint32_t j = 0; j < f.levels; ++j) {
        const uint32_t d = f.p >> (j + 1);
        uint64_t len = 0;
        for (uint32_t h = 0; h < f.p; h += d) len = std::max(len, off[f.first(h + d)] - off[f.first(h)]);
        const uint64_t base = pb.alloc(len);
        for (uint32_t v = 0; v < f.p; ++v) {
            const uint32_t w = v ^ d, kv = f.keeper(v), kw = f.keeper(w);
            const uint32_t hw = w / d * d;
            for (uint32_t b = f.first(hw); b < f.first(hw + d); ++b)
                pb.xfer(t + j, s.ranks[kv], cur[kv][b], s.ranks[kw], {Buf::Scratch, base + off[b] - off[f.first(hw)]}, s.size[b]);
        }
        for (uint32_t v = 0; v < f.p; ++v) {
            const uint32_t w = v ^ d, kv = f.keeper(v);
            const uint32_t hv = v / d * d;
            for (uint32_t b = f.first(hv); b < f.first(hv + d); ++b) {
                const Region recv{Buf::Scratch, base + off[b] - off[f.first(hv)]};
                const Region dst = j + 1 == f.levels && b == kv ? s.dst(b) : recv;
                std::vector<Region> srcs = v < w ? std::vector<Region>{cur[kv][b], recv} : std::vector<Region>{recv, cur[kv][b]};
                pb.reduce(t + j, s.ranks[kv], dst, std::move(srcs), s.size[b]);
                cur[kv][b] = dst;
            }
        }
    }
    t += f.levels;
    if (f.e > 0) {
        for (uint32_t v = 0; v < f.e; ++v) pb.xfer(t, s.ranks[2 * v + 1], cur[2 * v + 1][2 * v], s.ranks[2 * v], s.dst(2 * v), s.size[2 * v]);
        ++t;
    }
    return t;
}

size_t ag_mesh(PlanBuilder& pb, size_t s0, const AgSpec& s) {
    const uint32_t k = static_cast<uint32_t>(s.ranks.size());
    for (uint32_t b = 0; b < k; ++b)
        for (uint32_t q = 0; q < k; ++q)
            if (q != b) pb.xfer(s0, s.ranks[b], s.pos(b, b), s.ranks[q], s.pos(q, b), s.size[b]);
    return k > 1 ? s0 + 1 : s0;
}

size_t ag_ring(PlanBuilder& pb, size_t s0, const AgSpec& s, bool reverse) {
    const uint32_t k = static_cast<uint32_t>(s.ranks.size());
    for (uint32_t i = 0; i + 1 < k; ++i) {
        for (uint32_t q = 0; q < k; ++q) {
            const uint32_t to = reverse ? (q + k - 1) % k : (q + 1) % k;
            const uint32_t b = reverse ? (q + i) % k : (q + k - i) % k;
            pb.xfer(s0 + i, s.ranks[q], s.pos(q, b), s.ranks[to], s.pos(to, b), s.size[b]);
        }
    }
    return s0 + (k > 1 ? k - 1 : 0);
}

size_t ag_hd(PlanBuilder& pb, size_t s0, const AgSpec& s) {
    const uint32_t k = static_cast<uint32_t>(s.ranks.size());
    if (k == 1) return s0;
    const Fold f(k);
    size_t t = s0;
    if (f.e > 0) {
        for (uint32_t v = 0; v < f.e; ++v) pb.xfer(t, s.ranks[2 * v], s.pos(2 * v, 2 * v), s.ranks[2 * v + 1], s.pos(2 * v + 1, 2 * v), s.size[2 * v]);
        ++t;
    }
    for (uint32_t j = 0; j < f.levels; ++j) {
        const uint32_t d = 1u << j;
        for (uint32_t v = 0; v < f.p; ++v) {
            const uint32_t w = v ^ d, kv = f.keeper(v), kw = f.keeper(w);
            const uint32_t hv = v / d * d;
            for (uint32_t b = f.first(hv); b < f.first(hv + d); ++b)
                pb.xfer(t + j, s.ranks[kv], s.pos(kv, b), s.ranks[kw], s.pos(kw, b), s.size[b]);
        }
    }
    t += f.levels;
    if (f.e > 0) {
        for (uint32_t v = 0; v < f.e; ++v)
            for (uint32_t b = 0; b < k; ++b)
                if (b != 2 * v) pb.xfer(t, s.ranks[2 * v + 1], s.pos(2 * v + 1, b), s.ranks[2 * v], s.pos(2 * v, b), s.size[b]);
        ++t;
    }
    return t;
}

namespace {
// Double ring: the first part of every block goes around one way, the rest the other way.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> halves(const std::vector<uint64_t>& size) {
    std::vector<uint64_t> a(size.size()), b(size.size());
    for (size_t i = 0; i < size.size(); ++i) {
        a[i] = size[i] / 2;
        b[i] = size[i] - a[i];
    }
    return {a, b};
}
}  // namespace

size_t run_rs(PlanBuilder& pb, size_t s0, Algo a, const RsSpec& s) {
    switch (a) {
        case Algo::Mesh: return rs_mesh(pb, s0, s);
        case Algo::HalvingDoubling: return rs_hd(pb, s0, s);
        case Algo::DoubleRing: {
            // Named, not a structured binding: clang 14 cannot capture bindings in lambdas.
            const auto hh = halves(s.size);
            const std::vector<uint64_t>& ha = hh.first;
            const std::vector<uint64_t>& hb = hh.second;
            RsSpec first{s.ranks, ha, s.src, s.dst};
            RsSpec second{s.ranks, hb, [&](uint32_t q, uint32_t b) { return s.src(q, b).at(ha[b]); },
                          [&](uint32_t b) { return s.dst(b).at(ha[b]); }};
            return std::max(rs_ring(pb, s0, first, false), rs_ring(pb, s0, second, true));
        }
        default: return rs_ring(pb, s0, s, false);
    }
}

size_t run_ag(PlanBuilder& pb, size_t s0, Algo a, const AgSpec& s) {
    switch (a) {
        case Algo::Mesh: return ag_mesh(pb, s0, s);
        case Algo::HalvingDoubling: return ag_hd(pb, s0, s);
        case Algo::DoubleRing: {
            const auto hh = halves(s.size);
            const std::vector<uint64_t>& ha = hh.first;
            const std::vector<uint64_t>& hb = hh.second;
            AgSpec first{s.ranks, ha, s.pos};
            AgSpec second{s.ranks, hb, [&](uint32_t q, uint32_t b) { return s.pos(q, b).at(ha[b]); }};
            return std::max(ag_ring(pb, s0, first, false), ag_ring(pb, s0, second, true));
        }
        default: return ag_ring(pb, s0, s, false);
    }
}

namespace {

// Chain from the root along `order` (participant indices), chunk by chunk.
size_t chain(PlanBuilder& pb, size_t s0, const std::vector<uint32_t>& ranks, const std::vector<uint32_t>& order,
             const std::vector<uint64_t>& size, uint64_t first) {
    const uint32_t n = static_cast<uint32_t>(order.size());
    const uint32_t chunks = static_cast<uint32_t>(size.size());
    const std::vector<uint64_t> off = offsets(size);
    if (n < 2) return s0;
    for (uint32_t t = 0; t + 2 < n + chunks; ++t) {
        for (uint32_t d = 0; d + 1 < n; ++d) {
            if (t < d || t - d >= chunks) continue;
            const uint32_t m = t - d;
            const Region r{Buf::Out, first + off[m]};
            pb.xfer(s0 + t, ranks[order[d]], r, ranks[order[d + 1]], r, size[m]);
        }
    }
    return s0 + n + chunks - 2;
}

}  // namespace

size_t bcast(PlanBuilder& pb, size_t s0, Algo a, const std::vector<uint32_t>& ranks, uint32_t root, uint64_t count,
             uint64_t align) {
    const uint32_t n = static_cast<uint32_t>(ranks.size());
    if (n < 2) return s0;
    std::vector<uint32_t> fwd(n), rev(n);
    for (uint32_t d = 0; d < n; ++d) {
        fwd[d] = (root + d) % n;
        rev[d] = (root + n - d) % n;
    }
    switch (a) {
        case Algo::Mesh: {  // scatter, then all-gather among the others (the root has it all)
            const std::vector<uint64_t> size = split(count, n, align);
            const std::vector<uint64_t> off = offsets(size);
            for (uint32_t b = 0; b < n; ++b)
                if (b != root) pb.xfer(s0, ranks[root], {Buf::Out, off[b]}, ranks[b], {Buf::Out, off[b]}, size[b]);
            for (uint32_t b = 0; b < n; ++b)
                for (uint32_t q = 0; q < n; ++q)
                    if (q != root && q != b)
                        pb.xfer(s0 + 1, ranks[b], {Buf::Out, off[b]}, ranks[q], {Buf::Out, off[b]}, size[b]);
            return n > 2 ? s0 + 2 : s0 + 1;
        }
        case Algo::HalvingDoubling: {  // binomial tree of the whole message
            size_t t = s0;
            for (uint32_t span = 1; span < n; span *= 2, ++t)
                for (uint32_t v = 0; v < span && v + span < n; ++v)
                    pb.xfer(t, ranks[fwd[v]], {Buf::Out, 0}, ranks[fwd[v + span]], {Buf::Out, 0}, count);
            return t;
        }
        case Algo::DoubleRing: {
            const uint64_t half = count / 2;
            const size_t e1 = chain(pb, s0, ranks, fwd, split(half, n, align), 0);
            const size_t e2 = chain(pb, s0, ranks, rev, split(count - half, n, align), half);
            return std::max(e1, e2);
        }
        default: return chain(pb, s0, ranks, fwd, split(count, n, align), 0);
    }
}

size_t reduce_to(PlanBuilder& pb, size_t s0, Algo a, const std::vector<uint32_t>& ranks, uint32_t root,
                 uint64_t count, uint64_t align, const std::function<Region(uint32_t q)>& input) {
    const uint32_t n = static_cast<uint32_t>(ranks.size());
    if (a == Algo::HalvingDoubling) {  // binomial tree into Out[0, count)
        for (uint32_t q = 0; q < n; ++q) pb.copy(s0, ranks[q], {Buf::Out, 0}, input(q), count);
        size_t t = s0 + 1;
        for (uint32_t span = 1; span < n; span *= 2, ++t) {
            const uint64_t slot = pb.alloc(count);
            for (uint32_t v = span; v < n; v += 2 * span) {
                const uint32_t from = (root + v) % n, to = (root + v - span) % n;
                pb.xfer(t, ranks[from], {Buf::Out, 0}, ranks[to], {Buf::Scratch, slot}, count);
                pb.reduce(t, ranks[to], {Buf::Out, 0}, {{Buf::Out, 0}, {Buf::Scratch, slot}}, count);
            }
        }
        return t;
    }
    // Reduce-scatter, then the blocks to the root (all-gather for rings: the root's share of it
    // takes as long on a ring).
    const std::vector<uint64_t> size = split(count, n, align);
    const std::vector<uint64_t> off = offsets(size);
    const RsSpec rs{ranks, size, [&](uint32_t q, uint32_t b) { return input(q).at(off[b]); },
                    [&](uint32_t b) { return Region{Buf::Out, off[b]}; }};
    const size_t t = run_rs(pb, s0, a, rs);
    if (a == Algo::Mesh) {
        for (uint32_t b = 0; b < n; ++b)
            if (b != root) pb.xfer(t, ranks[b], {Buf::Out, off[b]}, ranks[root], {Buf::Out, off[b]}, size[b]);
        return n > 1 ? t + 1 : t;
    }
    return run_ag(pb, t, a, {ranks, size, [&](uint32_t, uint32_t b) { return Region{Buf::Out, off[b]}; }});
}

}  // namespace sfumato::comm
