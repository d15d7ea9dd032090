// Format conversions between ND and the fractal formats of node_op.h, on the
// host (weights are converted once when a graph loads) and on the device: the
// sfumato-only node op `TransData` (attribute dst_format: "ND" | "NZ"), which
// the graph's format pass inserts where a consumer asks for another format than
// its producer wrote. Layouts: NZ of [..., R, C] is
// [..., ceil(C/C0), ceil(R/16)*16, C0]; NC1HWC0 of [N, C, spatial...] is [N,
// ceil(C/C0), spatial..., C0]; padding is zero. The device kernel moves 32-byte
// column groups with strided bursts (no vector work); ND <-> NC1HWC0 (of [N, C,
// spatial...], 2- and 4-byte types) is a gather on the vector cores (conv_layout.h).
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/ops/node_op.h"

namespace sfumato::ops {

// Contiguous ND bytes of `shape` in dtype d -> bytes in format f (storage_bytes
// long), and back.
std::vector<uint8_t> host_to_format(const std::vector<uint8_t>& nd, const std::vector<int64_t>& shape,
                                    isa::DType d, Format f);
std::vector<uint8_t> host_from_format(const std::vector<uint8_t>& data, const std::vector<int64_t>& shape,
                                      isa::DType d, Format f);

}  // namespace sfumato::ops
