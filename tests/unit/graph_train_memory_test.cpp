// The training step's memory plan (runtime/graph/train_memory.h) without a chip: the peak of an
// MLP's step derived by hand from its tensors' sizes and lifetimes, and, on a small ResNet-18
// (with and without recomputation), an independent walk over the forward steps and backward
// items that checks no two tensors whose lifetimes meet share a byte (an in-place output may take
// the bytes of the input its item reads last). The first-fit placement both memory plans share
// (planning.h) against a hand derivation and an independent greedy over the planned blocks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <map>

#include "runtime/graph/planning.h"
#include "runtime/graph/train_step.h"
#include "runtime/graph/zoo.h"

using namespace sfumato;
using namespace sfumato::graph;

namespace {

DeviceInfo train_test_device() {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 2, d.vector_cores = 4, d.aiv_per_aic = 2;
    d.ub_bytes = 192 * 1024, d.l1_bytes = 512 * 1024;
    d.l0a_bytes = d.l0b_bytes = 64 * 1024, d.l0c_bytes = 128 * 1024;
    d.gm_bytes = 1ull << 30;
    d.functional = true;
    return d;
}

uint64_t aligned512(uint64_t b) { return (b + 511) / 512 * 512; }

std::unique_ptr<TrainSetup> train_setup(const std::string& model, int64_t batch, Precision p,
                                        bool recompute = false) {
    auto ts = std::make_unique<TrainSetup>();
    ts->copt.precision = p;
    ts->opt.recompute = recompute;
    ts->compile(zoo_graph(model), batch, train_test_device());
    return ts;
}

// The arena tensors' byte ranges and lifetimes, walked from the plan and the items (not from the
// planner's blocks): forward step s at position s, backward item i at steps + i.
struct ArenaUse {
    uint64_t lo = 0, hi = 0;
    int def = 1 << 30, last = -2;
    std::string what;
};

std::vector<ArenaUse> arena_uses(const TrainSetup& ts) {
    const Plan& p = *ts.plan;
    const TrainPlan& tp = ts.tp;
    std::map<std::string, ArenaUse> u;
    auto proot = [&](int t) {
        while (p.tensors[static_cast<size_t>(t)].kind == PlanTensor::Kind::View)
            t = p.tensors[static_cast<size_t>(t)].base;
        return t;
    };
    std::function<std::string(int)> troot = [&](int t) -> std::string {
        const TrainTensor& x = tp.tensors[static_cast<size_t>(t)];
        if (x.kind == TrainTensor::Kind::Alias) return troot(x.alias);
        if (x.kind == TrainTensor::Kind::Forward) {
            const int r = proot(x.plan);
            const auto k = p.tensors[static_cast<size_t>(r)].kind;
            return k == PlanTensor::Kind::Activation || k == PlanTensor::Kind::Workspace
                       ? "p" + std::to_string(r)
                       : "";
        }
        if (x.kind == TrainTensor::Kind::WeightGrad) return "";
        return "t" + std::to_string(t);
    };
    auto touch = [&](const std::string& key, int pos) {
        if (key.empty()) return;
        ArenaUse& e = u[key];
        e.what = key;
        e.def = std::min(e.def, pos);
        e.last = std::max(e.last, pos);
    };
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        const PlanTensor& t = p.tensors[i];
        if (t.kind != PlanTensor::Kind::Activation && t.kind != PlanTensor::Kind::Workspace) continue;
        ArenaUse& e = u["p" + std::to_string(i)];
        e.lo = t.offset;
        e.hi = t.offset + t.ref.storage_bytes();
        if (t.graph_input) touch("p" + std::to_string(i), -1);
    }
    for (size_t i = 0; i < tp.tensors.size(); ++i) {
        const TrainTensor& t = tp.tensors[i];
        if (t.kind != TrainTensor::Kind::Grad && t.kind != TrainTensor::Kind::Const &&
            t.kind != TrainTensor::Kind::Target && t.kind != TrainTensor::Kind::Recompute)
            continue;
        ArenaUse& e = u["t" + std::to_string(i)];
        e.lo = t.offset;
        e.hi = t.offset + t.ref.storage_bytes();
        if (t.kind == TrainTensor::Kind::Const || t.kind == TrainTensor::Kind::Target)
            touch("t" + std::to_string(i), -1);
    }
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const PlanStep& st = p.steps[s];
        for (int t : st.in)
            if (t >= 0)
                touch(u.count("p" + std::to_string(proot(t))) ? "p" + std::to_string(proot(t)) : "",
                      static_cast<int>(s));
        for (int t : st.out)
            if (t >= 0)
                touch(u.count("p" + std::to_string(proot(t))) ? "p" + std::to_string(proot(t)) : "",
                      static_cast<int>(s));
        if (st.workspace >= 0) touch("p" + std::to_string(st.workspace), static_cast<int>(s));
    }
    const int f = static_cast<int>(p.steps.size());
    for (size_t i = 0; i < tp.backward.size(); ++i) {
        for (int t : tp.backward[i].in)
            if (t >= 0) touch(troot(t), f + static_cast<int>(i));
        for (int t : tp.backward[i].out) touch(troot(t), f + static_cast<int>(i));
    }
    std::vector<ArenaUse> v;
    for (auto& [k, e] : u)
        if (e.last >= -1) v.push_back(e);
    return v;
}

