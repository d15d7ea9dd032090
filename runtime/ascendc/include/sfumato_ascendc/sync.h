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
// A cross-core flag id in the reference's range 0..10 (Atlas A2), or the run stops naming the call.
uint8_t cross_flag_id(const char* call, uint16_t id);
// GroupBarrier's two halves (explained with the GM synchronisation below).
void group_arrive(const GmSpan& gm, uint32_t arrivers, uint32_t waiters, uint32_t index, uint32_t count);
void group_wait(const GmSpan& gm, uint32_t arrivers, uint32_t waiters, uint32_t index, uint32_t count);

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
// AIVs of a core. The set happens once `pipe` drained; the wait blocks `pipe`. Counted as the
// chip does (isa::CrossFlagParams::all): a mode-0 set counts once every core of the setter's kind
// in the launch has set, a mode-1 set once both AIVs have, an AIV's mode-2 set once both AIVs
// have; a wait consumes the core's own counter whatever its mode.
template <uint8_t modeId, pipe_t pipe>
void CrossCoreSetFlag(uint16_t flagId) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("CrossCoreSetFlag");
    sfumato::kernel::CrossCoreSetFlag(*s.ctx, modeId,
                                      sfumato::ascendc::cross_flag_id("CrossCoreSetFlag", flagId),
                                      sfumato::ascendc::pipe_of(pipe), true);
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
void CrossCoreWaitFlag(uint16_t flagId) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("CrossCoreWaitFlag");
    sfumato::kernel::CrossCoreWaitFlag(*s.ctx, modeId,
                                       sfumato::ascendc::cross_flag_id("CrossCoreWaitFlag", flagId),
                                       sfumato::ascendc::pipe_of(pipe), true);
}
void SyncAll();
// The core's system counter (cycles of the scalar unit's clock).
int64_t GetSystemCycle();

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

// Ordering across kernels: a task may start its first instructions while the previous task of
// the stream finishes, WaitPreTaskEnd holding back what follows. sfumato starts a launch when the
// previous one on its stream completed, so the previous task has always ended here and the next
// one cannot start early: both calls only name themselves (no instruction).
inline void WaitPreTaskEnd() { sfumato::ascendc::enter("WaitPreTaskEnd"); }
inline void SetNextTaskStart() { sfumato::ascendc::enter("SetNextTaskStart"); }

// Synchronisation between a group of AIVs that arrive and a group that waits for all of them.
enum class PipeMode : uint8_t { SCALAR_MODE = 0, MTE3_MODE = 1, MAX };
template <PipeMode pipeMode = PipeMode::MTE3_MODE>
class GroupBarrier {
public:
    GroupBarrier(GM_ADDR groupWorkspace, uint32_t arriveSizeIn, uint32_t waitSizeIn)
        : m_arrive(arriveSizeIn), m_wait(waitSizeIn) {
        sfumato::ascendc::enter("GroupBarrier");
        static_assert(pipeMode == PipeMode::MTE3_MODE, "AscendC::GroupBarrier supports PipeMode::MTE3_MODE only");
        if (arriveSizeIn == 0 || arriveSizeIn > 16 || waitSizeIn == 0)
            sfumato::ascendc::fail("GroupBarrier of " + std::to_string(arriveSizeIn) + " arrivers and " +
                                   std::to_string(waitSizeIn) + " waiters (1..16 arrivers, at least one waiter)");
        m_gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(groupWorkspace), GetWorkspaceLen());
    }
    void Arrive(uint32_t arriveIndex) {
        sfumato::ascendc::enter("GroupBarrier::Arrive");
        if (arriveIndex >= m_arrive)
            sfumato::ascendc::fail("arriveIndex " + std::to_string(arriveIndex) + " of " + std::to_string(m_arrive));
        sfumato::ascendc::group_arrive(m_gm.span(), m_arrive, m_wait, arriveIndex, ++m_count);
    }
    void Wait(uint32_t waitIndex) {
        sfumato::ascendc::enter("GroupBarrier::Wait");
        if (waitIndex >= m_wait)
            sfumato::ascendc::fail("waitIndex " + std::to_string(waitIndex) + " of " + std::to_string(m_wait));
        sfumato::ascendc::group_wait(m_gm.span(), m_arrive, m_wait, waitIndex, ++m_count);
    }
    uint64_t GetWorkspaceLen() const { return uint64_t(m_wait) * 512; }

