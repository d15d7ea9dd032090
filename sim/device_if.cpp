#include "sim/device_if.h"

namespace sfumato {

const char* task_kind_name(TaskKind k) {
    constexpr const char* names[] = {"kernel", "memcpy", "record", "wait", "callback"};
    return names[static_cast<int>(k)];
}

const char* copy_dir_name(CopyDir d) {
    constexpr const char* names[] = {"h2d", "d2h", "d2d"};
    return names[static_cast<int>(d)];
}

}  // namespace sfumato
