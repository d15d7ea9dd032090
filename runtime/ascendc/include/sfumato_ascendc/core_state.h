// The implicit per-core context of Ascend C. A kernel calls GetBlockIdx() or constructs a TPipe
// without saying which core it runs on; on sfumato every block's kernel code runs as a
// coroutine of the one simulation thread, so "the current core" is a pointer that the launch
// sets when a block starts and that a sink decorator (runtime/ascendc/core_sink.cpp) restores
// after every call into the core, the only place where another block's code can run. Each API
// call also records its name here, so an error raised inside it names the block and the call.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/kernel/kernel_context.h"
#include "sfumato_ascendc/defs.h"

namespace AscendC {
class TPipe;
}
namespace sfumato::isa {
class IMemView;
}

namespace sfumato::ascendc {

// What an IBShare Matmul's shared-B buffer holds (matmul_l1.h's share_b1), kept across a mix kernel's serving
// passes: the buffer's L1 address, the B it holds (GM address; orgN, orgKb, singleN, singleK, baseN, baseK,
// transposed) and what each slot holds.
struct MmShareSlots {
    enum class Slot : uint8_t { Empty, Current, Stale };  // never loaded; that B's slice; another B's
    uint64_t l1 = 0, gm = 0;
    std::array<uint32_t, 7> shape{};
    std::vector<Slot> slots;
};
struct CoreState {
    kernel::KernelContext* ctx = nullptr;
    isa::IInstrSink* sink = nullptr;  // the decorated sink
    isa::IMemView* mem = nullptr;     // the core's memories (functional mode), for scalar access
    const char* call = "kernel";      // the Ascend C call in progress
    int64_t block_idx = 0, block_num = 1;
    int64_t sub_block_idx = 0, task_ratio = 1;
    int core_type = AscendC::AIV;  // AscendC::AIC / AIV (coupled cores count as both)
    bool coupled = false;
    AscendC::TPipe* pipe = nullptr;  // the most recent TPipe (GetTPipePtr)
    uint8_t* sys_workspace = nullptr;  // SetSysWorkspace / GetSysWorkSpacePtr
    void* mm_shared_l0 = nullptr;      // the L0A/L0B queues Matmuls with isA2B2Shared share
    // Event ids taken by AllocEventID and returned by ReleaseEventID, per pipe pair.
    std::vector<uint8_t> free_events[isa::kNumPipes * isa::kNumPipes];
    // SetPadValue: the value DataCopyPad pads with when its isPad is false.
    bool pad_set = false;
    double pad_value = 0;
    // The load3d registers (SetFmatrix: the feature map's height, width and padding, left for L0A and right for
    // L0B; SetLoadDataPaddingValue: the pad value), read by a LoadData whose IsResetLoad3dConfig says not to set
    // them from its own parameters.
    uint16_t fmatrix_h[2] = {0, 0}, fmatrix_w[2] = {0, 0};
    uint8_t fmatrix_pad[2][4] = {};
    bool fmatrix_set[2] = {false, false};
    double load3d_pad_value = 0;
    // SetAtomicAdd/Max/Min: stores into GM add (1), keep the max (2) or the min (3) in this type.
    uint8_t atomic_op = 0;
    isa::DType atomic_dtype = isa::DType::FP32;
    // The vector mask register as the kernel last set it (SetVectorMask), and its mode: in
    // counter mode (SetMaskCount) it holds an element count instead of a lane mask.
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;
    bool mask_counter = false;
    // The compare-mask register (SetCmpMask), as the address of the tensor it was set from (select.h).
    bool cmp_set = false;
    isa::Addr cmp_addr;
    // The last per-repeat/whole reduction's result (GetReduceRepeatSumSpr and friends read it).
    isa::Pos reduce_pos = isa::Pos::UB;
    uint64_t reduce_addr = 0;
    // The last MrgSort (GetMrgSortResult recomputes its lists' counts: the chip's VMS4_SR).
    bool mrg_any = false, mrg_exhausted = false;
    isa::DType mrg_dtype = isa::DType::FP32;
    uint8_t mrg_valid = 0;
    uint16_t mrg_len[4] = {};
    isa::Addr mrg_list[4] = {};
    // Bump allocators of LocalMemAllocator / static tensors, per physical buffer.
    uint64_t local_next[static_cast<size_t>(isa::Pos::kCount)] = {};
    // Scalar GM reads of one word that keep returning one value (a poll): address, value, count.
    uint64_t poll_addr = ~0ull, poll_value = 0;
    uint32_t polls = 0;
    // The FixPipe's scalar quantisation word (SetFixpipePreQuantFlag).
    uint64_t fix_quant = 0;
    // SetFixPipeConfig: the FixPipe buffer address of the per-channel quantisation words (the
    // FPC register's QuantPreAddr, 128-byte units), -1 while no SetFixPipeConfig set it.
    int64_t fix_fpc_quant = -1;
    // SetFixpipeNz2ndFlag: the ND matrices of a DataCopy CO1 -> GM/L1 with nz2ndEn.
    uint16_t fix_nd_num = 1, fix_src_nd = 0;
    uint32_t fix_dst_nd = 0;
    // A mix kernel's block (its AIVs numbered b * aiv_per_aic + sub), and, on its AIC, whether the
    // kernel body runs again as each AIV's Matmul server (mm_server: the Matmul calls are the AIVs').
    bool mix = false;
    uint32_t aiv_per_aic = 0;
    uint64_t aiv_ub_bytes = 0;  // an AIV's UB: a mix kernel's AIC sees it (core.cpp's CoreSink)
    std::array<uint64_t, static_cast<size_t>(isa::Pos::kCount)> aic_bytes{};  // the AIC's buffers: its AIVs see them
    bool mm_server = false;
    // An AIV of a mix kernel whose Matmul its AIC serves (a client): the body's cube-side work (instructions on
    // L1, L0A/B/C, the bias table or FixPipe buffer, the MTE1, M and FIX pipes and flags naming them: a TSCM
    // operand's copy) is the AIC's, done in its serving pass; the AIV drops it.
    bool mm_client = false;
    // The IBShare Matmuls' shared-B buffers (what each slot holds), kept across a mix kernel's serving
    // passes.
    std::vector<MmShareSlots> mm_share;
};
// Thrown by a client-mode Matmul's registration on a mix kernel's AIC (ASCENDC_CUBE_ONLY not defined):
// run_block then runs the kernel body once for each of the block's AIVs, as that AIV, on the AIC (the
// server doing each client's Matmul calls in turn); the AIVs' own Matmul calls do nothing.
struct MatmulServeClients {};
// Thrown by Matmul::End in a serving pass: the client's End ends the pass (its later vector work is the
// AIV's own). After each pass the AIC sets cross-core flag kMmServedFlag in mode 2 (each of its AIVs counts
// one) once its FixPipe drained; the client AIV of sub-block i waits for i + 1 counts at its End (passes
// run in sub-block order), so what the AIC wrote for it is in GM when the AIV goes on. The id is the last of
// Atlas A2's 0..10: a client-mode kernel using that id itself would be miscounted.
struct MatmulPassDone {};
inline constexpr uint8_t kMmServedFlag = 10;

extern CoreState* g_current;

// The running block's state; throws InputError naming `call` when no kernel is running.
CoreState& current_core(const char* call);
// Records `call` as the call in progress and returns the running block's state.
inline CoreState& enter(const char* call) {
    CoreState* s = g_current;
    if (!s) return current_core(call);
    s->call = call;
    return *s;
}
[[noreturn]] void fail(const std::string& msg);  // InputError with the current call named

}  // namespace sfumato::ascendc

