#include "runtime/ops/ew/plan.h"

#include <algorithm>
#include <numeric>

#include "runtime/ops/ew/ub_layout.h"
#include "runtime/ops/node_op.h"
#include "runtime/ref/broadcast.h"
#include "sim/error.h"

namespace sfumato::ops::ew {

using isa::DType;

namespace {

uint32_t upto(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b * b); }
uint32_t esz(DType t) { return isa::dtype_size(t); }

[[noreturn]] void fail(const EwNode& n, const std::string& what) {
    NodeDesc d;
    d.name = n.name;
    d.op_type = n.op;
    throw UnsupportedError(d, what);
}

// Element strides of input `x` over the output's dims (right-aligned, 0 where broadcast).
std::vector<int64_t> strides_over(const EwNode& n, size_t i, const EwIn& x, const std::vector<int64_t>& out) {
    if (!ref::broadcasts_to(x.shape, out))
        fail(n, "input " + std::to_string(i) + " " + ref::shape_str(x.shape) + " does not broadcast to " + ref::shape_str(out));
    if (x.strides.empty()) return ref::broadcast_strides(x.shape, out);
    if (x.strides.size() != x.shape.size())
        fail(n, "input " + std::to_string(i) + ": " + std::to_string(x.strides.size()) + " strides for rank " +
                    std::to_string(x.shape.size()));
    std::vector<int64_t> st(out.size(), 0);
    for (size_t k = 0; k < x.shape.size(); ++k) {
        const size_t d = out.size() - x.shape.size() + k;
        st[d] = x.shape[k] == 1 ? 0 : x.strides[k];
    }
    return st;
}

struct Geometry {
    std::vector<int64_t> dims;                  // merged, outer first; last = inner
    std::vector<std::vector<int64_t>> strides;  // per input (Tile inputs only; others empty)
};

Geometry merge_dims(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& st) {
    Geometry g;
    std::vector<int64_t> dims;  // inner first while building
    std::vector<std::vector<int64_t>> s(st.size());
    for (size_t d = out.size(); d-- > 0;) {
        if (out[d] == 1) continue;
        bool merge = !dims.empty();
        for (size_t i = 0; i < st.size() && merge; ++i)
            if (!st[i].empty() && st[i][d] != s[i].back() * dims.back()) merge = false;
        if (merge) {
            dims.back() *= out[d];
            continue;
        }
        dims.push_back(out[d]);
        for (size_t i = 0; i < st.size(); ++i)
            if (!st[i].empty()) s[i].push_back(st[i][d]);
    }
    if (dims.empty()) {
        dims.push_back(1);
        for (size_t i = 0; i < st.size(); ++i)
            if (!st[i].empty()) s[i].push_back(0);
    }
    g.dims.assign(dims.rbegin(), dims.rend());
    g.strides.resize(st.size());
    for (size_t i = 0; i < st.size(); ++i) g.strides[i].assign(s[i].rbegin(), s[i].rend());
    return g;
}

// Fills the UB layout for the plan's current tile shape; false when it does not fit.
bool lay_out(Plan& p, uint64_t ub) {
    const uint32_t T = p.T;
    const uint32_t rows = p.chunk ? 1 : p.k;
    const uint32_t runs = p.chunk ? 1 : std::min<uint32_t>(rows, (rows + p.run_len - 1) / p.run_len + 1);
    uint64_t in = 0, calc = 0;
    uint32_t streams = 0;
    auto take = [](uint64_t& at, uint64_t bytes) {
        const uint64_t o = at;
        at += upto(std::max<uint64_t>(bytes, 32), 32);
        return static_cast<uint32_t>(o);
    };
    // Tiles the program reads start at a multiple of 512 bytes (one phase of the bank groups).
    auto tile_at = [&](uint64_t& at, uint64_t bytes) {
        at = (at + 511) / 512 * 512;
        return take(at, bytes);
    };
    for (OperandPlan& o : p.in) {
        switch (o.form) {
            case Form::Stream:
                // Streamed operands alternate between the halves of the bank groups (phases 0
                // and 256): two read by one step do not read one group together.
                in += ((streams++ % 2) * 256 + 512 - in % 512) % 512;
                o.in_off = take(in, uint64_t{T} * esz(o.storage));
                break;
            case Form::Col: {
                const uint64_t vals = uint64_t{rows} * 32 + 32ull * (runs + 1) + 256;
                o.in_off = take(in, vals);
                const uint32_t xr = p.chunk ? T : std::max<uint32_t>(T, (rows + 8) * p.Lp);
                if (o.xtype != o.storage) o.stage_off = take(calc, uint64_t{rows} * 32 + 32ull * (runs + 1) + 256);
                o.x_off = tile_at(calc, uint64_t{xr} * esz(o.xtype) + 256);
                o.calc_off = o.xtype != o.storage ? tile_at(calc, uint64_t{T} * esz(o.storage)) : o.x_off;
                break;
            }
            case Form::Gather:
                // One 32-byte block per element as loaded, packed into a padded-row tile.
                o.in_off = take(in, uint64_t{p.chunk ? T : rows * static_cast<uint32_t>(p.L)} * 32 + 256);
                o.calc_off = tile_at(calc, uint64_t{T} * esz(o.storage) + 256);
                break;
            case Form::Scalar:
                o.stage_off = take(calc, 256);
                o.calc_off = take(calc, 256);
                break;
            case Form::Row:
                o.calc_off = tile_at(calc, uint64_t{p.chunk ? upto(p.L, 256) + T : T} * esz(o.storage));
                break;
            default: break;
        }
    }
    p.const_off.assign(p.prog.regs.size(), 0);
    for (size_t r = 0; r < p.prog.regs.size(); ++r)
        if (p.prog.regs[r].src == RegSrc::Const) p.const_off[r] = take(calc, 256);
    p.fixed_bytes = static_cast<uint32_t>(calc);
    p.slot_off.clear();
    for (uint32_t b : p.prog.slot_bits) p.slot_off.push_back(take(calc, uint64_t{T} * b / 8));
    p.in_bytes = static_cast<uint32_t>(in);
    p.out_bytes = upto(uint64_t{T} * esz(p.out_storage), 32);
    if (p.out_is != 1) {  // one 32-byte block per output element, for single-element bursts
        p.spread_off = p.out_bytes;
        const uint64_t idx = p.chunk ? T : rows * upto(static_cast<uint64_t>(p.L), 8);
        p.out_bytes += upto(idx * 32 + 256, 32);
    }
    p.calc_bytes = static_cast<uint32_t>(calc);
    const uint64_t total = uint64_t{p.nbuf} * (p.in_bytes + p.out_bytes) + p.calc_bytes;
    return total <= ub && total < (1ull << 31);
}

}  // namespace

