// Memory planning. Weights go once into one block, each at an aligned offset.
// Activations (graph inputs, node outputs, operator workspaces) share one
// arena: two tensors may overlap only if every use of one (its producer, its
// readers, the readers of its views) is complete before the other's producer
// starts, in the happens-before order of the stream plan (same-stream order
// plus event waits), so reuse stays correct on several streams. Graph outputs
// live until the end (they are read back), graph inputs from the start
// (uploaded before the first kernel). Placement is place_first_fit (planning.h),
// greedy by size, which the training step's plan shares.
#include <algorithm>

#include "runtime/graph/planning.h"

namespace sfumato::graph {

namespace {

uint64_t round_to(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct Item {
    int tensor;
    uint64_t bytes;
    int def;
    std::vector<int> uses;  // steps; kEnd = read back after the run
    uint64_t offset = 0;
};
constexpr int kEnd = 1 << 30;

}  // namespace

uint64_t place_first_fit(const std::vector<ArenaItem>& items, const std::function<bool(size_t, size_t)>& conflict,
                         std::vector<uint64_t>& offsets) {
    offsets.assign(items.size(), 0);
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (items[a].bytes != items[b].bytes) return items[a].bytes > items[b].bytes;
        return items[a].def < items[b].def;
    });
    std::vector<size_t> placed;
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    uint64_t size = 0;
    for (size_t i : order) {
        busy.clear();
        for (size_t j : placed)
            if (conflict(i, j)) busy.push_back({offsets[j], offsets[j] + items[j].bytes});
        std::sort(busy.begin(), busy.end());
        uint64_t off = 0;
        for (const auto& [b, e] : busy) {
            if (off + items[i].bytes <= b) break;
            off = std::max(off, e);
        }
        offsets[i] = off;
        placed.push_back(i);
        size = std::max(size, off + items[i].bytes);
    }
    return size;
}

void plan_memory(Plan& p) {
    const size_t n = p.steps.size();
    const size_t words = (n + 63) / 64;
    // anc[s]: steps guaranteed complete before step s starts.
    std::vector<std::vector<uint64_t>> anc(n, std::vector<uint64_t>(words, 0));
    std::vector<int> event_step(static_cast<size_t>(p.num_events), -1);
    std::vector<int> last_on(static_cast<size_t>(std::max(1, p.num_streams)), -1);
    auto absorb = [&](size_t s, int r) {
        if (r < 0) return;
        auto& a = anc[s];
        const auto& b = anc[static_cast<size_t>(r)];
        for (size_t w = 0; w < words; ++w) a[w] |= b[w];
        a[static_cast<size_t>(r) / 64] |= 1ull << (static_cast<size_t>(r) % 64);
    };
    for (size_t s = 0; s < n; ++s) {
        const PlanStep& st = p.steps[s];
        if (st.view) {
            // A view runs nothing: treat it as done once its input's producer is.
            for (int t : st.in)
                if (t >= 0 && p.tensors[static_cast<size_t>(t)].def_step >= 0)
                    absorb(s, p.tensors[static_cast<size_t>(t)].def_step);
            continue;
        }
        absorb(s, last_on[static_cast<size_t>(st.stream)]);
        for (int e : st.waits) absorb(s, event_step[static_cast<size_t>(e)]);
        last_on[static_cast<size_t>(st.stream)] = static_cast<int>(s);
        if (st.record >= 0) event_step[static_cast<size_t>(st.record)] = static_cast<int>(s);
    }
    auto before = [&](int u, int s) {  // u complete before s starts
        if (u == kEnd || s == kEnd) return false;
        if (u < 0) return s >= 0;
        if (s < 0) return false;
        return ((anc[static_cast<size_t>(s)][static_cast<size_t>(u) / 64] >> (static_cast<size_t>(u) % 64)) &
                1) != 0;
    };

    // Weights: those a step or the graph's outputs read (a weight replaced by its converted
    // copy, e.g. a Conv's W in NC1HWC0, is not placed: 0 bytes).
    std::vector<char> read(p.tensors.size(), 0);
    for (const PlanStep& s : p.steps)
        for (int t : s.in)
            if (t >= 0) read[static_cast<size_t>(t)] = 1;
    for (int t : p.outputs)
        if (t >= 0) read[static_cast<size_t>(t)] = 1;
    MemoryReport& m = p.memory;
    m = {};
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        PlanTensor& t = p.tensors[i];
        t.bytes = round_to(std::max<uint64_t>(1, t.ref.storage_bytes()), p.align);
        if (t.kind != PlanTensor::Kind::Weight) continue;
        if (!read[i]) {
            t.bytes = 0;
            continue;
        }
        t.offset = m.weight_bytes;
        m.weight_bytes += t.bytes;
    }
    // Activations: uses, through views.
    std::vector<int> item_of(p.tensors.size(), -1);
    std::vector<Item> items;
    auto root = [&](int t) {
        while (p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View)
            t = p.tensors[static_cast<size_t>(t)].base;
        return t;
    };
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlanTensor& t = p.tensors[i];
        if (t.kind != PlanTensor::Kind::Activation && t.kind != PlanTensor::Kind::Workspace) continue;
        item_of[i] = static_cast<int>(items.size());
        items.push_back({static_cast<int>(i),
                         t.bytes,
                         t.graph_input ? -1 : t.def_step,
                         {t.graph_input ? -1 : t.def_step}});
    }
    auto use = [&](int t, int step) {
        const int r = root(t);
        if (item_of[static_cast<size_t>(r)] >= 0)
            items[static_cast<size_t>(item_of[static_cast<size_t>(r)])].uses.push_back(step);
    };
    for (size_t s = 0; s < n; ++s) {
        const PlanStep& st = p.steps[s];
        for (int t : st.in)
            if (t >= 0) use(t, static_cast<int>(s));
        if (st.workspace >= 0) use(st.workspace, static_cast<int>(s));
    }
    for (int t : p.outputs) use(t, kEnd);
    for (Item& it : items) m.peak_bytes_no_reuse += it.bytes;

    auto ordered = [&](const Item& a,
                       const Item& b) {  // all of a's uses done before b starts
        for (int u : a.uses)
            if (!before(u, b.def)) return false;
        return true;
    };
    std::vector<ArenaItem> blocks;
    for (const Item& it : items) blocks.push_back({it.bytes, it.def});
    std::vector<uint64_t> offsets;
    m.peak_bytes = place_first_fit(
        blocks, [&](size_t a, size_t b) { return !ordered(items[a], items[b]) && !ordered(items[b], items[a]); },
        offsets);
    for (size_t i = 0; i < items.size(); ++i) items[i].offset = offsets[i];
    for (const Item& it : items) {
        PlanTensor& t = p.tensors[static_cast<size_t>(it.tensor)];
        t.offset = it.offset;
        t.last_step = *std::max_element(it.uses.begin(), it.uses.end());
        if (t.last_step == kEnd) t.last_step = static_cast<int>(n);
    }
    for (PlanTensor& t : p.tensors)
        if (t.kind == PlanTensor::Kind::View) {
            const PlanTensor& r =
                p.tensors[static_cast<size_t>(root(static_cast<int>(&t - p.tensors.data())))];
            t.offset = r.offset;
            t.bytes = 0;
        }
}

}  // namespace sfumato::graph
