// The advanced API's scratch and slicing (namespace AscendC::sfumato_math), shared by the math,
// filter and layout APIs (math_adv.h, filter_adv.h, transform_adv.h): an API's count-sized buffers
// carved from the caller's sharedTmpBuffer or the UB the TPipe has not handed out, the count worked
// in slices of what they hold, bitmask instructions split where their bits start 32-byte aligned,
// and rounding to an integral value (the fp32 -> fp32 vconv).
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "sfumato_ascendc/core_state.h"
#include "sfumato_ascendc/stack_buffer.h"
#include "sfumato_ascendc/tensor.h"
#include "sfumato_ascendc/unsupported.h"
#include "sfumato_ascendc/vector.h"
#include "sfumato_ascendc/vector_more.h"

namespace AscendC {

namespace sfumato_math {

// Elements a slice of every math API holds: a multiple of this (keeps every buffer and every mask of
// one bit an element 32-byte aligned).
constexpr uint32_t kGrain = 256;

template <class T>
constexpr void require_float() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || sfumato_unsupported::always_false<T>,
                  "this advanced math API of sfumato's Ascend C layer takes half or float tensors");
}

// Bytes a slice of `elems` elements needs: `bufs` float-sized buffers and `masks` bit masks.
constexpr uint64_t slice_bytes(uint32_t bufs, uint32_t masks, uint64_t elems) {
    return uint64_t{bufs} * 4 * elems + uint64_t{masks} * elems / 8;
}

// The scratch of one call: `bufs` buffers and `masks` bit masks of `slice` elements each.
struct Scratch {
    LocalTensor<uint8_t> base;
    uint32_t bufs = 0, slice = 0;
    template <class U>
    LocalTensor<U> buf(uint32_t k) const {
        LocalTensor<U> t = base[k * slice * 4].template ReinterpretCast<U>();
        t.SetSize(slice * 4 / sizeof(U));
        return t;
    }
    LocalTensor<uint8_t> mask(uint32_t k) const {
        LocalTensor<uint8_t> t = base[bufs * slice * 4 + k * slice / 8];
        t.SetSize(slice / 8);
        return t;
    }
};

// Carves the scratch from `tmp` (or, when it is empty, the UB the TPipe has not handed out): the
// largest slice (a multiple of kGrain, at most the count rounded up) that fits; too little stops the
// run naming the API and the bytes one slice needs.
inline Scratch carve(const char* api, const LocalTensor<uint8_t>& tmp, uint32_t bufs, uint32_t masks,
                     uint32_t count) {
    Scratch s;
    s.bufs = bufs;
    if (bufs == 0 && masks == 0) return s;
    LocalTensor<uint8_t> t = tmp;
    if (!t.valid() || t.GetSize() == 0) {
        if (!PopStackBuffer<uint8_t, TPosition::LCM>(t))
            sfumato::ascendc::fail(std::string(api) + ": no sharedTmpBuffer and no TPipe to take the scratch from");
    }
    const uint64_t per_grain = slice_bytes(bufs, masks, kGrain);
    const uint64_t grains = t.GetSize() / per_grain;
    const uint64_t want = (uint64_t{count} + kGrain - 1) / kGrain;
    if (grains == 0)
        sfumato::ascendc::fail(std::string(api) + ": the scratch holds " + std::to_string(t.GetSize()) +
                               " bytes, one slice of " + std::to_string(kGrain) + " elements needs " +
                               std::to_string(per_grain));
    if (t.GetPhyAddr() % 32 != 0)
        sfumato::ascendc::fail(std::string(api) + ": the sharedTmpBuffer is not 32-byte aligned");
    s.base = t;
    s.slice = static_cast<uint32_t>(std::min(grains, want) * kGrain);
    return s;
}

// Runs f(offset, n) over the count in slices.
template <class F>
void slices(uint32_t count, uint32_t slice, F&& f) {
    if (slice == 0) slice = count;
    for (uint32_t done = 0; done < count; done += slice) f(done, std::min(slice, count - done));
}

// Runs f(offset, n) over the pieces of a count a bitmask instruction (vcmp, vsel) can take each with its
// bits at a 32-byte aligned start: whole groups of 256 elements, then the whole repeats left, then the
// last partial repeat (each piece computes its own bits from offset 0 of its mask).
template <class T, class F>
void bit_pieces(uint32_t count, F&& f) {
    constexpr uint32_t L = 256 / sizeof(T);
    const uint32_t groups = count / 256 * 256, reps = (count - groups) / L * L, tail = count - groups - reps;
    if (groups) f(0u, groups);
    if (reps) f(groups, reps);
    if (tail) f(groups + reps, tail);
}

template <class T, class U>
T cast_scalar(U v) {
    return static_cast<T>(static_cast<float>(v));
}

// dst = src rounded to an integral value per `mode` (n elements). float: one fp32 -> fp32 vconv;
// half: through `f` (a float buffer of n elements).
template <class T>
void round_integral(const LocalTensor<T>& dst, const LocalTensor<T>& src, RoundMode mode, int32_t n,
                    const LocalTensor<float>& f) {
    if constexpr (std::is_same_v<T, float>) {
        (void)f;
        Cast(dst, src, mode, static_cast<uint32_t>(n));
    } else {
        Cast(f, src, RoundMode::CAST_NONE, static_cast<uint32_t>(n));
        Cast(f, f, mode, static_cast<uint32_t>(n));
        Cast(dst, f, RoundMode::CAST_RINT, static_cast<uint32_t>(n));
    }
}

template <class T>
constexpr uint32_t round_bufs() {
    return std::is_same_v<T, float> ? 0u : 1u;
}

// dst = src rounded per mode, through the scratch (Ceil, Floor, Trunc).
template <class T>
void rounded(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
             const LocalTensor<uint8_t>& tmp, uint32_t count, RoundMode mode) {
    require_float<T>();
    sfumato::ascendc::enter(api);
    sfumato::ascendc::count_of(count, dst, src);
    const Scratch s = carve(api, tmp, round_bufs<T>(), 0, count);
    slices(count, s.slice, [&](uint32_t o, uint32_t n) {
        round_integral(dst[o], src[o], mode, static_cast<int32_t>(n),
                       s.bufs ? s.buf<float>(0) : LocalTensor<float>());
    });
}

// The erfc fit's coefficients, highest power of t first (P(t) = c0 + c1 t + ... + c9 t^9).
constexpr float kErfcFit[10] = {-1.26551223f, 1.00002368f, 0.37409196f, 0.09678418f, -0.18628806f,
                                0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};

}  // namespace sfumato_math

}  // namespace AscendC
