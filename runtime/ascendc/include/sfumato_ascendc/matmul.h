// The high-level Matmul of the public Ascend C API (Matmul<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG>,
// REGIST_MATMUL_OBJ) over the basic layer: every step is a basic-API call and issues its instructions. Per
// base block of C, for each baseK slice: A and B GM -> L1 (Nd2Nz), L1 -> L0A/L0B (LoadData; 1-byte B not
// transposed by square transposes), the bias GM -> L1 -> the bias table, Mmad into L0C; then the FixPipe
// L0C -> GM (ND/NZ, converted or quantised to C's type), or, for a mix kernel's AIV taking C into its UB,
// L0C -> the workspace GM and GM -> UB on the AIV. TQue between the steps (depthA1, dbL0A, dbL0C) let the
// MTE2, MTE1, M and FIX pipes overlap as their flags allow. README.md says what is not modelled.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/cube_tiling.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/matmul_config.h"
#include "sfumato_ascendc/matmul_l1.h"
#include "sfumato_ascendc/matmul_parts.h"
#include "sfumato_ascendc/pipe.h"
#include "sfumato_ascendc/sync.h"
#include "sfumato_ascendc/unsupported.h"

namespace sfumato::ascendc {
// The L0A/L0B/L0C queues and the bias table the core's Matmuls share.
struct MmL0 {
    AscendC::TQue<AscendC::TPosition::A2, 1> a2;
    AscendC::TQue<AscendC::TPosition::B2, 1> b2;
    AscendC::TQue<AscendC::TPosition::CO1, 1> c;
    AscendC::TBuf<AscendC::TPosition::C2> bt;  // the bias table
    uint32_t a_bytes = 0, b_bytes = 0, c_bytes = 0, bt_bytes = 0;
};
// The run's tiling checks (runtime/ascendc/matmul.cpp): a tiling the Matmul cannot run stops the
// run naming the field.
void matmul_check_tiling(const TCubeTiling& t, uint32_t c0, bool bias);
template <class MM>
struct MmOps;  // IterateBatch's rounds, C into UB (matmul_ops.h)
template <class MM>
struct MmLoad;  // a block's L1 -> L0A/L0B loads and the bias table's (matmul_load.h)
}  // namespace sfumato::ascendc

// Whether the including source defined ASCENDC_CUBE_ONLY (the Matmuls run on the cube cores themselves)
// or not (mix kernels' AIVs are clients of their AIC's Matmul server).
#ifdef ASCENDC_CUBE_ONLY
constexpr bool kSfumatoMatmulCubeOnly = true;
#else
constexpr bool kSfumatoMatmulCubeOnly = false;
#endif

