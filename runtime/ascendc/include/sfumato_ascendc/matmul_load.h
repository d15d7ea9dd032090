// Parts of the high-level Matmul (sfumato_ascendc/matmul.h, whose friend this is): a block's loads from L1 into
// L0A (A from its L1 tile, or from the whole A in TSCM) and L0B (B transposed: its NZ fractals are ZN already;
// int8 and int4 B not transposed: square transposes; 16-bit: each fractal transposed), and the bias row's move
// from L1 into the bias table; a 4:2 sparse B's moves (GM -> L1 with its index, L1 -> L0B by LoadDataWithSparse)
// and its MmadWithSparse.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/cube_more.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/matmul_parts.h"
#include "sfumato_ascendc/sync.h"

namespace sfumato::ascendc {
template <class MM>
struct MmLoad {
    using SrcAT = typename MM::SrcAT;
    using SrcBT = typename MM::SrcBT;
    using L0cT = typename MM::L0cT;
    static void l0(MM& mm, uint32_t curM, uint32_t curN, uint32_t curK, bool bias) {
        const uint32_t mPad = sfumato::ascendc::mm_align(curM, 16),
                       nPad = sfumato::ascendc::mm_align(curN, 16);
        const uint32_t kFrac = sfumato::ascendc::mm_ceil(curK, MM::kC0),
                       kPad16 = sfumato::ascendc::mm_align(curK, 16);
        if constexpr (MM::kTscmA) {
            AscendC::LocalTensor<SrcAT> a2 = mm.l0().a2.template AllocTensor<SrcAT>();
            // A in TSCM: the core's whole A in NZ (column groups of C0, each with singleCoreM rows padded to 16);
            // the block's rows from m0, its K from k0.
            const uint32_t rows = sfumato::ascendc::mm_align(static_cast<uint32_t>(mm.m_t.singleCoreM), 16);
            for (uint32_t i = 0; i < mPad / 16; ++i)
                sfumato::ascendc::mm_load2d(
                    a2[i * kFrac * MM::kC0 * 16],
                    mm.m_aL1[(mm.m_k0 / MM::kC0) * rows * MM::kC0 + (mm.m_m0 + i * 16) * MM::kC0], kFrac, rows / 16,
                    false);
            mm.l0().a2.EnQue(a2);
        } else {
            load_a(mm, mPad, kFrac, kPad16);
        }
        load_b(mm, curN, curK, nPad, kFrac, kPad16, bias);
    }
    static void load_a(MM& mm, uint32_t mPad, uint32_t kFrac, uint32_t kPad16) {
        AscendC::LocalTensor<SrcAT> a1 = mm.m_qA1.template DeQue<SrcAT>();
        AscendC::LocalTensor<SrcAT> a2 = mm.l0().a2.template AllocTensor<SrcAT>();
        for (uint32_t i = 0; i < mPad / 16; ++i) {
            if (mm.m_transA) {  // A^T's fractals (K rows x M) transposed: band i's K fractals are contiguous
                MM::needs_16bit("A transposed");
                sfumato::ascendc::mm_load2d(a2[i * kFrac * MM::kC0 * 16], a1[i * kPad16 * 16], kFrac, 1, true);
            } else {
                sfumato::ascendc::mm_load2d(a2[i * kFrac * MM::kC0 * 16], a1[i * 16 * MM::kC0], kFrac, mPad / 16,
                                            false);
            }
        }
        mm.l0().a2.EnQue(a2);
        mm.m_qA1.FreeTensor(a1);
    }
    static void load_b(MM& mm, uint32_t curN, uint32_t curK, uint32_t nPad, uint32_t kFrac, uint32_t kPad16,
                       bool bias) {
        // IBShare B: the block's slot of the whole B, which stays (matmul_l1.h's share_b1).
        AscendC::LocalTensor<SrcBT> b1 = mm.m_share.on ? mm.m_share.slot : mm.m_qB1.template DeQue<SrcBT>();
        AscendC::LocalTensor<SrcBT> b2 = mm.l0().b2.template AllocTensor<SrcBT>();
        if (bias) bias_table(mm, b1, curN);
        if constexpr (MM::kSparse) {
            // The densified B's fractals (k-group major, n-bands inside: ZN) with their index fractals, in
            // LoadDataWithSparse calls of at most 255 fractals, each at its fractal's place in L0B.
            const AscendC::LocalTensor<uint8_t> idx = b1.template ReinterpretCast<uint8_t>()[mm.m_idxOff];
            for (uint32_t f = 0, total = sfumato::ascendc::mm_ceil(curK, 64) * (nPad / 16); f < total; f += 255) {
                AscendC::LoadData2dParams p;
                p.startIndex = static_cast<uint16_t>(f), p.repeatTimes = static_cast<uint8_t>(std::min<uint32_t>(255, total - f));
                AscendC::LoadDataWithSparse(b2[f * 512], b1, idx, p);
            }
        } else if (mm.m_transB) {  // B^T in NZ is ZN already: k-group major, n-bands inside
            for (uint32_t f = 0, total = kFrac * (nPad / 16); f < total; f += 255)
                sfumato::ascendc::mm_load2d(b2[f * 16 * MM::kC0], b1[f * 16 * MM::kC0],
                                            std::min<uint32_t>(255, total - f), 1, false);
        } else if constexpr (MM::kSquareB) {
            // int8 (int4) B not transposed: each 32 x 32 (64 x 64) square, two (four) stacked 16-row fractals of
            // a K group in L1, transposed by LoadDataWithTranspose into the two (four) n-bands of L0B's k-group
            // row.
            constexpr uint32_t side = 16 * MM::kSquareFr;
            const uint32_t kSq = sfumato::ascendc::mm_ceil(curK, side),
                           nSq = sfumato::ascendc::mm_ceil(curN, side);
            if (nSq * MM::kSquareFr != nPad / 16)
                sfumato::ascendc::fail("Matmul: an int8 or int4 B not transposed with " + std::to_string(curN) +
                                       " columns in a block (a multiple of " + std::to_string(side) +
                                       " is needed for its square transposes) is not modelled");
            for (uint32_t kb = 0; kb < kSq; ++kb) {
                AscendC::LoadData2dTransposeParams p;
                p.startIndex = static_cast<uint16_t>(kb), p.repeatTimes = static_cast<uint16_t>(nSq);
                p.srcStride = static_cast<uint16_t>(kSq), p.dstGap = MM::kSquareFr - 1, p.dstFracGap = 0;
                AscendC::LoadDataWithTranspose(b2[kb * nPad * MM::kC0], b1, p);
            }
        } else {
            MM::needs_16bit("B not transposed");
            for (uint32_t kb = 0; kb < kPad16 / 16; ++kb)
                sfumato::ascendc::mm_load2d(b2[kb * nPad * 16], b1[kb * 256], nPad / 16, kPad16 / 16, true);
        }
        mm.l0().b2.EnQue(b2);
        if (!mm.m_share.on) mm.m_qB1.FreeTensor(b1);
    }
    // A sparse B's block GM -> L1: the densified rows n0.. (k0 / 2 .. of rows orgKb / 2 long) as NZ, then the
    // block's index fractals for each k-group of 64 (the NZ index: k-groups outermost, ceil(orgN / 16) bands each).
    static void sparse_b1(MM& mm, uint32_t curN, uint32_t curK, uint64_t n0, uint64_t k0,
                          const AscendC::LocalTensor<SrcBT>& b1) {
        if (!mm.m_transB) sfumato::ascendc::fail("Matmul: a SparseMatmulType B set with isTransposeB false (the reference: transposed only)");
        if (!mm.m_hasIdx) sfumato::ascendc::fail("Matmul: a SparseMatmulType B without SetSparseIndex");
        if (k0 % 64 || mm.m_orgKb % 4)
            sfumato::ascendc::fail("Matmul: a sparse B's K (" + std::to_string(mm.m_orgKb) + ") and baseK (" +
                                   std::to_string(mm.m_t.baseK) + ") need whole groups of 4 and 64 (SetSparse(true) "
                                   "before GetTiling makes the tiling's baseK a multiple of 64)");
        sfumato::ascendc::mm_nd2nz(b1, mm.m_b[n0 * (mm.m_orgKb / 2) + k0 / 2], curN, curK / 2, mm.m_orgKb / 2);
        const uint32_t bands = sfumato::ascendc::mm_ceil(curN, 16),
                       allBands = sfumato::ascendc::mm_ceil(mm.m_orgN, 16);
        AscendC::DataCopyParams p;
        p.blockCount = static_cast<uint16_t>(sfumato::ascendc::mm_ceil(curK, 64));
        p.blockLen = static_cast<uint16_t>(bands * 4);  // 128 bytes a band: four 32-byte blocks
        p.srcStride = static_cast<uint16_t>((allBands - bands) * 4), p.dstStride = 0;
        AscendC::DataCopy(b1.template ReinterpretCast<uint8_t>()[mm.m_idxOff],
                          mm.m_idx[(k0 / 64 * allBands + n0 / 16) * 128], p);
    }
    // MmadWithSparse of the block; a bias is C's initial value from the bias table (cmatrixSource, its address 0).
    static void sparse_mmad(MM& mm, const AscendC::LocalTensor<L0cT>& c, const AscendC::LocalTensor<SrcAT>& a2,
                            const AscendC::LocalTensor<SrcBT>& b2, AscendC::MmadParams p, bool bias) {
        if (bias) {
            if (mm.l0().bt.template Get<L0cT>().GetPhyAddr() != 0)
                sfumato::ascendc::fail("Matmul: a sparse B's bias needs the bias table at address 0");
            p.cmatrixSource = true, p.cmatrixInitVal = false;
        }
        AscendC::MmadWithSparse(c, a2, b2, p);
    }
    // L1 -> the bias table, in the MTE1 pipe before B's load: B2's EnQue flag orders it before the
    // Mmad; the table's previous reader (an earlier block's first Mmad) is waited for with an
    // M -> MTE1 flag.
    static void bias_table(MM& mm, const AscendC::LocalTensor<SrcBT>& b1, uint32_t curN) {
        const AscendC::TEventID id = mm.m_pipe->FetchEventID(AscendC::HardEvent::M_MTE1);
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(id);
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(id);
        AscendC::LocalTensor<L0cT> bt = mm.l0().bt.template Get<L0cT>();
        AscendC::DataCopyParams p;
        p.blockCount = 1, p.blockLen = static_cast<uint16_t>(sfumato::ascendc::mm_ceil(curN * 4, 64));
        AscendC::DataCopy(bt, b1.template ReinterpretCast<uint8_t>()[mm.m_biasOff].template ReinterpretCast<L0cT>(),
                          p);
    }
};
}  // namespace sfumato::ascendc
