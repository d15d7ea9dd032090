// MaxPoolGrad (sfumato-only op type: the backward of a 2-D MaxPool with dilation 1; inputs X,
// Y = MaxPool(X) and dY, NCHW (ND); MaxPool's attributes; output dX of X's shape) as one vector
// kernel, and `sfumato kernel maxpool_grad` (its standalone face, checked against the host
// reference in runtime/ref/pool.cpp). Every input pixel that equals the maximum of a window
// holding it takes that window's gradient (ties: every maximum), summed over the windows.
//
// The kernel works on bands of hb input rows of one (n, c) plane, read with the output rows their
// windows reach (X, Y and dY in whole rows, one burst copy each), and writes the band of dX once.
// For each kernel offset (a, b) a gather brings, to every input pixel (h, w), the Y and dY of the
// window that holds it at that offset, ((h + pt - a) / sh, (w + pl - b) / sw), or, when no window
// does (not divisible, or outside the output), a zero gradient: dY's rows carry a zero column
// past their end and the band a zero row. Then compare X with the gathered Y, select the gathered
// dY or zero, and add: 2 gathers and 3 vector instructions per offset over the whole band.
// The gathers' byte-offset tables (one per offset) are the same for every band (bands start on a
// multiple of the stride and the output rows are read from the same relative row), so each core
// builds them once: per column offset the column part with masked single-lane duplicates, then a
// row offset added per table row. Sums accumulate in the tensor's type, offset by offset.
// Simplified: dilation 1, fp16 and fp32 (the vector compare's types); rows up to UB's width.
// X, Y and dY all in NC1HWC0 (a training step's layout) run pool_c0_kernel.h's kernel instead
// (whole C0 rows per tap, no gather), dX in NC1HWC0.
#include <algorithm>
#include <cmath>

#include "runtime/kernel/api.h"
#include "runtime/ops/i_op.h"
#include "runtime/ops/node_op.h"
#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/pool_c0_kernel.h"
#include "runtime/ops/op_util.h"
#include "runtime/ops/standalone.h"
#include "runtime/ref/pool.h"
#include "runtime/ref/ref_ops.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

// Floor division for a possibly negative numerator.
int64_t fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct PoolGradPlan {
    isa::DType dtype = isa::DType::FP16;
    uint64_t x = 0, y = 0, dy = 0, dx = 0;
    uint32_t planes = 1, h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0;
    // Tiling: bands of hb input rows (a multiple of sh), ob output rows read per band from row
    // i0(h0) = floor((h0 + pt - kh + 1) / sh); UB rows wp (X, dX) and owp (Y, dY: one zero
    // column at least) elements long; `lanes` elements computed per band (whole repeats).
    uint32_t hb = 1, ob = 1, wp = 16, owp = 16, lanes = 128, bands = 1;
    uint64_t items = 1, per_block = 1;
    uint32_t block_dim = 1;
};

// UB bytes the tiling needs.
uint64_t ub_need(const PoolGradPlan& p, uint32_t es) {
    const uint64_t band = uint64_t{p.lanes} * es, yb = (uint64_t{p.ob} + 1) * p.owp * es;
    return uint64_t{p.kh} * p.kw * p.lanes * 4   // offset tables
           + uint64_t{p.kw} * rup(p.wp, 64) * 4  // column parts
           + 2 * band + 2 * band                 // X in, dX out (double buffered)
           + 2 * 2 * yb                          // Y and dY (double buffered)
           + 3 * band + p.lanes / 8 + 32         // gathered Y, dY, zeros; the compare bits
           + 8 * 256;                            // slack: masked tails span whole repeats
}

