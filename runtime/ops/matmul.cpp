// Reference matmul C (m x n) = A (m x k) x B (k x n), fp16 or bf16 inputs, fp32 accumulation,
// fp32 output by default (or cast to fp16/bf16): the canonical cube kernel. A and B are
// row-major (ND) in GM and MTE2 converts them to NZ while loading k chunks into L1 (A1/B1
// queues), or (coupled parts' default) already NZ in GM and loaded as contiguous runs;
// MTE1 moves base_k steps into L0A as zZ and into L0B as zN (load2d with per-fractal
// transpose), the Cube accumulates a base_m x base_n tile in L0C (CO1 queue), and the tile is
// drained: on split parts by the FixPipe straight to GM (NZ -> ND, cast), on coupled parts by
// the vector pipe into UB (CO2 queue) and MTE3 to GM. L1 and L0A/L0B have two buffers, so loads
// of the next step overlap the current mad (the next chunk's L1 load is issued before the
// current chunk's moves and mads, across tiles too); with two L0C buffers (the tiling's choice)
// the drain of one tile overlaps the next tile, with one the next tile's first mad waits for it.
// Tiling: runtime/ops/matmul_tiling.h. Checked against a host reference (see check()).
#include "runtime/ops/matmul.h"

#include <cmath>
#include <cstring>
#include <random>

#include "isa/layout.h"
#include "runtime/kernel/api.h"
#include "runtime/ops/i_op.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

constexpr uint32_t kFractalElems = 256;  // one 512-B fractal of 16-bit elements

// rows x cols of a row-major matrix (row stride src_d elements) into L1 as NZ with rows_pad
// rows per column group: one ND2NZ instruction, or (on parts whose MTE2 cannot convert) one
// strided burst copy per 16-column group, each row a burst padded with zeros to 32 B.
template <class T>
void load_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols,
             uint32_t src_d, uint32_t rows_pad, bool nd2nz_instr) {
    if (nd2nz_instr) {
        DataCopy(dst, src,
                 Nd2NzParams{1, static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), 0, src_d,
                             static_cast<uint16_t>(rows_pad), 1, 0});
        return;
    }
    constexpr uint32_t c0 = 32 / sizeof(T);
    for (uint32_t g = 0; g * c0 < cols; ++g) {
        const uint32_t w = std::min(c0, cols - g * c0);
        DataCopyPad(dst[g * rows_pad * c0], src[g * c0],
                    DataCopyExtParams{rows, w * uint32_t{sizeof(T)}, (src_d - w) * uint32_t{sizeof(T)}, 0});
    }
}

// Rows [r0, r0 + rows_pad) of column groups [c0 / 16, c0 / 16 + groups) of an NZ matrix with
// `rows` rows in GM into L1 as NZ with rows_pad rows per group: one burst per column group.
template <class T>
void load_from_nz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t r0,
                  uint32_t c0, uint32_t groups, uint32_t rows_pad) {
    constexpr uint32_t c0_bytes = 32;  // one fractal row of 16-bit elements
    const uint32_t total = (rows + 15) / 16 * 16;
    DataCopyPad(dst, src[nz_index(rows, r0, c0)],
                DataCopyExtParams{groups, rows_pad * c0_bytes, (total - rows_pad) * c0_bytes, 0});
}