const char* form_name(Form f) {
    switch (f) {
        case Form::Imm: return "imm";
        case Form::Scalar: return "scalar";
        case Form::Stream: return "stream";
        case Form::Row: return "row";
        case Form::Col: return "col";
        case Form::Gather: return "gather";
        default: return "absent";
    }
}

Plan make_ew_plan(const EwNode& n, const std::vector<EwIn>& in, const std::vector<int64_t>& out,
                  DType out_storage, ref::ElemType out_elem, const DeviceInfo& dev, const std::vector<int64_t>& out_strides,
                  int64_t out_base) {
    Plan p;
    p.out_shape = out;
    p.out_storage = out_storage;
    p.out_base = out_base;
    p.in.resize(in.size());
    p.in_addr.assign(in.size(), 0);
    std::vector<InputDesc> desc(in.size());
    std::vector<std::vector<int64_t>> st(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        const EwIn& x = in[i];
        OperandPlan& o = p.in[i];
        InputDesc& d = desc[i];
        o.base = x.base;
        d.storage = o.storage = x.storage;
        d.elem = x.elem;
        d.present = x.present;
        if (!x.present) continue;
        o.numel = ref::numel_of(x.shape);
        if (o.numel == 1 && x.constant) {
            o.form = Form::Imm;
            d.kind = InKind::Imm;
            d.imm = x.constant->data.at(0);
        } else if (o.numel == 1) {
            o.form = Form::Scalar;
            d.kind = InKind::Block;
        } else {
            d.kind = InKind::Tile;
            st[i] = strides_over(n, i, x, out);
        }
    }
    p.prog = build_ew_program(n, desc, out_storage, out_elem);
    for (size_t i = 0; i < in.size(); ++i)
        if (p.in[i].form == Form::Scalar) {
            const int r = p.prog.input_reg[i];
            p.in[i].deliver = r >= 0 ? p.prog.regs[static_cast<size_t>(r)].dt : p.in[i].storage;
            if (r < 0) p.in[i].form = Form::Absent;  // the program does not read it
        }

    // Geometry: rows of the merged innermost dimension (the output walks its own strides too).
    if (!out_strides.empty() && out_strides.size() != out.size()) fail(n, "output strides do not match its rank");
    const std::vector<int64_t> out1 = out.empty() ? std::vector<int64_t>{1} : out;  // rank 0 as [1]
    st.push_back(out_strides.empty() ? ref::contiguous_strides(out1) : out_strides);
    for (size_t d = 0; d < out1.size(); ++d)
        if (out1[d] == 1) st.back()[d] = 0;
    const Geometry g = merge_dims(out1, st);
    {
        const std::vector<int64_t>& os = g.strides.back();
        p.out_is = g.dims.back() > 1 ? os.back() : 1;
        if (p.out_is != 1 && (p.out_is < 1 || esz(out_storage) < 2))
            fail(n, "an output region with inner stride " + std::to_string(p.out_is) + " of a " +
                        std::to_string(esz(out_storage)) + "-byte type is not supported");
        p.out_os.assign(os.begin(), os.end() - 1);
    }
    p.L = g.dims.back();
    p.outer.assign(g.dims.begin(), g.dims.end() - 1);
    p.R = 1;
    for (int64_t d : p.outer) p.R *= static_cast<uint64_t>(d);
    p.run_len = p.outer.empty() ? 1 : static_cast<uint32_t>(std::min<int64_t>(p.outer.back(), 1 << 30));
    p.out_contig = p.out_is == 1 && (p.out_os.empty() || p.out_os == [&] {
        std::vector<int64_t> c(p.outer.size());
        int64_t m = p.L;
        for (size_t d = c.size(); d-- > 0;) c[d] = m, m *= p.outer[d];
        return c;
    }());
    uint32_t min_es = esz(out_storage);
    for (size_t i = 0; i < in.size(); ++i) {
        OperandPlan& o = p.in[i];
        if (st[i].empty()) continue;
        const std::vector<int64_t>& s = g.strides[i];
        o.istride = s.back();
        o.os.assign(s.begin(), s.end() - 1);
        const int64_t delta = o.os.empty() ? 0 : o.os.back();
        const bool invariant = std::all_of(o.os.begin(), o.os.end(), [](int64_t v) { return v == 0; });
        if (o.istride == 1) {
            o.form = invariant && !o.os.empty() ? Form::Row : Form::Stream;
            o.repeat_rows = o.form == Form::Stream && !o.os.empty() && delta == 0;
        } else if (o.istride == 0) {
            o.form = Form::Col;
            o.xtype = esz(o.storage) >= 2 ? o.storage : DType::FP16;
        } else {
            if (esz(o.storage) < 2) fail(n, "input " + std::to_string(i) + ": a strided view of a 1-byte type is not supported");
            o.form = Form::Gather;
        }
        min_es = std::min(min_es, esz(o.storage));
    }
    for (const RegInfo& r : p.prog.regs) min_es = std::min(min_es, esz(r.dt));
    p.Lp = upto(static_cast<uint64_t>(p.L), 32 / min_es);

    // Tile size: the largest that fits UB (whole rows when one fits, else a chunk of a row).
    const uint32_t cores = std::max<uint32_t>(1, dev.vector_cores);
    const bool few_long_rows = p.R < cores && p.L > 512;
    bool fitted = false;
    // The largest tile whose buffers also fit whole inside the bank spans (ub_layout.h), down to
    // half the largest that fits at all; else that largest, laid out in sequence.
    for (int pass = 0; pass < 2 && !fitted; ++pass) {
        uint32_t largest = 0;
        for (uint32_t T : {32768u, 24576u, 16384u, 12288u, 8192u, 6144u, 4096u, 3072u, 2048u, 1536u, 1024u, 768u, 512u, 256u, 128u, 64u}) {
            if (largest && 2 * T < largest) break;
            p.chunk = few_long_rows || p.Lp > T;
            p.T = T;
            if (!p.chunk) p.k = T / p.Lp;
            else p.w = T;
            if (!lay_out(p, dev.ub_bytes)) continue;
            if (!largest) largest = T;
            Plan q = p;
            if (place_ub(q, dev.ub_bytes)) {
                fitted = true;
                break;
            }
        }
        if (!fitted && largest) {
            p.T = largest;
            p.chunk = few_long_rows || p.Lp > largest;
            if (!p.chunk) p.k = largest / p.Lp;
            else p.w = largest;
            fitted = lay_out(p, dev.ub_bytes);
        }
        if (!fitted) {  // a resident row may be what does not fit: read it per tile instead
            for (OperandPlan& o : p.in)
                if (o.form == Form::Row) o.form = Form::Stream, o.repeat_rows = true;
        }
    }
    if (!fitted) fail(n, "UB of " + std::to_string(dev.ub_bytes) + " bytes cannot hold one tile");
    // Spread the work over every vector core, then shrink the tile to what that needs.
    if (!p.chunk) {
        p.k = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(p.k, (p.R + cores - 1) / cores)));
        p.T = upto(uint64_t{p.k} * p.Lp, 256);
        p.nchunks = 1;
        p.units = p.R;  // each core takes a balanced range of rows, in tiles of k
    } else {
        const uint64_t parts = std::max<uint64_t>(1, (cores + p.R - 1) / p.R);
        p.w = std::min<uint32_t>(p.w, std::max<uint32_t>(256, upto((static_cast<uint64_t>(p.L) + parts - 1) / parts, 256)));
        p.T = p.w;
        p.nchunks = (static_cast<uint64_t>(p.L) + p.w - 1) / p.w;
        p.units = p.R * p.nchunks;
    }
    if (!lay_out(p, dev.ub_bytes)) fail(n, "tile layout does not fit UB");
    place_ub(p, dev.ub_bytes);
    p.block_dim = static_cast<uint32_t>(std::min<uint64_t>(p.units, cores));
    p.per_block = (p.units + p.block_dim - 1) / p.block_dim;
    return p;
}

