// Conv2DBackpropFilter (sfumato-only op type: the weight gradient of a 2-D Conv with group 1;
// inputs X (N, C, H, W) and dY (N, M, OH, OW), ND, or NC1HWC0 as a training step's layout keeps
// them (dY only in 2-byte types); attributes kernel_shape, strides, pads,
// dilations as the forward Conv's; output dW (M, C, kh, kw) in X's type) as a graph node, and
// `sfumato kernel conv2d_backprop_filter` (its standalone face, checked against the host
// reference in runtime/ref/conv.cpp). Launches, in order:
//   1. X -> NC1HWC0 in the workspace (conv_layout.h);
//   2. the cube kernel (conv_wgrad_kernel.h): dW in load3d's column order (M x C1 kh kw C0),
//      one fp32 partial per share of the images when the tiles are fewer than the cube cores
//      (the output type directly when there is one share);
//   3. (several shares) one vector kernel summing the partials, rounding them to the output type
//      and (as step 4) gathering them to OIHW (wgrad_finish_kernel; where a row does not fit UB,
//      a ReduceSum and a Cast, then step 4);
//   4. (a kernel larger than 1 x 1, or C not a multiple of C0) load3d's column order to OIHW:
//      a vector kernel, per output channel one row in, one gather, one row out
//      (conv_wgrad_kernel.h), or, when a row does not fit UB, the Transpose (M, C1, kh kw, C0)
//      -> (M, C1, C0, kh kw) and a Slice to the C channels when C is not a multiple of C0.
// Steps 3 and 4 move weight-sized data only; the activations are read once each, in whole rows.
// Tolerance of the standalone check: each output sums T = N x OH x OW products of magnitude <= 1,
// rounded in fp32 once per mad (every <= 16 of K) and once per share added, so |error| <=
// 2 (ceil(T / 16) + 2) 2^-24 T, plus one unit in the last place of the output type.
#include <algorithm>
#include <cmath>

#include "runtime/ops/conv_layout.h"
#include "runtime/ops/conv_wgrad_kernel.h"
#include "runtime/ops/i_op.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/op_util.h"
#include "runtime/ops/standalone.h"

