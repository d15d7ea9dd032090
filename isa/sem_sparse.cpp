// Functional semantics of the cube's 4:2 structured sparsity (Atlas A2/A3; the vendor's LoadDataWithSparse
// and MmadWithSparse): the sparse load2d (int8 fractals of a densified B from L1 into L0B, with their
// index fractals into the index buffer, Pos::SPIDX, at a quarter of the L0B address) and the sparse mad
// (A's columns selected per column of B by the index, then a dense int8 product of half A's depth).
// Formats: isa/instr.h (Load2dParams::sparse, MadParams::sparse).
#include <algorithm>
#include <cstring>
#include <vector>

#include "isa/layout.h"
#include "isa/sem_detail.h"

namespace sfumato::isa::detail {

namespace {

constexpr uint32_t kK0 = 32;  // int8: 32 elements of k per fractal row

uint64_t a_bytes(const Instr& in) {
    return uint64_t{ceil_div(in.mad.m, 16)} * ceil_div(in.mad.k, kK0) * kFractalBytes;
}
uint64_t b_fractals(const Instr& in) { return uint64_t{ceil_div(mad_depth(in), kK0)} * ceil_div(in.mad.n, 16); }
uint64_t c_bytes(const Instr& in) { return uint64_t{ceil_div(in.mad.m, 16)} * ceil_div(in.mad.n, 16) * 16 * 16 * 4; }

// The index buffer's address of an L0B address (a quarter: 128 index bytes per 512-byte fractal).
uint64_t index_addr(uint64_t l0b) { return l0b / 4; }

void exec_load2d_sparse(const Instr& in, IMemView& mem) {
    const Load2dParams& p = in.l2d;
    const uint64_t n = p.repeat, s = p.start_index;
    std::memcpy(mem.local(Pos::L0B, in.dst.addr, n * kFractalBytes),
                mem.local(in.src0.pos, in.src0.addr + s * kFractalBytes, n * kFractalBytes), n * kFractalBytes);
    const uint64_t ib = n * kSparseIndexFractalBytes;
    std::memcpy(mem.local(Pos::SPIDX, index_addr(in.dst.addr), ib),
                mem.local(in.src1.pos, in.src1.addr + s * kSparseIndexFractalBytes, ib), ib);
}

void exec_mad_sparse(const Instr& in, IMemView& mem) {
    const MadParams& p = in.mad;
    const uint32_t m1 = ceil_div(p.m, 16), n1 = ceil_div(p.n, 16), a_row = ceil_div(p.k, kK0), depth = mad_depth(in);
    const uint8_t* a = mem.local(in.src0.pos, in.src0.addr, a_bytes(in));
    const uint8_t* b = mem.local(in.src1.pos, in.src1.addr, b_fractals(in) * kFractalBytes);
    const uint8_t* idx =
        mem.local(Pos::SPIDX, index_addr(in.src1.addr), b_fractals(in) * kSparseIndexFractalBytes);
    uint8_t* c = mem.local(in.dst.pos, in.dst.addr, c_bytes(in));
    const uint8_t* bias = p.bias ? mem.local(in.src2.pos, in.src2.addr, uint64_t{n1} * 16 * 4) : nullptr;
    auto a_at = [&](uint32_t i, uint32_t kk) {
        return static_cast<int8_t>(a[zz_offset(i, kk, a_row * kK0, kK0, 1)]);
    };
    // Per column j of B: its dense values and the A column each multiplies.
    thread_local std::vector<int64_t> bv;
    thread_local std::vector<uint32_t> col;
    bv.resize(depth);
    col.resize(depth);
    for (uint32_t j = 0; j < n1 * 16; ++j) {
        uint32_t first = 0;
        for (uint32_t d = 0; d < depth; ++d) {
            const uint64_t o = zn_offset(d, j, n1 * 16, kK0, 1);
            bv[d] = static_cast<int8_t>(b[o]);
            const uint32_t v = (idx[o / 4] >> (2 * (o % 4))) & 3u;
            uint32_t pos;
            if (d % 2 == 0)
                pos = first = v;
            else
                pos = std::min(3u, std::max(first, v + 1));
            col[d] = 4 * (d / 2) + pos;
        }
        for (uint32_t i = 0; i < m1 * 16; ++i) {
            uint8_t* o = c + nz_offset(i, j, m1 * 16, 16, 4);
            int64_t acc = 0;
            if (p.accumulate)
                acc = static_cast<int64_t>(load_f64(DType::INT32, o));
            else if (bias)
                acc = static_cast<int64_t>(load_f64(DType::INT32, bias + j * 4));
            for (uint32_t d = 0; d < depth; ++d) acc += int64_t{a_at(i, col[d])} * bv[d];
            store_wrap(DType::INT32, o, acc);
        }
    }
}

}  // namespace

bool is_sparse(const Instr& in) {
    return (in.op == Opcode::LOAD2D && in.l2d.sparse) || (in.op == Opcode::MAD && in.mad.sparse);
}

std::string validate_sparse(const Instr& in) {
    if (in.op == Opcode::LOAD2D) {
        const Load2dParams& p = in.l2d;
        if (p.sparse > 1) return "load2d: sparse is 0 or 1";
        if (in.dtype != DType::INT8) return "sparse load2d: int8 only, not " + std::string(dtype_name(in.dtype));
        if (p.transpose || p.src_stride != 1 || p.dst_gap != 0 || p.frac_gap != 0)
            return "sparse load2d moves consecutive fractals only (srcstride 1, dstgap 0, no transpose)";
        if (in.src1.pos != Pos::L1) return bad_pos(in, "src1 (the sparse index)", in.src1.pos);
        if (in.dst.pos != Pos::L0B) return bad_pos(in, "dst of a sparse load2d", in.dst.pos);
        return "";
    }
    const MadParams& p = in.mad;
    if (p.sparse > 1) return "mad: sparse is 0 or 1";
    if (in.dtype != DType::INT8) return "sparse mad: int8 only, not " + std::string(dtype_name(in.dtype));
    if (p.gemv) return "sparse mad: no GEMV (the reference's MmadWithSparse has none)";
    if (p.k % 4 != 0) return "sparse mad: k " + std::to_string(p.k) + " is not a multiple of 4 (groups of four)";
    return "";
}

int footprint_sparse(const Instr& in, Extent out[kMaxExtents]) {
    if (in.op == Opcode::LOAD2D) {
        const uint64_t n = in.l2d.repeat, s = in.l2d.start_index;
        const uint64_t ib = kSparseIndexFractalBytes;
        out[0] = {in.src0.pos, in.src0.addr + s * kFractalBytes, in.src0.addr + (s + n) * kFractalBytes, false};
        out[1] = {in.src1.pos, in.src1.addr + s * ib, in.src1.addr + (s + n) * ib, false};
        out[2] = {in.dst.pos, in.dst.addr, in.dst.addr + n * kFractalBytes, true};
        out[3] = {Pos::SPIDX, index_addr(in.dst.addr), index_addr(in.dst.addr) + n * ib, true};
        return 4;
    }
    int n = 0;
    out[n++] = {in.src0.pos, in.src0.addr, in.src0.addr + a_bytes(in), false};
    out[n++] = {in.src1.pos, in.src1.addr, in.src1.addr + b_fractals(in) * kFractalBytes, false};
    out[n++] = {Pos::SPIDX, index_addr(in.src1.addr),
                index_addr(in.src1.addr) + b_fractals(in) * kSparseIndexFractalBytes, false};
    if (in.mad.bias) out[n++] = {in.src2.pos, in.src2.addr, in.src2.addr + ceil_div(in.mad.n, 16) * 64ull, false};
    out[n++] = {in.dst.pos, in.dst.addr, in.dst.addr + c_bytes(in), true};
    return n;
}

void exec_sparse(const Instr& in, IMemView& mem) {
    if (in.op == Opcode::LOAD2D)
        exec_load2d_sparse(in, mem);
    else
        exec_mad_sparse(in, mem);
}

}  // namespace sfumato::isa::detail
