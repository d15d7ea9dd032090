#include "sim/device_if.h"

#include "sim/error.h"

namespace sfumato {

const char* task_kind_name(TaskKind k) {
    constexpr const char* names[] = {"kernel", "memcpy", "record", "wait", "callback", "notify_record", "notify_wait"};
    return names[static_cast<int>(k)];
}

const char* copy_dir_name(CopyDir d) {
    constexpr const char* names[] = {"h2d", "d2h", "d2d", "p2p"};
    return names[static_cast<int>(d)];
}

uint32_t IDevice::create_notify() { throw InputError("this device has no peers: notify slots need a system"); }

}  // namespace sfumato