// Every pair of arena tensors that share a byte: one's last use before the other's first, or
// (in place) the same item reads the one for the last time and writes the other.
void check_no_overlap(const TrainSetup& ts) {
    const std::vector<ArenaUse> v = arena_uses(ts);
    const uint64_t arena = ts.tp.arena_bytes;
    size_t shared = 0, in_place = 0;
    for (size_t a = 0; a < v.size(); ++a) {
        INFO(v[a].what);
        CHECK(v[a].hi <= arena);
        for (size_t b = a + 1; b < v.size(); ++b) {
            if (!(v[a].lo < v[b].hi && v[b].lo < v[a].hi)) continue;
            ++shared;
            const ArenaUse &x = v[a].def <= v[b].def ? v[a] : v[b], &y = v[a].def <= v[b].def ? v[b] : v[a];
            INFO(x.what << " [" << x.def << ", " << x.last << "] and " << y.what << " [" << y.def << ", "
                        << y.last << "]");
            if (x.last == y.def) {
                ++in_place;  // the item at that position writes y over x, reading x for the last time
                CHECK(x.lo == y.lo);
                const TrainItem& it = ts.tp.backward[static_cast<size_t>(y.def) - ts.plan->steps.size()];
                CHECK((it.desc.op_type == "ReluGrad" || it.desc.op_type == "LossGrad" ||
                       it.desc.op_type == "Add"));
            } else {
                CHECK(x.last < y.def);
            }
        }
    }
    CHECK(shared > 0);  // the arena is reused
    CHECK(in_place == static_cast<size_t>(ts.memory.in_place));
}

}  // namespace

TEST_CASE("train memory plan: an MLP step's peak follows from its tensors' sizes") {
    // zoo mlp: x (B, 16) -> fc1 (Gemm + ReLU) -> h (B, 32) -> fc2 -> z (B, 8) -> Softmax -> y.
    // Backward: LossGrad(y, t) -> dz (in place over y: its last reader); fc2: dh = dz W2, dW2,
    // db2 (gradient block); fc1: ReluGrad(h, dh) (in place over dh), dW1 (reads x), db1.
    // Live at fc2's backward: x (read by dW1), h (by ReluGrad), dz (in y's bytes) and dh; the
    // target is freed after the loss, z after the Softmax.
    const int64_t b = 64;
    for (Precision p : {Precision::FP32, Precision::FP16}) {
        const uint64_t es = p == Precision::FP32 ? 4 : 2;
        auto ts = train_setup("mlp?in=16&hidden=32&layers=2&classes=8", b, p);
        const TrainMemory& m = ts->memory;
        const uint64_t x = aligned512(b * 16 * es), h = aligned512(b * 32 * es), z = aligned512(b * 8 * es),
                       y = z, t = z, dh = h;
        INFO("precision " << precision_name(p));
        CHECK(m.live_peak_bytes == x + h + y + dh);
        CHECK(m.arena_bytes == m.live_peak_bytes);
        CHECK(m.live_peak_at.rfind("backward fc2", 0) == 0);
        CHECK(m.in_place == 2);
        CHECK(m.in_place_bytes == z + h);
        // Every tensor apart: x, h, z, y, t, dz, dh, dh through the ReLU.
        CHECK(m.no_reuse_bytes == x + h + z + y + t + z + dh + dh);
        // Kept for the backward: x, h and y (z is not read by it); 2-byte types at fp16.
        CHECK(m.kept_bytes == x + h + y);
        CHECK(m.kept_2byte_bytes == (es == 2 ? m.kept_bytes : 0));
        CHECK(m.gradient_bytes == (aligned512(32 * 16 * es) + aligned512(32 * es) + aligned512(8 * 32 * es) +
                                   aligned512(8 * es)));
        CHECK(m.total_bytes() == m.weight_bytes + m.gradient_bytes + m.workspace_bytes + m.arena_bytes);
        CHECK(m.capacity_bytes == train_test_device().gm_bytes);
        check_no_overlap(*ts);
    }
}