namespace AscendC {

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class MM_CB = MatmulCallBackFunc<nullptr, nullptr, nullptr>,
          template <const auto&, class...> class MATMUL_POLICY = MatmulPolicy>
class Matmul {
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    using CallBacks = MM_CB;  // the user's copy callbacks (matmul_l1.h's loads)
    using L0cT =
        std::conditional_t<std::is_same_v<SrcAT, int8_t> || std::is_same_v<SrcAT, int4b_t>, int32_t, float>;
    static_assert(std::is_same_v<SrcAT, SrcBT>,
                  "Matmul: A and B have one element type in sfumato's Ascend C layer");
    static_assert(!MM_CB::kOut,
                  "AscendC::Matmul with a MatmulCallBackFunc DataCopyOut callback is not supported by "
                  "sfumato's Ascend C layer");
    // A in TSCM: the core's A (singleCoreM x singleCoreK) in L1 as NZ, SetTensorA taking the L1 tensor.
    static constexpr bool kTscmA = A_TYPE::pos == TPosition::TSCM;
    static_assert(
        (A_TYPE::pos == TPosition::GM || (kTscmA && A_TYPE::format == CubeFormat::NZ)) && B_TYPE::pos == TPosition::GM,
        "AscendC::Matmul with A or B outside GM (VECOUT, B in TSCM, A in TSCM not NZ) is not supported by sfumato's "
        "Ascend C layer");
    static_assert((A_TYPE::format == CubeFormat::ND || A_TYPE::format == CubeFormat::VECTOR || kTscmA) &&
                      B_TYPE::format == CubeFormat::ND,
                  "AscendC::Matmul with A or B not in ND format (A also VECTOR) is not supported by "
                  "sfumato's Ascend C layer");
    static constexpr bool kUpper =
        std::is_same_v<MATMUL_POLICY<MM_CFG>, Impl::Detail::TrianUpperMatmulPolicy<MM_CFG>>;
    static constexpr bool kLower =
        std::is_same_v<MATMUL_POLICY<MM_CFG>, Impl::Detail::TrianLowerMatmulPolicy<MM_CFG>>;
    static constexpr bool kBsngd = A_TYPE::layout == LayoutMode::BSNGD;
    static_assert(
        ((A_TYPE::layout == LayoutMode::NONE || A_TYPE::layout == LayoutMode::NORMAL) &&
         (B_TYPE::layout == LayoutMode::NONE || B_TYPE::layout == LayoutMode::NORMAL)) ||
            (kBsngd && B_TYPE::layout == LayoutMode::BSNGD && C_TYPE::layout == LayoutMode::BSNGD),
        "AscendC::Matmul batch layouts other than NORMAL and BSNGD (for A, B and C) (SBNGD, BNGS1S2) are not "
        "supported by sfumato's Ascend C layer");
    static_assert(C_TYPE::format == CubeFormat::ND || C_TYPE::format == CubeFormat::NZ ||
                      C_TYPE::format == CubeFormat::ND_ALIGN,
                  "AscendC::Matmul: C in ND, ND_ALIGN or NZ format");
    static constexpr MatmulConfig kCfg = sfumato::ascendc::mm_cfg_of(MM_CFG);
    static constexpr uint32_t kBits = SizeOfBits<SrcAT>::value;  // 4 for int4b_t
    static constexpr uint32_t kC0 = 256 / kBits;  // elements of one 32-byte row of a fractal
    // int8 and int4 B not transposed: loaded by square transposes of kSquareFr fractals (int8: 32 x 32 of two,
    // int4: 64 x 64 of four), its L1 tile's K rows padded to the square's side.
    static constexpr bool kSquareB = std::is_same_v<SrcBT, int8_t> || std::is_same_v<SrcBT, int4b_t>;
    static constexpr uint32_t kSquareFr = std::is_same_v<SrcBT, int4b_t> ? 4 : 2;
    // 4:2 sparse B (SparseMatmulType; matmul_load.h): the reference's int8 B, transposed, its index in GM.
    static constexpr bool kSparse = sfumato::ascendc::kIsSparseB<B_TYPE>;
    // IBShare of B alone (MatmulType's IBSHARE on B, not on A): B kept whole in L1 in a mix kernel's serving
    // passes (matmul_l1.h's MmShareB).
    static constexpr bool kShareB = B_TYPE::ibShare && !A_TYPE::ibShare && !kSparse;
    static_assert(!kSparse || (std::is_same_v<SrcBT, int8_t> && B_TYPE::isTrans),
                  "AscendC::SparseMatmulType: B is int8_t and transposed (ISTRANS true), as the reference says");

public:
    void Init(const TCubeTiling* __restrict cubeTiling, TPipe* tpipe = nullptr) {
        const sfumato::ascendc::CoreState& st = sfumato::ascendc::enter("Matmul::Init");
        // Mix mode (ASCENDC_CUBE_ONLY not defined, a mix kernel): the AIVs' Matmuls are clients of their
        // AIC's server. Here the AIC runs the kernel body once for each of its AIVs, as that AIV, doing its
        // Matmul calls (run_block, on MatmulServeClients), and the AIVs' own calls do nothing.
        if (!kSfumatoMatmulCubeOnly && st.mix && !st.coupled && !st.mm_server) {
            if (st.core_type == AIC) throw sfumato::ascendc::MatmulServeClients{};
            // The client keeps the tiling to follow its server's blocks (what Iterate returns, the block
            // GetTensorC copies into its UB).
            m_client = true;
            sfumato::ascendc::g_current->mm_client = true;
            if (cubeTiling)
                m_t = *cubeTiling;
            else if constexpr (std::is_same_v<std::decay_t<decltype(MM_CFG)>, MatmulApiStaticTiling>)
                m_t = static_tiling();
            m_singleM = m_t.singleCoreM, m_singleN = m_t.singleCoreN, m_singleK = m_t.singleCoreK;
            m_ready = m_t.baseM > 0 && m_t.baseN > 0 && m_t.baseK > 0;
            return;
        }
        if (st.core_type != AIC && !st.coupled && !st.mm_server)
            sfumato::ascendc::fail(
                "Matmul on a vector core outside a mix kernel's client mode (a vector-only kernel) is not "
                "supported by sfumato's Ascend C layer");
        if (cubeTiling) {
            m_t = *cubeTiling;
        } else if constexpr (std::is_same_v<std::decay_t<decltype(MM_CFG)>, MatmulApiStaticTiling>) {
            m_t = static_tiling();  // the constant tiling; SetOrgShape and SetTail give the shapes
        } else {
            sfumato::ascendc::fail("Matmul::Init without a tiling (and MM_CFG is no constant tiling)");
        }
        sfumato::ascendc::matmul_check_tiling(m_t, kC0, m_t.isBias != 0);
        m_pipe = tpipe ? tpipe : GetTPipePtr();
        if (!m_pipe) sfumato::ascendc::fail("Matmul::Init without a TPipe");
        m_singleM = m_t.singleCoreM, m_singleN = m_t.singleCoreN, m_singleK = m_t.singleCoreK;
        m_orgM = m_t.M, m_orgN = m_t.N, m_orgKa = m_t.Ka, m_orgKb = m_t.Kb, m_orgKc = m_t.N;
        init_buffers();
        m_ready = true;
    }
    void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
        if (m_client) return;
        m_orgM = orgM, m_orgN = orgN, m_orgKa = orgKa, m_orgKb = orgKb, m_orgKc = orgKc ? orgKc : orgN;
    }
    void SetSingleShape(int singleM, int singleN, int singleK) { SetTail(singleM, singleN, singleK); }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
        if (tailM > 0) m_singleM = tailM;
        if (tailN > 0) m_singleN = tailN;
        if (tailK > 0) m_singleK = tailK;
    }
    void SetTensorA(const GlobalTensor<SrcAT>& gm, bool isTransposeA = false) {
        if (m_client) return;
        m_a = gm, m_transA = isTransposeA, m_iter = 0;
    }
    void SetTensorA(const LocalTensor<SrcAT>& l1, bool isTransposeA = false) {
        static_assert(kTscmA, "Matmul::SetTensorA with a LocalTensor needs A in TSCM (MatmulType<TPosition::TSCM, NZ>)");
        if (m_client) return;
        if (isTransposeA) sfumato::ascendc::fail("Matmul::SetTensorA: a transposed A in TSCM is not modelled");
        m_aL1 = l1, m_transA = false, m_iter = 0;
    }
    void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false) {
        if (m_client) return;
        m_b = gm, m_transB = isTransposeB, m_iter = 0;
    }
    // The index matrix of a SparseMatmulType B: 2-bit indices four a byte, NZ (16 rows of n x 8 bytes a fractal,
    // one per 16 x 64 of the original B; k-groups of 64 outermost over all of N's rows).
    void SetSparseIndex(const GlobalTensor<uint8_t>& indexGlobal) {
        static_assert(kSparse, "Matmul::SetSparseIndex needs B of SparseMatmulType");
        if (m_client) return;
        m_idx = indexGlobal, m_hasIdx = true;
    }
    void SetBias(const GlobalTensor<BiasT>& biasGlobal) {
        if (m_client) return;
        if (!m_t.isBias) sfumato::ascendc::fail("Matmul::SetBias with a tiling whose isBias is 0");
        m_bias = biasGlobal, m_hasBias = true;
    }
    void DisableBias() { m_hasBias = false; }
    void ClearBias() { m_hasBias = false; }
    void SetHF32(bool enableHF32 = false, int32_t transMode = 0) {
        if (enableHF32) sfumato::ascendc::fail("Matmul::SetHF32(true): the HF32 mode is not modelled");
        (void)transMode;
    }
    // Quantised C: the FixPipe's conversion of each block (int32 -> half: DEQF16, fp32 -> int8: QF322B8_PRE,
    // int32 -> int8: REQ8) with one scale word for all of C, or (SetQuantVector) one per column of C, moved
    // GM -> L1 per block and read by the FixPipe from there (the V* modes).
    void SetQuantScalar(const uint64_t quantScalar) { m_quant = 1, m_quantScalar = quantScalar; }
    void SetQuantVector(const GlobalTensor<uint64_t>& quantTensor) {
        sfumato::ascendc::enter("Matmul::SetQuantVector");
        m_quant = 2, m_quantVec = quantTensor;
        if (!m_client && !m_quantBuf)
            m_pipe->InitBuffer(m_qbuf, sfumato::ascendc::mm_align(m_t.baseN * 8, 32)), m_quantBuf = true;
    }
    void SetUserDefInfo(const uint64_t tilingPtr) { m_userInfo = tilingPtr; }
    void SetSelfDefineData(const uint64_t dataPtr) { m_selfData = dataPtr; }
    void SetLocalWorkspace(const LocalTensor<uint8_t>&) {}
    void SetSubBlockIdx(uint8_t) {}  // the AIV a Matmul object serves in mix mode: one core's here
    // The GM where a mix kernel's AIC puts the blocks GetTensorC hands to an AIV's UB (the chip's path on
    // Atlas A2: L0C -> GM -> UB): the core's C, singleCoreM x singleCoreN of C's type, row-major.
    template <class T>
    void SetWorkspace(const GlobalTensor<T>& gm) {
        m_ws.SetGlobalBuffer(reinterpret_cast<__gm__ DstT*>(gm.GetPhyAddr()));
        m_hasWs = true;
    }
    void SetWorkspace(__gm__ const void* addr, int) {
        m_ws.SetGlobalBuffer(reinterpret_cast<__gm__ DstT*>(const_cast<void*>(addr)));
        m_hasWs = true;
    }

    // The next base block of C into L0C; false once every block was computed.
    // Iterate<false> (asynchronous) starts the run over every block: each GetTensorC<false> then takes the
    // next one (computed there, so the blocks come in Iterate's order).
    template <bool sync = true>
    bool Iterate(bool enPartialSum = false) {
        if constexpr (!sync) {
            sfumato::ascendc::enter("Matmul::Iterate");
            if (m_pending)
                sfumato::ascendc::fail("Matmul::Iterate<false> before GetTensorC took the previous block");
            m_async = true, m_asyncPartial = enPartialSum, m_iter = 0;
            return true;
        }
        return next_block(enPartialSum, nullptr);
    }
    // The next block into the caller's L0C tensor (C_TYPE in CO1): the caller drains it.
    template <bool sync = true, class T>
    bool Iterate(bool enPartialSum, const LocalTensor<T>& localCmatrix) {
        // Asynchronous or not: the block is in the caller's L0C when the call returns.
        if (localCmatrix.GetPosition() != TPosition::CO1)
            sfumato::ascendc::fail("Matmul::Iterate into a tensor outside CO1 (L0C)");
        const LocalTensor<L0cT> c = localCmatrix.template ReinterpretCast<L0cT>();
        return next_block(enPartialSum, &c);
    }
    // sfumato: Iterate's work (the next block's indices, then its computation).
    bool next_block(bool enPartialSum, const LocalTensor<L0cT>* user) {
        sfumato::ascendc::enter("Matmul::Iterate");
        if (m_client && !m_ready) return false;
        if (!m_ready) sfumato::ascendc::fail("Matmul::Iterate before Init (REGIST_MATMUL_OBJ)");
        if (m_pending) sfumato::ascendc::fail("Matmul::Iterate before GetTensorC took the previous block");
        const uint32_t mIters = sfumato::ascendc::mm_ceil(m_singleM, m_t.baseM);
        const uint32_t nIters = sfumato::ascendc::mm_ceil(m_singleN, m_t.baseN);
        const bool orderN = kCfg.iterateOrder == IterateOrder::UNDEF
                                ? m_t.iterateOrder == 1
                                : kCfg.iterateOrder == IterateOrder::ORDER_N;
        // isPartialOutput: each Iterate is one baseK step of a block (k innermost), its partial product
        // alone in L0C (not accumulated over K: the caller sums the steps).
        const uint32_t kSteps = kCfg.isPartialOutput ? sfumato::ascendc::mm_ceil(m_singleK, m_t.baseK) : 1;
        do {
            if (m_iter >= mIters * nIters * kSteps) {
                m_iter = 0;
                return false;
            }
            const uint32_t mn = m_iter / kSteps;
            m_kstep = kCfg.isPartialOutput ? static_cast<int32_t>(m_iter % kSteps) : -1;
            m_mi = orderN ? mn / nIters : mn % mIters;
            m_ni = orderN ? mn % nIters : mn / mIters;
            ++m_iter;
        } while ((kUpper && m_mi > m_ni) || (kLower && m_mi < m_ni));
        if (m_client) {  // the server computes the block; the client follows its indices
            m_curM = std::min<uint32_t>(m_t.baseM, m_singleM - m_mi * m_t.baseM);
            m_curN = std::min<uint32_t>(m_t.baseN, m_singleN - m_ni * m_t.baseN);
            m_pending = true;
            return true;
        }
        if (user) {
            compute_block(enPartialSum, *user);
        } else {
            LocalTensor<L0cT> c = l0().c.template AllocTensor<L0cT>();
            compute_block(enPartialSum, c);
            l0().c.EnQue(c);
            m_pending = true;
        }
        return true;
    }
    // The block Iterate computed, L0C -> GM at its place in C (or packed when enSequentialWrite).
    template <bool sync = true>
    void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
        if (!take_block()) {  // a client: the block is in GM once its server's pass has ended
            if (m_ready) wait_served();
            m_pending = false;
            return;
        }
        if (enAtomic > 1)
            sfumato::ascendc::fail("Matmul::GetTensorC with enAtomic " + std::to_string(enAtomic) +
                                   " (max/min): only 1 (add) is modelled");
        if (enAtomic) SetAtomicAdd<DstT>();
        copy_out(gm, enSequentialWrite);
        if (enAtomic) SetAtomicNone();
    }
    // The block into an AIV's UB (a mix kernel's client, C in VECIN/VECCALC): the AIC stores it at its place
    // in the workspace (SetWorkspace: the core's C, singleCoreM x singleCoreN, row-major), the AIV copies it
    // into the tensor, curM rows of curN elements each padded to 32 bytes (DataCopyPad). enAtomic and
    // enSequentialWrite do not apply (the block is the tensor's).
    template <bool sync = true>
    void GetTensorC(const LocalTensor<DstT>& ub, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
        (void)enSequentialWrite;
        sfumato::ascendc::MmOps<Matmul>::to_ub(*this, ub, enAtomic);
    }
    template <bool sync = true>
    void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    bool waitIterateAll = false, bool fakeMsg = false) {
        (void)waitIterateAll, (void)fakeMsg;
        if (m_client) return;  // its End waits for the server's pass
        m_async = false;
        m_iter = 0;
        while (Iterate()) GetTensorC(gm, enAtomic, enSequentialWrite);
    }
    template <bool sync = true>
    void IterateAll(const LocalTensor<DstT>&, uint8_t = 0) {
        static_assert(
            !sync && sync,
            "Matmul::IterateAll into a LocalTensor (VECIN) is not supported by sfumato's Ascend C layer");
    }
    void WaitIterateAll() {}
    // A batch of matmuls in the NORMAL layout: matrix i of A (i < batchA), B (i < batchB) and C at i times
    // its size (or matrixStrideA/B elements apart), each computed as IterateAll does; with fewer matrices of
    // one operand than of the other, its matrices repeat (i mod its count). The bias is every matrix's.
    template <bool sync = true, bool waitIterateBatch = false>
    void IterateBatch(const GlobalTensor<DstT>& gm, uint32_t batchA, uint32_t batchB, bool enSequentialWrite,
                      const uint32_t matrixStrideA = 0, const uint32_t matrixStrideB = 0,
                      const uint32_t matrixStrideC = 0, const bool enPartialSum = false,
                      const uint8_t enAtomic = 0) {
        sfumato::ascendc::enter("Matmul::IterateBatch");
        if (m_client) return;
        static_assert(
            sync, "Matmul::IterateBatch<false> (asynchronous) is not supported by sfumato's Ascend C layer");
        if (enPartialSum) sfumato::ascendc::fail("Matmul::IterateBatch with enPartialSum is not modelled");
        sfumato::ascendc::MmOps<Matmul>::run(*this, gm, batchA, batchB, enSequentialWrite, matrixStrideA,
                                             matrixStrideB, matrixStrideC, enAtomic, 0);
    }
    // batchLoop rounds of IterateBatch into the SetWorkspace GM, round j taking the matrices after the j - 1
    // rounds before it (j batchA of A, j batchB of B, C after theirs). Asynchronous: the same, computed here;
    // each GetBatchTensorC<false> then finds its round in the workspace.
    template <bool sync = true, bool waitIterateBatch = false>
    void IterateNBatch(const uint32_t batchLoop, uint32_t batchA, uint32_t batchB, bool enSequentialWrite,
                       const uint32_t matrixStrideA = 0, const uint32_t matrixStrideB = 0,
                       const uint32_t matrixStrideC = 0) {
        sfumato::ascendc::enter("Matmul::IterateNBatch");
        if (m_client) {  // the batches are in GM once the server's pass ended
            if (sync) wait_served();
            return;
        }
        if (!m_hasWs)
            sfumato::ascendc::fail("Matmul::IterateNBatch without SetWorkspace (the GM its results go to)");
        for (uint32_t j = 0; j < batchLoop; ++j)
            sfumato::ascendc::MmOps<Matmul>::run(*this, m_ws, batchA, batchB, enSequentialWrite,
                                                 matrixStrideA, matrixStrideB, matrixStrideC, 0, j);
    }
    template <bool sync = true>
    void GetBatchTensorC(uint32_t batchA, uint32_t batchB, bool enSequentialWrite = false) {
        (void)batchA, (void)batchB, (void)enSequentialWrite;
        sfumato::ascendc::enter("Matmul::GetBatchTensorC");
        if (m_client) wait_served();
    }

    void WaitIterateBatch() {}
    // Mix mode: a client AIV waits here for its AIC's serving pass, which ends here (core_state.h).
    void End() {
        sfumato::ascendc::CoreState& st = sfumato::ascendc::enter("Matmul::End");
        m_iter = 0, m_async = false, m_pending = false;
        if (m_client) {
            wait_served();
            m_served = false;
        } else if (st.mm_server) {
            throw sfumato::ascendc::MatmulPassDone{};
        }
    }