private:
    uint32_t m_arrive, m_wait, m_count = 0;
    GlobalTensor<uint8_t> m_gm;
};

}  // namespace AscendC

// The vendor's examples call GetTPipePtr() without the namespace.
using AscendC::GetTPipePtr;

// Synchronisation between blocks through global memory (IBSet/IBWait): the set block stores 1 in
// its slot of gmWorkspace (32 bytes per block x event, 8 events per block) once every earlier
// instruction of the block completed; the waiting block reads the slot into ubWorkspace (MTE2),
// waits for the read, and repeats until the slot was set. The set becomes visible to the waiter
// when the store completes in simulated time, also in timing mode (where GM holds no data): the
// layer keeps the set slots beside the memory, so both modes take the same cycles.
namespace sfumato::ascendc {
void ib_set(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes, int32_t block, int32_t event);
void ib_wait(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes, int32_t block, int32_t event);
// Deterministic computation (blocks in blockIdx order): one 32-byte slot per block; Init clears
// the block's own slot, WaitPreBlock waits for the previous block's, NotifyNextBlock sets its own.
void determine_init(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes);
void determine_wait(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes);
void determine_notify(const GmSpan& gm, isa::Pos ub_pos, uint32_t ub_addr, uint32_t ub_bytes);
// GroupBarrier: 512 bytes of the workspace per waiter, a 32-byte slot in it per arriver. Arrive
// stores the arriver's arrival count (1, 2, ... on its calls) into its slot of every waiter
// through MTE3 once the block's earlier instructions completed; Wait reads the waiter's slots
// (MTE2) until every arriver's count reached the waiter's own count of Wait calls. Both go
// through the last 512 bytes of UB (the API reserves the end of UB). The counts become visible
// when the stores complete, in both modes, as IBSet's slots.
// (declared at the top: GroupBarrier below uses them)
}  // namespace sfumato::ascendc

namespace AscendC {
template <bool isAIVOnly = true>
void IBSet(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx,
           int32_t eventID) {
    sfumato::ascendc::enter("IBSet");
    sfumato::ascendc::ib_set(gmWorkspace.span(), ubWorkspace.kt().pos(), ubWorkspace.kt().address(),
                             ubWorkspace.GetLength(), blockIdx, eventID);
}
template <bool isAIVOnly = true>
void IBWait(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx,
            int32_t eventID) {
    sfumato::ascendc::enter("IBWait");
    sfumato::ascendc::ib_wait(gmWorkspace.span(), ubWorkspace.kt().pos(), ubWorkspace.kt().address(),
                              ubWorkspace.GetLength(), blockIdx, eventID);
}
inline void InitDetermineComputeWorkspace(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace) {
    sfumato::ascendc::enter("InitDetermineComputeWorkspace");
    sfumato::ascendc::determine_init(gmWorkspace.span(), ubWorkspace.kt().pos(), ubWorkspace.kt().address(),
                                     ubWorkspace.GetLength());
}
inline void WaitPreBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace) {
    sfumato::ascendc::enter("WaitPreBlock");
    sfumato::ascendc::determine_wait(gmWorkspace.span(), ubWorkspace.kt().pos(), ubWorkspace.kt().address(),
                                     ubWorkspace.GetLength());
}
inline void NotifyNextBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace) {
    sfumato::ascendc::enter("NotifyNextBlock");
    sfumato::ascendc::determine_notify(gmWorkspace.span(), ubWorkspace.kt().pos(), ubWorkspace.kt().address(),
                                       ubWorkspace.GetLength());
}
}  // namespace AscendC

// The intrinsic form of PipeBarrier<pipe>: the pipe is an argument.
inline void pipe_barrier(pipe_t pipe) {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("pipe_barrier");
    s.ctx->pipe_barrier(sfumato::ascendc::pipe_of(pipe));
}
