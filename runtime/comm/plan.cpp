#include "runtime/comm/plan.h"

#include <algorithm>
#include <array>
#include <limits>

namespace sfumato::comm {

const char* buf_name(Buf b) {
    constexpr const char* names[] = {"in", "out", "scratch"};
    return names[static_cast<int>(b)];
}

uint64_t PlanBuilder::alloc(uint64_t elems) {
    const uint64_t at = m_plan.scratch;
    m_plan.scratch += elems;
    return at;
}

Step& PlanBuilder::step(size_t s) {
    if (m_plan.steps.size() <= s) m_plan.steps.resize(s + 1);
    return m_plan.steps[s];
}

void PlanBuilder::xfer(size_t s, uint32_t src, Region from, uint32_t dst, Region to, uint64_t count) {
    if (count == 0) return;
    step(s).xfers.push_back({src, dst, from, to, count});
}

void PlanBuilder::xfer_reduce(size_t s, uint32_t src, Region from, uint32_t dst, Region to, uint64_t count) {
    if (count == 0) return;
    step(s).xfers.push_back({src, dst, from, to, count, true});
}

void PlanBuilder::xfer_pull(size_t s, uint32_t src, Region from, uint32_t dst, Region to, uint64_t count) {
    if (count == 0) return;
    step(s).xfers.push_back({src, dst, from, to, count, false, true});
}

void PlanBuilder::copy(size_t s, uint32_t rank, Region dst, Region src, uint64_t count) {
    if (count == 0 || dst == src) return;
    step(s).ops.push_back({LocalOp::Kind::Copy, rank, dst, {src}, count});
}

void PlanBuilder::reduce(size_t s, uint32_t rank, Region dst, std::vector<Region> srcs, uint64_t count) {
    if (count == 0) return;
    if (srcs.size() == 1) return copy(s, rank, dst, srcs[0], count);
    step(s).ops.push_back({LocalOp::Kind::Reduce, rank, dst, std::move(srcs), count});
}

namespace {
bool adjacent(const Region& a, uint64_t n, const Region& b) { return a.buf == b.buf && a.off + n == b.off; }
}  // namespace

Plan PlanBuilder::finish(Algo algo) {
    Plan p = std::move(m_plan);
    p.algo = algo;
    for (Step& st : p.steps) {
        std::vector<Xfer> xs;
        for (const Xfer& x : st.xfers) {
            if (!xs.empty()) {
                Xfer& l = xs.back();
                if (l.src == x.src && l.dst == x.dst && l.reduce == x.reduce && l.pull == x.pull && adjacent(l.from, l.count, x.from) &&
                    adjacent(l.to, l.count, x.to)) {
                    l.count += x.count;
                    continue;
                }
            }
            xs.push_back(x);
        }
        st.xfers = std::move(xs);
        std::vector<LocalOp> os;
        for (const LocalOp& o : st.ops) {
            if (!os.empty()) {
                LocalOp& l = os.back();
                bool ok = l.rank == o.rank && l.kind == o.kind && l.srcs.size() == o.srcs.size() &&
                          adjacent(l.dst, l.count, o.dst);
                for (size_t i = 0; ok && i < o.srcs.size(); ++i) ok = adjacent(l.srcs[i], l.count, o.srcs[i]);
                if (ok) {
                    l.count += o.count;
                    continue;
                }
            }
            os.push_back(o);
        }
        st.ops = std::move(os);
    }
    return p;
}

std::vector<uint64_t> split(uint64_t count, uint32_t parts, uint64_t align) {
    std::vector<uint64_t> s(parts, 0);
    if (parts == 0) return s;
    uint64_t base = (count + parts - 1) / parts;
    if (align > 1 && count >= static_cast<uint64_t>(parts) * align) base = (base + align - 1) / align * align;
    uint64_t left = count;
    for (uint32_t i = 0; i < parts; ++i) {
        s[i] = std::min(base, left);
        left -= s[i];
    }
    return s;
}

std::vector<uint64_t> offsets(const std::vector<uint64_t>& sizes) {
    std::vector<uint64_t> o(sizes.size(), 0);
    for (size_t i = 1; i < sizes.size(); ++i) o[i] = o[i - 1] + sizes[i - 1];
    return o;
}

namespace {

// Per element of every rank's buffers: the step of the transfer that wrote it (or none).
class Hazards {
public:
    static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
    explicit Hazards(const Plan& p, const HostBuffers& b)
        : m_written(p.ranks), m_touched(p.ranks), m_reduced(p.ranks), m_read(p.ranks) {
        for (uint32_t r = 0; r < p.ranks; ++r) {
            const size_t sizes[3] = {b.in[r].size(), b.out[r].size(), static_cast<size_t>(p.scratch)};
            for (int k = 0; k < 3; ++k) {
                m_reduced[r][k].assign(sizes[k], 0);
                m_read[r][k].assign(sizes[k], 0);
            }
            m_written[r][0].assign(b.in[r].size(), kNone);
            m_written[r][1].assign(b.out[r].size(), kNone);
            m_written[r][2].assign(p.scratch, kNone);
            m_touched[r][0].assign(b.in[r].size(), kNone);
            m_touched[r][1].assign(b.out[r].size(), kNone);
            m_touched[r][2].assign(p.scratch, kNone);
        }
    }
    // A transfer into (rank, region) at step s. A reducing one needs the element set by a local
    // operation of an earlier step and not yet read; several may reduce into it in one step.
    std::string written(uint32_t r, const Region& g, uint64_t n, int64_t s, bool reduce) {
        auto& w = m_written[r][static_cast<int>(g.buf)];
        auto& t = m_touched[r][static_cast<int>(g.buf)];
        auto& red = m_reduced[r][static_cast<int>(g.buf)];
        for (uint64_t i = g.off; i < g.off + n; ++i) {
            if (reduce) {
                if (w[i] != kNone && !(w[i] == s && red[i]))
                    return where(r, g.buf, i) + " is reduced into at step " + std::to_string(s) + " after another transfer";
                if (t[i] == kNone || t[i] >= s || m_read[r][static_cast<int>(g.buf)][i])
                    return where(r, g.buf, i) + " is reduced into without a value set by an earlier step";
                w[i] = s;
                red[i] = 1;
                continue;
            }
            if (w[i] != kNone) return where(r, g.buf, i) + " is the destination of two transfers";
            if (t[i] != kNone && t[i] < s) return where(r, g.buf, i) + " is used before the transfer into it arrives";
            w[i] = s;
        }
        return {};
    }
    // Marks a local operation's sources as read (a later reducing transfer into them would be lost).
    void read(uint32_t r, const Region& g, uint64_t n) {
        auto& rd = m_read[r][static_cast<int>(g.buf)];
        for (uint64_t i = g.off; i < g.off + n; ++i) rd[i] = 1;
    }
    // A local access (op) at step s, or a transfer reading it as its source (forward = true).
    std::string used(uint32_t r, const Region& g, uint64_t n, int64_t s, bool forward) {
        auto& w = m_written[r][static_cast<int>(g.buf)];
        auto& t = m_touched[r][static_cast<int>(g.buf)];
        for (uint64_t i = g.off; i < g.off + n; ++i) {
            if (w[i] != kNone && (forward ? w[i] >= s : w[i] > s))
                return where(r, g.buf, i) + " is used at step " + std::to_string(s) + " before the transfer of step " +
                       std::to_string(w[i]) + " into it";
            if (t[i] == kNone || t[i] > s) t[i] = s;
        }
        return {};
    }

private:
    static std::string where(uint32_t r, Buf b, uint64_t i) {
        return std::string("rank ") + std::to_string(r) + " " + buf_name(b) + "[" + std::to_string(i) + "]";
    }
    std::vector<std::array<std::vector<int64_t>, 3>> m_written, m_touched;
    std::vector<std::array<std::vector<uint8_t>, 3>> m_reduced, m_read;
};

double apply(RedOp op, double a, double b) {
    switch (op) {
        case RedOp::Sum: return a + b;
        case RedOp::Max: return std::max(a, b);
        case RedOp::Min: return std::min(a, b);
    }
    return a;
}

}  // namespace

std::string run_on_host(const Plan& p, RedOp op, HostBuffers& b) {
    std::vector<std::vector<double>> scratch(p.ranks, std::vector<double>(p.scratch, 0.0));
    auto buf = [&](uint32_t r, Buf k) -> std::vector<double>& {
        return k == Buf::In ? b.in[r] : k == Buf::Out ? b.out[r] : scratch[r];
    };
    auto fits = [&](uint32_t r, const Region& g, uint64_t n) { return g.off + n <= buf(r, g.buf).size(); };
    Hazards hz(p, b);
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const Step& st = p.steps[s];
        const int64_t si = static_cast<int64_t>(s);
        // Transfers read their sources as of the end of the previous step.
        std::vector<std::vector<double>> data;
        for (const Xfer& x : st.xfers) {
            if (x.src >= p.ranks || x.dst >= p.ranks || x.src == x.dst)
                return "step " + std::to_string(s) + ": transfer between ranks " + std::to_string(x.src) + " and " +
                       std::to_string(x.dst);
            if (!fits(x.src, x.from, x.count) || !fits(x.dst, x.to, x.count))
                return "step " + std::to_string(s) + ": transfer outside a buffer";
            if (auto e = hz.used(x.src, x.from, x.count, si, true); !e.empty()) return "step " + std::to_string(s) + ": " + e;
            const auto& src = buf(x.src, x.from.buf);
            data.emplace_back(src.begin() + static_cast<int64_t>(x.from.off),
                              src.begin() + static_cast<int64_t>(x.from.off + x.count));
        }
        for (size_t i = 0; i < st.xfers.size(); ++i) {
            const Xfer& x = st.xfers[i];
            if (auto e = hz.written(x.dst, x.to, x.count, si, x.reduce); !e.empty()) return "step " + std::to_string(s) + ": " + e;
            auto& dst = buf(x.dst, x.to.buf);
            if (x.reduce) {
                for (uint64_t k = 0; k < x.count; ++k) dst[x.to.off + k] = apply(op, dst[x.to.off + k], data[i][k]);
            } else {
                std::copy(data[i].begin(), data[i].end(), dst.begin() + static_cast<int64_t>(x.to.off));
            }
        }
        if (p.direct) {  // a direct plan's local operations run beside the step's transfers
            auto overlaps = [](const Region& a, uint64_t na, const Region& b, uint64_t nb) {
                return a.buf == b.buf && a.off < b.off + nb && b.off < a.off + na;
            };
            for (const LocalOp& o : st.ops)
                for (const Xfer& x : st.xfers) {
                    bool clash = x.dst == o.rank && overlaps(o.dst, o.count, x.to, x.count);
                    clash = clash || (x.src == o.rank && overlaps(o.dst, o.count, x.from, x.count));
                    for (const Region& g : o.srcs) clash = clash || (x.dst == o.rank && overlaps(g, o.count, x.to, x.count));
                    if (clash)
                        return "step " + std::to_string(s) + ": a local operation of rank " + std::to_string(o.rank) +
                               " touches a region the step's transfers use (a direct plan runs them together)";
                }
        }
        for (const LocalOp& o : st.ops) {
            if (o.rank >= p.ranks || o.srcs.empty()) return "step " + std::to_string(s) + ": bad local operation";
            if (!fits(o.rank, o.dst, o.count)) return "step " + std::to_string(s) + ": local operation outside a buffer";
            for (const Region& g : o.srcs) {
                if (!fits(o.rank, g, o.count)) return "step " + std::to_string(s) + ": local operation outside a buffer";
                if (auto e = hz.used(o.rank, g, o.count, si, false); !e.empty()) return "step " + std::to_string(s) + ": " + e;
                hz.read(o.rank, g, o.count);
            }
            if (auto e = hz.used(o.rank, o.dst, o.count, si, false); !e.empty()) return "step " + std::to_string(s) + ": " + e;
            std::vector<double> acc(buf(o.rank, o.srcs[0].buf).begin() + static_cast<int64_t>(o.srcs[0].off),
                                    buf(o.rank, o.srcs[0].buf).begin() + static_cast<int64_t>(o.srcs[0].off + o.count));
            for (size_t k = 1; k < o.srcs.size(); ++k) {
                const auto& v = buf(o.rank, o.srcs[k].buf);
                for (uint64_t i = 0; i < o.count; ++i) acc[i] = apply(op, acc[i], v[o.srcs[k].off + i]);
            }
            std::copy(acc.begin(), acc.end(), buf(o.rank, o.dst.buf).begin() + static_cast<int64_t>(o.dst.off));
        }
    }
    return {};
}

}  // namespace sfumato::comm
