// The way into L1 shared by the cube kernels that read row-major GM operands (matmul, attention):
// rows x cols of a row-major matrix (row stride `ld` elements) lands in L1 as NZ, `rows_pad` rows
// per column group of one fractal row (32 B). Parts whose MTE2 converts (ND2NZ) take one
// instruction; the others take one strided burst copy per column group, each row a burst padded
// with zeros to 32 B, which is what a kernel written for such parts issues.
#pragma once
#include <algorithm>
#include <cstdint>

#include "runtime/kernel/api.h"

namespace sfumato::ops {

template <class T>
void load_nz(const kernel::LocalTensor<T>& dst, const kernel::GlobalTensor<T>& src, uint32_t rows, uint32_t cols,
             uint64_t ld, uint32_t rows_pad, bool nd2nz) {
    constexpr uint32_t es = sizeof(T), k0 = 32 / es;
    if (nd2nz) {
        kernel::DataCopy(dst, src,
                         kernel::Nd2NzParams{1, static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), 0,
                                             static_cast<uint32_t>(ld), static_cast<uint16_t>(rows_pad), 1, 0});
        return;
    }
    for (uint32_t g = 0; g * k0 < cols; ++g) {
        const uint32_t w = std::min(k0, cols - g * k0);
        kernel::DataCopyPad(dst[g * rows_pad * k0], src[g * k0],
                            kernel::DataCopyExtParams{rows, w * es, static_cast<uint32_t>((ld - w) * es), 0});
    }
}

}  // namespace sfumato::ops