template <class T, class U>
void matmul_kernel(isa::IInstrSink& sink, const MatmulPlan& p) {
    KernelContext ctx(sink);
    const MatmulTiling& t = p.t;
    const bool coupled = ctx.sink().core_kind() == isa::CoreKind::Coupled;
    const uint32_t es = sizeof(T), eo = sizeof(U);
    TPipe pipe(ctx);
    TQue<TPosition::A1> qa1;
    TQue<TPosition::B1> qb1;
    TQue<TPosition::A2> qa2;
    TQue<TPosition::B2> qb2;
    TQue<TPosition::CO1> qc1;
    TQue<TPosition::CO2> qc2;
    pipe.InitBuffer(qa1, t.buffers, static_cast<uint32_t>(t.a1_bytes(es)));
    pipe.InitBuffer(qb1, t.buffers, static_cast<uint32_t>(t.b1_bytes(es)));
    pipe.InitBuffer(qa2, t.buffers, static_cast<uint32_t>(t.a2_bytes(es)));
    pipe.InitBuffer(qb2, t.buffers, static_cast<uint32_t>(t.b2_bytes(es)));
    pipe.InitBuffer(qc1, t.l0c_buffers, static_cast<uint32_t>(t.c1_bytes()));
    if (coupled) pipe.InitBuffer(qc2, t.l0c_buffers, static_cast<uint32_t>(t.c2_bytes(eo)));
    GlobalTensor<T> ga, gb;
    GlobalTensor<U> gc;
    ga.SetGlobalBuffer(p.a, t.gm_nz ? nz_elems(t.m, t.k) : uint64_t{t.m} * t.k);
    gb.SetGlobalBuffer(p.b, t.gm_nz ? nz_elems(t.k, t.n) : uint64_t{t.k} * t.n);
    gc.SetGlobalBuffer(p.c, uint64_t{t.m} * t.n);

    // One step = one k chunk of one output tile. The L1 loads of the next step are issued
    // before the current step's L1 -> L0 moves and mads (across tiles too), so MTE2 fills the
    // second L1 buffer while the cube works on the first and a tile starts without a load bubble.
    struct Step {
        uint32_t tile = 0, k0 = 0;
        uint32_t m0 = 0, n0 = 0, tm = 0, tn = 0, kc = 0;
    };
    auto at = [&](uint32_t tile, uint32_t k0) {
        Step s;
        s.tile = tile, s.k0 = k0;
        if (tile >= t.tiles()) return s;
        s.m0 = tile / t.tiles_n * t.base_m, s.n0 = tile % t.tiles_n * t.base_n;
        s.tm = std::min(t.base_m, t.m - s.m0), s.tn = std::min(t.base_n, t.n - s.n0);
        s.kc = std::min(t.k_l1, t.k - k0);
        return s;
    };
    auto next = [&](const Step& s) {
        return s.k0 + t.k_l1 < t.k ? at(s.tile, s.k0 + t.k_l1) : at(s.tile + ctx.block_num(), 0);
    };
    auto load = [&](const Step& s) {
        ctx.scalar(4);  // tile coordinates
        const uint32_t m_pad = isa::ceil_div(s.tm, 16) * 16, k_pad = isa::ceil_div(s.kc, 16) * 16;
        LocalTensor<T> a1 = qa1.AllocTensor<T>();
        if (t.gm_nz)
            load_from_nz(a1, ga, t.m, s.m0, s.k0, k_pad / 16, m_pad);
        else
            load_nz(a1, ga[uint64_t{s.m0} * t.k + s.k0], s.tm, s.kc, t.k, m_pad, t.nd2nz_instr);
        qa1.EnQue(a1);
        LocalTensor<T> b1 = qb1.AllocTensor<T>();
        if (t.gm_nz)
            load_from_nz(b1, gb, t.k, s.k0, s.n0, isa::ceil_div(s.tn, 16), k_pad);
        else
            load_nz(b1, gb[uint64_t{s.k0} * t.n + s.n0], s.kc, s.tn, t.n, k_pad, t.nd2nz_instr);
        qb1.EnQue(b1);
    };
    Step cur = at(ctx.block_idx(), 0);
    if (cur.tile < t.tiles()) load(cur);
    LocalTensor<float> c;
    for (; cur.tile < t.tiles(); cur = next(cur)) {
        ctx.scalar(2);
        const Step nx = next(cur);
        if (nx.tile < t.tiles()) load(nx);
        const uint32_t m0 = cur.m0, n0 = cur.n0, tm = cur.tm, tn = cur.tn, k0 = cur.k0, kc = cur.kc;
        const uint32_t m1 = isa::ceil_div(tm, 16), n1 = isa::ceil_div(tn, 16);
        if (k0 == 0) c = qc1.AllocTensor<float>();
        {
            const uint32_t kr1 = isa::ceil_div(kc, 16);
            LocalTensor<T> a1 = qa1.DeQue<T>();
            LocalTensor<T> b1 = qb1.DeQue<T>();
            for (uint32_t ks = 0; ks < kc; ks += t.base_k) {
                ctx.scalar(2);
                const uint32_t kk = std::min(t.base_k, kc - ks), k1 = isa::ceil_div(kk, 16), kb0 = ks / 16;
                // A: NZ column group kb holds the m1 fractals of rows; zZ wants them row-major.
                LocalTensor<T> a2 = qa2.AllocTensor<T>();
                for (uint32_t kb = 0; kb < k1; ++kb)
                    LoadData(
                        a2[kb * kFractalElems], a1,
                        LoadData2DParams{static_cast<uint16_t>((kb0 + kb) * m1), static_cast<uint16_t>(m1), 1,
                                         static_cast<uint16_t>(k1 - 1), false});
                qa2.EnQue(a2);
                // B: NZ fractal (kb, nb) at nb * kr1 + kb; zN wants (kb, nb) row-major, transposed.
                LocalTensor<T> b2 = qb2.AllocTensor<T>();
                for (uint32_t kb = 0; kb < k1; ++kb)
                    LoadData(b2[kb * n1 * kFractalElems], b1,
                             LoadData2DParams{static_cast<uint16_t>(kb0 + kb), static_cast<uint16_t>(n1),
                                              static_cast<uint16_t>(kr1), 0, true});
                qb2.EnQue(b2);
                a2 = qa2.DeQue<T>();
                b2 = qb2.DeQue<T>();
                Mmad(c, a2, b2,
                     MmadParams{static_cast<uint16_t>(tm), static_cast<uint16_t>(tn),
                                static_cast<uint16_t>(kk), k0 + ks == 0});
                qa2.FreeTensor(a2);
                qb2.FreeTensor(b2);
            }
            qa1.FreeTensor(a1);
            qb1.FreeTensor(b1);
        }
        if (k0 + kc < t.k) continue;
        qc1.EnQue(c);
        c = qc1.DeQue<float>();
        const GlobalTensor<U> out = gc[uint64_t{m0} * t.n + n0];
        if (!coupled) {
            Fixpipe(out, c,
                    FixpipeParams{static_cast<uint16_t>(tn), static_cast<uint16_t>(tm),
                                  static_cast<uint16_t>(m1 * 16), t.n});
            qc1.FreeTensor(c);
            continue;
        }
        const uint32_t row = MatmulTiling::ub_row(tn, eo);
        LocalTensor<U> c2 = qc2.AllocTensor<U>();
        DataCopy(c2, c,
                 FixpipeParams{static_cast<uint16_t>(tn), static_cast<uint16_t>(tm),
                               static_cast<uint16_t>(m1 * 16), row});
        qc2.EnQue(c2);
        qc1.FreeTensor(c);
        c2 = qc2.DeQue<U>();
        DataCopyPad(out, c2, DataCopyExtParams{tm, tn * eo, 0, (t.n - tn) * eo});
        qc2.FreeTensor(c2);
    }
}

}  // namespace

