// TransData: ND <-> NZ on the device, and the host conversions (see
// transdata.h). The kernel splits the (batch, column group) pairs over the
// vector cores; for each it moves R rows of one 32-byte column group between
// the strided ND rows and the contiguous NZ fractal column with one multi-burst
// copy each way (ragged column groups are zero-padded by the load; the 16-row
// padding of NZ is written from a zeroed UB block).
#include "runtime/ops/transdata.h"

#include <algorithm>
#include <cstring>

#include "runtime/kernel/api.h"
#include "runtime/ops/conv_layout.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

uint64_t up(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

struct Geometry {
    uint64_t batch = 1, rows = 1, cols = 1;  // NZ view: [batch, rows, cols]
    uint64_t es = 2, c0 = 16, c1 = 1, rows_pad = 16;
};

Geometry nz_geometry(const std::vector<int64_t>& shape, isa::DType d) {
    Geometry g;
    g.es = isa::dtype_size(d);
    g.c0 = 32 / g.es;
    g.cols = shape.empty() ? 1 : static_cast<uint64_t>(shape.back());
    g.rows = shape.size() >= 2 ? static_cast<uint64_t>(shape[shape.size() - 2]) : 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) g.batch *= static_cast<uint64_t>(shape[i]);
    g.c1 = (g.cols + g.c0 - 1) / g.c0;
    g.rows_pad = up(g.rows, 16);
    return g;
}

}  // namespace

std::vector<uint8_t> host_to_format(const std::vector<uint8_t>& nd, const std::vector<int64_t>& shape,
                                    isa::DType d, Format f) {
    if (f == Format::ND) return nd;
    TensorRef t;
    t.shape = shape;
    t.dtype = d;
    t.format = f;
    std::vector<uint8_t> out(t.storage_bytes(), 0);
    const uint64_t es = isa::dtype_size(d), c0 = 32 / es;
    if (f == Format::NZ) {
        const Geometry g = nz_geometry(shape, d);
        for (uint64_t b = 0; b < g.batch; ++b)
            for (uint64_t r = 0; r < g.rows; ++r)
                for (uint64_t c = 0; c < g.cols; ++c) {
                    const uint64_t src = (b * g.rows + r) * g.cols + c;
                    const uint64_t dst = ((b * g.c1 + c / c0) * g.rows_pad + r) * c0 + c % c0;
                    std::memcpy(out.data() + dst * es, nd.data() + src * es, es);
                }
        return out;
    }
    // NC1HWC0
    if (shape.size() < 2) return nd;
    const uint64_t n = static_cast<uint64_t>(shape[0]), ch = static_cast<uint64_t>(shape[1]);
    uint64_t hw = 1;
    for (size_t i = 2; i < shape.size(); ++i) hw *= static_cast<uint64_t>(shape[i]);
    const uint64_t c1 = (ch + c0 - 1) / c0;
    for (uint64_t a = 0; a < n; ++a)
        for (uint64_t c = 0; c < ch; ++c)
            for (uint64_t s = 0; s < hw; ++s) {
                const uint64_t src = (a * ch + c) * hw + s;
                const uint64_t dst = ((a * c1 + c / c0) * hw + s) * c0 + c % c0;
                std::memcpy(out.data() + dst * es, nd.data() + src * es, es);
            }
    return out;
}

std::vector<uint8_t> host_from_format(const std::vector<uint8_t>& data, const std::vector<int64_t>& shape,
                                      isa::DType d, Format f) {
    if (f == Format::ND) return data;
    TensorRef t;
    t.shape = shape;
    t.dtype = d;
    const uint64_t es = isa::dtype_size(d), c0 = 32 / es;
    std::vector<uint8_t> out(t.numel() * es, 0);
    if (f == Format::NZ) {
        const Geometry g = nz_geometry(shape, d);
        for (uint64_t b = 0; b < g.batch; ++b)
            for (uint64_t r = 0; r < g.rows; ++r)
                for (uint64_t c = 0; c < g.cols; ++c) {
                    const uint64_t dst = (b * g.rows + r) * g.cols + c;
                    const uint64_t src = ((b * g.c1 + c / c0) * g.rows_pad + r) * c0 + c % c0;
                    std::memcpy(out.data() + dst * es, data.data() + src * es, es);
                }
        return out;
    }
    if (shape.size() < 2) return data;
    const uint64_t n = static_cast<uint64_t>(shape[0]), ch = static_cast<uint64_t>(shape[1]);
    uint64_t hw = 1;
    for (size_t i = 2; i < shape.size(); ++i) hw *= static_cast<uint64_t>(shape[i]);
    const uint64_t c1 = (ch + c0 - 1) / c0;
    for (uint64_t a = 0; a < n; ++a)
        for (uint64_t c = 0; c < ch; ++c)
            for (uint64_t s = 0; s < hw; ++s) {
                const uint64_t dst = (a * ch + c) * hw + s;
                const uint64_t src = ((a * c1 + c / c0) * hw + s) * c0 + c % c0;
                std::memcpy(out.data() + dst * es, data.data() + src * es, es);
            }
    return out;
}

