// HBM controller policies, derived from the parameters (no SystemC): the XOR address map, the
// read-first write queue drained between watermarks, per-bank refresh, and the channel hash.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "tests/unit/hbm_fixture.h"

using namespace sfumato;
using namespace sfumato::mem;

namespace {

using KV = test::HbmRig::KV;

struct Fx : test::HbmRig {
    explicit Fx(const KV& kv) : HbmRig(kv) {}
    uint32_t bank_of(uint64_t a) const {
        const DramAddr d = map->decode(a);
        return d.bg * p.banks_per_group + d.bank;
    }
};

}  // namespace

TEST_CASE("mem map: xor sends rows a power of two apart to other banks, bitfield to the same bank") {
    Fx x(KV{{"address_map", "xor"}});
    Fx b(KV{{"address_map", "bitfield"}});
    const uint32_t row_bits = log2u(x.p.rows);
    const uint64_t base = 3 * x.row_stride() + 512;  // some row, some bank, second channel
    for (uint32_t k = 0; k < row_bits; ++k) {
        const uint64_t other = base + (uint64_t(1) << k) * x.row_stride();
        INFO("rows 2^" << k << " apart");
        CHECK(x.bank_of(other) != x.bank_of(base));
        CHECK(b.bank_of(other) == b.bank_of(base));
        CHECK(x.map->decode(other).pc == x.map->decode(base).pc);
    }
}

TEST_CASE("mem map: xor is a bijection (every coordinate is hit once)") {
    Fx x(KV{{"address_map", "xor"}});
    const uint32_t burst = x.p.burst_bytes();
    const uint64_t rows = 64;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint64_t, uint32_t>> seen;
    for (uint64_t a = 0; a < rows * x.row_stride(); a += burst) {
        const DramAddr d = x.map->decode(a);
        CHECK(d.row < rows);
        seen.insert({d.pc, d.bg, d.bank, d.row, d.col});
    }
    CHECK(seen.size() == rows * x.row_stride() / burst);
}

namespace {
// Four stacks of eight channels (64 pseudo-channels), as the 910-class presets.
KV wide(KV kv) {
    kv.insert(kv.end(), {{"stacks", "4"}, {"channels_per_stack", "8"}, {"capacity_mib", "8192"}});
    return kv;
}
}  // namespace

TEST_CASE("mem map: channel_hash spreads a power-of-two stride over every pseudo-channel") {
    Fx h(wide({{"address_map", "xor"}, {"channel_hash", "true"}}));
    Fx n(wide({{"address_map", "xor"}}));
    const uint32_t pcs = h.p.total_pcs();
    REQUIRE(pcs >= 4);
    // Rows of a row-major matrix whose rows span pcs / 4 interleave granules (the k chunks of a
    // matmul: 8 KiB rows on 512 B granules and 64 pseudo-channels).
    const uint64_t stride = uint64_t(h.p.interleave_bytes) * (pcs / 4);
    std::vector<uint32_t> hashed(pcs), plain(pcs);
    for (uint64_t i = 0; i < 4ull * pcs; ++i) {
        ++hashed[h.map->decode(i * stride).pc];
        ++plain[n.map->decode(i * stride).pc];
    }
    uint32_t used = 0;
    for (uint32_t c = 0; c < pcs; ++c) {
        CHECK(hashed[c] == 4);  // every pseudo-channel takes the same share
        used += plain[c] > 0;
    }
    CHECK(used == 4);  // without the hash the stride stays on pcs / (stride / granule) channels
}

TEST_CASE("mem map: xor with channel_hash is a bijection and keeps a granule in one channel") {
    Fx x(wide({{"address_map", "xor"}, {"channel_hash", "true"}}));
    const uint32_t burst = x.p.burst_bytes();
    const uint64_t rows = 2;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint64_t, uint32_t>> seen;
    for (uint64_t a = 0; a < rows * x.row_stride(); a += burst) {
        const DramAddr d = x.map->decode(a);
        CHECK(d.row < rows);
        CHECK(d.pc == x.map->decode(a / x.p.interleave_bytes * x.p.interleave_bytes).pc);
        seen.insert({d.pc, d.bg, d.bank, d.row, d.col});
    }
    CHECK(seen.size() == rows * x.row_stride() / burst);
}

