// Conv and ConvTranspose (1-D and 2-D, ONNX semantics: groups incl. depthwise, strides,
// dilations, pads, auto_pad, ConvTranspose's output_padding / output_shape) as graph nodes on
// the cube convolution kernel (conv_kernel.h). Launches, in order, on NCHW (ND) tensors:
//   1. (ConvTranspose) zero the workspace the input spreads into;
//   2. X -> NC1HWC0 in the workspace, each group's channels padded to whole C0 blocks
//      (ConvTranspose: spread over the equivalent convolution's zero grid: pixel (i, j) at
//      (i * s + e - 1 - p_begin, ...), e the dilated kernel extent);
//   3. W -> FRACTAL_Z (C1 x kh x kw, M, C0) (ConvTranspose: output channel major, kernel
//      flipped; M x C1 x kh x kw x C0 rows for groups), so a tile's weight rows load as runs;
//      a Conv asks for W in NC1HWC0 (input_format), which is that layout, so a graph
//      converts a constant W once when it loads and this step is left out; a 1 x 1 Conv of one
//      group with whole C0 blocks of input channels turns its ND W (rows of K) into FRACTAL_Z by
//      a block copy;
//   4. the cube kernel, writing Y (NCHW) directly, bias and ReLU fused;
// The graph's layout pass keeps activations in NC1HWC0 between operators: a Conv then takes X
// already in NC1HWC0 (step 2 is left out) and, with attribute y_format = "NC1HWC0", writes Y in
// it (the cube takes the product the other way round, conv_kernel.h). One group, or groups of
// whole C0 blocks of input and 16 output channels (the graph's depthwise pass makes them).
// A Clip(0, max) activation is the FixPipe's ReLU and an in-place min(y, max) vector kernel.
//   5. (other activations) the vector epilogue over the fp32 result.
// ConvTranspose runs as the equivalent stride-1 convolution with the flipped kernel over the
// spread input (zeros between and around the pixels), which costs stride^2 more cube work than
// a scatter (col2im) would, and no vector scatter-add. With stride 1 (the data gradient of a
// stride-1 Conv) nothing spreads: the input converts plainly and the borders are load3d's pads.
// With a stride, one group and an NC1HWC0 Y it runs as s_h x s_w stride-1 "phase" convolutions
// of the un-spread input (plan_phases below), each with the taps that reach one phase of Y:
// the useful products only; a vector kernel merges the phases' grids into Y.
// Depthwise and other small groups pad each group to a C0 block of channels (C0 - C/group zero
// channels per group): correct, but the cube then does C0 / (C/group) times the useful work;
// see docs/operators.md.
#include <algorithm>
#include <cmath>

#include "runtime/ops/conv_kernel.h"
#include "runtime/ops/conv_layout.h"
#include "runtime/ops/cube_epilogue.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/op_util.h"
#include "runtime/ref/activation.h"
#include "runtime/ref/conv_shape.h"

