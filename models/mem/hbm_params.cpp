#include "models/mem/hbm_params.h"

#include <cmath>

#include "models/mem/i_address_map.h"

namespace sfumato::mem {

namespace {
uint32_t ns_to_ck(const ParamScope& s, const char* name, double def_ns, uint64_t tck_ps, const char* desc) {
    Param<double> ns(s, name, def_ns, "ns", desc, {0.0, 1e6});
    return static_cast<uint32_t>(std::ceil(ns.get() * 1000.0 / static_cast<double>(tck_ps) - 1e-9));
}
void require_pow2(const ParamScope& s, const char* name, uint64_t v) {
    if (!is_pow2(v)) throw ConfigError(s.key(name), "must be a power of two (got " + std::to_string(v) + ")");
}
}  // namespace

HbmParams read_hbm_params(const ParamScope& s) {
    HbmParams p;
    p.stacks = Param<uint32_t>(s, "stacks", 1, "", "HBM stacks", {1, 64});
    p.channels_per_stack = Param<uint32_t>(s, "channels_per_stack", 8, "", "channels per stack", {1, 64});
    p.pseudo_channels = Param<uint32_t>(s, "pseudo_channels", 2, "", "pseudo-channels per channel (1 or 2)", {1, 2});
    p.bus_width_bits = Param<uint32_t>(s, "bus_width_bits", 128, "bit", "data bus width of one channel", {8, 1024});
    p.data_rate_mtps = Param<uint32_t>(s, "data_rate_mtps", 2000, "MT/s", "transfers per second per pin (2 per tCK)", {100, 20000});
    p.burst_length = Param<uint32_t>(s, "burst_length", 4, "beats", "beats per column access (BL)", {2, 16});
    p.bank_groups = Param<uint32_t>(s, "bank_groups", 4, "", "bank groups per pseudo-channel", {1, 16});
    p.banks_per_group = Param<uint32_t>(s, "banks_per_group", 4, "", "banks per bank group", {1, 16});
    p.rows = Param<uint64_t>(s, "rows", 16384, "", "rows per bank", {1, uint64_t(1) << 24});
    p.row_bytes = Param<uint32_t>(s, "row_bytes", 1024, "B", "row (page) size of one pseudo-channel", {32, 65536});
    p.capacity_bytes = Param<uint64_t>(s, "capacity_mib", 4096, "MiB", "device memory capacity", {1, uint64_t(1) << 24}) << 20;
    p.interleave_bytes = Param<uint32_t>(s, "interleave_bytes", 512, "B", "bytes kept in one channel before the next", {32, 65536});
    p.queue_window = Param<uint32_t>(s, "queue_window", 32, "requests", "requests the scheduler looks at", {1, 4096});
    p.write_high = Param<uint32_t>(s, "write_high_watermark", 32, "requests",
                                   "queued writes that start a write drain (reads are served first until then)", {1, 4096});
    p.write_low = Param<uint32_t>(s, "write_low_watermark", 16, "requests",
                                  "queued writes at which a write drain ends and reads resume", {0, 4096});
    if (p.write_low >= p.write_high)
        throw ConfigError(s.key("write_low_watermark"), "must be below write_high_watermark");
    p.write_queue_depth = Param<uint32_t>(s, "write_queue_depth", 2 * p.write_high, "requests",
                                          "write queue capacity per pseudo-channel (default 2 x write_high_watermark); "
                                          "a dirty eviction waits while its queue is full", {1, 65536});
    if (p.write_queue_depth <= p.write_high)
        throw ConfigError(s.key("write_queue_depth"), "must be above write_high_watermark (" +
                                                          std::to_string(p.write_high) + ")");
    p.address_map = ChoiceParam(s, "address_map", "bitfield", "address map policy", address_map_names()).get();
    p.channel_hash = Param<bool>(s, "channel_hash", false, "",
                                 "XOR all address bits above the interleave granule into the channel index "
                                 "(power-of-two strides spread over every channel)", {false, true});
    p.address_layout = ChoiceParam(s, "address_layout", "Ro,Ba,Bg,Co,Ch",
                                   "address fields MSB..LSB above the interleave granule (Ro,Ba,Bg,Co,Ch)", {}).get();
    p.scheduler = ChoiceParam(s, "scheduler", "frfcfs", "request scheduling policy", {"frfcfs", "fcfs"}).get();
    if (p.bus_width_bits % (8 * p.pseudo_channels))
        throw ConfigError(s.key("bus_width_bits"), "must split into whole bytes per pseudo-channel");
    require_pow2(s, "bank_groups", p.bank_groups);
    require_pow2(s, "banks_per_group", p.banks_per_group);
    require_pow2(s, "rows", p.rows);
    require_pow2(s, "row_bytes", p.row_bytes);
    require_pow2(s, "interleave_bytes", p.interleave_bytes);
    require_pow2(s, "stacks", p.stacks);
    require_pow2(s, "channels_per_stack", p.channels_per_stack);
    if (p.row_bytes < p.burst_bytes()) throw ConfigError(s.key("row_bytes"), "smaller than one burst");
    if (p.interleave_bytes < p.burst_bytes() || p.interleave_bytes > p.row_bytes)
        throw ConfigError(s.key("interleave_bytes"), "must lie between one burst and one row");

    HbmTiming& t = p.t;
    // tCK: two transfers per clock; rounded up so the model never exceeds the nominal peak.
    t.tck_ps = (2000000 + p.data_rate_mtps - 1) / p.data_rate_mtps;
    const uint64_t ck = t.tck_ps;
    t.rcd = ns_to_ck(s, "tRCD", 14, ck, "activate to column command");
    t.rp = ns_to_ck(s, "tRP", 14, ck, "precharge period");
    t.ras = ns_to_ck(s, "tRAS", 34, ck, "activate to precharge");
    t.rc = std::max<uint32_t>(ns_to_ck(s, "tRC", 48, ck, "activate to activate, same bank"), t.ras + t.rp);
    t.cl = ns_to_ck(s, "tCL", 14, ck, "read command to first data");
    t.cwl = ns_to_ck(s, "tCWL", 4, ck, "write command to first data");
    t.rrd_s = ns_to_ck(s, "tRRD_S", 4, ck, "activate to activate, different bank group");
    t.rrd_l = ns_to_ck(s, "tRRD_L", 6, ck, "activate to activate, same bank group");
    t.faw = ns_to_ck(s, "tFAW", 30, ck, "window holding at most four activates");
    t.wr = ns_to_ck(s, "tWR", 16, ck, "write recovery (end of write data to precharge)");
    t.wtr_s = ns_to_ck(s, "tWTR_S", 6, ck, "write data end to read, different bank group");
    t.wtr_l = ns_to_ck(s, "tWTR_L", 8, ck, "write data end to read, same bank group");
    t.rtp = ns_to_ck(s, "tRTP", 6, ck, "read to precharge");
    t.rtw = ns_to_ck(s, "tRTW", 18, ck, "read command to write command (bus turnaround)");
    t.refi = ns_to_ck(s, "tREFI", 3900, ck, "refresh interval (0 disables refresh)");
    // The refresh mode decides which refresh time is read.
    p.per_bank_refresh = ChoiceParam(s, "refresh", "all_bank", "refresh mode: all_bank (REFab, tRFC every tREFI) or "
                                     "per_bank (REFSB, one bank for tRFCSB every tREFI / banks)", {"all_bank", "per_bank"}).get() == "per_bank";
    t.rfc = ns_to_ck(s.unused_if(p.per_bank_refresh, "refresh = per_bank reads tRFCSB instead"), "tRFC", 260, ck,
                     "all-bank refresh cycle time (refresh = all_bank)");
    t.rfcsb = ns_to_ck(s.unused_if(!p.per_bank_refresh, "refresh = all_bank reads tRFC instead"), "tRFCSB", 160, ck,
                       "single-bank refresh cycle time (refresh = per_bank)");
    t.ccd_s = Param<uint32_t>(s, "tCCD_S", 1, "tCK", "column to column, different bank group", {1, 64});
    t.ccd_l = Param<uint32_t>(s, "tCCD_L", 2, "tCK", "column to column, same bank group", {1, 64});
    t.bl = p.burst_length / 2;
    if (t.refi && !p.per_bank_refresh && t.rfc >= t.refi) throw ConfigError(s.key("tRFC"), "must be shorter than tREFI");
    if (p.per_bank_refresh && t.refi && t.rfcsb >= t.refi)
        throw ConfigError(s.key("tRFCSB"), "must be shorter than tREFI");
    // The address map must cover the capacity exactly (throws naming address_layout).
    validate_address_map(p, s.key("address_layout"));
    return p;
}

double hbm_peak_gbps(const HbmParams& p) {
    return static_cast<double>(p.stacks) * p.channels_per_stack * (p.bus_width_bits / 8.0) *
           p.data_rate_mtps / 1000.0;
}

}  // namespace sfumato::mem