template <class T>
void pool_grad_body(isa::IInstrSink& sink, const PoolGradPlan& p) {
    KernelContext ctx(sink);
    const uint64_t first = uint64_t{ctx.block_idx()} * p.per_block;
    if (first >= p.items) return;
    const uint64_t last = std::min(p.items, first + p.per_block);
    constexpr uint32_t es = sizeof(T);
    const uint32_t ybytes = (p.ob + 1) * p.owp * es, band = p.lanes * es;
    GlobalTensor<T> gx, gy, gdy, gdx;
    gx.SetGlobalBuffer(p.x, ~0ull / 8), gy.SetGlobalBuffer(p.y, ~0ull / 8);
    gdy.SetGlobalBuffer(p.dy, ~0ull / 8), gdx.SetGlobalBuffer(p.dx, ~0ull / 8);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> qx, qy;
    TQue<TPosition::VECOUT> qo;
    TBuf<TPosition::VECCALC> tab_buf, col_buf, work_buf, bits_buf;
    pipe.InitBuffer(qx, 2, band + 256);
    pipe.InitBuffer(qy, 2, 2 * ybytes + 256);
    pipe.InitBuffer(qo, 2, band + 256);
    pipe.InitBuffer(tab_buf, p.kh * p.kw * p.lanes * 4);
    pipe.InitBuffer(col_buf, p.kw * rup(p.wp, 64) * 4 + 256);
    pipe.InitBuffer(work_buf, 3 * band + 256);
    pipe.InitBuffer(bits_buf, p.lanes / 8 + 32);
    const LocalTensor<int32_t> tab = tab_buf.Get<int32_t>(), col = col_buf.Get<int32_t>();
    const LocalTensor<T> work = work_buf.Get<T>();
    const LocalTensor<T> yg = work, dyg = work[p.lanes], zero = work[2 * p.lanes];
    const LocalTensor<uint8_t> bits = bits_buf.Get<uint8_t>();
    Duplicate(zero, T(0), p.lanes);
    // Column parts: byte offset of the window's column, or of the zero column (ow).
    const uint32_t cw = rup(p.wp, 64);
    for (uint32_t b = 0; b < p.kw; ++b) {
        Duplicate(col[b * cw], static_cast<int32_t>(p.ow * es), cw);
        for (uint32_t w = 0; w < p.w; ++w) {
            const int64_t t = int64_t{w} + p.pl - b;
            if (t < 0 || t % p.sw || t / p.sw >= p.ow) continue;
            const uint64_t bit[2] = {1ull << (w % 64), 0};
            ctx.scalar(2);
            Duplicate(col[b * cw + w / 64 * 64], static_cast<int32_t>(t / p.sw * es), VecMask(bit), 1, 1, 8);
        }
    }
    // Tables: row part (the window's row relative to the band's first output row, or the zero
    // row ob) plus the column part.
    const int64_t i0_rel = fdiv(int64_t{p.pt} - p.kh + 1, p.sh);  // i0(h0) - h0 / sh
    for (uint32_t a = 0; a < p.kh; ++a)
        for (uint32_t b = 0; b < p.kw; ++b) {
            const LocalTensor<int32_t> t = tab[(a * p.kw + b) * p.lanes];
            if (p.hb * p.wp < p.lanes) Duplicate(t, 0, p.lanes);
            for (uint32_t h = 0; h < p.hb; ++h) {
                ctx.scalar(3);
                // Window offset a of output row i covers input row h0 + h when i sh = h0 + h + pt - a;
                // bands start at multiples of sh, so i = h0 / sh + floor(v / sh) when sh divides v
                // (v < 0 included: a row of the band before, which the first band zero-fills).
                const int64_t v = int64_t{h} + p.pt - a;
                const int64_t r = v - fdiv(v, p.sh) * p.sh != 0 ? -1 : fdiv(v, p.sh) - i0_rel;
                if (r < 0 || r >= p.ob)
                    Duplicate(t[h * p.wp], static_cast<int32_t>(p.ob * p.owp * es), p.wp);
                else
                    Adds(t[h * p.wp], col[b * cw], static_cast<int32_t>(r * p.owp * es), p.wp);
            }
        }
    const LocalTensor<uint32_t> utab = tab.ReinterpretCast<uint32_t>();
    for (uint64_t it = first; it < last; ++it) {
        ctx.scalar(8);  // item coordinates and row ranges
        const uint32_t plane = static_cast<uint32_t>(it / p.bands), bnd = static_cast<uint32_t>(it % p.bands);
        const uint32_t h0 = bnd * p.hb, rows = std::min(p.hb, p.h - h0);
        const int64_t i0 = int64_t{h0 / p.sh} + i0_rel;
        const int64_t ilo = std::max<int64_t>(0, i0), ihi = std::min<int64_t>(p.oh, i0 + p.ob);
        LocalTensor<T> xb = qx.AllocTensor<T>();
        DataCopyPad(xb, gx[(uint64_t{plane} * p.h + h0) * p.w],
                    DataCopyExtParams{rows, p.w * es, 0, (p.wp * es - rup(p.w * es, 32)) / 32});
        qx.EnQue(xb);
        LocalTensor<T> yb = qy.AllocTensor<T>();
        const LocalTensor<T> ybuf = yb, dybuf = yb[ybytes / es];
        // dY: rows outside the output and the zero row are zero; each row's tail (the zero
        // column) is padded with zeros by the copy.
        if (ilo > i0) Duplicate(dybuf, T(0), static_cast<uint64_t>(ilo - i0) * p.owp);
        if (i0 + p.ob > ihi)
            Duplicate(dybuf[static_cast<uint32_t>(ihi - i0) * p.owp], T(0), static_cast<uint64_t>(i0 + p.ob - ihi) * p.owp);
        Duplicate(dybuf[p.ob * p.owp], T(0), p.owp);
        if (ihi > ilo) {
            const uint32_t n = static_cast<uint32_t>(ihi - ilo), at = static_cast<uint32_t>(ilo - i0) * p.owp;
            const uint64_t src = (uint64_t{plane} * p.oh + static_cast<uint64_t>(ilo)) * p.ow;
            const DataCopyPadExtParams<T> pad{true, 0, static_cast<uint8_t>(p.owp - p.ow), T(0)};
            DataCopyPad(ybuf[at], gy[src], DataCopyExtParams{n, p.ow * es, 0, 0}, pad);
            DataCopyPad(dybuf[at], gdy[src], DataCopyExtParams{n, p.ow * es, 0, 0}, pad);
        }
        qy.EnQue(yb);
        xb = qx.DeQue<T>();
        yb = qy.DeQue<T>();
        LocalTensor<T> ob = qo.AllocTensor<T>();
        for (uint32_t k = 0; k < p.kh * p.kw; ++k) {
            const LocalTensor<uint32_t> t = utab[k * p.lanes];
            Gather(yg, ybuf, t, ybytes, p.lanes);
            Gather(dyg, dybuf, t, ybytes, p.lanes);
            Compare(bits, xb, yg, CmpMode::EQ, p.lanes);
            if (k == 0) {
                Select(ob, bits, dyg, zero, p.lanes);
            } else {
                Select(dyg, bits, dyg, zero, p.lanes);
                Add(ob, ob, dyg, p.lanes);
            }
        }
        qx.FreeTensor(xb);
        qy.FreeTensor(yb);
        qo.EnQue(ob);
        ob = qo.DeQue<T>();
        DataCopyPad(gdx[(uint64_t{plane} * p.h + h0) * p.w], ob,
                    DataCopyExtParams{rows, p.w * es, (p.wp * es - rup(p.w * es, 32)) / 32, 0});
        qo.FreeTensor(ob);
    }
}