void run_matmul_kernel(isa::IInstrSink& sink, const MatmulPlan& plan, isa::DType in, isa::DType out) {
    const bool f32 = out == isa::DType::FP32, f16 = out == isa::DType::FP16;
    if (in == isa::DType::FP16) {
        if (f32)
            matmul_kernel<half, float>(sink, plan);
        else if (f16)
            matmul_kernel<half, half>(sink, plan);
        else
            matmul_kernel<half, bfloat16>(sink, plan);
    } else {
        if (f32)
            matmul_kernel<bfloat16, float>(sink, plan);
        else if (f16)
            matmul_kernel<bfloat16, half>(sink, plan);
        else
            matmul_kernel<bfloat16, bfloat16>(sink, plan);
    }
}

namespace {

// Unit roundoff of an output type (0 for fp32: the accumulator is already fp32).
double out_roundoff(isa::DType t) {
    return t == isa::DType::FP16 ? 0x1p-11 : t == isa::DType::BF16 ? 0x1p-8 : 0.0;
}

// A row-major rows x cols matrix of es-byte elements as NZ (zero padding).
std::vector<uint8_t> to_nz(const std::vector<uint8_t>& nd, uint32_t rows, uint32_t cols, uint32_t es) {
    std::vector<uint8_t> nz(nz_elems(rows, cols) * es, 0);
    for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < cols; ++j)
            std::memcpy(&nz[nz_index(rows, i, j) * es], &nd[(uint64_t{i} * cols + j) * es], es);
    return nz;
}

