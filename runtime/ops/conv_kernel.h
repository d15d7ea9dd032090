// The cube convolution kernel: per image and group, Y^T (output channels x pixels) = W5 (output
// channels x K) x img2col(X)^T, K = C1 x kh x kw x C0 ordered as load3d orders its columns. The
// weights (converted to M x C1 x kh x kw x C0, rows contiguous) load as the A operand like a
// matmul's; the feature map (NC1HWC0, conv_layout.h) loads into L1 one window of input rows per
// tile of output pixels, and load3d writes the img2col matrix straight into L0B as the B
// operand (the 910B-class load3dv2 serves B2 as well as A2). So the accumulator drains to
// NCHW rows (output channel, pixels): the FixPipe writes Y without a transpose. Stride,
// dilation and padding are load3d's; a window's pads are the image's, shifted to the window.
// A bias (one value per output channel, i.e. per row) enters as one extra K0-deep mad, as in
// the matmul (cube_matmul.h). L1 and L0A/L0B are double buffered and the next step's loads are
// issued before the current step's mads (L1 single buffered, after them, when two chunks of the
// smallest tile do not fit).
#pragma once
#include <vector>

#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops {

struct ConvCubePlan {
    isa::DType in = isa::DType::FP16;   // fp16 | bf16 | fp32
    isa::DType out = isa::DType::FP32;  // fp32 | fp16 | bf16
    uint64_t x5 = 0, w5 = 0, y = 0, bias = 0;
    // Problem: n images x g groups; per group c1 blocks of C0 input channels (hi x wi, as
    // stored), mg output channels (of mtot in Y), oh x ow outputs.
    uint32_t n = 1, g = 1, c1 = 1, hi = 1, wi = 1, mg = 1, mtot = 1, oh = 1, ow = 1;
    uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    bool bias_en = false, relu = false;
    // Y in NC1HWC0 (C0 = 32 B / out size) instead of NCHW: the product is taken the other way
    // round, img2col(X) (pixels x K, load3d into L0A) x W^T (K x channels, L0B), so the
    // accumulator holds pixels x channels and the FixPipe drains it as NZ, which is NC1HWC0 (as
    // the vendor's cube convolution does). One group, or groups of 16 output channels (whole
    // NC1HWC0 blocks, group g's at block g * mg / C0). Coupled parts (no FixPipe to GM) drain
    // the NZ tile to UB and the MTE3 writes its channel blocks to GM, as the vector core's
    // store does. Padding channels of the last C0 block are written as zeros.
    bool y_5hd = false;
    // Tiling (plan_conv): output tiles of base_m channels x base_n pixels; K walked in chunks of
    // c1_l1 channel blocks (L1) and steps of base_k (L0).
    uint32_t base_m = 16, base_n = 16, base_k = 16, c1_l1 = 1, rows_l1 = 1;
    uint32_t tiles_m = 1, tiles_n = 1, block_dim = 1, l0c_buffers = 1;
    // L1 chunks double buffered (2: the next chunk loads during this one's mads) or, when two
    // do not fit (a large kernel over a wide image on a small L1), single buffered.
    uint32_t l1_buffers = 2;
    bool nd2nz_instr = true;
    // W in FRACTAL_Z (one group): (K / C0, mg, C0), conv_layout.h, instead of mg rows of K. The
    // A1 load of a tile's chunk is then kc / C0 runs of tm x 32 B, not tm x kc / C0 runs of 32 B
    // (a row-major W without ND2NZ: the MTE2's requests are 32 B each).
    bool w_fz = false;
    // A phase of a strided ConvTranspose (conv_node.cpp: stride x stride stride-1 convolutions
    // of the un-spread input, each writing one phase of Y to its own grid): the plan's kh x kw
    // taps are (e0h + u * tsh, e0w + v * tsw) of a FRACTAL_Z W of fkh x fkw taps per channel block.
    bool sub_taps = false;
    uint32_t fkh = 1, fkw = 1, e0h = 0, e0w = 0, tsh = 1, tsw = 1;
    uint32_t c0() const { return 32 / isa::dtype_size(in); }
    uint32_t kdim() const { return c1 * kh * kw * c0(); }  // K per group (W5 row length)
    uint32_t tiles() const { return n * g * tiles_m * tiles_n; }
    uint32_t ext_h() const { return (kh - 1) * dh + 1; }
    uint32_t ext_w() const { return (kw - 1) * dw + 1; }
};

// Chooses the tiling for a plan whose problem fields are set; throws InputError when the
// buffers cannot hold the smallest tile or a field exceeds load3d's (kernel, stride,
// dilation, pads up to 255).
void plan_conv(ConvCubePlan& p, const DeviceInfo& dev);
// One block of the kernel.
void run_conv_kernel(isa::IInstrSink& sink, const ConvCubePlan& p);
// One block of a launch running several plans (the phases of a strided ConvTranspose) one after
// the other: the plans' tiles, weighted by their K, split into contiguous shares over block_num.
void run_conv_phases(isa::IInstrSink& sink, const std::vector<ConvCubePlan>& ps);

}  // namespace sfumato::ops