private:
    // GetTensorC's common part: the block Iterate computed (asynchronous: the next one, computed now);
    // false on a client, whose block is its server's.
    bool take_block() {
        const sfumato::ascendc::CoreState& st = sfumato::ascendc::enter("Matmul::GetTensorC");
        if (m_async && !m_pending && !next_block(m_asyncPartial, nullptr))
            sfumato::ascendc::fail("Matmul::GetTensorC<false> after the last block of Iterate<false>");
        sfumato::ascendc::enter("Matmul::GetTensorC");
        if (!m_pending && !(m_client && !m_ready))
            sfumato::ascendc::fail("Matmul::GetTensorC without a block computed by Iterate");
        (void)st;
        return !m_client;
    }
    // A mix kernel's client: wait (once until End) for the pass serving it (matmul_parts.h).
    void wait_served() {
        if (!m_served) sfumato::ascendc::mm_wait_served(sfumato::ascendc::enter("Matmul::GetTensorC"));
        m_served = true;
    }
    sfumato::ascendc::MmL0& l0() { return m_shared ? *m_shared : m_l0own; }
    // L0A/L0B/L0C queues and the bias table, shared by every Matmul of the core (the first one
    // allocates them; on the chip the Matmuls use the same fixed L0 ranges): two Matmuls of full-size
    // blocks would not fit the buffers twice. A later Matmul with larger blocks stops the run.
    void init_l0(uint32_t a_bytes, uint32_t b_bytes, uint32_t c_bytes, uint32_t bt_bytes) {
        sfumato::ascendc::CoreState& st = sfumato::ascendc::enter("Matmul::Init");
        sfumato::ascendc::MmL0& l =
            st.mm_shared_l0 ? *static_cast<sfumato::ascendc::MmL0*>(st.mm_shared_l0) : m_l0own;
        m_shared = &l == &m_l0own ? nullptr : &l;
        auto fits = [](uint32_t have, uint32_t need) { return have == 0 || have >= need; };
        if (!fits(l.a_bytes, a_bytes) || !fits(l.b_bytes, b_bytes) || !fits(l.c_bytes, c_bytes) ||
            !fits(l.bt_bytes, bt_bytes))
            sfumato::ascendc::fail(
                "Matmul::Init: base blocks larger than those of the core's first Matmul (which "
                "allocated the L0 buffers the Matmuls share)");
        if (!l.a_bytes) m_pipe->InitBuffer(l.a2, m_t.dbL0A >= 2 ? 2 : 1, l.a_bytes = a_bytes);
        if (!l.b_bytes) m_pipe->InitBuffer(l.b2, m_t.dbL0B >= 2 ? 2 : 1, l.b_bytes = b_bytes);
        if (c_bytes && !l.c_bytes) m_pipe->InitBuffer(l.c, m_t.dbL0C >= 2 ? 2 : 1, l.c_bytes = c_bytes);
        if (bt_bytes && !l.bt_bytes) m_pipe->InitBuffer(l.bt, l.bt_bytes = bt_bytes);
        st.mm_shared_l0 = &l;
    }
    static TCubeTiling static_tiling() { return sfumato::ascendc::mm_static_tiling(MM_CFG); }
    // L1 (matmul_l1.h), then L0: CO1's L0C tensors are the caller's when C is in CO1.
    void init_buffers() {
        const auto [a1, b1] = sfumato::ascendc::MmL1<Matmul>::init(*this);
        const uint32_t bm = m_t.baseM, bn = m_t.baseN;
        init_l0(a1, b1,
                C_TYPE::pos == TPosition::CO1
                    ? 0
                    : sfumato::ascendc::mm_align(bm, 16) * sfumato::ascendc::mm_align(bn, 16) * 4,
                m_t.isBias ? sfumato::ascendc::mm_align(bn * 4, 64) : 0);
    }
    void compute_block(bool partial, const LocalTensor<L0cT>& c) {
        const uint32_t curM = std::min<uint32_t>(m_t.baseM, m_singleM - m_mi * m_t.baseM);
        const uint32_t curN = std::min<uint32_t>(m_t.baseN, m_singleN - m_ni * m_t.baseN);
        const uint32_t kIters = sfumato::ascendc::mm_ceil(m_singleK, m_t.baseK);
        const uint32_t kLo = m_kstep < 0 ? 0u : static_cast<uint32_t>(m_kstep);
        const uint32_t kHi = m_kstep < 0 ? kIters : kLo + 1;
        for (uint32_t ki = kLo; ki < kHi; ++ki) {
            const uint32_t curK = std::min<uint32_t>(m_t.baseK, m_singleK - ki * m_t.baseK);
            const bool bias = m_hasBias && ki == 0 && !partial;
            sfumato::ascendc::MmL1<Matmul>::load(*this, ki, curM, curN, curK, bias);
            sfumato::ascendc::MmLoad<Matmul>::l0(*this, curM, curN, curK, bias);
            mmad(c, curM, curN, curK, bias, ki == kLo && !partial);
        }
        m_curM = curM, m_curN = curN;
    }
    static void needs_16bit(const char* what) {
        if (kBits != 16)
            sfumato::ascendc::fail(std::string("Matmul: ") + what +
                                   " with a 4-bit, 1- or 4-byte type (a transposing load of 32 x 32 or 16 x 8 "
                                   "fractals) is not modelled");
    }
    void mmad(const LocalTensor<L0cT>& c, uint32_t curM, uint32_t curN, uint32_t curK, bool bias, bool init) {
        LocalTensor<SrcAT> a2 = l0().a2.template DeQue<SrcAT>();
        LocalTensor<SrcBT> b2 = l0().b2.template DeQue<SrcBT>();
        MmadParams p;
        p.m = static_cast<uint16_t>(curM == 1 ? 16 : curM);  // m = 1 is the cube's GEMV (a row vector in L0A)
        p.n = static_cast<uint16_t>(curN), p.k = static_cast<uint16_t>(curK);
        p.cmatrixInitVal = init;
        if constexpr (kSparse) {
            sfumato::ascendc::MmLoad<Matmul>::sparse_mmad(*this, c, a2, b2, p, bias);
        } else if (bias) {
            Mmad(c, a2, b2, l0().bt.template Get<L0cT>(), p);
        } else {
            Mmad(c, a2, b2, p);
        }
        l0().a2.FreeTensor(a2);
        l0().b2.FreeTensor(b2);
    }
    void copy_out(const GlobalTensor<DstT>& gm, bool sequential) {
        const uint64_t row0 = uint64_t{m_mi} * m_t.baseM, col0 = uint64_t{m_ni} * m_t.baseN;
        if constexpr (C_TYPE::format == CubeFormat::NZ) {
            // C in NZ: column groups of 16 with every row of C (alignUp(M, 16)) each.
            // With isEnableChannelSplit (float C) the groups are 8 columns wide (32-byte rows).
            constexpr bool split = kCfg.isEnableChannelSplit && std::is_same_v<DstT, float>;
            constexpr uint64_t group = split ? 8 : 16;
            const uint64_t rows =
                sequential ? sfumato::ascendc::mm_align(m_curM, 16) : sfumato::ascendc::mm_align(m_orgM, 16);
            const uint64_t off = sequential ? 0 : col0 * rows + row0 * group;
            fixpipe<CFG_NZ>(gm[off], static_cast<uint32_t>(rows * group * sizeof(DstT) / 32), split);
        } else {
            const uint32_t ld = C_TYPE::format == CubeFormat::ND_ALIGN
                                    ? sfumato::ascendc::mm_align(m_orgKc, 32 / sizeof(DstT))
                                    : m_orgKc;
            copy_out_at(sequential ? gm : gm[row0 * ld + col0], sequential ? m_curN : ld);
        }
    }
    // The block to gm (its first element) as ND rows ld elements apart.
    void copy_out_at(const GlobalTensor<DstT>& gm, uint32_t ld) { fixpipe<CFG_ROW_MAJOR>(gm, ld, false); }
    // L0C -> GM through the FixPipe, converting (and quantising) to C's type; then the block's L0C is free.
    template <const FixpipeConfig& cfg>
    void fixpipe(const GlobalTensor<DstT>& gm, uint32_t dstStride, bool split) {
        LocalTensor<L0cT> c = l0().c.template DeQue<L0cT>();
        FixpipeParamsV220 p;
        p.nSize = static_cast<uint16_t>(m_curN), p.mSize = static_cast<uint16_t>(m_curM);
        p.srcStride = static_cast<uint16_t>(sfumato::ascendc::mm_align(m_curM, 16));
        p.dstStride = dstStride, p.isChannelSplit = split;
        p.quantPre = sfumato::ascendc::mm_quant_mode<L0cT, DstT>(m_quant);
        if (m_quant == 2) {  // one word per column of the block, GM -> L1, read by the FixPipe
            const LocalTensor<uint64_t> words = sfumato::ascendc::mm_quant_words(
                *m_pipe, m_qbuf, m_quantVec[uint64_t{m_ni} * m_t.baseN], m_curN);
            Fixpipe<DstT, L0cT, cfg>(gm, c, words, p);
        } else {
            p.deqScalar = m_quantScalar;
            Fixpipe<DstT, L0cT, cfg>(gm, c, p);
        }
        l0().c.FreeTensor(c);
        m_pending = false;
    }
    template <class>
    friend struct sfumato::ascendc::MmOps;
    template <class>
    friend struct sfumato::ascendc::MmLoad;
    template <class>
    friend struct sfumato::ascendc::MmL1;
    TCubeTiling m_t{};
    TPipe* m_pipe = nullptr;
    bool m_client = false;  // a mix-mode AIV's Matmul: its calls are its AIC's (which runs them as this AIV)
    bool m_served = false;  // a client that waited for its server's pass (until End)
    bool m_async = false, m_asyncPartial = false;  // Iterate<false>: GetTensorC<false> takes the next block
    bool m_hasWs = false;
    GlobalTensor<DstT> m_ws;  // SetWorkspace
    uint8_t m_quant = 0;      // 1: SetQuantScalar, 2: SetQuantVector
    bool m_quantBuf = false;
    uint64_t m_quantScalar = 0;
    GlobalTensor<uint64_t> m_quantVec;
    TBuf<TPosition::C1> m_qbuf;  // the block's quantisation words in L1
    bool m_ready = false, m_pending = false, m_transA = false, m_transB = false, m_hasBias = false;
    uint32_t m_singleM = 0, m_singleN = 0, m_singleK = 0;
    uint32_t m_orgM = 0, m_orgN = 0, m_orgKa = 0, m_orgKb = 0, m_orgKc = 0;
    uint32_t m_iter = 0, m_mi = 0, m_ni = 0, m_curM = 0, m_curN = 0;
    int32_t m_kstep = -1;  // isPartialOutput: the baseK step of the block Iterate computes (-1: all of K)
    uint64_t m_userInfo = 0, m_selfData = 0;  // SetUserDefInfo, SetSelfDefineData
    GlobalTensor<SrcAT> m_a;
    LocalTensor<SrcAT> m_aL1;    // A in TSCM
    uint32_t m_m0 = 0, m_k0 = 0;  // the block's first row and K of A (A in TSCM)
    GlobalTensor<SrcBT> m_b;
    GlobalTensor<BiasT> m_bias;
    TQue<TPosition::A1, 1> m_qA1;
    TQue<TPosition::B1, 1> m_qB1;
    sfumato::ascendc::MmShareB<SrcBT> m_share;  // IBShare B kept whole in L1 (kShareB, a server, no bias)
    sfumato::ascendc::MmL0 m_l0own;
    sfumato::ascendc::MmL0* m_shared = nullptr;  // the core's first Matmul's L0 queues (when not this one)
    uint32_t m_biasOff = 0;                      // the bias row's byte offset in a B1 buffer
    uint32_t m_idxOff = 0;                       // a sparse B's index fractals' byte offset in a B1 buffer
    GlobalTensor<uint8_t> m_idx;                 // SetSparseIndex
    bool m_hasIdx = false;
};

}  // namespace AscendC

// The Matmul library's older namespace (the examples' matmul::GetBlockIdx(), `using namespace matmul`).
namespace matmul {
inline int64_t GetBlockIdx() { return AscendC::GetBlockIdx(); }
using AscendC::Matmul;
using AscendC::MatmulCallBackFunc;
using AscendC::MatmulType;
using AscendC::SparseMatmulType;
}  // namespace matmul

#include "sfumato_ascendc/matmul_load.h"
#include "sfumato_ascendc/matmul_ops.h"