TEST_CASE("train memory plan: a small ResNet-18 shares no live byte, with and without recomputation") {
    const std::string model = "resnet18?image=32&width=8&classes=10";
    auto keep = train_setup(model, 2, Precision::FP16);
    auto re = train_setup(model, 2, Precision::FP16, true);
    check_no_overlap(*keep);
    check_no_overlap(*re);
    CHECK(keep->memory.arena_bytes < keep->memory.no_reuse_bytes);
    CHECK(keep->memory.recomputed == 0);
    // Recomputation runs the cheap steps again (one item each) and keeps their outputs no longer.
    CHECK(re->memory.recomputed > 0);
    CHECK(re->tp.backward.size() == keep->tp.backward.size() + static_cast<size_t>(re->memory.recomputed));
    CHECK(re->memory.kept_bytes < keep->memory.kept_bytes);
    for (const TrainItem& it : re->tp.backward)
        if (it.name.find("/recompute") != std::string::npos) CHECK(it.desc.op_type != "Conv");
}

TEST_CASE("first-fit placement: the helper both memory plans use places blocks as derived by hand") {
    // Sizes 300, 200, 200, 100 (b, c equal: the earlier producer first). a [0, 2], b [1, 3],
    // c [3, 5], d [4, 4]. a at 0; b meets a: 300; c meets b only: 0 (fits below b's 300);
    // d meets c only: at c's end, 200. Arena: 500 (b's end).
    const std::vector<ArenaItem> items = {{300, 0}, {200, 1}, {200, 3}, {100, 4}};
    const int last[] = {2, 3, 5, 4};
    std::vector<uint64_t> off;
    const uint64_t size = place_first_fit(
        items, [&](size_t i, size_t j) { return !(last[i] < items[j].def || last[j] < items[i].def); }, off);
    CHECK(off == std::vector<uint64_t>{0, 300, 0, 200});
    CHECK(size == 500);
}

TEST_CASE("first-fit placement: the training plan is the greedy placement of its blocks' lifetimes") {
    // Recomputed here from the planned blocks alone (sizes and lifetimes): largest first, equal
    // sizes by producer, lowest offset clear of every placed block whose lifetime meets it.
    auto ts = std::make_unique<TrainSetup>();
    ts->copt.precision = Precision::FP16;
    ts->compile(zoo_graph("resnet18?image=32&width=8&classes=10"), 2, train_test_device());
    std::vector<ArenaBlock> blocks;
    const TrainMemory m = plan_train_memory(*ts->plan, ts->tp, train_test_device(), &blocks);
    REQUIRE(blocks.size() > 10);
    std::vector<size_t> order(blocks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return blocks[a].bytes != blocks[b].bytes ? blocks[a].bytes > blocks[b].bytes : blocks[a].def < blocks[b].def;
    });
    std::vector<uint64_t> want(blocks.size(), 0);
    std::vector<size_t> placed;
    uint64_t arena = 0;
    for (size_t i : order) {
        uint64_t off = 0;
        for (bool moved = true; moved;) {  // the lowest offset clear of every conflicting block
            moved = false;
            for (size_t j : placed) {
                const bool meet = !(blocks[j].last < blocks[i].def || blocks[i].last < blocks[j].def);
                if (meet && off < want[j] + blocks[j].bytes && want[j] < off + blocks[i].bytes) {
                    off = want[j] + blocks[j].bytes;
                    moved = true;
                }
            }
        }
        want[i] = off;
        placed.push_back(i);
        arena = std::max(arena, off + blocks[i].bytes);
    }
    for (size_t i = 0; i < blocks.size(); ++i) {
        INFO(blocks[i].name);
        CHECK(blocks[i].offset == want[i]);
    }
    CHECK(m.arena_bytes == arena);
}