class MatmulOp : public IOp {
public:
    MatmulOp(const OpArgs& a, const DeviceInfo& dev) : m_dev(dev) {
        const uint32_t m = static_cast<uint32_t>(arg_u64(a, "matmul", "m", 1, 65535));
        const uint32_t n = static_cast<uint32_t>(arg_u64(a, "matmul", "n", 1, 65535));
        const uint32_t k = static_cast<uint32_t>(arg_u64(a, "matmul", "k", 1, 65535));
        if (!isa::parse_dtype(arg_str(a, "dtype"), m_in) ||
            (m_in != isa::DType::FP16 && m_in != isa::DType::BF16))
            throw InputError("operator 'matmul': argument 'dtype' = '" + arg_str(a, "dtype") +
                             "' (valid: fp16, bf16)");
        if (!isa::parse_dtype(arg_str(a, "out_dtype"), m_out) ||
            (m_out != isa::DType::FP32 && m_out != isa::DType::FP16 && m_out != isa::DType::BF16))
            throw InputError("operator 'matmul': argument 'out_dtype' = '" + arg_str(a, "out_dtype") +
                             "' (valid: fp32, fp16, bf16)");
        const uint32_t bd = static_cast<uint32_t>(arg_u64(a, "matmul", "block_dim", 0, 65535));
        m_plan.t = plan_matmul(m, n, k, isa::dtype_size(m_in), isa::dtype_size(m_out), dev, bd);
        const std::string nd = arg_str(a, "nd2nz");
        if (nd == "instr")
            m_plan.t.nd2nz_instr = true;
        else if (nd == "burst")
            m_plan.t.nd2nz_instr = false;
        else if (nd != "auto")
            throw InputError("operator 'matmul': argument 'nd2nz' = '" + nd +
                             "' (valid: auto, instr, burst)");
        const std::string lay = arg_str(a, "layout");
        if (lay == "nz")
            m_plan.t.gm_nz = true;
        else if (lay == "nd")
            m_plan.t.gm_nz = false;
        else if (lay != "auto")
            throw InputError("operator 'matmul': argument 'layout' = '" + lay + "' (valid: auto, nd, nz)");
    }

    void prepare(rt::Runtime& rt) override {
        const MatmulTiling& t = m_plan.t;
        const uint32_t es = isa::dtype_size(m_in);
        const uint64_t a_bytes = uint64_t{t.m} * t.k * es, b_bytes = uint64_t{t.k} * t.n * es;
        const uint64_t a_gm = t.gm_nz ? nz_elems(t.m, t.k) * es : a_bytes;
        const uint64_t b_gm = t.gm_nz ? nz_elems(t.k, t.n) * es : b_bytes;
        m_plan.a = rt.malloc(a_gm);
        m_plan.b = rt.malloc(b_gm);
        m_plan.c = rt.malloc(uint64_t{t.m} * t.n * isa::dtype_size(m_out));
        std::vector<uint8_t> a_up, b_up;  // what goes to GM: ND as is, or rearranged to NZ
        if (rt.functional()) {
            std::mt19937 gen(2024);
            std::uniform_real_distribution<float> d(-1.0f, 1.0f);
            m_a.resize(a_bytes);
            m_b.resize(b_bytes);
            for (uint64_t i = 0; i < a_bytes / es; ++i)
                isa::store_from_f32(m_in, m_a.data() + i * es, d(gen));
            for (uint64_t i = 0; i < b_bytes / es; ++i)
                isa::store_from_f32(m_in, m_b.data() + i * es, d(gen));
            a_up = t.gm_nz ? to_nz(m_a, t.m, t.k, es) : m_a;
            b_up = t.gm_nz ? to_nz(m_b, t.k, t.n, es) : m_b;
        }
        rt.memcpy_h2d(m_plan.a, rt.functional() ? a_up.data() : nullptr, a_gm);
        rt.memcpy_h2d(m_plan.b, rt.functional() ? b_up.data() : nullptr, b_gm);
    }

    std::vector<KernelDesc> kernels() const override {
        const MatmulTiling& t = m_plan.t;
        KernelDesc kd;
        kd.name = "matmul";
        kd.type = "MatMul";
        kd.block_dim = t.block_dim;
        kd.kind = KernelKind::Cube;
        const MatmulPlan plan = m_plan;
        const isa::DType in = m_in, out = m_out;
        kd.body = [plan, in, out](isa::IInstrSink& s) { run_matmul_kernel(s, plan, in, out); };
        kd.flops = 2.0 * t.m * t.n * t.k;
        kd.bytes = (uint64_t{t.m} * t.k + uint64_t{t.k} * t.n) * isa::dtype_size(m_in) +
                   uint64_t{t.m} * t.n * isa::dtype_size(m_out);
        // Cube fractal steps (16 x K0 x 16 blocks, K0 = 16 for 16-bit inputs) at the chip's peak:
        // every cube core (KernelDesc::min_compute_cycles).
        const double steps =
            static_cast<double>(isa::ceil_div(t.m, 16)) * isa::ceil_div(t.k, 16) * isa::ceil_div(t.n, 16);
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        return {kd};
    }