namespace {

struct TransPlan {
    uint64_t src = 0, dst = 0;
    Geometry g;
    bool to_nz = true;
    uint64_t items = 0, per_block = 0;
    uint32_t rows_per_tile = 0;
};

void trans_kernel(isa::IInstrSink& sink, const TransPlan& p) {
    KernelContext ctx(sink);
    const uint64_t first = ctx.block_idx() * p.per_block;
    if (first >= p.items) return;
    const uint64_t last = std::min(p.items, first + p.per_block);
    const Geometry& g = p.g;
    TPipe pipe(ctx);
    TBuf<TPosition::VECCALC> buf[2], zero;
    const uint32_t tile_bytes = p.rows_per_tile * 32;
    pipe.InitBuffer(buf[0], tile_bytes);
    pipe.InitBuffer(buf[1], tile_bytes);
    const bool pad_rows = p.to_nz && g.rows_pad > g.rows;
    if (pad_rows) {
        pipe.InitBuffer(zero, 16 * 32);
        Duplicate(zero.Get<int16_t>(), int16_t{0}, 16 * 16);
        ctx.set_flag(Pipe::V, Pipe::MTE3, 0);
        ctx.wait_flag(Pipe::V, Pipe::MTE3, 0);
    }
    bool pending[2] = {false, false};
    uint64_t n = 0;
    const uint64_t row_bytes = g.cols * g.es;
    for (uint64_t item = first; item < last; ++item) {
        const uint64_t b = item / g.c1, c1 = item % g.c1;
        const uint32_t valid = static_cast<uint32_t>(std::min<uint64_t>(32, row_bytes - c1 * 32));
        const uint64_t nd_base = b * g.rows * row_bytes + c1 * 32;
        const uint64_t nz_base = (b * g.c1 + c1) * g.rows_pad * 32;
        for (uint64_t r0 = 0; r0 < g.rows; r0 += p.rows_per_tile, ++n) {
            const uint32_t rows = static_cast<uint32_t>(std::min<uint64_t>(p.rows_per_tile, g.rows - r0));
            const int k = static_cast<int>(n % 2);
            ctx.scalar(3);
            if (pending[k]) ctx.wait_flag(Pipe::MTE3, Pipe::MTE2, static_cast<uint8_t>(k));
            LocalTensor<int8_t> t = buf[k].Get<int8_t>();
            GlobalTensor<int8_t> nd, nz;
            nd.SetGlobalBuffer(p.to_nz ? p.src : p.dst, 0);
            nz.SetGlobalBuffer(p.to_nz ? p.dst : p.src, 0);
            if (p.to_nz) {
                DataCopyPad(t, nd[nd_base + r0 * row_bytes],
                            DataCopyExtParams{rows, valid, static_cast<uint32_t>(row_bytes - valid), 0});
            } else {
                DataCopyPad(t, nz[nz_base + r0 * 32], DataCopyExtParams{1, rows * 32u, 0, 0});
            }
            ctx.set_flag(Pipe::MTE2, Pipe::MTE3, static_cast<uint8_t>(k));
            ctx.wait_flag(Pipe::MTE2, Pipe::MTE3, static_cast<uint8_t>(k));
            if (p.to_nz) {
                DataCopyPad(nz[nz_base + r0 * 32], t, DataCopyExtParams{1, rows * 32u, 0, 0});
            } else {
                DataCopyPad(nd[nd_base + r0 * row_bytes], t,
                            DataCopyExtParams{rows, valid, 0, static_cast<uint32_t>(row_bytes - valid)});
            }
            ctx.set_flag(Pipe::MTE3, Pipe::MTE2, static_cast<uint8_t>(k));
            pending[k] = true;
        }
        if (pad_rows) {
            GlobalTensor<int8_t> nz;
            nz.SetGlobalBuffer(p.dst, 0);
            DataCopyPad(nz[nz_base + g.rows * 32], zero.Get<int8_t>(),
                        DataCopyExtParams{1, static_cast<uint32_t>((g.rows_pad - g.rows) * 32), 0, 0});
        }
    }
    for (int k = 0; k < 2; ++k)
        if (pending[k]) ctx.wait_flag(Pipe::MTE3, Pipe::MTE2, static_cast<uint8_t>(k));
}

class TransDataOp : public INodeOp {
public:
    TransDataOp(const NodeDesc& n, const DeviceInfo& dev) : m_n(n), m_dev(dev) {
        if (n.inputs.size() != 1 || !n.has_input(0)) throw UnsupportedError(n, "TransData takes one input");
        const std::string dst = n.attrs.get_string("dst_format", "ND");
        m_dst = dst == "NZ" ? Format::NZ : dst == "NC1HWC0" ? Format::NC1HWC0 : Format::ND;
        if (dst != "ND" && dst != "NZ" && dst != "NC1HWC0")
            throw UnsupportedError(n, "dst_format '" + dst + "' is not ND, NZ or NC1HWC0");
        const Format src = n.inputs[0].format;
        const bool nz_pair =
            (src == Format::ND && m_dst == Format::NZ) || (src == Format::NZ && m_dst == Format::ND);
        const bool c0_pair = (src == Format::ND && m_dst == Format::NC1HWC0) ||
                             (src == Format::NC1HWC0 && m_dst == Format::ND);
        if (c0_pair) {
            const TensorRef& x = n.inputs[0];
            const uint32_t es = isa::dtype_size(x.dtype);
            if (x.shape.size() < 2 || (es != 2 && es != 4))
                throw UnsupportedError(n, "NC1HWC0 conversions need [N, C, spatial...] of a 2- or 4-byte "
                                          "type");
            for (int64_t d : x.shape)
                if (d <= 0 || d > INT32_MAX)
                    throw UnsupportedError(n, "dimension out of range in NC1HWC0 conversion");
            m_c0 = true;
            m_imgs = static_cast<uint32_t>(x.shape[0]), m_ch = static_cast<uint32_t>(x.shape[1]);
            for (size_t i = 2; i < x.shape.size(); ++i) m_pix *= static_cast<uint64_t>(x.shape[i]);
            if (m_pix > UINT32_MAX) throw UnsupportedError(n, "too many pixels per channel");
            try {
                launches_c0(x, x);  // probe the tiling now
            } catch (const InputError& e) {
                throw UnsupportedError(n, e.what());
            }
        } else if (!nz_pair)
            throw UnsupportedError(n, std::string("conversion ") + format_name(src) + " -> " + dst +
                                          " is not supported on the device");
        if (!n.inputs[0].contiguous()) throw UnsupportedError(n, "input must be contiguous");
    }
    std::vector<TensorRef> outputs() const override {
        TensorRef o = m_n.inputs[0];
        o.addr = 0;
        o.format = m_dst;
        o.strides.clear();
        return {o};
    }
    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t) const override {
        if (m_c0) return {launches_c0(in.at(0), out.at(0))};
        TransPlan p;
        p.src = in.at(0).addr;
        p.dst = out.at(0).addr;
        p.to_nz = m_dst == Format::NZ;
        p.g = nz_geometry(in[0].shape, in[0].dtype);
        p.items = p.g.batch * p.g.c1;
        const uint64_t blocks = std::clamp<uint64_t>(p.items, 1, std::max<uint32_t>(1, m_dev.vector_cores));
        p.per_block = (p.items + blocks - 1) / blocks;
        p.rows_per_tile =
            static_cast<uint32_t>(std::clamp<uint64_t>((m_dev.ub_bytes / 2 - 1024) / 32, 16, 4095));
        KernelDesc k;
        k.name = m_n.name;
        k.type = "TransData";
        k.kind = KernelKind::Vector;
        k.block_dim = static_cast<uint32_t>((p.items + p.per_block - 1) / p.per_block);
        k.body = [p](isa::IInstrSink& s) { trans_kernel(s, p); };
        k.bytes = in[0].storage_bytes() + out[0].storage_bytes();
        return {k};
    }
    std::string describe() const override {
        return std::string(format_name(m_n.inputs[0].format)) + "->" + format_name(m_dst);
    }

private:
    // ND <-> NC1HWC0 on the vector cores (conv_layout.h's conversions).
    KernelDesc launches_c0(const TensorRef& in, const TensorRef& out) const {
        KernelDesc k;
        if (m_dst == Format::NC1HWC0) {
            Nc1hwc0Plan p;
            p.src = in.addr, p.dst = out.addr, p.dtype = in.dtype;
            p.n1 = m_imgs, p.s1 = uint64_t{m_ch} * m_pix, p.cg = m_ch, p.sc = m_pix;
            p.h = 1, p.w = static_cast<uint32_t>(m_pix), p.hd = 1, p.wd = p.w;
            k = nc1hwc0_kernel(p, m_dev, m_n.name, "TransData");
        } else {
            NdFromNc1hwc0Plan p;
            p.src = in.addr, p.dst = out.addr, p.dtype = in.dtype, p.n = m_imgs, p.c = m_ch, p.l = m_pix;
            k = nd_from_nc1hwc0_kernel(p, m_dev, m_n.name, "TransData");
        }
        return k;
    }

    NodeDesc m_n;
    DeviceInfo m_dev;
    Format m_dst = Format::ND;
    bool m_c0 = false;  // ND <-> NC1HWC0
    uint32_t m_imgs = 1, m_ch = 1;
    uint64_t m_pix = 1;
};

}  // namespace

SFUMATO_REGISTER_NODE_OP(transdata, "TransData", [](const NodeDesc& n, const DeviceInfo& d) {
    return std::make_unique<TransDataOp>(n, d);
});

}  // namespace sfumato::ops