TEST_CASE("mem hbm: reads go first and writes drain in one batch from the high to the low watermark") {
    const uint32_t high = 8, low = 3;
    Fx f(KV{{"write_high_watermark", std::to_string(high)}, {"write_low_watermark", std::to_string(low)}, {"tREFI", "0"}});
    const uint32_t reads = 4;
    auto first_read_col = [&] {
        uint64_t m = ~uint64_t(0);
        for (auto& r : f.reqs) if (!r->write) m = std::min(m, r->first_col_ck);
        return m;
    };
    SECTION("below the high watermark every read is served before any write") {
        for (uint32_t i = 0; i < high - 1; ++i) f.ch->enqueue(f.req(i * 2 * f.p.row_bytes, f.p.burst_bytes(), true));
        for (uint32_t i = 0; i < reads; ++i) f.ch->enqueue(f.req((64 + i) * 2 * f.p.row_bytes, f.p.burst_bytes(), false));
        f.drain(0);
        uint64_t last_read = 0, first_write = ~uint64_t(0);
        for (auto& r : f.reqs) {
            if (r->write) first_write = std::min(first_write, r->first_col_ck);
            else last_read = std::max(last_read, r->first_col_ck);
        }
        CHECK(last_read < first_write);
        CHECK(f.ch->stats().write_drains == 0);
        CHECK(f.ch->stats().turnarounds == 1);
    }
    SECTION("at the high watermark high - low writes go first, then the reads, then the rest") {
        for (uint32_t i = 0; i < high; ++i) f.ch->enqueue(f.req(i * 2 * f.p.row_bytes, f.p.burst_bytes(), true));
        for (uint32_t i = 0; i < reads; ++i) f.ch->enqueue(f.req((64 + i) * 2 * f.p.row_bytes, f.p.burst_bytes(), false));
        f.drain(0);
        const uint64_t fr = first_read_col();
        uint32_t before = 0;
        uint64_t last_read = 0;
        for (auto& r : f.reqs) {
            if (r->write && r->first_col_ck < fr) ++before;
            if (!r->write) last_read = std::max(last_read, r->first_col_ck);
        }
        uint32_t after = 0;
        for (auto& r : f.reqs) after += r->write && r->first_col_ck > last_read;
        CHECK(before == high - low);
        CHECK(after == low);
        CHECK(f.ch->stats().write_drains == 1);
        CHECK(f.ch->stats().turnarounds == 2);
    }
}

TEST_CASE("mem hbm: per-bank refresh takes one bank every tREFI / banks and costs less than all-bank") {
    auto run = [](const std::string& mode) {
        Fx f(KV{{"refresh", mode}});
        const uint32_t n = 4000;
        // A sequential stream in pseudo-channel 0: its interleave granules walk columns, banks, rows.
        for (uint32_t i = 0; i < n; ++i)
            f.ch->enqueue(f.req(uint64_t(i) * f.p.interleave_bytes * f.p.total_pcs(), f.p.interleave_bytes, false));
        f.drain(0);
        uint64_t end = 0;
        for (auto* r : f.out) end = std::max(end, r->done.v);
        return std::make_tuple(end, f.ch->stats().refreshes, f.p);
    };
    auto [t_ab, n_ab, p] = run("all_bank");
    auto [t_pb, n_pb, p_pb] = run("per_bank");
    const uint64_t end_ck = t_pb / p_pb.t.tck_ps;
    const uint64_t refi_sb = p_pb.t.refi / p_pb.banks();
    CHECK(n_pb + 1 >= end_ck / refi_sb);
    CHECK(n_pb <= end_ck / refi_sb + 1);
    CHECK(n_ab <= n_pb);
    CHECK(t_pb < t_ab);
    // The stream loses less than the all-bank share tRFC / tREFI.
    const double share = static_cast<double>(p.t.rfc) / p.t.refi;
    const double busy_ck = 4000.0 * p.interleave_bytes / p.burst_bytes() * std::max(p.t.ccd_l, p.t.bl);
    CHECK(static_cast<double>(end_ck) < busy_ck * (1.0 + share));
}