// MaxPool's 2-D geometry from the node's attributes and X; Y and dY must have its output shape.
ref::PoolGeom grad_geometry(const NodeDesc& n, const TensorRef& x, const TensorRef& y, const TensorRef& dy) {
    ref::PoolGeom g;
    try {
        g = ref::pool_geometry(n.name, n.op_type, n.attrs, x.shape);
    } catch (const InputError& e) {
        throw UnsupportedError(n, e.what());
    }
    if (g.spatial != 2) throw UnsupportedError(n, "2-D pooling only");
    for (int64_t d : g.dilation)
        if (d != 1) throw UnsupportedError(n, "dilation other than 1");
    const std::vector<int64_t> ys = {x.shape[0], x.shape[1], g.out[0], g.out[1]};
    if (y.shape != ys || dy.shape != ys) throw UnsupportedError(n, "Y and dY must have MaxPool's output shape " + ref::shape_str(ys));
    return g;
}

class PoolGradNode : public INodeOp {
public:
    PoolGradNode(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        if (!n.has_input(0) || !n.has_input(1) || !n.has_input(2)) throw UnsupportedError(n, "needs inputs X, Y and dY");
        const TensorRef &x = n.inputs[0], &y = n.inputs[1], &dy = n.inputs[2];
        if (x.format == Format::NC1HWC0 && y.format == Format::NC1HWC0 && dy.format == Format::NC1HWC0) {
            plan_c0(n, dev);
            return;
        }
        for (const TensorRef* t : {&x, &y, &dy}) {
            if (t->format != Format::ND || !t->contiguous()) throw UnsupportedError(n, "X, Y and dY must be contiguous ND tensors");
            if (t->elem != x.elem) throw UnsupportedError(n, "X, Y and dY of different element types");
        }
        if (x.dtype != isa::DType::FP16 && x.dtype != isa::DType::FP32)
            throw UnsupportedError(n, std::string("element type ") + ref::elem_type_name(x.elem) + " (fp16 and fp32 only)");
        const ref::PoolGeom g = grad_geometry(n, x, y, dy);
        for (int64_t v : {x.shape[2], x.shape[3], g.out[0], g.out[1], g.kernel[0], g.kernel[1], g.stride[0], g.stride[1]})
            if (v < 1 || v > 65535) throw UnsupportedError(n, "a size outside 1..65535");
        if (g.pad_begin[0] > 255 || g.pad_begin[1] > 255) throw UnsupportedError(n, "pads above 255");
        m_out = make_tensor(x.shape, x.elem);
        PoolGradPlan& p = m_plan;
        p.dtype = x.dtype;
        const uint32_t es = isa::dtype_size(p.dtype), c0 = 32 / es;
        p.planes = static_cast<uint32_t>(x.shape[0] * x.shape[1]);
        p.h = static_cast<uint32_t>(x.shape[2]), p.w = static_cast<uint32_t>(x.shape[3]);
        p.oh = static_cast<uint32_t>(g.out[0]), p.ow = static_cast<uint32_t>(g.out[1]);
        p.kh = static_cast<uint32_t>(g.kernel[0]), p.kw = static_cast<uint32_t>(g.kernel[1]);
        p.sh = static_cast<uint32_t>(g.stride[0]), p.sw = static_cast<uint32_t>(g.stride[1]);
        p.pt = static_cast<uint32_t>(g.pad_begin[0]), p.pl = static_cast<uint32_t>(g.pad_begin[1]);
        p.wp = rup(p.w, c0), p.owp = rup(p.ow + 1, c0);
        if (p.owp - p.ow > 255) throw UnsupportedError(n, "output rows too narrow to pad");
        // The most rows per band (a multiple of the stride, at most the image) that fit UB.
        const uint32_t lane_rep = 256 / es;
        uint32_t best = 0;
        for (uint32_t hb = p.sh; hb <= rup(p.h, p.sh) && hb <= 255; hb += p.sh) {
            PoolGradPlan t = p;
            t.hb = hb;
            t.ob = static_cast<uint32_t>(fdiv(int64_t{hb} - 1 + p.pt, p.sh) - fdiv(int64_t{p.pt} - p.kh + 1, p.sh) + 1);
            t.lanes = rup(hb * p.wp, lane_rep);
            if (ub_need(t, es) > dev.ub_bytes || t.lanes / lane_rep > 255) break;
            best = hb;
            p.ob = t.ob, p.lanes = t.lanes;
        }
        if (best == 0) throw UnsupportedError(n, "one band of rows does not fit UB (" + std::to_string(dev.ub_bytes) + " bytes)");
        p.hb = best;
        p.bands = (p.h + p.hb - 1) / p.hb;
        p.items = uint64_t{p.planes} * p.bands;
        const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
        p.block_dim = static_cast<uint32_t>(std::min<uint64_t>(p.items, cores));
        p.per_block = (p.items + p.block_dim - 1) / p.block_dim;
        p.block_dim = static_cast<uint32_t>((p.items + p.per_block - 1) / p.per_block);
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_c0_form) {
            norm::PoolC0GradPlan q = m_c0;
            q.x = in.at(0).addr, q.y = in.at(1).addr, q.dy = in.at(2).addr, q.dx = out.at(0).addr;
            const uint64_t es = isa::dtype_size(q.xt), on = in.at(1).storage_bytes() / es;
            const uint64_t taps = static_cast<uint64_t>(q.kh * q.kw);
            // Per tap over the output: compare, select, add in the storage type.
            return {norm::vector_launch(m_node.name, m_node.op_type, q.blocks,
                                        [q](isa::IInstrSink& s) { norm::pool_c0_grad_kernel(s, q); },
                                        static_cast<double>(on * taps * 3),
                                        2 * in.at(0).storage_bytes() + 2 * in.at(1).storage_bytes(),
                                        static_cast<double>(taps * 3) * static_cast<double>(es) / 4.0, on, m_dev)};
        }
        PoolGradPlan p = m_plan;
        p.x = in.at(0).addr, p.y = in.at(1).addr, p.dy = in.at(2).addr, p.dx = out.at(0).addr;
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = KernelKind::Vector;
        kd.block_dim = p.block_dim;
        if (p.dtype == isa::DType::FP16)
            kd.body = [p](isa::IInstrSink& s) { pool_grad_body<half>(s, p); };
        else
            kd.body = [p](isa::IInstrSink& s) { pool_grad_body<float>(s, p); };
        const uint32_t es = isa::dtype_size(p.dtype);
        kd.bytes = (2 * in.at(0).numel() + 2 * in.at(1).numel()) * es;
        kd.flops = double(in.at(0).numel()) * p.kh * p.kw * 3;
        if (m_dev.vector_bytes_per_cycle > 0)
            kd.min_compute_cycles = double(p.items) * p.lanes * es * p.kh * p.kw * 5 /
                                    (m_dev.vector_bytes_per_cycle * std::max(1u, m_dev.vector_cores));
        return {kd};
    }

    std::string describe() const override {
        if (m_c0_form)
            return "NC1HWC0: bands of " + std::to_string(m_c0.hb) + " input rows, per tap compare, select, add of whole C0 rows";
        return "bands of " + std::to_string(m_plan.hb) + " input rows, per kernel offset 2 gathers + compare, select, add";
    }

