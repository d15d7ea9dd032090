// The six collectives composed from the building blocks (comm/algorithms.h), flat and
// hierarchical.
#include <algorithm>
#include <map>

#include "runtime/comm/algorithms.h"
#include "sim/error.h"

namespace sfumato::comm {

uint64_t in_elems(Op op, uint32_t ranks, uint64_t count) {
    return op == Op::ReduceScatter || op == Op::AllToAll ? count * ranks : count;
}

uint64_t out_elems(Op op, uint32_t ranks, uint64_t count) {
    return op == Op::AllGather || op == Op::AllToAll ? count * ranks : count;
}

namespace {

std::vector<uint32_t> iota(uint32_t n) {
    std::vector<uint32_t> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

bool pow2(uint32_t n) { return n && !(n & (n - 1)); }

// Groups of ranks for hierarchical plans: groups[G][l].
std::vector<std::vector<uint32_t>> groups_of(const PlanRequest& r) {
    if (r.group.size() != r.ranks) throw InputError("hierarchical: no group for every rank");
    std::map<uint32_t, size_t> index;
    std::vector<std::vector<uint32_t>> g;
    for (uint32_t q = 0; q < r.ranks; ++q) {
        auto [it, fresh] = index.try_emplace(r.group[q], g.size());
        if (fresh) g.emplace_back();
        g[it->second].push_back(q);
    }
    for (const auto& x : g)
        if (x.size() != g[0].size())
            throw InputError("algorithm hierarchical needs the same number of ranks in every server (or link group); "
                             "these ranks make groups of " + std::to_string(g[0].size()) + " and " +
                             std::to_string(x.size()));
    return g;
}

// The vendor's direct mesh forms on a fully connected server (its single-operator mesh
// executors): no staging, In and Out are the user's buffers. Reduce-scatter: each rank copies its
// own block into its communication buffer (Scratch), then writes its contribution to every other
// block straight from its input into that block owner's buffer with the SDMA's inline reduction;
// all-gather: each rank copies its own block to its output and pulls every other rank's block
// from that rank's buffer into its output. All-reduce is the two in turn.
size_t direct_mesh(PlanBuilder& pb, const PlanRequest& r) {
    const uint32_t n = r.ranks;
    const uint64_t c = r.count;
    pb.set_direct();
    switch (r.op) {
        case Op::AllReduce: {
            const std::vector<uint64_t> size = split(c, n, r.align);
            const std::vector<uint64_t> off = offsets(size);
            const uint64_t h = pb.alloc(c);  // block b of rank b's buffer at h + off[b]
            for (uint32_t b = 0; b < n; ++b) {
                pb.copy(0, b, {Buf::Scratch, h + off[b]}, {Buf::In, off[b]}, size[b]);
                for (uint32_t q = 0; q < n; ++q)
                    if (q != b) pb.xfer_reduce(1, q, {Buf::In, off[b]}, b, {Buf::Scratch, h + off[b]}, size[b]);
            }
            for (uint32_t b = 0; b < n; ++b) {
                pb.copy(2, b, {Buf::Out, off[b]}, {Buf::Scratch, h + off[b]}, size[b]);
                for (uint32_t q = 0; q < n; ++q)
                    if (q != b) pb.xfer_pull(2, b, {Buf::Scratch, h + off[b]}, q, {Buf::Out, off[b]}, size[b]);
            }
            return 3;
        }
        case Op::ReduceScatter: {
            const uint64_t h = pb.alloc(c);
            for (uint32_t b = 0; b < n; ++b) {
                pb.copy(0, b, {Buf::Scratch, h}, {Buf::In, b * c}, c);
                for (uint32_t q = 0; q < n; ++q)
                    if (q != b) pb.xfer_reduce(1, q, {Buf::In, b * c}, b, {Buf::Scratch, h}, c);
                pb.copy(2, b, {Buf::Out, 0}, {Buf::Scratch, h}, c);
            }
            return 3;
        }
        case Op::AllGather: {
            // The own block is staged in Scratch, where the others read it (the user's input
            // is not visible to peers).
            const uint64_t h = pb.alloc(c);
            for (uint32_t b = 0; b < n; ++b) {
                pb.copy(0, b, {Buf::Scratch, h}, {Buf::In, 0}, c);
                pb.copy(1, b, {Buf::Out, b * c}, {Buf::Scratch, h}, c);
                for (uint32_t q = 0; q < n; ++q)
                    if (q != b) pb.xfer_pull(1, b, {Buf::Scratch, h}, q, {Buf::Out, b * c}, c);
            }
            return 2;
        }
        default: return 0;
    }
}

size_t flat(PlanBuilder& pb, const PlanRequest& r) {
    const uint32_t n = r.ranks;
    const uint64_t c = r.count;
    const std::vector<uint32_t> all = iota(n);
    if (r.algo == Algo::Mesh && n > 1 &&
        (r.op == Op::AllReduce || r.op == Op::ReduceScatter || r.op == Op::AllGather))
        return direct_mesh(pb, r);
    switch (r.op) {
        case Op::AllReduce: {
            const std::vector<uint64_t> size = split(c, n, r.align);
            const std::vector<uint64_t> off = offsets(size);
            const size_t t = run_rs(pb, 0, r.algo, {all, size, [&](uint32_t, uint32_t b) { return Region{Buf::In, off[b]}; },
                                                    [&](uint32_t b) { return Region{Buf::Out, off[b]}; }});
            return run_ag(pb, t, r.algo, {all, size, [&](uint32_t, uint32_t b) { return Region{Buf::Out, off[b]}; }});
        }
        case Op::ReduceScatter:
            return run_rs(pb, 0, r.algo, {all, std::vector<uint64_t>(n, c), [&](uint32_t, uint32_t b) { return Region{Buf::In, b * c}; },
                                          [&](uint32_t) { return Region{Buf::Out, 0}; }});
        case Op::AllGather:
            for (uint32_t q = 0; q < n; ++q) pb.copy(0, q, {Buf::Out, q * c}, {Buf::In, 0}, c);
            return run_ag(pb, 1, r.algo, {all, std::vector<uint64_t>(n, c), [&](uint32_t, uint32_t b) { return Region{Buf::Out, b * c}; }});
        case Op::Broadcast:
            pb.copy(0, r.root, {Buf::Out, 0}, {Buf::In, 0}, c);
            return bcast(pb, 1, r.algo, all, r.root, c, r.align);
        case Op::Reduce:
            return reduce_to(pb, 0, r.algo, all, r.root, c, r.align, [](uint32_t) { return Region{Buf::In, 0}; });
        case Op::AllToAll: {
            for (uint32_t q = 0; q < n; ++q) pb.copy(0, q, {Buf::Out, q * c}, {Buf::In, q * c}, c);
            if (r.algo == Algo::Mesh || r.algo == Algo::Hierarchical) {
                for (uint32_t q = 0; q < n; ++q)
                    for (uint32_t j = 0; j < n; ++j)
                        if (j != q) pb.xfer(0, q, {Buf::In, j * c}, j, {Buf::Out, q * c}, c);
                return 1;
            }
            // Pairwise exchanges, one peer per step (XOR partners for halving-doubling on a power
            // of two, shifts otherwise; double ring: half of each block each way).
            const uint64_t half = r.algo == Algo::DoubleRing ? c / 2 : c;
            for (uint32_t i = 1; i < n; ++i) {
                for (uint32_t q = 0; q < n; ++q) {
                    const uint32_t j = r.algo == Algo::HalvingDoubling && pow2(n) ? q ^ i : (q + i) % n;
                    pb.xfer(i - 1, q, {Buf::In, j * c}, j, {Buf::Out, q * c}, half);
                    if (half < c) {
                        const uint32_t k = (q + n - i) % n;
                        pb.xfer(i - 1, q, {Buf::In, k * c + half}, k, {Buf::Out, q * c + half}, c - half);
                    }
                }
            }
            return n - 1;
        }
    }
    return 0;
}

void hierarchical(PlanBuilder& pb, const PlanRequest& r) {
    const auto groups = groups_of(r);
    const uint32_t m = static_cast<uint32_t>(groups.size()), g = static_cast<uint32_t>(groups[0].size());
    const Algo intra = r.group_full_mesh ? Algo::Mesh : Algo::Ring;
    const Algo inter = pow2(m) ? Algo::HalvingDoubling : Algo::Ring;
    const uint64_t c = r.count;
    auto column = [&](uint32_t l) {  // the ranks with index l in every group
        std::vector<uint32_t> v;
        for (const auto& gr : groups) v.push_back(gr[l]);
        return v;
    };
    std::vector<uint32_t> gof(r.ranks), lof(r.ranks);
    for (uint32_t G = 0; G < m; ++G)
        for (uint32_t l = 0; l < g; ++l) gof[groups[G][l]] = G, lof[groups[G][l]] = l;
    switch (r.op) {
        case Op::AllReduce: {
            const std::vector<uint64_t> size = split(c, g, r.align);
            const std::vector<uint64_t> off = offsets(size);
            const uint64_t h = pb.alloc(c);
            size_t t1 = 0;
            for (const auto& gr : groups)
                t1 = std::max(t1, run_rs(pb, 0, intra, {gr, size, [&](uint32_t, uint32_t b) { return Region{Buf::In, off[b]}; },
                                                        [&](uint32_t b) { return Region{Buf::Scratch, h + off[b]}; }}));
            size_t t2 = t1;
            for (uint32_t l = 0; l < g; ++l) {
                const std::vector<uint64_t> sub = split(size[l], m, r.align);
                const std::vector<uint64_t> so = offsets(sub);
                const uint64_t base = off[l];
                const size_t e = run_rs(pb, t1, inter, {column(l), sub, [&](uint32_t, uint32_t b) { return Region{Buf::Scratch, h + base + so[b]}; },
                                                        [&](uint32_t b) { return Region{Buf::Out, base + so[b]}; }});
                t2 = std::max(t2, run_ag(pb, e, inter, {column(l), sub, [&](uint32_t, uint32_t b) { return Region{Buf::Out, base + so[b]}; }}));
            }
            for (const auto& gr : groups)
                run_ag(pb, t2, intra, {gr, size, [&](uint32_t, uint32_t b) { return Region{Buf::Out, off[b]}; }});
            return;
        }
        case Op::AllGather: {
            for (uint32_t q = 0; q < r.ranks; ++q) pb.copy(0, q, {Buf::Out, q * c}, {Buf::In, 0}, c);
            size_t t1 = 1;
            for (uint32_t l = 0; l < g; ++l) {
                const std::vector<uint32_t> col = column(l);
                t1 = std::max(t1, run_ag(pb, 1, inter, {col, std::vector<uint64_t>(m, c),
                                                        [&](uint32_t, uint32_t b) { return Region{Buf::Out, col[b] * c}; }}));
            }
            for (const auto& gr : groups)
                for (const auto& src : groups)
                    run_ag(pb, t1, intra, {gr, std::vector<uint64_t>(g, c), [&](uint32_t, uint32_t b) { return Region{Buf::Out, src[b] * c}; }});
            return;
        }
        case Op::ReduceScatter: {
            const uint64_t h = pb.alloc(static_cast<uint64_t>(m) * c);
            size_t t1 = 0;
            for (const auto& gr : groups)
                for (uint32_t G2 = 0; G2 < m; ++G2) {
                    const auto& dst = groups[G2];
                    t1 = std::max(t1, run_rs(pb, 0, intra, {gr, std::vector<uint64_t>(g, c),
                                                            [&](uint32_t, uint32_t b) { return Region{Buf::In, dst[b] * c}; },
                                                            [&](uint32_t) { return Region{Buf::Scratch, h + G2 * c}; }}));
                }
            for (uint32_t l = 0; l < g; ++l)
                run_rs(pb, t1, inter, {column(l), std::vector<uint64_t>(m, c),
                                       [&](uint32_t, uint32_t b) { return Region{Buf::Scratch, h + b * c}; },
                                       [&](uint32_t) { return Region{Buf::Out, 0}; }});
            return;
        }
        case Op::Broadcast: {
            pb.copy(0, r.root, {Buf::Out, 0}, {Buf::In, 0}, c);
            const uint32_t lr = lof[r.root];
            const size_t t1 = bcast(pb, 1, inter, column(lr), gof[r.root], c, r.align);
            for (const auto& gr : groups) bcast(pb, t1, intra, gr, lr, c, r.align);
            return;
        }
        case Op::Reduce: {
            const uint32_t lr = lof[r.root];
            size_t t1 = 0;
            for (const auto& gr : groups)
                t1 = std::max(t1, reduce_to(pb, 0, intra, gr, lr, c, r.align, [](uint32_t) { return Region{Buf::In, 0}; }));
            reduce_to(pb, t1, Algo::HalvingDoubling, column(lr), gof[r.root], c, r.align, [](uint32_t) { return Region{Buf::Out, 0}; });
            return;
        }
        case Op::AllToAll: flat(pb, r); return;
    }
}

}  // namespace

Plan build_plan(const PlanRequest& r) {
    if (r.algo == Algo::Auto) throw InputError("build_plan: the algorithm must be chosen first");
    if (r.ranks == 0) throw InputError("a collective needs at least one rank");
    if ((r.op == Op::Broadcast || r.op == Op::Reduce) && r.root >= r.ranks)
        throw InputError("root " + std::to_string(r.root) + " is not a rank of a " + std::to_string(r.ranks) + "-rank communicator");
    PlanBuilder pb(r.ranks);
    if (r.algo == Algo::Hierarchical) hierarchical(pb, r);
    else flat(pb, r);
    return pb.finish(r.algo);
}

}  // namespace sfumato::comm