TEST_CASE("mem hbm: a long refresh catch-up ends in the state replaying every refresh gives") {
    // Requests in small groups after pauses of up to ~40 refresh rounds: each arrival catches up
    // on the refreshes of the pause with the group queued (banks it wants are refreshed last in
    // a round). The default skips repeating rounds; the reference replays every refresh.
    for (const std::string mode : {"per_bank", "all_bank"}) {
        Fx fast(KV{{"refresh", mode}}), ref(KV{{"refresh", mode}});
        ref.ch->set_refresh_catch_up(false);
        const uint64_t refi_ps = fast.ck(fast.p.t.refi);
        uint64_t x = 99, t = 0;
        auto rnd = [&] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            return x;
        };
        const uint64_t lines = fast.p.capacity_bytes / fast.p.burst_bytes();
        for (int step = 0; step < 400; ++step) {
            const uint64_t r = rnd() % 10;
            t += r < 4 ? rnd() % refi_ps : r < 8 ? rnd() % (40 * refi_ps) : rnd() % 2000;
            const uint32_t group = 1 + static_cast<uint32_t>(rnd() % 4);
            for (uint32_t i = 0; i < group; ++i) {
                const uint64_t a = (rnd() % lines) * fast.p.burst_bytes();
                const bool w = rnd() % 4 == 0;
                for (Fx* f : {&fast, &ref}) {
                    HbmReq* q = f->req(a, f->p.burst_bytes(), w);
                    q->arrive = Tick(t);
                    f->ch->enqueue(q);
                }
            }
            fast.drain(t);
            ref.drain(t);
            for (auto* q : fast.out) t = std::max(t, q->done.v);
        }
        REQUIRE(fast.out.size() == ref.out.size());
        for (size_t i = 0; i < fast.out.size(); ++i) {
            REQUIRE(fast.out[i]->addr == ref.out[i]->addr);
            REQUIRE(fast.out[i]->done.v == ref.out[i]->done.v);
            REQUIRE(fast.out[i]->act_ck == ref.out[i]->act_ck);
        }
        const HbmChannelStats& a = fast.ch->stats();
        const HbmChannelStats& b = ref.ch->stats();
        CHECK(a.refreshes == b.refreshes);
        CHECK(a.activates == b.activates);
        CHECK(a.row_hits == b.row_hits);
        CHECK(a.row_conflicts == b.row_conflicts);
        // Long pauses happened: thousands of refresh intervals.
        CHECK(t > 2000 * refi_ps);
    }
}

TEST_CASE("mem map: xor and channel_hash fold every chunk, as their definitions say") {
    // The definitions, chunk by chunk: the pseudo-channel index XORs every other address bit
    // above the interleave granule folded to its width; the bank bits XOR the row folded to
    // theirs. decode() folds by doubling shifts; this checks it against the plain loop on random
    // addresses of the 910-class geometry (64 pseudo-channels, 32 banks).
    const KV geo{{"stacks", "4"}, {"channels_per_stack", "8"}, {"bank_groups", "4"}, {"banks_per_group", "8"},
                 {"capacity_mib", "16384"}};
    KV hk = geo, bk = geo;
    hk.insert(hk.end(), {{"address_map", "xor"}, {"channel_hash", "true"}});
    bk.insert(bk.end(), {{"address_map", "bitfield"}});
    Fx h(hk), b(bk);
    REQUIRE(h.p.total_pcs() == 64);
    REQUIRE(h.p.banks() == 32);
    const uint32_t ch_bits = log2u(h.p.total_pcs()), bank_bits = log2u(h.p.banks()), bg_bits = log2u(h.p.bank_groups);
    const uint32_t granule_bits = log2u(h.p.interleave_bytes);
    auto fold = [](uint64_t x, uint32_t w) {
        uint64_t f = 0;
        for (; x; x >>= w) f ^= x & ((uint64_t(1) << w) - 1);
        return f;
    };
    uint64_t x = 0x243f6a8885a308d3ull;
    for (int i = 0; i < 20000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const uint64_t a = x % h.p.capacity_bytes;
        const DramAddr plain = b.map->decode(a), d = h.map->decode(a);
        // Layout Ro,Ba,Bg,Co,Ch: the channel field sits just above the granule.
        const uint64_t rest = (a >> granule_bits) & ~((uint64_t(1) << ch_bits) - 1);
        CHECK(d.pc == (plain.pc ^ fold(rest, ch_bits)));
        const uint64_t hb = fold(plain.row, bank_bits);
        CHECK(d.bg == (plain.bg ^ (hb & ((1u << bg_bits) - 1))));
        CHECK(d.bank == (plain.bank ^ (hb >> bg_bits)));
        CHECK(d.row == plain.row);
        CHECK(d.col == plain.col);
        // The plain map is the layout's bit fields (from the granule up: Ch, Co, Bg, Ba, Ro).
        const uint32_t co_bits = log2u(h.p.row_bytes / h.p.interleave_bytes), ba_bits = bank_bits - bg_bits;
        const auto field = [a](uint32_t lo, uint32_t w) { return (a >> lo) & ((uint64_t(1) << w) - 1); };
        CHECK(plain.pc == field(granule_bits, ch_bits));
        const uint32_t burst_bits = log2u(h.p.burst_bytes());
        CHECK(plain.col == ((field(granule_bits + ch_bits, co_bits) << (granule_bits - burst_bits)) |
                            field(burst_bits, granule_bits - burst_bits)));
        CHECK(plain.bg == field(granule_bits + ch_bits + co_bits, bg_bits));
        CHECK(plain.bank == field(granule_bits + ch_bits + co_bits + bg_bits, ba_bits));
        CHECK(plain.row == field(granule_bits + ch_bits + co_bits + bank_bits, log2u(h.p.rows)));
        // The bank index (decoded from the same selector tables) names the bank group and bank.
        CHECK(d.bank_index == d.bg * h.p.banks_per_group + d.bank);
        CHECK(plain.bank_index == plain.bg * b.p.banks_per_group + plain.bank);
    }
}

