// Parts of the high-level Matmul (sfumato_ascendc/matmul.h, whose friend this is): its L1 buffers (A's
// queue; B's queue, each buffer with the bias row and a sparse B's index after B's tile; or, with IBShare B,
// the core's whole B in slots) and a block's loads GM -> L1 (A and B by Nd2Nz or the user's copy callbacks,
// the bias row with B; an IBShare B slot only when it does not hold the block's slice already).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/matmul_parts.h"
#include "sfumato_ascendc/pipe.h"
#include "sfumato_ascendc/sync.h"

namespace sfumato::ascendc {
template <class MM>
struct MmLoad;  // a sparse B's GM -> L1 load (matmul_load.h)

// IBShare of B alone (matmul.h's kShareB) in a mix kernel's server without a bias: B kept whole in L1, one
// slot of a B1 buffer's bytes per (N block, K step), each loaded once and reused by the later M blocks and
// by the other AIV's pass when its B is the same (GM address and shape; the server's core state says what
// each slot holds): the chip's Matmul server keeps a shared matrix in L1 and reuses it for the other AIV's
// request only then (the reference: the shared matrix must be wholly in L1).
template <class T>
struct MmShareB {
    bool on = false;                            // B is kept whole in L1 (else B1 is a queue)
    AscendC::TBuf<AscendC::TPosition::B1> all;  // the slots, slot_bytes each
    uint32_t slot_bytes = 0;
    AscendC::LocalTensor<T> slot;  // the slot of the block being computed
};

template <class MM>
struct MmL1 {
    using SrcAT = typename MM::SrcAT;
    using SrcBT = typename MM::SrcBT;
    using BiasT = typename MM::BiasT;
    using Cb = typename MM::CallBacks;