namespace sfumato::ops {

namespace {

std::shared_ptr<const ref::HostTensor> ints1(int64_t v) {
    auto t = std::make_shared<ref::HostTensor>(ref::ElemType::Int64, std::vector<int64_t>{1});
    t->data[0] = static_cast<double>(v);
    return t;
}

class ConvWgradNode : public INodeOp {
public:
    ConvWgradNode(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        if (!n.has_input(0) || !n.has_input(1)) throw UnsupportedError(n, "needs inputs X and dY");
        const TensorRef &x = n.inputs[0], &dy = n.inputs[1];
        // X may arrive in NC1HWC0 (a training step's layout pass kept it): the cube reads it as
        // it is, no conversion kernel. dY is read as M rows of pixels (ND->NZ into L1) from NCHW,
        // or, in a 2-byte type, from NC1HWC0 as C0-wide pixel rows whose fractals load2d
        // transposes into L0A (fp32's C0 of 8 is half a fractal: NCHW only).
        m_x_5hd = x.format == Format::NC1HWC0;
        m_dy_5hd = dy.format == Format::NC1HWC0;
        if (m_dy_5hd && isa::dtype_size(dy.dtype) != 2)
            throw UnsupportedError(n, "dY in NC1HWC0 needs a 2-byte type (fp16, bf16)");
        for (const TensorRef* t : {&x, &dy}) {
            if ((t->format != Format::ND && !(t == &x ? m_x_5hd : m_dy_5hd)) || !t->contiguous())
                throw UnsupportedError(n, "X (NCHW or NC1HWC0) and dY (NCHW, or NC1HWC0 in 2 bytes) must be contiguous");
            if (t->shape.size() != 4) throw UnsupportedError(n, "X and dY must be 4-D (2-D convolutions)");
            for (int64_t d : t->shape)
                if (d <= 0 || d > 65535) throw UnsupportedError(n, "a dimension outside 1..65535 in " + ref::shape_str(t->shape));
        }
        if (x.elem != dy.elem) throw UnsupportedError(n, "X and dY of different element types");
        if (x.dtype != isa::DType::FP16 && x.dtype != isa::DType::BF16 && x.dtype != isa::DType::FP32)
            throw UnsupportedError(n, std::string("element type ") + ref::elem_type_name(x.elem));
        if (x.shape[0] != dy.shape[0]) throw UnsupportedError(n, "X and dY of different batch sizes");
        if (n.attrs.get_int("group", 1) != 1) throw UnsupportedError(n, "groups other than 1");
        const std::vector<int64_t> k = n.attrs.get_ints("kernel_shape", {});
        const std::vector<int64_t> s = n.attrs.get_ints("strides", {1, 1}), d = n.attrs.get_ints("dilations", {1, 1});
        const std::vector<int64_t> p = n.attrs.get_ints("pads", {0, 0, 0, 0});
        if (k.size() != 2 || s.size() != 2 || d.size() != 2 || p.size() != 4)
            throw UnsupportedError(n, "kernel_shape, strides, dilations (2 values) and pads (4) of a 2-D convolution");
        for (int64_t v : {k[0], k[1], s[0], s[1], d[0], d[1]})
            if (v < 1 || v > 255) throw UnsupportedError(n, "kernel, stride and dilation must be in 1..255");
        for (int64_t v : p)
            if (v < 0 || v > 255) throw UnsupportedError(n, "pads must be in 0..255");
        const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], M = dy.shape[1];
        for (int a = 0; a < 2; ++a) {
            const int64_t o = ((a ? W : H) + p[a] + p[a + 2] - (k[a] - 1) * d[a] - 1) / s[a] + 1;
            if (o != dy.shape[2 + a]) throw UnsupportedError(n, "dY's spatial size does not follow from X's and the attributes");
        }
        m_out = make_tensor({M, C, k[0], k[1]}, x.elem);
        const isa::DType dt = x.dtype;
        const uint32_t c0 = 32 / isa::dtype_size(dt), es = isa::dtype_size(dt);
        const int64_t C1 = (C + c0 - 1) / c0, RS = k[0] * k[1];
        Nc1hwc0Plan& xc = m_xconv;
        xc.dtype = dt;
        xc.n1 = static_cast<uint32_t>(N), xc.s1 = static_cast<uint64_t>(C * H * W);
        xc.cg = static_cast<uint32_t>(C), xc.sc = static_cast<uint64_t>(H * W);
        xc.h = xc.hd = static_cast<uint32_t>(H), xc.w = xc.wd = static_cast<uint32_t>(W);
        ConvWgradPlan& q = m_plan;
        q.in = dt, q.out = isa::DType::FP32;
        q.dy_5hd = m_dy_5hd;
        q.n = static_cast<uint32_t>(N), q.c1 = static_cast<uint32_t>(C1), q.hi = static_cast<uint32_t>(H),
        q.wi = static_cast<uint32_t>(W), q.m = static_cast<uint32_t>(M);
        q.oh = static_cast<uint32_t>(dy.shape[2]), q.ow = static_cast<uint32_t>(dy.shape[3]);
        q.kh = static_cast<uint32_t>(k[0]), q.kw = static_cast<uint32_t>(k[1]);
        q.sh = static_cast<uint32_t>(s[0]), q.sw = static_cast<uint32_t>(s[1]);
        q.dh = static_cast<uint32_t>(d[0]), q.dw_ = static_cast<uint32_t>(d[1]);
        q.pt = static_cast<uint32_t>(p[0]), q.pl = static_cast<uint32_t>(p[1]);
        q.pb = static_cast<uint32_t>(p[2]), q.pr = static_cast<uint32_t>(p[3]);
        try {
            plan_conv_wgrad(q, dev);
            nc1hwc0_kernel(xc, dev, "", "");
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        if (q.parts == 1) q.out = dt;
        const int64_t ncol = q.ncol();
        m_x5 = m_x_5hd ? 0 : align512(xc.dst_elems() * es);
        m_part = align512(uint64_t{q.parts} * M * ncol * isa::dtype_size(q.out));
        m_direct = RS == 1 && C % c0 == 0;  // load3d's column order is dW's
        ref::ElemType f32 = ref::ElemType::Float;
        auto sub = [&](const std::string& suffix, const std::string& op, int opset, ref::Attrs a, std::vector<TensorRef> ins,
                       std::vector<std::shared_ptr<const ref::HostTensor>> consts = {}) {
            NodeDesc c;
            c.name = n.name + "/" + suffix, c.op_type = op, c.opset = opset;
            a.set_owner(c.name);
            c.attrs = std::move(a);
            c.inputs = std::move(ins);
            c.constants = std::move(consts);
            Sub s{make_node_op(c, dev), c.inputs, {}, 0};
            s.out = s.op->outputs().at(0);
            m_sub_ws = std::max(m_sub_ws, s.op->workspace_bytes());
            m_subs.push_back(std::move(s));
        };
        TensorRef cur = make_tensor({static_cast<int64_t>(q.parts), M * ncol}, q.parts > 1 ? f32 : x.elem);
        uint64_t at = m_x5 + m_part;
        if (q.parts > 1) {  // the shares summed, rounded and (unless direct) gathered in one kernel
            m_finish.dtype = dt, m_finish.parts = q.parts, m_finish.m = static_cast<uint32_t>(M);
            m_finish.c = static_cast<uint32_t>(C), m_finish.taps = static_cast<uint32_t>(RS);
            m_finish.oihw = !m_direct;
            try {
                wgrad_finish_kernel(m_finish, dev, "", "");
                m_finish_kernel = true;
            } catch (const InputError&) {
            }
        }
        if (q.parts > 1 && !m_finish_kernel) {
            ref::Attrs a;
            a.set("axes", ref::Attr::of_ints({0}));
            a.set("keepdims", ref::Attr::of_int(0));
            sub("sum_parts", "ReduceSum", 11, a, {cur});
            m_subs.back().out_ws = at, at += align512(m_subs.back().out.storage_bytes());
            ref::Attrs cast;
            cast.set("to", ref::Attr::of_int(static_cast<int64_t>(x.elem)));
            sub("cast", "Cast", 13, cast, {m_subs.back().out});
            m_subs.back().out_ws = at, at += align512(m_subs.back().out.storage_bytes());
            cur = m_subs.back().out;
        }
        if (!m_direct && !m_finish_kernel) {
            m_oihw.dtype = dt, m_oihw.m = static_cast<uint32_t>(M), m_oihw.c = static_cast<uint32_t>(C);
            m_oihw.taps = static_cast<uint32_t>(RS);
            try {
                oihw_kernel(m_oihw, dev, "", "");
                m_oihw_kernel = true;
            } catch (const InputError&) {
            }
        }
        if (!m_direct && !m_oihw_kernel) {
            cur.shape = {M, C1, RS, c0};
            ref::Attrs a;
            a.set("perm", ref::Attr::of_ints({0, 1, 3, 2}));
            sub("to_oihw", "Transpose", 13, a, {cur});
            m_subs.back().out_ws = at, at += align512(m_subs.back().out.storage_bytes());
            if (C % c0) {
                TensorRef t = m_subs.back().out;
                t.shape = {M, C1 * c0, k[0], k[1]};
                TensorRef i64 = make_tensor({1}, ref::ElemType::Int64);
                sub("channels", "Slice", 13, {}, {t, i64, i64, i64}, {nullptr, ints1(0), ints1(C), ints1(1)});
                m_subs.back().out_ws = at, at += align512(m_subs.back().out.storage_bytes());
            }
        }
        m_ws = at;
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_ws + m_sub_ws; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t ws) const override {
        const std::string& nm = m_node.name;
        const std::string& ty = m_node.op_type;
        std::vector<KernelDesc> ks;
        Nc1hwc0Plan xc = m_xconv;
        xc.src = in.at(0).addr, xc.dst = ws;
        if (m_x_5hd)
            xc.dst = in.at(0).addr;
        else
            ks.push_back(nc1hwc0_kernel(xc, m_dev, nm + "/x_to_nc1hwc0", ty));
        ConvWgradPlan p = m_plan;
        p.x5 = xc.dst, p.dy = in.at(1).addr;
        p.dw = m_subs.empty() && !m_oihw_kernel && !m_finish_kernel ? out.at(0).addr : ws + m_x5;
        KernelDesc kd;
        kd.name = nm;
        kd.type = ty;
        kd.kind = KernelKind::Cube;
        kd.block_dim = p.block_dim;
        kd.body = [p](isa::IInstrSink& s) { run_conv_wgrad_kernel(s, p); };
        const double pixels = double(p.n) * p.oh * p.ow;
        kd.flops = 2.0 * double(m_out.numel()) * pixels;
        const uint32_t es = isa::dtype_size(p.in);
        kd.bytes = xc.dst_elems() * es + in.at(1).storage_bytes() + uint64_t{p.parts} * p.m * p.ncol() * isa::dtype_size(p.out);
        const double steps = std::ceil(p.m / 16.0) * std::ceil(p.ncol() / 16.0) * std::ceil(pixels / m_dev.cube_depth_of(es));
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        ks.push_back(std::move(kd));
        if (m_finish_kernel) {
            WgradFinishPlan f = m_finish;
            f.src = p.dw, f.dst = out.at(0).addr;
            ks.push_back(wgrad_finish_kernel(f, m_dev, nm + "/finish", ty));
            return ks;
        }
        uint64_t prev = p.dw;
        for (size_t i = 0; i < m_subs.size(); ++i) {
            const Sub& s = m_subs[i];
            TensorRef a = s.in.at(0), o = s.out;
            a.addr = prev;
            o.addr = i + 1 == m_subs.size() && !m_oihw_kernel ? out.at(0).addr : ws + s.out_ws;
            std::vector<TensorRef> ins = s.in;
            ins[0] = a;
            for (KernelDesc& k : s.op->launches(ins, {o}, ws + m_ws)) ks.push_back(std::move(k));
            prev = o.addr;
        }
        if (m_oihw_kernel) {
            OihwPlan o = m_oihw;
            o.src = prev, o.dst = out.at(0).addr;
            ks.push_back(oihw_kernel(o, m_dev, nm + "/to_oihw", ty));
        }
        return ks;
    }

