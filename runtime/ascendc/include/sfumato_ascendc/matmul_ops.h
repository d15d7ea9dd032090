// Parts of the high-level Matmul (sfumato_ascendc/matmul.h, whose friend this is): IterateBatch's rounds
// (each matrix of the batch through IterateAll, the operands' matrices found by the batch layout: NORMAL, one
// after the other, matrixStride or the whole matrix apart; BSNGD, interleaved in [B, S, N, G, D] tensors) and
// the block GetTensorC hands to a mix kernel's AIV in UB.
#pragma once
#include <algorithm>
#include <cstdint>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/data_copy.h"

namespace sfumato::ascendc {
template <class MM>
struct MmOps {
    // C into an AIV's UB: the AIC stores the block at its place in the SetWorkspace GM (the core's C,
    // singleCoreM x singleCoreN, row-major), the client AIV, once its server's pass ended, copies it into the
    // tensor (curM rows of curN elements, each row padded to 32 bytes).
    template <class DstT>
    static void to_ub(MM& mm, const AscendC::LocalTensor<DstT>& ub, uint8_t enAtomic) {
        const CoreState& st = enter("Matmul::GetTensorC");
        if (!mm.m_client && !st.mm_server)
            fail(
                "Matmul::GetTensorC into a LocalTensor outside a mix kernel's client mode (its AIVs taking C "
                "into "
                "UB) is not supported by sfumato's Ascend C layer");
        if (enAtomic) fail("Matmul::GetTensorC into a LocalTensor with enAtomic");
        if (!mm.m_hasWs)
            fail(
                "Matmul::GetTensorC into a LocalTensor without SetWorkspace (the GM the AIC "
                "stores the block in for the AIV)");
        const bool server = mm.take_block();
        const uint32_t ld = mm.m_singleN;
        const AscendC::GlobalTensor<DstT> at =
            mm.m_ws[uint64_t{mm.m_mi} * mm.m_t.baseM * ld + uint64_t{mm.m_ni} * mm.m_t.baseN];
        if (server) {
            mm.copy_out_at(at, ld);
            return;
        }
        mm.wait_served();
        AscendC::DataCopyExtParams p;
        p.blockCount = static_cast<uint16_t>(mm.m_curM),
        p.blockLen = mm.m_curN * static_cast<uint32_t>(sizeof(DstT));
        p.srcStride = (ld - mm.m_curN) * static_cast<uint32_t>(sizeof(DstT)), p.dstStride = 0;
        AscendC::DataCopyPad(ub, at, p, AscendC::DataCopyPadExtParams<DstT>{});
        mm.m_pending = false;
    }
    template <class G>
    static void run(MM& mm, const G& gm, uint32_t batchA, uint32_t batchB, bool enSequentialWrite,
                    uint32_t matrixStrideA, uint32_t matrixStrideB, uint32_t matrixStrideC, uint8_t enAtomic,
                    uint32_t round) {
        if (batchA == 0 || batchB == 0) fail("Matmul::IterateBatch with an empty batch");
        const auto a = mm.m_a;
        const auto b = mm.m_b;
        const uint64_t sa =
            matrixStrideA ? matrixStrideA : uint64_t{static_cast<uint32_t>(mm.m_t.M)} * mm.m_t.Ka;
        const uint64_t sb =
            matrixStrideB ? matrixStrideB : uint64_t{static_cast<uint32_t>(mm.m_t.Kb)} * mm.m_t.N;
        const uint64_t sc =
            matrixStrideC ? matrixStrideC : uint64_t{static_cast<uint32_t>(mm.m_t.M)} * mm.m_t.N;
        // BSNGD: matrix i of an operand's [B, S, N, G, D] tensor is (b, ng) = (i / (N G), i % (N G)): S rows
        // N G D elements apart, at b S N G D + ng D (C: [B, S1, N, G, S2], S2 columns).
        struct Lay {
            uint64_t ng, s, d;
            uint64_t ld() const { return ng * d; }
            uint64_t at(uint32_t i) const { return i / ng * s * ng * d + i % ng * d; }
        };
        auto lay = [](int32_t n, int32_t g, int32_t s, int32_t d) {
            return Lay{std::max<uint64_t>(1, uint64_t(std::max(n, 1)) * uint64_t(std::max(g, 1))),
                       uint64_t(std::max(s, 0)), uint64_t(std::max(d, 0))};
        };
        const Lay la =
            lay(mm.m_t.ALayoutInfoN, mm.m_t.ALayoutInfoG, mm.m_t.ALayoutInfoS, mm.m_t.ALayoutInfoD);
        const Lay lb =
            lay(mm.m_t.BLayoutInfoN, mm.m_t.BLayoutInfoG, mm.m_t.BLayoutInfoS, mm.m_t.BLayoutInfoD);
        const Lay lc =
            lay(mm.m_t.CLayoutInfoN, mm.m_t.CLayoutInfoG, mm.m_t.CLayoutInfoS1, mm.m_t.CLayoutInfoS2);
        const uint32_t org[5] = {mm.m_orgM, mm.m_orgN, mm.m_orgKa, mm.m_orgKb, mm.m_orgKc};
        if constexpr (MM::kBsngd) {
            mm.m_orgM = mm.m_orgKa = static_cast<uint32_t>(la.ld());
            mm.m_orgN = mm.m_orgKb = static_cast<uint32_t>(lb.ld());
            mm.m_orgKc = static_cast<uint32_t>(lc.ld());
        }
        const uint32_t n = std::max(batchA, batchB);
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t ia = round * batchA + i % batchA, ib = round * batchB + i % batchB,
                           ic = round * n + i;
            mm.m_a = a[MM::kBsngd ? la.at(ia) : ia * sa];
            mm.m_b = b[MM::kBsngd ? lb.at(ib) : ib * sb];
            mm.IterateAll(gm[MM::kBsngd ? lc.at(ic) : ic * sc], enAtomic, enSequentialWrite);
        }
        mm.m_orgM = org[0], mm.m_orgN = org[1], mm.m_orgKa = org[2], mm.m_orgKb = org[3], mm.m_orgKc = org[4];
        mm.m_a = a, mm.m_b = b, mm.m_iter = 0;
    }
};
}  // namespace sfumato::ascendc