std::string Plan::short_form() const {
    std::string s;
    for (const OperandPlan& o : in) {
        const char* f = nullptr;
        switch (o.form) {
            case Form::Imm: f = "scalar operand (immediate)"; break;
            case Form::Scalar: f = "scalar operand (stride-0 block)"; break;
            case Form::Row: f = chunk ? "stride-0 read (resident row)" : "repeat-the-row load"; break;
            case Form::Col: f = "per-row scalar (vbrcb)"; break;
            case Form::Gather: f = "strided gather"; break;
            case Form::Stream: f = o.repeat_rows ? "repeat-the-row load (per tile)" : nullptr; break;
            default: break;
        }
        if (f && s.find(f) == std::string::npos) s += (s.empty() ? "" : ", ") + std::string(f);
    }
    return s.empty() ? "same shape" : "broadcast: " + s;
}

std::string Plan::describe(const std::vector<std::string>& names) const {
    std::string s = std::to_string(R) + " row(s) x " + std::to_string(L) + ", ";
    if (chunk) s += "tiles of " + std::to_string(w) + " elements (" + std::to_string(nchunks) + " per row)";
    else s += "tiles of " + std::to_string(k) + " row(s) padded to " + std::to_string(Lp);
    s += ", on " + std::to_string(block_dim) + " cores; ";
    for (size_t i = 0; i < in.size(); ++i) {
        const OperandPlan& o = in[i];
        if (o.form == Form::Absent) continue;
        s += (i < names.size() ? names[i] : "input " + std::to_string(i)) + ": ";
        switch (o.form) {
            case Form::Imm: s += "scalar operand (immediate in vector-scalar instructions)"; break;
            case Form::Scalar: s += "scalar operand (one 32-B block read with stride 0)"; break;
            case Form::Row:
                s += chunk ? "stride-0 read (row resident in UB, re-read for every output row)"
                           : "repeat-the-row load (row replicated " + std::to_string(k) + "x in UB once per core)";
                break;
            case Form::Col: s += "per-row scalar (values loaded per tile, spread over their rows by vbrcb)"; break;
            case Form::Gather: s += "strided gather (a burst per element, packed by a one-lane reduction)"; break;
            case Form::Stream: s += o.repeat_rows ? "repeat-the-row load per tile (loaded once, copied in UB)" : "streamed"; break;
            default: break;
        }
        s += "; ";
    }
    s += std::to_string(prog.steps.size()) + " vector step(s) per tile";
    return s;
}

}  // namespace sfumato::ops::ew
