// HBM pseudo-channel controller timing, derived from the parameters (no SystemC).
#include <catch2/catch.hpp>

#include "tests/unit/hbm_fixture.h"

using namespace sfumato;
using namespace sfumato::mem;

namespace {

test::HbmRig::KV channel_settings(bool refresh, const std::string& scheduler) {
    test::HbmRig::KV kv{{"scheduler", scheduler}};
    if (!refresh) kv.emplace_back("tREFI", "0");
    return kv;
}

struct Fixture : test::HbmRig {
    explicit Fixture(bool refresh = false, const std::string& scheduler = "frfcfs")
        : HbmRig(channel_settings(refresh, scheduler)) {}
    // An address in pseudo-channel 0 at the given bank group, bank, row, column burst.
    uint64_t addr(uint32_t bg, uint32_t bank, uint64_t row, uint32_t col = 0) {
        // Search is cheap in a test: walk addresses in burst steps of one row window.
        for (uint64_t a = 0;; a += p.burst_bytes()) {
            DramAddr d = map->decode(a);
            if (d.pc == 0 && d.bg == bg && d.bank == bank && d.col == col && d.row == (row & 0)) {
                return a + row * row_stride();
            }
        }
    }
};

}  // namespace

TEST_CASE("mem hbm: address map places rows above banks and decodes the built address") {
    Fixture f;
    const uint64_t a = f.addr(2, 1, 5, 3);
    const DramAddr d = f.map->decode(a);
    CHECK(d.pc == 0);
    CHECK(d.bg == 2);
    CHECK(d.bank == 1);
    CHECK(d.row == 5);
    CHECK(d.col == 3);
}

TEST_CASE("mem hbm: read to a closed bank takes tRCD + tCL + tBL") {
    Fixture f;
    const auto& t = f.p.t;
    HbmReq* r = f.req(f.addr(0, 0, 1), f.p.burst_bytes());
    f.submit_run(r, 0);
    CHECK(r->done.v == f.ck(t.rcd + t.cl + t.bl));
}

TEST_CASE("mem hbm: row hit takes tCL + tBL and row conflict tRP + tRCD + tCL + tBL") {
    Fixture f;
    const auto& t = f.p.t;
    HbmReq* a = f.req(f.addr(0, 0, 1), f.p.burst_bytes());
    f.submit_run(a, 0);
    // Arrive long after every constraint of the first access has expired.
    const uint64_t later = f.ck(10 * t.rc);
    HbmReq* hit = f.req(f.addr(0, 0, 1, 4), f.p.burst_bytes());
    f.submit_run(hit, later);
    CHECK(hit->done.v - later == f.ck(t.cl + t.bl));
    const uint64_t later2 = f.ck(20 * t.rc);
    HbmReq* conflict = f.req(f.addr(0, 0, 2), f.p.burst_bytes());
    f.submit_run(conflict, later2);
    CHECK(conflict->done.v - later2 == f.ck(t.rp + t.rcd + t.cl + t.bl));
    CHECK(f.ch->stats().row_hits == 1);
    CHECK(f.ch->stats().row_conflicts == 1);
    CHECK(f.ch->stats().row_misses == 1);
}

TEST_CASE("mem hbm: a whole row's bursts stream back to back at the bus rate") {
    Fixture f;
    const auto& t = f.p.t;
    const uint32_t n = f.p.row_bytes / f.p.burst_bytes();
    HbmReq* r = f.req(f.addr(0, 0, 1), f.p.row_bytes);
    f.submit_run(r, 0);
    const uint64_t step = std::max(t.ccd_l, t.bl);
    CHECK(r->done.v == f.ck(t.rcd + (n - 1) * step + t.cl + t.bl));
}

TEST_CASE("mem hbm: activates are spaced by tRRD and four within tFAW") {
    Fixture f;
    const auto& t = f.p.t;
    // Five activates to different bank groups (tRRD_S applies), all at time 0.
    std::vector<HbmReq*> rs;
    for (uint32_t i = 0; i < 5; ++i) {
        HbmReq* r = f.req(f.addr(i % f.p.bank_groups, i / f.p.bank_groups, 1), f.p.burst_bytes());
        r->arrive = Tick(0);
        f.ch->enqueue(r);
        rs.push_back(r);
    }
    f.drain(0);
    for (uint32_t i = 1; i < 4; ++i) CHECK(rs[i]->act_ck - rs[i - 1]->act_ck == std::max<uint64_t>(t.rrd_s, 0));
    REQUIRE(t.faw > 3 * t.rrd_s);
    CHECK(rs[4]->act_ck - rs[0]->act_ck == t.faw);
}

TEST_CASE("mem hbm: same bank group activates are spaced by tRRD_L") {
    Fixture f;
    const auto& t = f.p.t;
    HbmReq* a = f.req(f.addr(1, 0, 1), f.p.burst_bytes());
    HbmReq* b = f.req(f.addr(1, 1, 1), f.p.burst_bytes());
    a->arrive = b->arrive = Tick(0);
    f.ch->enqueue(a);
    f.ch->enqueue(b);
    f.drain(0);
    CHECK(b->act_ck - a->act_ck == t.rrd_l);
}

TEST_CASE("mem hbm: FR-FCFS serves a younger row hit first and FCFS does not") {
    for (const char* s : {"frfcfs", "fcfs"}) {
        Fixture f(false, s);
        HbmReq* open = f.req(f.addr(0, 0, 1), f.p.burst_bytes());
        f.submit_run(open, 0);
        const uint64_t later = f.ck(10 * f.p.t.rc);
        HbmReq* miss = f.req(f.addr(0, 0, 2), f.p.burst_bytes());
        HbmReq* hit = f.req(f.addr(0, 0, 1, 2), f.p.burst_bytes());
        miss->arrive = hit->arrive = Tick(later);
        f.ch->enqueue(miss);
        f.ch->enqueue(hit);
        f.drain(later);
        if (std::string(s) == "frfcfs") CHECK(hit->done < miss->done);
        else CHECK(miss->done < hit->done);
    }
}