namespace sfumato::ops {

namespace {

class ConvNode : public INodeOp {
public:
    ConvNode(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        if (!n.has_input(0) || !n.has_input(1)) throw UnsupportedError(n, "needs inputs X and W");
        const TensorRef &x = n.inputs[0], &w = n.inputs[1];
        m_w_nc1hwc0 = w.format == Format::NC1HWC0 && n.op_type == "Conv";
        // ConvTranspose (a training step's data gradient) takes X in NC1HWC0 with one group and
        // stride 1 (nothing to spread: load3d's pads are the borders), and writes Y in it.
        m_x_5hd = x.format == Format::NC1HWC0;
        m_y_5hd = n.attrs.get_string("y_format", "ND") == "NC1HWC0";
        for (const TensorRef* t : {&x, &w}) {
            const bool fractal = (t == &w && m_w_nc1hwc0) || (t == &x && m_x_5hd);
            if ((t->format != Format::ND && !fractal) || !t->contiguous())
                throw UnsupportedError(n, "inputs must be contiguous NCHW (ND) tensors (X and W of a "
                                          "Conv also NC1HWC0)");
            for (int64_t d : t->shape)
                if (d <= 0) throw UnsupportedError(n, "zero-size dimension in " + ref::shape_str(t->shape));
        }
        if (x.elem != w.elem) throw UnsupportedError(n, "X and W of different element types");
        if (x.dtype != isa::DType::FP16 && x.dtype != isa::DType::BF16 && x.dtype != isa::DType::FP32)
            throw UnsupportedError(n, std::string("element type ") + ref::elem_type_name(x.elem));
        if (x.shape.size() != 3 && x.shape.size() != 4)
            throw UnsupportedError(n, "only 1-D and 2-D convolutions (X of rank 3 or 4)");
        try {
            m_g = ref::conv_geometry(n.name, n.op_type, n.attrs, x.shape, w.shape);
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        m_out = make_tensor(m_g.out_shape(), x.elem);
        m_act = ref::activation_of(n.attrs);
        // Clip(0, hi) (ReLU6 and the like): the FixPipe's ReLU and rounding, then min(y, hi) in
        // place on the rounded Y. The same values as clipping before rounding (rounding is
        // monotone, so round(x) > round(hi) only when x > hi), in Y's own layout.
        m_clip_max =
            m_act.kind == "Clip" && m_act.alpha == 0.0 && m_act.beta > 0.0 && std::isfinite(m_act.beta);
        m_epilogue = !fixpipe_activation(m_act) && !m_clip_max;
        const uint32_t c0x = 32 / isa::dtype_size(x.dtype);
        // Groups of whole C0 blocks (a depthwise Conv after the graph's depthwise pass): each
        // group's channels are C0 blocks of the packed NC1HWC0 tensor.
        const bool c0_groups =
            m_g.group == 1 || (m_g.c_per_group() % c0x == 0 && m_g.m_per_group() % 16 == 0);
        if ((m_x_5hd || m_y_5hd) && (n.op_type == "Conv" ? !c0_groups : m_g.group != 1))
            throw UnsupportedError(n,
                                   "NC1HWC0 X or Y only for a Conv of one group or of groups of whole C0 "
                                   "blocks of input and 16 output channels, or a ConvTranspose of one group");
        if (m_y_5hd && m_epilogue)
            throw UnsupportedError(
                n,
                "NC1HWC0 Y only with no activation, ReLU or Clip(0, max) (the FixPipe's; a "
                "vector epilogue would need the fp32 result's other C0)");
        if (m_y_5hd) m_out.format = Format::NC1HWC0;
        if (m_clip_max) plan_clip(n, dev);
        const bool bias = n.has_input(2);
        if (bias) {
            const TensorRef& b = n.inputs[2];
            if (b.elem != x.elem || b.numel() != static_cast<uint64_t>(m_g.m) || !b.contiguous())
                throw UnsupportedError(n, "B must be a contiguous vector of M values of X's type");
        }
        const bool one_d = m_g.rank() == 1;
        auto dim = [&](const std::vector<int64_t>& v, int i) { return one_d ? (i == 0 ? 1 : v[0]) : v[i]; };
        const int64_t H = dim(m_g.in, 0), W = dim(m_g.in, 1), KH = dim(m_g.kernel, 0),
                      KW = dim(m_g.kernel, 1);
        const int64_t SH = dim(m_g.stride, 0), SW = dim(m_g.stride, 1), DH = dim(m_g.dilation, 0),
                      DW = dim(m_g.dilation, 1);
        const int64_t OH = dim(m_g.out, 0), OW = dim(m_g.out, 1);
        auto pad = [&](const std::vector<int64_t>& v, int i) { return one_d ? (i == 0 ? 0 : v[0]) : v[i]; };
        const int64_t PT = pad(m_g.pad_begin, 0), PL = pad(m_g.pad_begin, 1), PB = pad(m_g.pad_end, 0),
                      PR = pad(m_g.pad_end, 1);
        const int64_t G = m_g.group, Cg = m_g.c_per_group(), Mg = m_g.m_per_group(), L = KH * KW;
        const int64_t EH = (KH - 1) * DH + 1, EW = (KW - 1) * DW + 1;
        for (int64_t v : {H, W, KH, KW, OH, OW, Cg, Mg, m_g.n, G, m_g.c, m_g.m})
            if (v > 65535) throw UnsupportedError(n, "a dimension above 65535");
        const isa::DType dt = x.dtype;
        const uint32_t c0 = 32 / isa::dtype_size(dt);
        ConvCubePlan& p = m_plan;
        p.in = dt;
        p.out = m_epilogue ? isa::DType::FP32 : dt;
        p.n = static_cast<uint32_t>(m_g.n), p.g = static_cast<uint32_t>(G);
        p.c1 = static_cast<uint32_t>((Cg + c0 - 1) / c0), p.mg = static_cast<uint32_t>(Mg),
        p.mtot = static_cast<uint32_t>(m_g.m);
        p.oh = static_cast<uint32_t>(OH), p.ow = static_cast<uint32_t>(OW);
        p.kh = static_cast<uint32_t>(KH), p.kw = static_cast<uint32_t>(KW);
        p.dh = static_cast<uint32_t>(DH), p.dw = static_cast<uint32_t>(DW);
        p.bias_en = bias, p.relu = !m_epilogue && (m_act.kind == "Relu" || m_clip_max);
        p.y_5hd = m_y_5hd;
        // The input conversion.
        Nc1hwc0Plan& xc = m_xconv;
        xc.dtype = dt;
        xc.n1 = static_cast<uint32_t>(m_g.n), xc.n2 = static_cast<uint32_t>(G);
        xc.s1 = static_cast<uint64_t>(m_g.c * H * W), xc.s2 = static_cast<uint64_t>(Cg * H * W);
        xc.cg = static_cast<uint32_t>(Cg), xc.sc = static_cast<uint64_t>(H * W);
        xc.h = static_cast<uint32_t>(H), xc.w = static_cast<uint32_t>(W);
        Nc1hwc0Plan& wc = m_wconv;
        wc.dtype = dt;
        wc.h = static_cast<uint32_t>(KH), wc.w = static_cast<uint32_t>(KW);
        if (!m_g.transpose) {
            xc.hd = xc.h, xc.wd = xc.w;
            p.hi = xc.h, p.wi = xc.w;
            p.sh = static_cast<uint32_t>(SH), p.sw = static_cast<uint32_t>(SW);
            p.pt = static_cast<uint32_t>(PT), p.pb = static_cast<uint32_t>(PB);
            p.pl = static_cast<uint32_t>(PL), p.pr = static_cast<uint32_t>(PR);
            wc.n1 = static_cast<uint32_t>(m_g.m), wc.s1 = static_cast<uint64_t>(Cg * L);
            wc.cg = static_cast<uint32_t>(Cg), wc.sc = static_cast<uint64_t>(L);
        } else {
            // The equivalent convolution: stride 1 over the input spread onto a zero grid, pixel
            // (i, j) at (i * s + e - 1 - p_begin, ...). With stride 1 the grid is the input with
            // borders: then the input converts plainly and the borders are load3d's pads.
            const int64_t hd = OH + EH - 1, wd = OW + EW - 1;
            const int64_t bt = EH - 1 - PT, bl = EW - 1 - PL, bb = hd - H - bt, br = wd - W - bl;
            const bool padded = SH == 1 && SW == 1 && bt >= 0 && bl >= 0 && bb >= 0 && br >= 0 && bt < EH &&
                                bb < EH && std::max({bt, bl, bb, br}) <= 255;
            m_padded = padded;
            m_phased = !padded && G == 1 && DH == 1 && DW == 1 && m_y_5hd &&
                       plan_phases(H, W, KH, KW, SH, SW, PT, PL, OH, OW, bias, dt);
            if (m_x_5hd && !padded && !m_phased)
                throw UnsupportedError(n,
                                       "NC1HWC0 X of a ConvTranspose with a stride (the spread needs NCHW; the "
                                       "phases an NC1HWC0 Y)");
            if (padded || m_phased) {
                xc.hd = xc.h, xc.wd = xc.w;
                p.hi = xc.h, p.wi = xc.w, p.sh = p.sw = 1;
                p.pt = static_cast<uint32_t>(bt), p.pb = static_cast<uint32_t>(bb);
                p.pl = static_cast<uint32_t>(bl), p.pr = static_cast<uint32_t>(br);
            } else {
                xc.sh = static_cast<uint32_t>(SH), xc.sw = static_cast<uint32_t>(SW);
                xc.oh = bt, xc.ow = bl;
                if (hd > 65535 || wd > 65535) throw UnsupportedError(n, "spread input above 65535 pixels a side");
                xc.hd = static_cast<uint32_t>(hd), xc.wd = static_cast<uint32_t>(wd);
                p.hi = xc.hd, p.wi = xc.wd, p.sh = p.sw = 1;
            }
            // W (C, M/g, kh, kw): each input channel's row over (output channel, tap) is read
            // whole; the taps reversed per output channel, each output channel's block placed
            // at (output channel, C1).
            wc.n1 = static_cast<uint32_t>(G), wc.n2 = 1;
            wc.s1 = static_cast<uint64_t>(Cg * Mg * L), wc.s2 = 0;
            wc.cg = static_cast<uint32_t>(Cg), wc.sc = static_cast<uint64_t>(Mg * L), wc.flip = true;
            wc.h = static_cast<uint32_t>(Mg), wc.w = static_cast<uint32_t>(L), wc.blk = static_cast<uint32_t>(L);
        }
        wc.hd = wc.h, wc.wd = wc.w;
        try {
            if (m_phased)
                for (ConvCubePlan& ph : m_phases) {
                    const ConvCubePlan geo = ph;
                    ph = p;
                    ph.hi = static_cast<uint32_t>(H), ph.wi = static_cast<uint32_t>(W), ph.sh = ph.sw = 1;
                    for (uint32_t ConvCubePlan::*f :
                         {&ConvCubePlan::kh, &ConvCubePlan::kw, &ConvCubePlan::pt, &ConvCubePlan::pb,
                          &ConvCubePlan::pl, &ConvCubePlan::pr, &ConvCubePlan::oh, &ConvCubePlan::ow,
                          &ConvCubePlan::fkh, &ConvCubePlan::fkw, &ConvCubePlan::e0h, &ConvCubePlan::e0w,
                          &ConvCubePlan::tsh, &ConvCubePlan::tsw})
                        ph.*f = geo.*f;
                    ph.sub_taps = true;
                    ph.w_fz = true;  // one group: W converted to FRACTAL_Z below
                    plan_conv(ph, dev);
                }
            else
                plan_conv(p, dev);
            // Probe the conversions' tiling now (bad sizes fail at plan time, not at launch).
            nc1hwc0_kernel(xc, dev, "", "");
            nc1hwc0_kernel(wc, dev, "", "");
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        const uint32_t es = isa::dtype_size(dt);
        m_x5_bytes = m_x_5hd ? 0 : align512(xc.dst_elems() * es);
        // A 1 x 1 Conv of one group whose input channels fill whole C0 blocks: its OIHW W is the
        // M x C1 x 1 x 1 x C0 layout byte for byte, rows of K = C; one block copy per chunk of
        // rows makes it FRACTAL_Z (no gather; a training step's W is computed every step).
        const TensorRef& wr = n.inputs[1];
        m_w_rows = !m_w_nc1hwc0 && !m_g.transpose && KH == 1 && KW == 1 && G == 1 && Cg % c0 == 0 &&
                   wr.format == Format::ND && wr.contiguous() && wr.dtype == dt;
        m_w5_bytes = m_w_nc1hwc0 ? 0 : align512(wc.dst_elems() * es);
        if (m_w_rows) {
            m_wrows.dtype = dt, m_wrows.m = static_cast<uint32_t>(m_g.m), m_wrows.k = static_cast<uint32_t>(Cg);
            p.w_fz = true;
            try {
                fz_from_rows_kernel(m_wrows, dev, "", "");
            } catch (const InputError& e) {
                throw UnsupportedError(n, e.what());
            }
        }
        // A W this node converts (into its workspace, read by nothing else) goes to FRACTAL_Z
        // (one group): the cube's weight loads are then runs of whole tile rows.
        if (m_w5_bytes != 0 && !m_w_rows && G == 1) {
            wc.fz_rows = static_cast<uint32_t>(Mg);
            p.w_fz = true;
            try {
                nc1hwc0_kernel(wc, dev, "", "");
            } catch (const InputError& e) {
                throw UnsupportedError(n, e.what());
            }
        }
        m_y32_bytes = m_epilogue ? align512(m_out.numel() * 4) : 0;
        for (ConvCubePlan& ph : m_phases) {  // each phase's grid (NC1HWC0, Y's type) in the workspace
            m_phase_off.push_back(m_ph_bytes);
            const uint64_t c0o = 32 / isa::dtype_size(ph.out);
            m_ph_bytes += align512(uint64_t{ph.n} * ((ph.mtot + c0o - 1) / c0o) * ph.oh * ph.ow * 32);
        }
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    // A Conv's W in the cube's weight layout: a graph converts a constant W once when it loads
    // (a computed W, which the device cannot convert to NC1HWC0, stays ND).
    Format input_format(size_t i) const override {
        return i == 1 && m_node.op_type == "Conv" ? Format::NC1HWC0 : Format::ND;
    }
    uint64_t workspace_bytes() const override { return m_x5_bytes + m_w5_bytes + m_y32_bytes + m_ph_bytes; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        const std::string& nm = m_node.name;
        const std::string& ty = m_node.op_type;
        std::vector<KernelDesc> ks;
        Nc1hwc0Plan xc = m_xconv, wc = m_wconv;
        xc.src = in.at(0).addr, xc.dst = ws;
        wc.src = in.at(1).addr, wc.dst = ws + m_x5_bytes;
        if (m_x_5hd) {
            xc.dst = in.at(0).addr;  // X arrives in NC1HWC0 (the layout pass kept it): no conversion
        } else {
            if (xc.spread()) ks.push_back(zero_kernel(ws, m_x5_bytes, m_dev, nm + "/zero", ty));
            ks.push_back(nc1hwc0_kernel(xc, m_dev, nm + "/x_to_nc1hwc0", ty));
        }
        if (m_w_nc1hwc0) {
            wc.dst = in.at(1).addr;
        } else if (m_w_rows) {
            FzFromRowsPlan r = m_wrows;
            r.src = in.at(1).addr, r.dst = wc.dst;
            ks.push_back(fz_from_rows_kernel(r, m_dev, nm + "/w_to_fractal_z", ty));
        } else {
            ks.push_back(nc1hwc0_kernel(wc, m_dev, nm + "/w_to_c1hwc0", ty));
        }
        ConvCubePlan p = m_plan;
        p.x5 = xc.dst, p.w5 = wc.dst;
        p.y = m_epilogue ? ws + m_x5_bytes + m_w5_bytes : out.at(0).addr;
        if (p.bias_en) p.bias = in.at(2).addr;
        if (m_phased) {
            const uint64_t grids = ws + m_x5_bytes + m_w5_bytes + m_y32_bytes;
            ks.push_back(phase_kernel(p, xc, wc, grids));
            PhaseMergePlan mp = m_merge;
            mp.dst = out.at(0).addr;
            for (size_t i = 0; i < m_phases.size(); ++i)
                mp.src[static_cast<size_t>(m_phase_at[i])] = grids + m_phase_off[i];
            ks.push_back(phase_merge_kernel(mp, m_dev, nm + "/merge_phases", ty));
            return ks;
        }
        KernelDesc kd;
        kd.name = nm;
        kd.type = ty;
        kd.kind = KernelKind::Cube;
        kd.block_dim = p.block_dim;
        kd.body = [p](isa::IInstrSink& s) { run_conv_kernel(s, p); };
        // A depthwise Conv the graph ran as groups of C0 channels (attribute `diagonal`, the
        // depthwise pass) does one useful product per output and tap; the rest are zeros.
        const double useful_c = m_node.attrs.get_int("diagonal", 0) != 0 ? 1.0 : double(m_g.c_per_group());
        const double taps = useful_c * p.kh * p.kw;
        kd.flops = 2.0 * double(m_out.numel()) * taps;
        const uint32_t es = isa::dtype_size(p.in);
        kd.bytes = xc.dst_elems() * es + wc.dst_elems() * es + m_out.numel() * isa::dtype_size(p.out);
        const double steps = double(p.n) * p.g * std::ceil(p.mg / 16.0) *
                             std::ceil(p.kdim() / double(m_dev.cube_depth_of(es))) * std::ceil(double(p.oh) * p.ow / 16.0);
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);  // every cube core (chip peak)
        ks.push_back(std::move(kd));
        if (m_epilogue) {
            EpiloguePlan e;
            e.x = p.y, e.y = out.at(0).addr, e.y_dtype = m_out.dtype, e.n = m_out.numel(), e.act = m_act;
            ks.push_back(epilogue_kernel(e, m_dev, nm + "/epilogue", ty));
        }
        if (m_clip) {
            TensorRef y = m_out;
            y.addr = out.at(0).addr;
            for (KernelDesc& k : m_clip->launches({y}, {y}, 0)) {
                k.name = nm + "/clip", k.type = ty;
                ks.push_back(std::move(k));
            }
        }
        return ks;
    }

    std::string describe() const override {
        const ConvCubePlan& p = m_phased ? m_phases.front() : m_plan;
        std::string s =
            std::string(!m_g.transpose ? ""
                        : m_phased ? "transposed conv as " + std::to_string(m_phases.size()) +
                                         " stride-1 phase convs of the un-spread input (first phase: "
                        : m_padded ? "transposed conv as a padded stride-1 conv, "
                                   : "transposed conv as a stride-1 conv over the spread input, ") +
            "img2col (load3d into L0B), tiles " + std::to_string(p.base_m) + " channels x " +
            std::to_string(p.base_n) + " pixels, " + std::to_string(p.c1_l1) + " of " + std::to_string(p.c1) +
            " channel blocks per L1 chunk" + (m_phased ? ")" : "") + ", " + std::to_string(p.g) + " group(s)";
        if (m_phased) s += ", phases merged into Y by a vector kernel" + std::string(m_phase_zero ? " (zeros where no tap reaches)" : "");
        if (p.bias_en) s += ", bias (mad)";
        if (p.relu) s += ", ReLU in FixPipe";
        if (m_epilogue) s += ", vector epilogue (" + m_act.kind + ")";
        if (m_clip) s += ", ReLU in FixPipe + min(y, max) in place";
        if (m_x_5hd) s += ", X in NC1HWC0";
        if (m_y_5hd) s += ", Y in NC1HWC0";
        if (p.w_fz) s += ", W converted to FRACTAL_Z";
        return s;
    }

private:
    // A strided ConvTranspose (one group, no dilation) as s_h x s_w stride-1 convolutions of the
    // un-spread input, one per phase (r_h, r_w) of Y: Y[o] = sum of X[i] W[a] over o = i s + a -
    // p, so the outputs o = q s + r take the taps a = a0 + t s (a0 = (r + p) mod s, t < T) from
    // X[q + c - t] (c = (r + p - a0) / s): a T-tap correlation with pads T - 1 - c before and
    // Q - 1 + c - (H - 1) after (Q the phase's outputs; negative: rows left unread). In the flipped FRACTAL_Z W (the spread
    // form's) tap a is e = K - 1 - a, so the phase's taps are e0 + u s, e0 = K - 1 - a0 - (T - 1) s.
    // No multiply touches a stride zero. A phase no tap reaches (a 1 x 1 kernel's r != p mod s)
    // is zero (with a bias it would be the bias: the spread form instead). Each phase writes its
    // own NC1HWC0 grid in the workspace; a vector kernel merges the grids into Y in whole rows
    // (phase_merge_kernel). False (the spread form) when a pad leaves the range load3d takes
    // (0 <= pad < T) or the merge's rows do not fit UB.
    bool plan_phases(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                     int64_t oh, int64_t ow, bool bias, isa::DType dt) {
        struct Axis {
            int64_t t = 0, q = 0, pb = 0, pe = 0, e0 = 0;
        };
        auto axis = [](int64_t r, int64_t in, int64_t k, int64_t s, int64_t p, int64_t out) {
            Axis a;
            const int64_t a0 = (r + p) % s, c = (r + p - a0) / s;
            a.q = (out - r + s - 1) / s;
            a.t = a0 < k ? (k - 1 - a0) / s + 1 : 0;
            a.pb = a.t - 1 - c, a.pe = a.q - 1 + c - (in - 1);
            a.e0 = k - 1 - a0 - (a.t - 1) * s;
            return a;
        };
        std::vector<ConvCubePlan> ps;
        std::vector<int64_t> at;
        bool zero = false;
        for (int64_t rh = 0; rh < std::min(sh, oh); ++rh)
            for (int64_t rw = 0; rw < std::min(sw, ow); ++rw) {
                const Axis y = axis(rh, h, kh, sh, pt, oh), x = axis(rw, w, kw, sw, pl, ow);
                if (y.t == 0 || x.t == 0) {
                    zero = true;
                    continue;
                }
                // Rows past the last needed are simply not read (the tiles' windows stop at
                // them); columns are load3d's row width, so their pads must be exact.
                if (y.pb < 0 || y.pb >= y.t || y.pe >= y.t || x.pb < 0 || x.pb >= x.t || x.pe < 0 || x.pe >= x.t)
                    return false;
                ConvCubePlan g;
                auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
                g.kh = u(y.t), g.kw = u(x.t), g.pt = u(y.pb), g.pb = u(std::max<int64_t>(0, y.pe)), g.pl = u(x.pb), g.pr = u(x.pe);
                g.oh = u(y.q), g.ow = u(x.q);
                g.fkh = u(kh), g.fkw = u(kw), g.e0h = u(y.e0), g.e0w = u(x.e0), g.tsh = u(sh), g.tsw = u(sw);
                ps.push_back(g);
                at.push_back(rh * sw + rw);
            }
        if (ps.empty() || (zero && bias)) return false;  // a tapless phase with a bias is the bias
        PhaseMergePlan& mp = m_merge;
        mp.dtype = dt, mp.n = static_cast<uint32_t>(m_g.n);
        mp.c1 = static_cast<uint32_t>((m_g.m + 32 / isa::dtype_size(dt) - 1) / (32 / isa::dtype_size(dt)));
        mp.yh = static_cast<uint32_t>(oh), mp.yw = static_cast<uint32_t>(ow);
        mp.sh = static_cast<uint32_t>(sh), mp.sw = static_cast<uint32_t>(sw);
        mp.src.assign(static_cast<size_t>(sh * sw), 0);
        for (int64_t i : at) mp.src[static_cast<size_t>(i)] = 1;  // placeholders for the probe
        try {
            phase_merge_kernel(mp, m_dev, "", "");
        } catch (const InputError&) {
            return false;
        }
        m_phases = std::move(ps);
        m_phase_at = std::move(at);
        m_phase_zero = zero;
        return true;
    }

    // The phases' cube launch: one kernel running the phases' tiles (run_conv_phases), each
    // phase writing its grid in the workspace (`grids`); its FLOPs are the useful products only.
    KernelDesc phase_kernel(const ConvCubePlan& base, const Nc1hwc0Plan& xc, const Nc1hwc0Plan& wc,
                            uint64_t grids) const {
        std::vector<ConvCubePlan> ps = m_phases;
        uint64_t tiles = 0;
        double macs = 0, steps = 0;
        const uint32_t es = isa::dtype_size(base.in);
        uint64_t ybytes = 0;
        for (size_t i = 0; i < ps.size(); ++i) {
            ConvCubePlan& ph = ps[i];
            ph.x5 = base.x5, ph.w5 = base.w5, ph.y = grids + m_phase_off[i], ph.bias = base.bias;
            const uint64_t c0o = 32 / isa::dtype_size(ph.out);
            ybytes += uint64_t{ph.n} * ((ph.mtot + c0o - 1) / c0o) * ph.oh * ph.ow * 32;
            tiles += ph.tiles();
            macs += double(ph.oh) * ph.ow * ph.kh * ph.kw;
            steps += double(ph.n) * std::ceil(ph.mg / 16.0) * std::ceil(ph.kdim() / double(m_dev.cube_depth_of(es))) *
                     std::ceil(double(ph.oh) * ph.ow / 16.0);
        }
        const uint32_t bd = static_cast<uint32_t>(std::min<uint64_t>(tiles, std::max<uint32_t>(1, m_dev.cube_cores)));
        for (ConvCubePlan& ph : ps) ph.block_dim = bd;
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = KernelKind::Cube;
        kd.block_dim = bd;
        kd.body = [ps](isa::IInstrSink& s) { run_conv_phases(s, ps); };
        kd.flops = 2.0 * double(m_g.n) * double(m_g.m) * double(m_g.c_per_group()) * macs;
        kd.bytes = xc.dst_elems() * es + wc.dst_elems() * es + ybytes;
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        return kd;
    }

    // Clip(0, max): the vector op min(y, max) over Y as it is stored (ND or NC1HWC0), in place.
    void plan_clip(const NodeDesc& n, const DeviceInfo& dev) {
        NodeDesc c;
        c.name = n.name + "/clip";
        c.op_type = "Clip";
        c.opset = 6;  // the bound as an attribute
        c.attrs.set_owner(c.name);
        c.attrs.set("max", ref::Attr::of_float(m_act.beta));
        c.inputs = {m_out};
        c.constants = {nullptr};
        m_clip = make_node_op(c, dev);
        if (m_clip->workspace_bytes() != 0) throw UnsupportedError(n, "Clip(0, max) needs a workspace");
    }

    NodeDesc m_node;
    DeviceInfo m_dev;
    ref::ConvGeometry m_g;
    TensorRef m_out;
    ref::Activation m_act;
    bool m_epilogue = false;
    bool m_clip_max = false;          // Clip(0, max): FixPipe ReLU, then m_clip in place on Y
    std::shared_ptr<INodeOp> m_clip;  // the Clip(max) vector op over Y (its layout)
    bool m_padded = false;     // ConvTranspose with stride 1: borders as load3d's pads, no spread
    bool m_phased = false;     // strided ConvTranspose as phases (m_phases), no spread
    bool m_phase_zero = false;  // some phase has no tap: the merge writes its pixels as zeros
    std::vector<ConvCubePlan> m_phases;
    std::vector<int64_t> m_phase_at;    // each phase's index rh * sw + rw
    std::vector<uint64_t> m_phase_off;  // each phase's grid in the workspace (after the others)
    uint64_t m_ph_bytes = 0;
    PhaseMergePlan m_merge;
    bool m_w_nc1hwc0 = false;  // W arrives as M x C1 x kh x kw x C0 (no conversion kernel)
    bool m_x_5hd = false;      // X arrives in NC1HWC0 (no conversion kernel)
    bool m_w_rows = false;     // an ND W of rows of K (1 x 1, whole C0 blocks): a block copy to FRACTAL_Z
    bool m_y_5hd = false;      // attribute y_format = NC1HWC0: Y written in NC1HWC0
    ConvCubePlan m_plan;
    Nc1hwc0Plan m_xconv, m_wconv;
    FzFromRowsPlan m_wrows;
    uint64_t m_x5_bytes = 0, m_w5_bytes = 0, m_y32_bytes = 0;
};

std::unique_ptr<INodeOp> make_conv(const NodeDesc& n, const DeviceInfo& dev) {
    return std::make_unique<ConvNode>(n, dev);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(conv, "Conv", make_conv);
SFUMATO_REGISTER_NODE_OP(conv_transpose, "ConvTranspose", make_conv);

}  // namespace sfumato::ops
