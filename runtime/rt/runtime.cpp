#include "runtime/rt/runtime.h"

#include "sim/error.h"

namespace sfumato::rt {

Runtime::Runtime(IDevice& dev, const RuntimeParams& p, TraceHub& trace, StatGroup* stats_parent)
    : m_owned(std::make_unique<Device>(dev, p, &trace, stats_parent)), m_device(m_owned.get()), m_ctx(m_device->open_context()) {}

Runtime::Runtime(Device& dev, Context& ctx) : m_device(&dev), m_ctx(ctx) {}

void Runtime::check(Status s) {
    if (s != Status::Ok) throw InputError(m_ctx.last_error());
}

DevPtr Runtime::malloc(uint64_t bytes) {
    DevPtr p = 0;
    check(m_ctx.malloc(&p, bytes));
    return p;
}

void Runtime::free(DevPtr p) { check(m_ctx.free(p)); }

Stream Runtime::create_stream(int priority) {
    StreamId s = 0;
    check(m_ctx.stream_create(&s, priority));
    return Stream{s};
}

void Runtime::memcpy_h2d(DevPtr dst, const void* src, uint64_t bytes, bool pinned) {
    check(m_ctx.copy_explicit(CopyDir::H2D, dst, reinterpret_cast<uintptr_t>(src), bytes, kDefaultStream, false, pinned));
}

void Runtime::memcpy_d2h(void* dst, DevPtr src, uint64_t bytes, bool pinned) {
    check(m_ctx.copy_explicit(CopyDir::D2H, reinterpret_cast<uintptr_t>(dst), src, bytes, kDefaultStream, false, pinned));
}

std::shared_ptr<Task> Runtime::launch(KernelDesc k, Stream s) {
    if (k.block_dim > 65535)
        throw InputError("launch of '" + k.name + "' with block_dim " + std::to_string(k.block_dim) + " (valid: 1..65535)");
    check(m_ctx.launch(std::move(k), s.id));
    return m_ctx.last_launch();
}

void Runtime::synchronize(Stream s) { check(m_ctx.stream_synchronize(s.id)); }

void Runtime::synchronize_device() { check(m_ctx.device_synchronize()); }

void Runtime::flush_caches() {
    synchronize_device();
    check(m_ctx.flush_caches());
}

std::vector<std::shared_ptr<Task>> Runtime::tasks() const {
    std::vector<std::shared_ptr<Task>> out;
    for (const TaskRecord& r : m_ctx.tasks()) out.push_back(r.task);
    return out;
}

}  // namespace sfumato::rt