TEST_CASE("mem map: the inline decode (three chunk tables) gives decode_into's coordinates on every preset's map") {
    // decode_fast() is the memory system's per-request decode: the same coordinates as the
    // map's own decode_into() (every chunk's table in a loop, checked against the definitions above) for every
    // address, by tables when below the capacity, by decode_into() above it. Every preset, with
    // its own map and the other map, channel hash on and off.
    uint64_t x = 0x9e3779b97f4a7c15ull;
    const auto rnd = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    for (const char* preset : {"tiny", "ascend910-like", "ascend910b-like"}) {
        for (const char* map : {"", "bitfield", "xor"}) {
            for (const char* hash : {"", "true", "false"}) {
                Config cfg;
                cfg.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/" + preset + ".ini");
                if (*map) cfg.set_raw("chip.hbm.address_map", map, "test");
                if (*hash) cfg.set_raw("chip.hbm.channel_hash", hash, "test");
                const HbmParams p = read_hbm_params(ParamScope(cfg, "chip.hbm"));
                const auto m = make_address_map(p, "chip.hbm.address_map");
                INFO(preset << " map " << p.address_map << " hash " << p.channel_hash);
                REQUIRE(m->has_fast());  // the presets' capacities fit the tables
                const auto same = [&m](uint64_t a) {
                    DramAddr f;
                    m->decode_fast(a, f);
                    const DramAddr g = m->decode(a);
                    // The memory system's variant without the column: the same other fields.
                    DramAddr h;
                    h.col = 12345;
                    m->decode_fast<false>(a, h);
                    return f.pc == g.pc && f.bg == g.bg && f.bank == g.bank && f.bank_index == g.bank_index &&
                           f.row == g.row && f.col == g.col && h.pc == g.pc && h.bg == g.bg && h.bank == g.bank &&
                           h.bank_index == g.bank_index && h.row == g.row;
                };
                uint64_t bad = 0;
                for (int i = 0; i < 100000; ++i) {
                    const uint64_t r = rnd();
                    // Random addresses, a sequential stretch, the top of the capacity, and above it.
                    const uint64_t a = i < 60000   ? r % p.capacity_bytes
                                       : i < 80000 ? uint64_t(i - 60000) * 32 + (r & 31)
                                       : i < 90000 ? p.capacity_bytes - 1 - r % (uint64_t(1) << 24)
                                                   : p.capacity_bytes + r % (p.capacity_bytes * 3);
                    if (!same(a)) ++bad;
                }
                CHECK(bad == 0);
            }
        }
    }
}