private:
    // X, Y and dY in NC1HWC0 (the training step's layout keeps them so): pool_c0_kernel.h.
    void plan_c0(const NodeDesc& n, const DeviceInfo& dev) {
        const TensorRef &x = n.inputs[0], &y = n.inputs[1], &dy = n.inputs[2];
        for (const TensorRef* t : {&x, &y, &dy}) {
            if (!t->contiguous()) throw UnsupportedError(n, "X, Y and dY must be contiguous");
            if (t->elem != x.elem) throw UnsupportedError(n, "X, Y and dY of different element types");
        }
        if (x.dtype != isa::DType::FP16 && x.dtype != isa::DType::FP32 && x.dtype != isa::DType::BF16)
            throw UnsupportedError(n, std::string("element type ") + ref::elem_type_name(x.elem) + " (fp16, bf16, fp32)");
        const ref::PoolGeom g = grad_geometry(n, x, y, dy);
        norm::PoolC0GradPlan& q = m_c0;
        const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(x.dtype));
        q.xt = x.dtype, q.planes = static_cast<uint64_t>(x.shape[0] * ((x.shape[1] + c0 - 1) / c0));
        q.H = g.in[0], q.W = g.in[1], q.OH = g.out[0], q.OW = g.out[1], q.kh = g.kernel[0], q.kw = g.kernel[1];
        q.sh = g.stride[0], q.sw = g.stride[1], q.pt = g.pad_begin[0], q.pl = g.pad_begin[1];
        if (!norm::plan_pool_c0_grad(q, dev.ub_bytes, dev.vector_cores))
            throw UnsupportedError(n, "NC1HWC0: padding, strides or one band of rows beyond the kernel's limits");
        m_out = x;
        m_out.addr = 0;
        m_c0_form = true;
    }

    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    PoolGradPlan m_plan;
    norm::PoolC0GradPlan m_c0;
    bool m_c0_form = false;
};

