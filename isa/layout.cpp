// Host-side layout converters (isa/layout.h); not on any simulation hot path.
#include "isa/layout.h"

#include <cstring>

namespace sfumato::isa {

namespace {
uint32_t ceil_to(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::vector<uint8_t> nd_to_nz(const uint8_t* nd, uint32_t rows, uint32_t cols, DType t) {
    const uint32_t es = dtype_size(t), c0 = layout_c0(t), rp = round_up16(rows);
    std::vector<uint8_t> out(uint64_t{rp} * ceil_to(cols, c0) * es, 0);
    for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < cols; ++j)
            std::memcpy(&out[nz_offset(i, j, rp, c0, es)], nd + (uint64_t{i} * cols + j) * es, es);
    return out;
}

std::vector<uint8_t> nz_to_nd(const uint8_t* nz, uint32_t rows, uint32_t cols, DType t) {
    const uint32_t es = dtype_size(t), c0 = layout_c0(t), rp = round_up16(rows);
    std::vector<uint8_t> out(uint64_t{rows} * cols * es);
    for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < cols; ++j)
            std::memcpy(&out[(uint64_t{i} * cols + j) * es], nz + nz_offset(i, j, rp, c0, es), es);
    return out;
}

std::vector<uint8_t> nd_to_zz(const uint8_t* nd, uint32_t rows, uint32_t cols, DType t) {
    const uint32_t es = dtype_size(t), k0 = layout_c0(t), cp = ceil_to(cols, k0);
    std::vector<uint8_t> out(uint64_t{round_up16(rows)} * cp * es, 0);
    for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < cols; ++j)
            std::memcpy(&out[zz_offset(i, j, cp, k0, es)], nd + (uint64_t{i} * cols + j) * es, es);
    return out;
}

std::vector<uint8_t> nd_to_zn(const uint8_t* nd, uint32_t rows, uint32_t cols, DType t) {
    const uint32_t es = dtype_size(t), k0 = layout_c0(t), cp = round_up16(cols);
    std::vector<uint8_t> out(uint64_t{ceil_to(rows, k0)} * cp * es, 0);
    for (uint32_t k = 0; k < rows; ++k)
        for (uint32_t j = 0; j < cols; ++j)
            std::memcpy(&out[zn_offset(k, j, cp, k0, es)], nd + (uint64_t{k} * cols + j) * es, es);
    return out;
}

std::vector<uint8_t> l0c_to_nd(const uint8_t* c, uint32_t m, uint32_t n, DType t) {
    const uint32_t es = dtype_size(t), mp = round_up16(m);
    std::vector<uint8_t> out(uint64_t{m} * n * es);
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < n; ++j)
            std::memcpy(&out[(uint64_t{i} * n + j) * es], c + nz_offset(i, j, mp, 16, es), es);
    return out;
}

}  // namespace sfumato::isa