TEST_CASE("mem hbm: read after write waits tWTR after the write data") {
    Fixture f;
    const auto& t = f.p.t;
    HbmReq* w = f.req(f.addr(0, 0, 1), f.p.burst_bytes(), true);
    HbmReq* r = f.req(f.addr(0, 0, 1, 1), f.p.burst_bytes());
    // Reads go first when both wait, so the read arrives once the write has been scheduled.
    f.submit_run(w, 0);
    f.submit_run(r, 0);
    CHECK(w->done.v == f.ck(t.rcd + t.cwl + t.bl));
    CHECK(r->first_col_ck == t.rcd + t.cwl + t.bl + t.wtr_l);
}

TEST_CASE("mem hbm: refresh takes its tRFC/tREFI share of a saturated stream") {
    auto run = [](bool refresh) {
        Fixture f(refresh);
        // A saturating stream of whole-row reads over all banks, all queued at once.
        const uint32_t n = 4000;
        for (uint32_t i = 0; i < n; ++i) {
            HbmReq* r = f.req(f.addr(i % f.p.bank_groups, (i / f.p.bank_groups) % f.p.banks_per_group, 1 + i / f.p.banks()),
                              f.p.row_bytes);
            r->arrive = Tick(0);
            f.ch->enqueue(r);
        }
        f.drain(0);
        uint64_t end = 0;
        for (auto* r : f.out) end = std::max(end, r->done.v);
        return std::make_pair(end, f.ch->stats().refreshes);
    };
    auto [no_ref, n0] = run(false);
    auto [with_ref, n1] = run(true);
    CHECK(n0 == 0);
    CHECK(n1 > 10);
    Fixture f(true);
    const double share = static_cast<double>(f.p.t.rfc) / f.p.t.refi;
    const double loss = 1.0 - static_cast<double>(no_ref) / static_cast<double>(with_ref);
    // Each window also costs the row state it closes: allow share .. 2 x share.
    CHECK(loss >= share * 0.9);
    CHECK(loss <= share * 2.0);
}

TEST_CASE("mem hbm: the counters stats() derives agree with what each request saw") {
    // Reads and writes of one to four bursts over a few rows of a few banks, in arrival bursts.
    Fixture f(true);
    uint64_t x = 0x9e3779b97f4a7c15ull, t = 0;
    for (int i = 0; i < 400; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const uint32_t bursts = 1 + x % 4;
        HbmReq* r = f.req(f.addr(x % f.p.bank_groups, (x >> 8) % 2, (x >> 16) % 3, 4 * ((x >> 24) % 4)),
                          bursts * f.p.burst_bytes(), (x >> 32) % 3 == 0);
        r->arrive = Tick(t);
        f.ch->enqueue(r);
        if (i % 8 == 7) {
            f.drain(t);
            t += f.ck(40 * f.p.t.rc);
        }
    }
    f.drain(t);
    uint64_t acts = 0, bursts = 0, reads = 0, writes = 0;
    for (const HbmReq* r : f.out) {
        acts += r->act_ck != ~uint64_t(0);
        bursts += r->bytes / f.p.burst_bytes();
        (r->write ? writes : reads) += 1;
    }
    const HbmChannelStats s = f.ch->stats();
    REQUIRE(f.out.size() == 400);
    CHECK(s.reads == reads);
    CHECK(s.writes == writes);
    CHECK(s.bursts == bursts);
    CHECK(s.activates == acts);
    CHECK(s.row_hits == f.out.size() - acts);
    CHECK(s.row_misses + s.row_conflicts == acts);
    CHECK(s.row_conflicts > 0);
    CHECK(s.row_misses > 0);
    CHECK(s.burst_row_hits == bursts - acts);
    CHECK(s.busy_ck == bursts * f.p.t.bl);
}

TEST_CASE("mem hbm: decision_after names run()'s tick exactly when run() would schedule nothing") {
    Fixture f;
    std::vector<HbmReq*> out;
    CHECK(f.ch->decision_after(Tick(0)) == 0);  // nothing queued
    // A whole row keeps the bus busy, so a second request waits for the next decision.
    HbmReq* a = f.req(f.addr(0, 0, 1), f.p.row_bytes);
    f.ch->enqueue(a);
    CHECK(f.ch->decision_after(Tick(0)) == 0);  // the first decision is due at once
    CHECK(f.ch->run(Tick(0), out) == HbmChannel::kNever);
    REQUIRE(out.size() == 1);
    HbmReq* b = f.req(f.addr(1, 0, 1), f.p.burst_bytes());
    f.ch->enqueue(b);
    const uint64_t when = f.ch->decision_after(Tick(1));
    REQUIRE(when > 1);
    REQUIRE(when % f.p.t.tck_ps == 0);
    // The controller counts whole tCK (a tick rounds up): up to one tCK before the decision's
    // tick, run() schedules nothing and names it; a picosecond later its tCK is the decision's.
    for (uint64_t now : {uint64_t(1), when - f.p.t.tck_ps}) {
        CHECK(f.ch->decision_after(Tick(now)) == when);
        CHECK(f.ch->run(Tick(now), out) == when);
        CHECK(out.size() == 1);
    }
    CHECK(f.ch->decision_after(Tick(when - f.p.t.tck_ps + 1)) == 0);
    CHECK(f.ch->run(Tick(when - f.p.t.tck_ps + 1), out) == HbmChannel::kNever);
    REQUIRE(out.size() == 2);
    CHECK(out[1] == b);
}