    std::string describe() const override {
        const ConvWgradPlan& p = m_plan;
        return "dY (A, ND->NZ) x img2col(X)^T (load3d transposed into L0B), tiles " + std::to_string(p.base_m) +
               " channels x " + std::to_string(p.base_n) + " columns, " + std::to_string(p.rows_out) +
               " output rows per L1 chunk, images in " + std::to_string(p.parts) + " share(s)" +
               (m_finish_kernel ? (m_direct ? ", shares summed and rounded in one kernel"
                                            : ", shares summed, rounded and gathered to OIHW in one kernel")
                : m_direct       ? ""
                : m_oihw_kernel  ? ", then to OIHW (gather)"
                                 : ", then to OIHW (Transpose)") +
               (m_x_5hd ? ", X in NC1HWC0" : "") + (m_dy_5hd ? ", dY in NC1HWC0 (fractals transposed into L0A)" : "");
    }

private:
    struct Sub {
        std::unique_ptr<INodeOp> op;
        std::vector<TensorRef> in;
        TensorRef out;
        uint64_t out_ws = 0;  // the output's workspace offset (the last one writes dW)
    };
    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    Nc1hwc0Plan m_xconv;
    ConvWgradPlan m_plan;
    bool m_direct = false;
    bool m_x_5hd = false;  // X arrives in NC1HWC0 (no conversion kernel)
    bool m_dy_5hd = false;  // dY arrives in NC1HWC0 (read by transposed fractals)
    bool m_oihw_kernel = false;  // load3d's column order to OIHW by oihw_kernel (else Transpose, Slice)
    bool m_finish_kernel = false;  // several shares: summed, rounded (and to OIHW) by wgrad_finish_kernel
    WgradFinishPlan m_finish;
    OihwPlan m_oihw;
    std::vector<Sub> m_subs;
    uint64_t m_x5 = 0, m_part = 0, m_ws = 0, m_sub_ws = 0;
};

std::unique_ptr<INodeOp> make_conv_wgrad(const NodeDesc& n, const DeviceInfo& dev) {
    return std::make_unique<ConvWgradNode>(n, dev);
}

std::unique_ptr<IOp> make_wgrad_op(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "conv2d_backprop_filter";
    auto u = [&](const char* k, uint64_t lo, uint64_t hi) { return static_cast<int64_t>(arg_u64(a, op, k, lo, hi)); };
    const int64_t n = u("n", 1, 4096), c = u("c", 1, 65535), h = u("h", 1, 65535), w = u("w", 1, 65535);
    const int64_t k = u("k", 1, 65535), r = u("r", 1, 255), s = u("s", 1, 255);
    const int64_t stride = u("stride", 1, 255), pad = u("pad", 0, 255), dil = u("dilation", 1, 255);
    const std::string d = a.at("dtype");
    const ref::ElemType t = d == "fp16"   ? ref::ElemType::Float16
                            : d == "bf16" ? ref::ElemType::Bfloat16
                            : d == "fp32" ? ref::ElemType::Float
                                          : throw InputError("operator '" + op + "': argument 'dtype' = '" + d +
                                                             "' (valid: fp16, bf16, fp32)");
    const int64_t oh = (h + 2 * pad - (r - 1) * dil - 1) / stride + 1, ow = (w + 2 * pad - (s - 1) * dil - 1) / stride + 1;
    if (h + 2 * pad < (r - 1) * dil + 1 || w + 2 * pad < (s - 1) * dil + 1)
        throw InputError("operator '" + op + "': the kernel is larger than the padded image");
    StandaloneSpec spec;
    NodeDesc& node = spec.node;
    node.name = op;
    node.op_type = "Conv2DBackpropFilter";
    node.attrs.set_owner(node.name);
    node.attrs.set("kernel_shape", ref::Attr::of_ints({r, s}));
    node.attrs.set("strides", ref::Attr::of_ints({stride, stride}));
    node.attrs.set("dilations", ref::Attr::of_ints({dil, dil}));
    node.attrs.set("pads", ref::Attr::of_ints({pad, pad, pad, pad}));
    node.inputs.push_back(make_tensor({n, c, h, w}, t));
    node.inputs.push_back(make_tensor({n, k, oh, ow}, t));
    const std::string dyf = a.at("dy_format");
    if (dyf == "nc1hwc0")
        node.inputs.back().format = Format::NC1HWC0;
    else if (dyf != "nd")
        throw InputError("operator '" + op + "': argument 'dy_format' = '" + dyf + "' (valid: nd, nc1hwc0)");
    spec.gens.assign(2, uniform_input(-1, 1));
    const double taps = double(n) * oh * ow;
    spec.tol.atol = 2.0 * (std::ceil(taps / 16) + 2) * 0x1p-24 * taps + 0x1p-24;
    spec.tol.rtol = t == ref::ElemType::Float16 ? 0x1p-10 : t == ref::ElemType::Bfloat16 ? 0x1p-7 : 0x1p-23;
    return make_standalone(std::move(spec), dev);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(conv_wgrad, "Conv2DBackpropFilter", make_conv_wgrad);
SFUMATO_REGISTER_OP(conv2d_backprop_filter,
                    OpSpec{"conv2d_backprop_filter",
                           "weight gradient of a 2-D Conv (group 1): dY x img2col(X)^T on the cube, load3d transposed",
                           {{"n", "1", "batch"},
                            {"c", "", "input channels"},
                            {"h", "", "input height"},
                            {"w", "", "input width"},
                            {"k", "", "output channels"},
                            {"r", "3", "kernel height"},
                            {"s", "3", "kernel width"},
                            {"stride", "1", "stride (both dimensions)"},
                            {"pad", "1", "pads (all four sides)"},
                            {"dilation", "1", "dilation (both dimensions)"},
                            {"dtype", "fp16", "fp16 | bf16 | fp32"},
                            {"dy_format", "nd", "nd | nc1hwc0 (a training step's layout; fp16 and bf16)"}},
                           make_wgrad_op});
SFUMATO_OP_SAMPLE(conv2d_backprop_filter_sample, "conv2d_backprop_filter",
                  {{"n", "2"}, {"c", "5"}, {"h", "9"}, {"w", "7"}, {"k", "6"}, {"stride", "2"}});

}  // namespace sfumato::ops
