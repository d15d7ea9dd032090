// The advanced API's Sort (Atlas A2 form: Concat, Sort<T, isFullSort>, Extract) over the basic layer's
// Sort32, MrgSort and GatherMask. Scores sort descending in (score, index) structures of 8 bytes (float:
// score, index; half: score, 2 reserved bytes, index), as Sort32 writes them:
//   Concat: on Atlas A2 the scores need no preprocessing, so concatLocal becomes srcLocal (no instruction);
//   Sort: one Sort32 over repeatTimes blocks of 32, then (isFullSort) rounds of MrgSort merging up to four
//     sorted lists at a time until one is left, alternating between dst and tmpLocal so that the last
//     round writes dst (a lone list is copied with one vector OR of its bytes);
//   Extract: the scores and the indices out of the structures, one GatherMask each (patterns 1/3 and 2).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "sfumato_ascendc/adv_common.h"
#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/gather.h"
#include "sfumato_ascendc/sort.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"

namespace AscendC {

namespace sfumato_sort {

template <class T>
constexpr uint32_t per_struct() {
    return 8 / sizeof(T);  // elements of T in one 8-byte structure
}

// One round: lists (starting offsets in structures, lengths) of `in` merged four at a time into `out`.
template <class T>
void merge_round(const LocalTensor<T>& out, const LocalTensor<T>& in, std::vector<uint32_t>& lens) {
    constexpr uint32_t ps = per_struct<T>();
    std::vector<uint32_t> next;
    uint32_t at = 0;
    for (size_t g = 0; g < lens.size(); g += 4) {
        const uint32_t k = static_cast<uint32_t>(std::min<size_t>(4, lens.size() - g));
        uint32_t total = 0;
        LocalTensor<T> src[4];
        uint16_t len[4] = {0, 0, 0, 0};
        for (uint32_t i = 0; i < k; ++i) {
            if (lens[g + i] > 4095)
                sfumato::ascendc::fail("Sort: a merged list of " + std::to_string(lens[g + i]) +
                                       " structures (MrgSort takes at most 4095 a list)");
            src[i] = in[(at + total) * ps];
            len[i] = static_cast<uint16_t>(lens[g + i]);
            total += lens[g + i];
        }
        if (k == 1) {
            const LocalTensor<uint16_t> d = out[at * ps].template ReinterpretCast<uint16_t>();
            const LocalTensor<uint16_t> s = src[0].template ReinterpretCast<uint16_t>();
            Or(d, s, s, static_cast<int32_t>(total * 4));
        } else {
            for (uint32_t i = k; i < 4; ++i) src[i] = src[0];
            const uint16_t valid = static_cast<uint16_t>((1u << k) - 1u);
            MrgSort(out[at * ps], MrgSortSrcList<T>(src[0], src[1], src[2], src[3]),
                    MrgSort4Info(len, false, valid, 1));
        }
        next.push_back(total);
        at += total;
    }
    lens.swap(next);
}

}  // namespace sfumato_sort

template <class T>
void Concat(LocalTensor<T>& concatLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& tmpLocal,
            const int32_t repeatTimes) {
    (void)tmpLocal, (void)repeatTimes;
    sfumato::ascendc::enter("Concat");
    concatLocal = srcLocal;
}

template <class T, bool isFullSort>
void Sort(const LocalTensor<T>& dstLocal, const LocalTensor<T>& concatLocal,
          const LocalTensor<uint32_t>& indexLocal, LocalTensor<T>& tmpLocal, const int32_t repeatTimes) {
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float> || sfumato_unsupported::always_false<T>,
                  "AscendC::Sort takes half or float scores");
    sfumato::ascendc::enter("Sort");
    if (repeatTimes <= 0 || repeatTimes > 255)
        sfumato::ascendc::fail("Sort: repeatTimes " + std::to_string(repeatTimes) + " (1..255 blocks of 32)");
    const uint32_t n = static_cast<uint32_t>(repeatTimes) * 32u;
    uint32_t rounds = 0;
    for (uint32_t lists = static_cast<uint32_t>(repeatTimes); isFullSort && lists > 1;
         lists = (lists + 3) / 4)
        ++rounds;
    if (rounds > 0 && uint64_t{tmpLocal.GetSize()} * sizeof(T) < uint64_t{n} * 8)
        sfumato::ascendc::fail("Sort: tmpLocal of " +
                               std::to_string(uint64_t{tmpLocal.GetSize()} * sizeof(T)) +
                               " bytes, the full sort of " + std::to_string(n) + " elements needs " +
                               std::to_string(uint64_t{n} * 8) + " (GetSortMaxMinTmpSize)");
    const LocalTensor<T>* bufs[2] = {&dstLocal, &tmpLocal};
    uint32_t cur = rounds % 2;  // the buffer Sort32 writes: the last round then ends in dst
    Sort32(*bufs[cur], concatLocal, indexLocal, repeatTimes);
    std::vector<uint32_t> lens(static_cast<size_t>(repeatTimes), 32u);
    for (uint32_t r = 0; r < rounds; ++r, cur ^= 1u)
        sfumato_sort::merge_round(*bufs[cur ^ 1u], *bufs[cur], lens);
}

template <class T>
void Extract(const LocalTensor<T>& dstValueLocal, const LocalTensor<uint32_t>& dstIndexLocal,
             const LocalTensor<T>& sortedLocal, const int32_t repeatTimes) {
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float> || sfumato_unsupported::always_false<T>,
                  "AscendC::Extract takes half or float scores");
    sfumato::ascendc::enter("Extract");
    if (repeatTimes <= 0 || repeatTimes > 255)
        sfumato::ascendc::fail("Extract: repeatTimes " + std::to_string(repeatTimes) +
                               " (1..255 blocks of 32)");
    uint64_t cnt = 0;
    const GatherMaskParams p(1, static_cast<uint16_t>(repeatTimes), 8, 0);
    GatherMask(dstValueLocal, sortedLocal, static_cast<uint8_t>(sizeof(T) == 4 ? 1 : 3), false, 0, p, cnt);
    const LocalTensor<uint32_t> words = sortedLocal.template ReinterpretCast<uint32_t>();
    GatherMask(dstIndexLocal, words, static_cast<uint8_t>(2), false, 0, p, cnt);
}

}  // namespace AscendC
