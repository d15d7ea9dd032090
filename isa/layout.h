// Fractal layouts of the AI core and host-side converters, so kernels and tests can prepare and
// check data. A fractal is 16 rows x C0 columns with C0 = 32 B / element size (16 for 16-bit
// types, 32 for int8, 8 for fp32): 512 B. Names are the vendor's: the first letter is the order
// of the fractals, the second the order inside one; Z = row-major, N = column-major.
//   NZ  (L1, GM, L0C): fractals column-major (column groups of C0, each holding all padded rows),
//        row-major inside: element (i, j) at ((j / C0) * rows_pad + i) * C0 + j % C0.
//        L0C uses C0 = 16 for fp32/int32 (1 KiB fractals), as the Cube writes it.
//   ZZ  (L0A): fractals row-major, row-major inside.
//   ZN  (L0B): fractals row-major over (k-block, n-block), column-major inside: each fractal
//        row holds K0 consecutive k of one n.
#pragma once
#include <cstdint>
#include <vector>

#include "isa/dtype.h"

namespace sfumato::isa {

constexpr uint32_t round_up16(uint32_t v) { return (v + 15) / 16 * 16; }
constexpr uint32_t layout_c0(DType t) { return 32 / dtype_size(t); }

// Byte offsets of element (i, j) (row, column) in each layout; *_pad are the padded extents.
constexpr uint64_t nz_offset(uint32_t i, uint32_t j, uint32_t rows_pad, uint32_t c0, uint32_t es) {
    return ((uint64_t{j / c0} * rows_pad + i) * c0 + j % c0) * es;
}
constexpr uint64_t zz_offset(uint32_t i, uint32_t k, uint32_t cols_pad, uint32_t k0, uint32_t es) {
    return ((uint64_t{i / 16} * (cols_pad / k0) + k / k0) * 16 * k0 + (i % 16) * k0 + k % k0) * es;
}
constexpr uint64_t zn_offset(uint32_t k, uint32_t j, uint32_t cols_pad, uint32_t k0, uint32_t es) {
    return ((uint64_t{k / k0} * (cols_pad / 16) + j / 16) * 16 * k0 + (j % 16) * k0 + k % k0) * es;
}

// Row-major rows x cols (elements of t) <-> a layout, zero padding to whole fractals.
std::vector<uint8_t> nd_to_nz(const uint8_t* nd, uint32_t rows, uint32_t cols, DType t);
std::vector<uint8_t> nz_to_nd(const uint8_t* nz, uint32_t rows, uint32_t cols, DType t);
std::vector<uint8_t> nd_to_zz(const uint8_t* nd, uint32_t rows, uint32_t cols, DType t);  // A (m x k)
std::vector<uint8_t> nd_to_zn(const uint8_t* nd, uint32_t rows, uint32_t cols, DType t);  // B (k x n)
// C read back from L0C (fp32/int32, 16x16 fractals) to row-major m x n.
std::vector<uint8_t> l0c_to_nd(const uint8_t* c, uint32_t m, uint32_t n, DType t);

}  // namespace sfumato::isa
