// The conformance program's sort and block-gather families (tests/ascendc/conformance.cpp runs them):
// "sort": Sort32 (float and half scores), MrgSort with 4 lists, with 3 (validBit 7, lengths not
// multiples of 32), with repeatTimes 2, with ifExhaustedSuspension and GetMrgSortResult, and the
// advanced API's MrgSort with sortedNum; "gatherb": Gatherb with block and repeat strides. The host
// computes every output word from the public API reference's definitions (descending scores, equal
// scores in input order, lists in order; 8-byte structures: the score in the low bytes, half scores
// followed by 2 zero bytes, the uint32 index in the high 4) and compares bit for bit.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tikicpulib.h"

namespace {

constexpr uint32_t kIn = 1024;   // input words: 128 scores, then 128 indices at word 512
constexpr uint32_t kOut = 2048;  // output words
constexpr uint32_t kScores = 128;

std::string g_sort_family;

// Scores with many ties (13 values) and indices 1000 + i.
float score_in(uint32_t i) { return static_cast<float>((i * 7u) % 13u) - 6.0f; }

// Output layout (float words): Sort32 float at 0, Sort32 half at 256, MrgSort 4 lists at 512, 3 lists
// at 768, repeat 2 at 1024, exhausted at 1280, advanced at 1536, counts at 2000.
constexpr uint32_t kS32 = 0, kS16 = 256, kM4 = 512, kM3 = 768, kMr = 1024, kMe = 1280, kMa = 1536,
                   kCnt = 2000;

}  // namespace

