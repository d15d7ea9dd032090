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

// What a scheduler may see of the banks, indexed by HbmReq::bank_index; times in tCK.
struct HbmBankView {
    const uint64_t* open_row;  // open row or IHbmScheduler::kClosed
    const int64_t* act_ok;     // earliest activate
    const int64_t* pre_ok;     // earliest precharge
    int64_t now;
};

class IHbmScheduler {
public:
    virtual ~IHbmScheduler() = default;
    virtual size_t pick(HbmReq* const* queue, size_t n, const HbmBankView& banks) const = 0;
    static constexpr uint64_t kClosed = ~uint64_t(0);
};

std::unique_ptr<IHbmScheduler> make_hbm_scheduler(const std::string& name, const std::string& key);

}  // namespace sfumato::mem
