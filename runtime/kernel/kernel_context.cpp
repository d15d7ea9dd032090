#include "runtime/kernel/kernel_context.h"

#include "sim/error.h"

namespace sfumato::kernel {

void KernelContext::set_flag(Pipe src, Pipe dst, uint8_t id) {
    isa::Instr in;
    in.op = isa::Opcode::SET_FLAG;
    in.pipe = src;
    in.flag = {src, dst, id};
    m_sink.issue(in);
}

void KernelContext::wait_flag(Pipe src, Pipe dst, uint8_t id) {
    isa::Instr in;
    in.op = isa::Opcode::WAIT_FLAG;
    in.pipe = dst;
    in.flag = {src, dst, id};
    m_sink.issue(in);
}

void KernelContext::pipe_barrier(Pipe p) {
    isa::Instr in;
    in.op = isa::Opcode::PIPE_BARRIER;
    in.pipe = p;
    m_sink.issue(in);
}

uint8_t KernelContext::alloc_event(Pipe src, Pipe dst, const std::string& who) {
    uint8_t& next = m_next_event[static_cast<size_t>(src) * isa::kNumPipes + static_cast<size_t>(dst)];
    if (next >= m_sink.event_ids())
        throw InputError(who + ": no event id left for " + isa::pipe_name(src) + "->" + isa::pipe_name(dst) + " (" +
                         std::to_string(m_sink.event_ids()) + " per pipe pair)");
    return next++;
}

}  // namespace sfumato::kernel