extern "C" __global__ __aicore__ void sort_kernel(GM_ADDR x, GM_ADDR y) {
    AscendC::GlobalTensor<float> xg, yg;
    AscendC::GlobalTensor<uint32_t> ig;
    xg.SetGlobalBuffer((__gm__ float*)x, kIn);
    ig.SetGlobalBuffer((__gm__ uint32_t*)x + 512, kScores);
    yg.SetGlobalBuffer((__gm__ float*)y, kOut);
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
    AscendC::LocalTensor<float> sc = ub.Alloc<float, kScores>();
    AscendC::LocalTensor<uint32_t> idx = ub.Alloc<uint32_t, kScores>();
    AscendC::LocalTensor<half> h = ub.Alloc<half, kScores>();
    AscendC::LocalTensor<float> o = ub.Alloc<float, kOut>();
    AscendC::LocalTensor<float> src = ub.Alloc<float, kOut>();
    AscendC::LocalTensor<uint32_t> off = ub.Alloc<uint32_t, 16>();
    AscendC::DataCopy(sc, xg, kScores);
    AscendC::DataCopy(idx, ig, kScores);
    AscendC::DataCopy(src, xg, kIn);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::Duplicate(o, 0.0f, kOut);
    if (g_sort_family == "gatherb") {
        // Repeat r, block j from byte offset ((7 - j) * 2 + r) * 32 of src, into blocks 2 apart, repeats
        // 20 blocks apart, as uint32 words.
        for (uint32_t k = 0; k < 16; ++k) off.SetValue(k, ((7 - k % 8) * 2 + k / 8) * 32);
        AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::GatherRepeatParams p{2, 20};
        AscendC::Gatherb(o.ReinterpretCast<uint32_t>(), src.ReinterpretCast<uint32_t>(), off, 2, p);
    } else {
        AscendC::Cast(h, sc, AscendC::RoundMode::CAST_NONE, kScores);
        AscendC::Sort32<float>(o[kS32], sc, idx, 4);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::LocalTensor<half> s16 = o[kS16].ReinterpretCast<half>();
        AscendC::Sort32<half>(s16, h, idx, 4);
        AscendC::PipeBarrier<PIPE_V>();
        // Four sorted groups of 32 (float) into one.
        AscendC::MrgSort4Info i4;
        for (int i = 0; i < 4; ++i) i4.elementLengths[i] = 32;
        i4.validBit = 15;
        AscendC::MrgSort<float>(o[kM4], {o[kS32], o[kS32 + 64], o[kS32 + 128], o[kS32 + 192]}, i4);
        // Three half lists: group 0, the first 20 of group 1, the first 7 of group 2 (validBit 7).
        const uint16_t l3[4] = {32, 20, 7, 0};
        AscendC::MrgSortSrcList<half> s3;
        s3.src1 = s16, s3.src2 = s16[128], s3.src3 = s16[256];
        AscendC::MrgSort<half>(o[kM3].ReinterpretCast<half>(), s3, AscendC::MrgSort4Info(l3, false, 7, 1));
        // repeatTimes 2: eight contiguous lists of 16 (the halves of the float groups).
        const uint16_t l16[4] = {16, 16, 16, 16};
        AscendC::MrgSort<float>(o[kMr], {o[kS32], o[kS32 + 32], o[kS32 + 64], o[kS32 + 96]},
                                AscendC::MrgSort4Info(l16, false, 15, 2));
        // Exhausted suspension: group 0 against the first 10 of group 1; the counts per list.
        const uint16_t le[4] = {32, 10, 0, 0};
        AscendC::MrgSortSrcList<float> se;
        se.src1 = o[kS32], se.src2 = o[kS32 + 64];
        AscendC::MrgSort<float>(o[kMe], se, AscendC::MrgSort4Info(le, true, 3, 1));
        uint16_t n[4];
        AscendC::GetMrgSortResult(n[0], n[1], n[2], n[3]);
        // The advanced API's form: group 3, group 2's first 5, suspended, sortedNum.
        const uint16_t la[4] = {32, 5, 0, 0};
        uint32_t sorted[4] = {9, 9, 9, 9};
        AscendC::MrgSortSrcList<float> sa;
        sa.src1 = o[kS32 + 192], sa.src2 = o[kS32 + 128];
        AscendC::MrgSort<float, true>(o[kMa], sa, la, sorted, 3, 1);
        for (int i = 0; i < 4; ++i) {
            o.SetValue(kCnt + i, static_cast<float>(n[i]));
            o.SetValue(kCnt + 4 + i, static_cast<float>(sorted[i]));
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(yg, o, kOut);
    AscendC::PipeBarrier<PIPE_ALL>();
}

namespace {

struct Pair {
    float score;
    uint32_t index;
};

std::vector<Pair> group(uint32_t g) {
    std::vector<Pair> v;
    for (uint32_t i = 0; i < 32; ++i) v.push_back({score_in(g * 32 + i), 1000 + g * 32 + i});
    std::stable_sort(v.begin(), v.end(), [](const Pair& a, const Pair& b) { return a.score > b.score; });
    return v;
}

// Merge of sorted lists, list order breaking ties; stops when a list runs out if `suspend`.
std::vector<Pair> merge(const std::vector<std::vector<Pair>>& lists, bool suspend,
                        std::vector<uint32_t>& taken) {
    std::vector<Pair> out;
    taken.assign(4, 0);
    for (;;) {
        int best = -1;
        for (size_t i = 0; i < lists.size(); ++i) {
            if (taken[i] == lists[i].size()) {
                if (suspend) return out;
                continue;
            }
            if (best < 0 || lists[i][taken[i]].score > lists[best][taken[best]].score)
                best = static_cast<int>(i);
        }
        if (best < 0) return out;
        out.push_back(lists[best][taken[best]++]);
    }
}

std::vector<Pair> prefix(std::vector<Pair> v, size_t n) {
    v.resize(n);
    return v;
}

// Writes structures as the chip lays them out: float score, or half score + 2 zero bytes; index.
void put(std::vector<uint32_t>& w, uint32_t at, const std::vector<Pair>& v, bool half_scores) {
    for (size_t k = 0; k < v.size(); ++k) {
        uint32_t lo;
        if (half_scores) {
            lo = sfumato::isa::half(v[k].score).bits;  // exact: small integers
        } else {
            std::memcpy(&lo, &v[k].score, 4);
        }
        w[at + 2 * k] = lo, w[at + 2 * k + 1] = v[k].index;
    }
}

void float_word(std::vector<uint32_t>& w, uint32_t at, float f) { std::memcpy(&w[at], &f, 4); }

std::vector<uint32_t> expected_sort() {
    std::vector<uint32_t> w(kOut, 0);
    std::vector<Pair> g[4];
    for (uint32_t i = 0; i < 4; ++i) g[i] = group(i);
    for (uint32_t i = 0; i < 4; ++i) put(w, kS32 + 64 * i, g[i], false), put(w, kS16 + 64 * i, g[i], true);
    std::vector<uint32_t> t;
    put(w, kM4, merge({g[0], g[1], g[2], g[3]}, false, t), false);
    put(w, kM3, merge({g[0], prefix(g[1], 20), prefix(g[2], 7)}, false, t), true);
    for (uint32_t r = 0; r < 2; ++r) {
        auto half_of = [](const std::vector<Pair>& v, size_t s) {
            return std::vector<Pair>(v.begin() + s, v.begin() + s + 16);
        };
        put(w, kMr + 128 * r,
            merge({half_of(g[2 * r], 0), half_of(g[2 * r], 16), half_of(g[2 * r + 1], 0),
                   half_of(g[2 * r + 1], 16)},
                  false, t),
            false);
    }
    put(w, kMe, merge({g[0], prefix(g[1], 10)}, true, t), false);
    for (int i = 0; i < 4; ++i) float_word(w, kCnt + i, static_cast<float>(t[i]));
    put(w, kMa, merge({g[3], prefix(g[2], 5)}, true, t), false);
    for (int i = 0; i < 4; ++i) float_word(w, kCnt + 4 + i, static_cast<float>(t[i]));
    return w;
}

std::vector<uint32_t> expected_gatherb(const std::vector<uint32_t>& in) {
    std::vector<uint32_t> w(kOut, 0);
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t j = 0; j < 8; ++j)
            for (uint32_t e = 0; e < 8; ++e) w[(r * 20 + j * 2) * 8 + e] = in[((7 - j) * 2 + r) * 8 + e];
    return w;
}

}  // namespace

// Runs a sort-family case: 0 when every word matches, 1 otherwise; -1 for another family.
int sort_family(const std::string& name) {
    if (name != "sort" && name != "gatherb") return -1;
    g_sort_family = name;
    std::vector<uint32_t> in(kIn, 0);
    for (uint32_t i = 0; i < kIn; ++i) {
        const float f = i < kScores ? score_in(i) : static_cast<float>(i);
        std::memcpy(&in[i], &f, 4);
    }
    for (uint32_t i = 0; i < kScores; ++i) in[512 + i] = 1000 + i;
    uint8_t* xd = static_cast<uint8_t*>(AscendC::GmAlloc(kIn * 4));
    uint32_t* yd = static_cast<uint32_t*>(AscendC::GmAlloc(kOut * 4));
    std::memcpy(xd, in.data(), kIn * 4);
    std::memset(yd, 0xff, kOut * 4);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(sort_kernel, 1, xd, (uint8_t*)yd);
    const std::vector<uint32_t> want = name == "sort" ? expected_sort() : expected_gatherb(in);
    int bad = -1;
    for (uint32_t i = 0; i < kOut && bad < 0; ++i)
        if (yd[i] != want[i]) bad = static_cast<int>(i);
    if (bad >= 0)
        std::printf("%s wrong: word %d is 0x%08x, expected 0x%08x\n", name.c_str(), bad, yd[bad], want[bad]);
    else
        std::printf("%s ok\n", name.c_str());
    AscendC::GmFree(xd);
    AscendC::GmFree(yd);
    return bad >= 0 ? 1 : 0;
}
