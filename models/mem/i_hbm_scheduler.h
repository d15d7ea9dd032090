// Contract: an HBM request scheduler picks which queued request a pseudo-channel controller
// serves next. It sees the queue in arrival order (oldest first, at most the configured window)
// and the open row of every bank; it returns an index into the queue. Stateless between calls,
// no allocation. Picked by name (chip.hbm.scheduler) from a registry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sfumato::mem {

struct HbmReq;

class IHbmScheduler {
public:
    virtual ~IHbmScheduler() = default;
    // open_row[bank_index] is the open row or kClosed.
    virtual size_t pick(HbmReq* const* queue, size_t n, const uint64_t* open_row) const = 0;
    static constexpr uint64_t kClosed = ~uint64_t(0);
};

std::unique_ptr<IHbmScheduler> make_hbm_scheduler(const std::string& name, const std::string& key);

}  // namespace sfumato::mem