// The vendor's built-in variables for the running block (kept equal to GetBlockIdx() and
// GetBlockNum() by the context switch) and the core type tested by ASCEND_IS_AIV/AIC.
extern int64_t block_idx;
extern int64_t block_num;
// Compiled once per core kind (sfumato-asc does so for a kernel that uses g_coreType as a constant,
// as the vendor's compiler builds an AIC and an AIV program): g_coreType is that kind, a constant.
// Otherwise one run-time variable, the running block's kind.
#if defined(__DAV_CUBE__) && defined(__DAV_VEC__)
#error "__DAV_CUBE__ and __DAV_VEC__ both defined: one compilation per core kind"
#elif defined(__DAV_CUBE__)
constexpr int g_coreType = AscendC::AIC;
#elif defined(__DAV_VEC__)
constexpr int g_coreType = AscendC::AIV;
#else
extern int g_coreType;
#endif
namespace sfumato::ascendc {
#if defined(__DAV_CUBE__) || defined(__DAV_VEC__)
constexpr bool core_is(int kind) { return g_coreType == kind; }
#else
inline bool core_is(int kind) { return g_coreType == kind || g_coreType == AscendC::MIX; }
#endif
}  // namespace sfumato::ascendc
// Through core_is: a program naming g_coreType itself is what makes sfumato-asc compile per core kind.
#define ASCEND_IS_AIV (::sfumato::ascendc::core_is(AscendC::AIV))
#define ASCEND_IS_AIC (::sfumato::ascendc::core_is(AscendC::AIC))
#define ASCEND_IS_NOT_AIV (!(ASCEND_IS_AIV))
#define ASCEND_IS_NOT_AIC (!(ASCEND_IS_AIC))

namespace AscendC {

inline int64_t GetBlockIdx() { return sfumato::ascendc::enter("GetBlockIdx").block_idx; }
inline int64_t GetBlockNum() { return sfumato::ascendc::enter("GetBlockNum").block_num; }
inline int64_t GetSubBlockIdx() { return sfumato::ascendc::enter("GetSubBlockIdx").sub_block_idx; }
inline int64_t GetTaskRation() { return sfumato::ascendc::enter("GetTaskRation").task_ratio; }
inline int64_t GetTaskRatio() { return GetTaskRation(); }
inline void InitSocState() { sfumato::ascendc::enter("InitSocState"); }
// The AIVs a block's AIC works with: a mix kernel's AIVs per AIC (its task ratio), 1 in a kernel of
// one core kind (each block is one core).
inline int64_t GetSubBlockNum() {
    const sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("GetSubBlockNum");
    return s.mix && s.aiv_per_aic > 1 ? int64_t{s.aiv_per_aic} : 1;
}
// The base address of the chip's cross-core flag registers (the launch's FFTS address): sfumato's
// cross-core flags (CrossCoreSetFlag/WaitFlag) need no address, so the call only checks it runs in a kernel.
inline void SetSyncBaseAddr(uint64_t) { sfumato::ascendc::enter("SetSyncBaseAddr"); }

}  // namespace AscendC
