// Layout conversions the convolution kernels need, as vector kernels (the framework's TransData):
// channel-major tensors (NCHW activations, OIHW weights) into the C0-interleaved NC1HWC0 form
// load3d reads, with channel groups padded separately, optionally with the spatial order reversed
// (ConvTranspose's flipped kernels) and optionally spread over a larger zero grid (the stride
// zeros and the borders of ConvTranspose's equivalent convolution).
//
// The conversion loads up to C0 channel rows of a pixel chunk into UB (one strided burst copy,
// or one burst when the rows are adjacent in GM: a whole plane of contiguous channels; missing
// channels of a partial C0 block are zeroed), then one gather interleaves them: output
// element (p, c0) = row c0, pixel p (or L - 1 - p). The gather's byte-offset table is built once
// per core with a few vector instructions (C0 masked duplicates, then doublings with adds).
#pragma once
#include <string>
#include <vector>

#include "sim/device_if.h"

namespace sfumato::ops {

struct Nc1hwc0Plan {
    uint64_t src = 0, dst = 0;
    isa::DType dtype = isa::DType::FP16;  // 2- or 4-byte
    // Source items (n1, n2) with element strides s1, s2; cg channels sc elements apart, each
    // holding h x w contiguous pixels.
    uint32_t n1 = 1, n2 = 1;
    uint64_t s1 = 0, s2 = 0;
    uint32_t cg = 1;
    uint64_t sc = 0;
    uint32_t h = 1, w = 1;
    bool flip = false;  // pixel p comes from h * w - 1 - p (needs the whole h x w in one chunk)
    // Pixels in blocks of blk (0: none): a flip reverses each block (p from its block's end), and
    // the destination is (n1, n2, h * w / blk, C1, blk, C0): each block's C1 groups together (a
    // ConvTranspose's W read a whole output-channel row per channel: long bursts).
    uint32_t blk = 0;
    // Destination (n1, n2, C1, hd, wd, C0), contiguous, C1 = ceil(cg / C0). Pixel (i, j) goes to
    // (i * sh + oh, j * sw + ow) when that lies in the grid (a "spread" conversion: the caller
    // zeroes the destination first); sh = sw = 1, oh = ow = 0 and hd x wd = h x w: plain.
    uint32_t hd = 1, wd = 1;
    uint32_t sh = 1, sw = 1;
    int64_t oh = 0, ow = 0;
    // FRACTAL_Z destination (fz_rows != 0, a plain conversion, n2 = 1): the C0 blocks of a weight
    // ordered (K / C0, fz_rows, C0), K = C1 x taps, so that a cube tile's rows of one K block are
    // one contiguous run (conv_kernel.h). Without blk: row i1, taps h x w (an OIHW W, n1 = M);
    // with blk (n1 = 1): row pixel / blk, taps blk (a ConvTranspose's W, blk = kh x kw).
    uint32_t fz_rows = 0;
    bool spread() const { return sh != 1 || sw != 1 || oh != 0 || ow != 0 || hd != h || wd != w; }
    uint64_t dst_elems() const;
};

// The way back: NC1HWC0 (n, C1, l pixels, C0) -> contiguous ND (n, c, l), the padding channels
// dropped. Per (image, channel block, pixel chunk): one burst in, one gather transposing the
// chunk to C0 channel rows, one multi-burst store of the valid rows.
struct NdFromNc1hwc0Plan {
    uint64_t src = 0, dst = 0;
    isa::DType dtype = isa::DType::FP16;  // 2- or 4-byte
    uint32_t n = 1, c = 1;
    uint64_t l = 1;  // pixels per channel (product of the spatial dims)
};
KernelDesc nd_from_nc1hwc0_kernel(const NdFromNc1hwc0Plan& p, const DeviceInfo& dev, const std::string& name,
                                  const std::string& type);

// Throws InputError when UB cannot hold the chunks the plan needs (a spread or flipped
// conversion needs whole rows / the whole kernel in one chunk).
KernelDesc nc1hwc0_kernel(const Nc1hwc0Plan& p, const DeviceInfo& dev, const std::string& name,
                          const std::string& type);
// A row-major (m, k) matrix, k a multiple of C0 (the OIHW W of a 1 x 1 Conv of whole C0 blocks:
// K = C), into FRACTAL_Z (k / C0, m, C0): per chunk of rows one burst into UB, one UB copy per K
// block gathering the rows' 32 B blocks, one store of (k / C0) runs of rows x 32 B.
struct FzFromRowsPlan {
    uint64_t src = 0, dst = 0;
    isa::DType dtype = isa::DType::FP16;  // 2- or 4-byte
    uint32_t m = 1, k = 1;
};
KernelDesc fz_from_rows_kernel(const FzFromRowsPlan& p, const DeviceInfo& dev, const std::string& name,
                               const std::string& type);
// The phases of a strided ConvTranspose (conv_node.cpp) into its NC1HWC0 Y: phase (rh, rw) is
// an NC1HWC0 grid (n, c1, ceil((yh - rh) / sh), ceil((yw - rw) / sw), C0) at src[rh * sw + rw]
// (0: a phase no tap reaches, zeros), and Y pixel (i sh + rh, j sw + rw) is its pixel (i, j).
// Per item (image, channel block, rh, chunk of rows): each phase's rows in by one burst, placed
// sw pixels apart by a UB copy of 32 B blocks, the chunk's whole Y rows out by one burst each
// (sh rows apart). Every GM access is a long burst: 32 B pieces scattered over Y would be bound
// by the MTE's outstanding requests, not by the bytes.
struct PhaseMergePlan {
    uint64_t dst = 0;
    std::vector<uint64_t> src;            // sh x sw grids (0: zeros)
    isa::DType dtype = isa::DType::FP16;  // 2- or 4-byte
    uint32_t n = 1, c1 = 1, yh = 1, yw = 1, sh = 1, sw = 1;
};
// Throws InputError when one row of every buffer does not fit UB.
KernelDesc phase_merge_kernel(const PhaseMergePlan& p, const DeviceInfo& dev, const std::string& name,
                              const std::string& type);
// Zeroes `bytes` bytes at `addr` (a multiple of 32) on the vector cores.
KernelDesc zero_kernel(uint64_t addr, uint64_t bytes, const DeviceInfo& dev, const std::string& name,
                       const std::string& type);

}  // namespace sfumato::ops
