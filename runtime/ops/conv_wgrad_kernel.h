// The weight-gradient convolution on the cube (Conv2DBackpropFilter): dW (M x NCOL) = sum over
// images n and output pixels p of dY[n] (M x P) x img2col(X[n]) (P x NCOL), NCOL = C1 x kh x kw
// x C0 ordered as load3d orders its columns. dY (ND, NCHW: each output channel's pixels a
// contiguous row) loads into L1 as the A operand through ND->NZ, a chunk of whole output rows at a
// time; X (NC1HWC0, conv_layout.h) loads into L1 one window of input rows per chunk, and load3d
// with its transpose bit writes the img2col matrix straight into L0B with the pixels as K (the B
// operand), so the accumulator sums over pixels. dY may instead be NC1HWC0 (2-byte types, a
// training step's layout): each channel block's pixels of the chunk are one run of C0-wide rows
// (dY^T in NZ), copied into L1 as they are, and each 16 x 16 fractal is transposed on its way to
// L0A (load2d's transpose), so the A operand is the same and no conversion runs before the kernel.
// Work is split into output tiles (base_m
// channels x base_n columns) and, when the tiles are fewer than the cube cores, into `parts`
// shares of the images, each part writing its fp32 partial sums (the node adds them). L1 and
// L0A/L0B are double buffered, the next chunk's loads issued before the current one's mads.
// Simplified: groups = 1.
#pragma once
#include <string>

#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops {

struct ConvWgradPlan {
    isa::DType in = isa::DType::FP16;   // fp16 | bf16 | fp32
    isa::DType out = isa::DType::FP32;  // the partial sums' type (fp32; or in's type with one part)
    uint64_t x5 = 0, dy = 0, dw = 0;    // X NC1HWC0, dY NCHW (or NC1HWC0), dW partials (parts x M x ncol)
    bool dy_5hd = false;                // dY in NC1HWC0 (2-byte types: C0 = 16, a fractal's width)
    uint32_t n = 1, c1 = 1, hi = 1, wi = 1, m = 1, oh = 1, ow = 1;
    uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw_ = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    // Tiling (plan_conv_wgrad): tiles of base_m output channels x base_n columns; images split
    // into `parts`; a chunk of rows_out output rows in L1 per load, walked in base_k pixels.
    uint32_t base_m = 16, base_n = 16, base_k = 16, rows_out = 1, rows_in = 1, c1_l1 = 1;
    uint32_t tiles_m = 1, tiles_n = 1, parts = 1, block_dim = 1;
    bool nd2nz_instr = true;
    uint32_t c0() const { return 32 / isa::dtype_size(in); }
    uint32_t ncol() const { return c1 * kh * kw * c0(); }
    uint32_t items() const { return tiles_m * tiles_n * parts; }
    uint32_t ext_h() const { return (kh - 1) * dh + 1; }
    uint32_t ext_w() const { return (kw - 1) * dw_ + 1; }
};

// dW rows in load3d's column order (M rows of C1 x taps x C0) to OIHW rows (C x taps), on the
// vector cores: per row one burst in, one gather (a byte-offset table each core builds once:
// the first C0 channels' entries lane by lane, then whole channel blocks doubled), one burst out.
struct OihwPlan {
    isa::DType dtype = isa::DType::FP16;
    uint64_t src = 0, dst = 0;
    uint32_t m = 1, c = 1, taps = 1;
    uint32_t c0() const { return 32 / isa::dtype_size(dtype); }
    uint32_t c1() const { return (c + c0() - 1) / c0(); }
};
// Throws InputError when a row does not fit UB.
KernelDesc oihw_kernel(const OihwPlan& p, const DeviceInfo& dev, const std::string& name, const std::string& type);

// The shares' fp32 partial sums (parts x M rows of C1 x taps x C0) summed in order, rounded to the
// weights' type (RINT) and, with `oihw`, gathered to OIHW rows (as oihw_kernel) in one vector
// kernel (was a ReduceSum, a Cast and the gather: three launches). Per item one row (oihw) or a
// chunk of whole elements: each share's piece in by one burst, fp32 adds, the conversion, out.
struct WgradFinishPlan {
    isa::DType dtype = isa::DType::FP16;  // the output type
    uint64_t src = 0, dst = 0;
    uint32_t parts = 2, m = 1, c = 1, taps = 1;
    bool oihw = false;
    uint32_t c0() const { return 32 / isa::dtype_size(dtype); }
    uint32_t c1() const { return (c + c0() - 1) / c0(); }
    uint32_t ncol() const { return c1() * taps * c0(); }
};
// Throws InputError when a row (oihw) or a 64-element chunk does not fit UB.
KernelDesc wgrad_finish_kernel(const WgradFinishPlan& p, const DeviceInfo& dev, const std::string& name,
                               const std::string& type);

// Chooses the tiling for a plan whose problem fields are set (cube_cores: how many items to aim
// for); throws InputError when no tile fits the buffers or a field exceeds load3d's.
void plan_conv_wgrad(ConvWgradPlan& p, const DeviceInfo& dev);
// One block of the kernel.
void run_conv_wgrad_kernel(isa::IInstrSink& sink, const ConvWgradPlan& p);

}  // namespace sfumato::ops
