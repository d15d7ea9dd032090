// Contract: an HBM request scheduler picks which queued request a pseudo-channel controller
// serves next. It sees the queue in arrival order (oldest first, at most the configured window)
// and, per bank, the open row and when its next activate / precharge may issue; it returns an
// index into the queue. Stateless between calls, no allocation. Picked by name
// (chip.hbm.scheduler) from a registry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sfumato::mem {

struct HbmReq;

// One bank's state in its controller; times in tCK. The fields a decision reads sit together
// (one host cache line per bank touched).
struct HbmBank {
    uint64_t open_row;  // open row or IHbmScheduler::kClosed
    int64_t act_ok;     // earliest activate
    int64_t pre_ok;     // earliest precharge
    int64_t col_ok;     // earliest column command
};

// What a scheduler may see of the banks, indexed by HbmReq::bank_index.
struct HbmBankView {
    const HbmBank* bank;
    int64_t now;
};

// A queued request with the fields a scheduler compares, and those its controller's timing
// reads, copied next to it: a scan over the queue reads one compact array instead of every
// request, and a decision does not wait for the request itself to be loaded.
struct HbmQueued {
    uint64_t row;
    uint16_t bank;    // HbmReq::bank_index (hbm_params bounds the banks per pseudo-channel)
    uint16_t bg;      // its bank group
    uint32_t bursts;  // column bursts it takes
    HbmReq* req;
};

class IHbmScheduler {
public:
    virtual ~IHbmScheduler() = default;
    virtual size_t pick(const HbmQueued* queue, size_t n, const HbmBankView& banks) const = 0;
    static constexpr uint64_t kClosed = ~uint64_t(0);
};

// First-ready FCFS ("frfcfs"): the oldest row hit; else the oldest request whose bank can take
// its next command (activate, or precharge of the other row) now; else the oldest. Inline here so
// that a controller can run it without the virtual call.
[[gnu::always_inline]] inline size_t frfcfs_pick(const HbmQueued* q, size_t n, const HbmBank* bank, int64_t now) {
    size_t ready = n;
    for (size_t i = 0; i < n; ++i) {
        const HbmBank& bk = bank[q[i].bank];
        if (bk.open_row == q[i].row) return i;
        if (ready == n && (bk.open_row == IHbmScheduler::kClosed ? bk.act_ok : bk.pre_ok) <= now) ready = i;
    }
    return ready == n ? 0 : ready;
}
// Whether `s` is the registered "frfcfs" scheduler (its controller then calls frfcfs_pick()).
bool is_frfcfs(const IHbmScheduler& s);

std::unique_ptr<IHbmScheduler> make_hbm_scheduler(const std::string& name, const std::string& key);

}  // namespace sfumato::mem
