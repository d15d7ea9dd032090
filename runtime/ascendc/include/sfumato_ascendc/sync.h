// Synchronisation of the public Ascend C API over the kernel context: SetFlag/WaitFlag on a
// HardEvent (the pipe pair) and an event id, PipeBarrier on a pipe, the split parts' cross-core
// flags (CrossCoreSetFlag/WaitFlag with a mode and a pipe) and SyncAll, and the TPipe's event
// id pool (AllocEventID/ReleaseEventID/FetchEventID), which takes ids the queues did not.
// Flag races and deadlocks are the core's to find, as for the kernel API.
#pragma once
#include "runtime/kernel/api.h"
#include "sfumato_ascendc/pipe.h"

namespace sfumato::ascendc {

struct PipePair {
    isa::Pipe src, dst;
};
PipePair event_pipes(AscendC::HardEvent e);
isa::Pipe pipe_of(pipe_t p);
uint8_t event_id(AscendC::HardEvent e, int32_t id);
AscendC::TEventID alloc_event(AscendC::HardEvent e);
void release_event(AscendC::HardEvent e, AscendC::TEventID id);
AscendC::TEventID fetch_event(AscendC::HardEvent e);

}  // namespace sfumato::ascendc

namespace AscendC {

template <HardEvent event>
void SetFlag(int32_t eventID) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SetFlag");
    const sfumato::ascendc::PipePair pp = sfumato::ascendc::event_pipes(event);
    s.ctx->set_flag(pp.src, pp.dst, sfumato::ascendc::event_id(event, eventID));
}
template <HardEvent event>
void WaitFlag(int32_t eventID) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("WaitFlag");
    const sfumato::ascendc::PipePair pp = sfumato::ascendc::event_pipes(event);
    s.ctx->wait_flag(pp.src, pp.dst, sfumato::ascendc::event_id(event, eventID));
}
template <pipe_t pipe>
void PipeBarrier() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("PipeBarrier");
    s.ctx->pipe_barrier(sfumato::ascendc::pipe_of(pipe));
}
// Split parts: mode 0 = all cores of the kernel, 1 = the two AIVs of a core, 2 = the AIC and
// AIVs of a core. The set happens once `pipe` drained; the wait blocks `pipe`.
template <uint8_t modeId, pipe_t pipe>
void CrossCoreSetFlag(uint16_t flagId) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("CrossCoreSetFlag");
    sfumato::kernel::CrossCoreSetFlag(*s.ctx, modeId, static_cast<uint8_t>(flagId), sfumato::ascendc::pipe_of(pipe));
}
template <uint8_t modeId, pipe_t pipe = PIPE_S>
void CrossCoreWaitFlag(uint16_t flagId) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("CrossCoreWaitFlag");
    sfumato::kernel::CrossCoreWaitFlag(*s.ctx, modeId, static_cast<uint8_t>(flagId), sfumato::ascendc::pipe_of(pipe));
}
void SyncAll();

template <HardEvent evt>
TEventID TPipe::AllocEventID() {
    sfumato::ascendc::enter("TPipe::AllocEventID");
    return sfumato::ascendc::alloc_event(evt);
}
template <HardEvent evt>
void TPipe::ReleaseEventID(TEventID id) {
    sfumato::ascendc::enter("TPipe::ReleaseEventID");
    sfumato::ascendc::release_event(evt, id);
}
template <HardEvent evt>
TEventID TPipe::FetchEventID() {
    sfumato::ascendc::enter("TPipe::FetchEventID");
    return sfumato::ascendc::fetch_event(evt);
}
inline TEventID TPipe::FetchEventID(HardEvent evt) {
    sfumato::ascendc::enter("TPipe::FetchEventID");
    return sfumato::ascendc::fetch_event(evt);
}

}  // namespace AscendC

// The vendor's examples call GetTPipePtr() without the namespace.
using AscendC::GetTPipePtr;