    // Bytes of a rows x cols tile of kBits-bit elements in fractals (rows to 16, columns to C0).
    static uint32_t tile_bytes(uint32_t rows, uint32_t cols) {
        return mm_align(rows, 16) * mm_align(cols, MM::kC0) * MM::kBits / 8;
    }
    // A1 and B1 (or IBShare B's slots); returns the bytes of one A and one B tile (L0A's and L0B's).
    static std::pair<uint32_t, uint32_t> init(MM& mm) {
        const uint32_t bm = mm.m_t.baseM, bn = mm.m_t.baseN, bk = mm.m_t.baseK;
        const uint32_t a1 = std::max(tile_bytes(bm, bk), tile_bytes(bk, bm));
        const uint32_t b1 = std::max(tile_bytes(bk, bn), tile_bytes(bn, bk));
        // The bias row rides at the end of each B1 buffer (GM -> L1 with B, in the MTE2 pipe).
        mm.m_biasOff = b1;
        const uint32_t bias1 = mm.m_t.isBias ? mm_align(bn * sizeof(BiasT), 64) : 0;
        // A sparse B's index fractals ride after the bias (128 bytes per 16 n x 64 k).
        mm.m_idxOff = b1 + bias1;
        const uint32_t idx1 = MM::kSparse ? mm_ceil(bn, 16) * mm_ceil(bk, 64) * 128 : 0;
        const uint8_t dbA1 = mm.m_t.depthA1 >= 2 * mm.m_t.stepM * mm.m_t.stepKa ? 2 : 1;
        const uint8_t dbB1 = mm.m_t.depthB1 >= 2 * mm.m_t.stepN * mm.m_t.stepKb ? 2 : 1;
        mm.m_pipe->InitBuffer(mm.m_qA1, dbA1, a1);
        // IBShare B: a mix kernel's server without a bias (a bias keeps the one schedule: its row rides in
        // each B1 buffer) holds the core's whole B, one slot of b1 bytes per (N block, K step).
        CoreState& st = enter("Matmul::Init");
        MmShareB<SrcBT>& sh = mm.m_share;
        sh.on = MM::kShareB && st.mm_server && !mm.m_t.isBias;
        if (sh.on) {
            sh.slot_bytes = b1;
            const uint64_t slots = uint64_t{mm_ceil(mm.m_singleN, bn)} * mm_ceil(mm.m_singleK, bk);
            const uint64_t need = slots * b1, l1 = st.sink->buffer_size(isa::Pos::L1);
            if (need + uint64_t{dbA1} * a1 > l1)
                fail("Matmul with IBShare B: the core's B (" + std::to_string(mm.m_singleK) + " x " +
                     std::to_string(mm.m_singleN) + ", " + std::to_string(need) +
                     " bytes in base blocks) and A's L1 buffers do not fit L1 (" + std::to_string(l1) +
                     " bytes): the reference requires a shared matrix wholly in L1");
            mm.m_pipe->InitBuffer(sh.all, static_cast<uint32_t>(need));
        } else {
            mm.m_pipe->InitBuffer(mm.m_qB1, dbB1, b1 + bias1 + idx1);
        }
        return {a1, b1};
    }
    // The block's A and B (and its bias row at the first K step) GM -> L1 for K step ki.
    static void load(MM& mm, uint32_t ki, uint32_t curM, uint32_t curN, uint32_t curK, bool bias) {
        const uint64_t m0 = uint64_t{mm.m_mi} * mm.m_t.baseM, n0 = uint64_t{mm.m_ni} * mm.m_t.baseN,
                       k0 = uint64_t{ki} * mm.m_t.baseK;
        mm.m_m0 = static_cast<uint32_t>(m0), mm.m_k0 = static_cast<uint32_t>(k0);
        if constexpr (MM::kTscmA) {  // A is in L1 already (the kernel's TSCM copy)
            if (!mm.m_aL1.valid()) fail("Matmul: A in TSCM without SetTensorA");
        } else {
            load_a1(mm, ki, curM, curK, m0, k0);
        }
        if constexpr (MM::kShareB) {
            if (mm.m_share.on) {
                share_b1(mm, ki, curN, curK, n0, k0);
                return;
            }
        }
        AscendC::LocalTensor<SrcBT> b1 = mm.m_qB1.template AllocTensor<SrcBT>();
        load_b1(mm, ki, curN, curK, n0, k0, bias, b1);
        mm.m_qB1.EnQue(b1);
    }
    // IBShare B: the slot of (N block, K step ki) in the shared buffer, loaded GM -> L1 unless it holds this
    // B's slice already (an earlier M block, or the AIC's pass for the other AIV with the same B: the
    // server's core state keeps what each slot holds across the passes). A reload waits for the L1 -> L0B
    // loads of what the slot held (MTE1 -> MTE2); the loads of the new slice wait for it (MTE2 -> MTE1).
    static void share_b1(MM& mm, uint32_t ki, uint32_t curN, uint32_t curK, uint64_t n0, uint64_t k0) {
        using Slot = MmShareSlots::Slot;
        using AscendC::HardEvent;
        CoreState& st = enter("Matmul::Iterate");
        MmShareB<SrcBT>& sh = mm.m_share;
        const AscendC::LocalTensor<uint8_t> all = sh.all.template Get<uint8_t>();
        const uint32_t kIters = mm_ceil(mm.m_singleK, mm.m_t.baseK);
        const uint32_t slot = mm.m_ni * kIters + ki;
        sh.slot = all[uint64_t{slot} * sh.slot_bytes].template ReinterpretCast<SrcBT>();
        const MmShareSlots key{
            all.GetPhyAddr(),
            reinterpret_cast<uint64_t>(mm.m_b.GetPhyAddr()),
            {mm.m_orgN, mm.m_orgKb, mm.m_singleN, mm.m_singleK, static_cast<uint32_t>(mm.m_t.baseN),
             static_cast<uint32_t>(mm.m_t.baseK), mm.m_transB ? 1u : 0u},
            {}};
        MmShareSlots* e = nullptr;
        for (MmShareSlots& x : st.mm_share)
            if (x.l1 == key.l1) e = &x;
        if (!e) e = &st.mm_share.emplace_back(key);
        if (e->gm != key.gm || e->shape != key.shape) {  // another B: every slot is stale
            for (Slot& v : e->slots) v = v == Slot::Empty ? Slot::Empty : Slot::Stale;
            e->gm = key.gm, e->shape = key.shape;
        }
        if (e->slots.size() <= slot) e->slots.resize(slot + 1, Slot::Empty);
        if (e->slots[slot] == Slot::Current) return;
        if (e->slots[slot] == Slot::Stale) {
            const AscendC::TEventID back = mm.m_pipe->FetchEventID(HardEvent::MTE1_MTE2);
            AscendC::SetFlag<HardEvent::MTE1_MTE2>(back);
            AscendC::WaitFlag<HardEvent::MTE1_MTE2>(back);
        }
        load_b1(mm, ki, curN, curK, n0, k0, false, sh.slot);
        const AscendC::TEventID ready = mm.m_pipe->FetchEventID(HardEvent::MTE2_MTE1);
        AscendC::SetFlag<HardEvent::MTE2_MTE1>(ready);
        AscendC::WaitFlag<HardEvent::MTE2_MTE1>(ready);
        e->slots[slot] = Slot::Current;
    }
    static void load_a1(MM& mm, uint32_t ki, uint32_t curM, uint32_t curK, uint64_t m0, uint64_t k0) {
        AscendC::LocalTensor<SrcAT> a1 = mm.m_qA1.template AllocTensor<SrcAT>();
        if constexpr (Cb::kCopyA1 != nullptr)
            Cb::kCopyA1(a1.template ReinterpretCast<int8_t>(), mm.m_a.GetPhyAddr(), static_cast<int>(mm.m_mi),
                        static_cast<int>(ki), static_cast<int>(curM), static_cast<int>(curK), mm.m_userInfo,
                        mm.m_selfData);
        else if (mm.m_transA)
            mm_nd2nz(a1, mm.m_a[k0 * mm.m_orgM + m0], curK, curM, mm.m_orgM);
        else
            mm_nd2nz(a1, mm.m_a[m0 * mm.m_orgKa + k0], curM, curK, mm.m_orgKa);
        mm.m_qA1.EnQue(a1);
    }
    static void load_b1(MM& mm, uint32_t ki, uint32_t curN, uint32_t curK, uint64_t n0, uint64_t k0,
                        bool bias, const AscendC::LocalTensor<SrcBT>& b1) {
        if constexpr (MM::kSparse)
            MmLoad<MM>::sparse_b1(mm, curN, curK, n0, k0, b1);
        else if constexpr (Cb::kCopyB1 != nullptr)
            Cb::kCopyB1(b1.template ReinterpretCast<int8_t>(), mm.m_b.GetPhyAddr(), static_cast<int>(ki),
                        static_cast<int>(mm.m_ni), static_cast<int>(curK), static_cast<int>(curN),
                        mm.m_userInfo, mm.m_selfData);
        else if (mm.m_transB)
            mm_nd2nz(b1, mm.m_b[n0 * mm.m_orgKb + k0], curN, curK, mm.m_orgKb);
        else
            mm_nd2nz(b1, mm.m_b[k0 * mm.m_orgN + n0], curK, curN, mm.m_orgN,
                     MM::kSquareB ? 16 * MM::kSquareFr : 16);
        if (bias)
            mm_nd2nz_row(
                b1.template ReinterpretCast<uint8_t>()[mm.m_biasOff].template ReinterpretCast<BiasT>(),
                mm.m_bias[n0], curN);
    }
};
}  // namespace sfumato::ascendc