    // Reference: the exact (double) sum of products of the rounded inputs. Tolerance, per
    // element: the chip rounds the accumulator to fp32 once per mad (ceil(k / base_k) times),
    // each time by at most 2^-24 of a partial sum bounded by S = sum |a_ik * b_kj|, so
    // |err| <= 2 * steps * 2^-24 * S (factor 2 for slack), plus the output cast: u * |ref|
    // with u the output's unit roundoff (0 for fp32), plus half the output's smallest subnormal.
    CheckResult check(rt::Runtime& rt) override {
        CheckResult r;
        const MatmulTiling& t = m_plan.t;
        const uint32_t es = isa::dtype_size(m_in), eo = isa::dtype_size(m_out);
        std::vector<uint8_t> c(uint64_t{t.m} * t.n * eo);
        rt.memcpy_d2h(rt.functional() ? c.data() : nullptr, m_plan.c, c.size());
        if (!rt.functional()) return r;
        r.checked = true;
        std::vector<double> a(uint64_t{t.m} * t.k), b(uint64_t{t.k} * t.n);
        for (size_t i = 0; i < a.size(); ++i) a[i] = isa::load_as_f32(m_in, m_a.data() + i * es);
        for (size_t i = 0; i < b.size(); ++i) b[i] = isa::load_as_f32(m_in, m_b.data() + i * es);
        const double steps = isa::ceil_div(t.k, t.base_k);
        const double u = out_roundoff(m_out);
        const double tiny = m_out == isa::DType::FP16 ? 0x1p-25 : 0x1p-150;
        std::vector<double> ref(t.n), sabs(t.n);
        for (uint32_t i = 0; i < t.m; ++i) {
            std::fill(ref.begin(), ref.end(), 0.0);
            std::fill(sabs.begin(), sabs.end(), 0.0);
            for (uint32_t kk = 0; kk < t.k; ++kk) {
                const double x = a[uint64_t{i} * t.k + kk];
                const double* brow = &b[uint64_t{kk} * t.n];
                for (uint32_t j = 0; j < t.n; ++j) ref[j] += x * brow[j], sabs[j] += std::fabs(x * brow[j]);
            }
            for (uint32_t j = 0; j < t.n; ++j) {
                const double got = isa::load_as_f32(m_out, c.data() + (uint64_t{i} * t.n + j) * eo);
                const double err = std::fabs(got - ref[j]);
                const double tol = 2.0 * steps * 0x1p-24 * sabs[j] + u * std::fabs(ref[j]) + tiny;
                r.max_abs_err = std::max(r.max_abs_err, err);
                if (std::fabs(ref[j]) > 1e-3)
                    r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(ref[j]));
                if (!(err <= tol)) r.passed = false;
            }
        }
        return r;
    }

    void release(rt::Runtime& rt) override {
        rt.free(m_plan.a);
        rt.free(m_plan.b);
        rt.free(m_plan.c);
    }

private:
    DeviceInfo m_dev;
    isa::DType m_in = isa::DType::FP16, m_out = isa::DType::FP32;
    MatmulPlan m_plan;
    std::vector<uint8_t> m_a, m_b;
};

}  // namespace

SFUMATO_REGISTER_OP(matmul,
                    OpSpec{"matmul",
                           "C = A x B (fp16/bf16 in, fp32 accumulate; cube kernel on all blocks)",
                           {{"m", "", "rows of A and C"},
                            {"n", "", "columns of B and C"},
                            {"k", "", "columns of A, rows of B"},
                            {"dtype", "fp16", "input type: fp16 | bf16"},
                            {"out_dtype", "fp32", "output type: fp32 | fp16 | bf16"},
                            {"block_dim", "0", "logical blocks (0 = output tiles, up to the cube cores)"},
                            {"nd2nz", "auto",
                             "ND->NZ loads: instr (MTE2 ND2NZ) | burst (a strided copy per 16 columns) | "
                             "auto (instr on split parts)"},
                            {"layout", "auto",
                             "A and B in GM: nd (row-major, converted while loading) | nz (FRACTAL_NZ, "
                             "contiguous loads) | auto (nz on coupled parts, nd on split)"}},
                           [](const OpArgs& a, const DeviceInfo& d) {
                               return std::make_unique<MatmulOp>(a, d);
                           }});

}  // namespace sfumato::ops