std::unique_ptr<INodeOp> make_pool_grad(const NodeDesc& n, const DeviceInfo& dev) {
    return std::make_unique<PoolGradNode>(n, dev);
}

// The standalone face: X random; Y = MaxPool(X) and dY random, as the host computes them (Y
// must be the forward's exact maxima for the gradient to find them).
std::unique_ptr<IOp> make_pool_grad_op(const OpArgs& a, const DeviceInfo& dev) {
    const std::string op = "maxpool_grad";
    auto u = [&](const char* k, uint64_t lo, uint64_t hi) { return static_cast<int64_t>(arg_u64(a, op, k, lo, hi)); };
    const int64_t n = u("n", 1, 4096), c = u("c", 1, 65535), h = u("h", 1, 65535), w = u("w", 1, 65535);
    const int64_t k = u("k", 1, 255), s = u("stride", 1, 255), pad = u("pad", 0, 255);
    const std::string d = a.at("dtype");
    if (d != "fp16" && d != "fp32") throw InputError("operator '" + op + "': argument 'dtype' = '" + d + "' (valid: fp16, fp32)");
    if (pad >= k) throw InputError("operator '" + op + "': argument 'pad' must be smaller than 'k'");
    if (h + 2 * pad < k || w + 2 * pad < k) throw InputError("operator '" + op + "': the window is larger than the padded image");
    const ref::ElemType t = d == "fp16" ? ref::ElemType::Float16 : ref::ElemType::Float;
    StandaloneSpec spec;
    NodeDesc& node = spec.node;
    node.name = op;
    node.op_type = "MaxPoolGrad";
    node.attrs.set_owner(node.name);
    node.attrs.set("kernel_shape", ref::Attr::of_ints({k, k}));
    node.attrs.set("strides", ref::Attr::of_ints({s, s}));
    node.attrs.set("pads", ref::Attr::of_ints({pad, pad, pad, pad}));
    const ref::PoolGeom g = ref::pool_geometry(op, "MaxPool", node.attrs, {n, c, h, w});
    node.inputs.push_back(make_tensor({n, c, h, w}, t));
    node.inputs.push_back(make_tensor({n, c, g.out[0], g.out[1]}, t));
    node.inputs.push_back(make_tensor({n, c, g.out[0], g.out[1]}, t));
    // X: a few distinct values so that windows tie; Y: X's window maxima.
    auto xs = std::make_shared<ref::HostTensor>(t, std::vector<int64_t>{n, c, h, w});
    std::mt19937 rng(7);
    for (double& v : xs->data) v = static_cast<double>(static_cast<int>(rng() % 9)) - 4.0;
    spec.gens.push_back([xs](ref::HostTensor& x, std::mt19937&) { x.data = xs->data; });
    ref::Attrs pa = node.attrs;
    spec.gens.push_back([xs, pa, op](ref::HostTensor& y, std::mt19937&) {
        ref::RefNode mp{op, "MaxPool", 12, pa, 1};
        y.data = ref::run_ref(mp, {xs.get()}).at(0).data;
    });
    spec.gens.push_back(uniform_input(-1, 1));
    // Each input pixel sums at most ceil(k / s)^2 gradients of magnitude <= 1, added one by one in
    // the type: each addition rounds a partial sum below that count.
    const double adds = std::pow(std::ceil(double(k) / s), 2);
    const double ulp = t == ref::ElemType::Float16 ? 0x1p-11 : 0x1p-24;
    spec.tol.atol = adds * adds * ulp;
    spec.tol.rtol = ulp;
    return make_standalone(std::move(spec), dev);
}

}  // namespace

SFUMATO_REGISTER_NODE_OP(max_pool_grad, "MaxPoolGrad", make_pool_grad);
SFUMATO_REGISTER_OP(maxpool_grad,
                    OpSpec{"maxpool_grad",
                           "backward of a 2-D MaxPool: per window offset, gathered Y/dY, compare, select, add",
                           {{"n", "1", "batch"},
                            {"c", "", "channels"},
                            {"h", "", "input height"},
                            {"w", "", "input width"},
                            {"k", "3", "window (both dimensions)"},
                            {"stride", "2", "stride (both dimensions)"},
                            {"pad", "1", "pads (all four sides)"},
                            {"dtype", "fp16", "fp16 | fp32"}},
                           make_pool_grad_op});
SFUMATO_OP_SAMPLE(maxpool_grad_sample, "maxpool_grad", {{"n", "2"}, {"c", "3"}, {"h", "9"}, {"w", "11"}});

}  // namespace sfumato::ops
