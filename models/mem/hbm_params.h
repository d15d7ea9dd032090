// HBM organisation and JEDEC-style timing parameters (chip.hbm.*), read once from the config.
// Timings are configured in ns (as datasheets give them) and converted to whole cycles of the
// preset's tCK, rounding up; tCCD and the burst are in tCK. Pure C++, so `sfumato info` can
// print the peak without elaborating a model. Geometry fields must be powers of two.
#pragma once
#include <cstdint>
#include <string>

#include "sim/config.h"

namespace sfumato::mem {

// Timing constraints in tCK cycles of one pseudo-channel.
struct HbmTiming {
    uint64_t tck_ps = 1000;
    uint32_t rcd = 14, rp = 14, ras = 34, rc = 48, cl = 14, cwl = 4, bl = 2;
    uint32_t ccd_s = 1, ccd_l = 2, rrd_s = 4, rrd_l = 6, faw = 30;
    uint32_t wr = 16, wtr_s = 6, wtr_l = 8, rtp = 6, rtw = 18;
    uint32_t refi = 3900, rfc = 260;  // refi 0: refresh disabled
    uint32_t rfcsb = 160;             // single-bank refresh cycle time
};

struct HbmParams {
    uint32_t stacks = 1, channels_per_stack = 8, pseudo_channels = 2;
    uint32_t bus_width_bits = 128;  // per channel
    uint32_t data_rate_mtps = 2000;
    uint32_t burst_length = 4;
    uint32_t bank_groups = 4, banks_per_group = 4;
    uint64_t rows = 16384;
    uint32_t row_bytes = 1024;  // page size of one pseudo-channel
    uint64_t capacity_bytes = 0;
    uint32_t interleave_bytes = 512;
    uint32_t queue_window = 32;
    // Write queue per pseudo-channel: reads are served first; writes are drained in a batch
    // once the queue holds write_high writes, down to write_low (or whenever no read waits).
    uint32_t write_high = 32, write_low = 16;
    // Capacity of that write queue (> write_high): when it is full, the L2 access whose eviction
    // needs a write-back to this pseudo-channel waits for room (back-pressure on the writer).
    uint32_t write_queue_depth = 64;
    std::string address_map = "bitfield";
    // Channel hashing: the pseudo-channel index is XORed with every other address bit above the
    // interleave granule, folded to the channel width (a bijection for fixed upper bits), so that
    // power-of-two strides (rows of a matrix, columns of tiles) spread over all channels instead
    // of a few.
    bool channel_hash = false;
    std::string address_layout = "Ro,Ba,Bg,Co,Ch";
    std::string scheduler = "frfcfs";
    bool per_bank_refresh = false;  // REFSB: one bank at a time, tREFI / banks apart
    HbmTiming t;

    uint32_t total_pcs() const { return stacks * channels_per_stack * pseudo_channels; }
    uint32_t pc_width_bytes() const { return bus_width_bits / 8 / pseudo_channels; }
    uint32_t burst_bytes() const { return pc_width_bytes() * burst_length; }
    uint32_t banks() const { return bank_groups * banks_per_group; }
};

// Reads and validates chip.hbm.* (ConfigError names the offending key).
HbmParams read_hbm_params(const ParamScope& scope);

// Peak bandwidth in GB/s: channels x bus width x data rate.
double hbm_peak_gbps(const HbmParams& p);

inline bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
inline uint32_t log2u(uint64_t x) {
    uint32_t n = 0;
    while (x > 1) { x >>= 1; ++n; }
    return n;
}

}  // namespace sfumato::mem
