// The reference matmul as `sfumato kernel matmul` runs it: batch x (C (m x n) = A (m x k) x
// B (k x n)), A and/or B optionally stored transposed, fp16/bf16/fp32 inputs with fp32
// accumulation (fp32 output by default, or cast to fp16/bf16) or int8 inputs with int32
// results, random inputs from a fixed seed, checked against a host reference with a derived
// tolerance. The device kernel is the library's cube matmul (runtime/ops/cube_matmul.h: L1 and
// L0A/L0B double buffered, the next chunk's L1 load issued before the current chunk's mads,
// FixPipe drain on split parts, vector-pipe drain into UB and MTE3 on coupled ones); operands
// row-major in GM, or (coupled parts' default for 16-bit, untransposed, unbatched) FRACTAL_NZ
// loaded as contiguous runs. Tiling and tile order: runtime/ops/matmul_tiling.h.
#include "runtime/ops/matmul.h"

#include <cmath>
#include <cstring>
#include <random>

#include "isa/layout.h"
#include "runtime/ops/cube_epilogue.h"
#include "runtime/ops/host_memory.h"
#include "runtime/ops/i_op.h"
#include "sim/error.h"

namespace sfumato::ops {

void run_matmul_kernel(isa::IInstrSink& sink, const MatmulPlan& plan, isa::DType in, isa::DType out) {
    CubeMatmulPlan p;
    p.t = plan.t;
    p.in = in, p.out = out;
    p.a = plan.a, p.b = plan.b, p.c = plan.c;
    if (plan.t.two_pass()) p.c = plan.ws, p.out = isa::DType::FP32, p.c_part_stride = matmul_c_elems(plan.t);
    p.lda = plan.t.trans_a ? plan.t.m : plan.t.k;
    p.ldb = plan.t.trans_b ? plan.t.k : plan.t.n;
    p.ldc = plan.t.n;
    if (plan.t.batch > 1) {
        p.bdims = {plan.t.batch};
        p.a_bs = {uint64_t{plan.t.m} * plan.t.k}, p.b_bs = {uint64_t{plan.t.k} * plan.t.n};
        p.c_bs = {uint64_t{plan.t.m} * plan.t.n};
    }
    run_cube_matmul(sink, p);
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
        MatmulProblem pr;
        pr.m = m, pr.n = n, pr.k = k;
        pr.batch = static_cast<uint32_t>(arg_u64(a, "matmul", "batch", 1, 65535));
        pr.trans_a = arg_u64(a, "matmul", "trans_a", 0, 1) != 0;
        pr.trans_b = arg_u64(a, "matmul", "trans_b", 0, 1) != 0;
        if (!isa::parse_dtype(arg_str(a, "dtype"), m_in) ||
            (m_in != isa::DType::FP16 && m_in != isa::DType::BF16 && m_in != isa::DType::FP32 &&
             m_in != isa::DType::INT8))
            throw InputError("operator 'matmul': argument 'dtype' = '" + arg_str(a, "dtype") +
                             "' (valid: fp16, bf16, fp32, int8)");
        const std::string od = arg_str(a, "out_dtype");
        if (od == "auto")
            m_out = m_in == isa::DType::INT8 ? isa::DType::INT32 : isa::DType::FP32;
        else if (!isa::parse_dtype(od, m_out) ||
                 (m_in == isa::DType::INT8 ? m_out != isa::DType::INT32
                                            : m_out != isa::DType::FP32 && m_out != isa::DType::FP16 &&
                                                  m_out != isa::DType::BF16))
            throw InputError("operator 'matmul': argument 'out_dtype' = '" + od +
                             (m_in == isa::DType::INT8 ? "' (valid for int8 inputs: int32)"
                                                       : "' (valid: fp32, fp16, bf16)"));
        pr.in_es = isa::dtype_size(m_in), pr.out_es = isa::dtype_size(m_out);
        const uint32_t bd = static_cast<uint32_t>(arg_u64(a, "matmul", "block_dim", 0, 65535));
        pr.k_split = static_cast<uint32_t>(arg_u64(a, "matmul", "k_split", 0, 65535));
        const std::string sm = arg_str(a, "split_k_mode");
        if (!parse_split_k_mode(sm, pr.split_mode))
            throw InputError("operator 'matmul': argument 'split_k_mode' = '" + sm + "' (valid: atomic, two-pass)");
        // int32 sums are exact: atomic adds give the same bits in any order.
        if (m_in == isa::DType::INT8) pr.split_mode = SplitKMode::Atomic;
        m_plan.t = plan_matmul(pr, dev, bd);
        if (const uint64_t g = arg_u64(a, "matmul", "group_m", 0, 65535)) {
            m_plan.t.group_m = static_cast<uint32_t>(g);
            m_plan.t.group_n = static_cast<uint32_t>(arg_u64(a, "matmul", "group_n", 0, 65535));
            choose_k_rotation(m_plan.t, pr.in_es, pr.out_es, dev);
        }
        if (const uint64_t r = arg_u64(a, "matmul", "k_rotate", 0, 65535)) m_plan.t.k_rot = static_cast<uint32_t>(r);
        const std::string nd = arg_str(a, "nd2nz");
        if (nd == "instr")
            m_plan.t.nd2nz_instr = true;
        else if (nd == "burst")
            m_plan.t.nd2nz_instr = false;
        else if (nd != "auto")
            throw InputError("operator 'matmul': argument 'nd2nz' = '" + nd +
                             "' (valid: auto, instr, burst)");
        const std::string lay = arg_str(a, "layout");
        const bool nz_ok = pr.in_es == 2 && pr.batch == 1;
        if (lay == "nz") {
            if (!nz_ok)
                throw InputError(
                    "operator 'matmul': argument 'layout' = 'nz' needs 16-bit inputs and batch 1");
            m_plan.t.gm_nz = true;
        } else if (lay == "nd") {
            m_plan.t.gm_nz = false;
        } else if (lay != "auto") {
            throw InputError("operator 'matmul': argument 'layout' = '" + lay + "' (valid: auto, nd, nz)");
        }
        const std::string pf = arg_str(a, "l2_prefetch");
        if (pf != "auto" && pf != "off")
            throw InputError("operator 'matmul': argument 'l2_prefetch' = '" + pf + "' (valid: auto, off)");
        // After the overrides above: the marks follow the tile order and k rotation.
        choose_l2_prefetch(m_plan.t, pr.in_es, pr.out_es, dev, pf == "off");
        const std::string bal = arg_str(a, "split_k_balance");
        if (bal != "auto" && bal != "off")
            throw InputError("operator 'matmul': argument 'split_k_balance' = '" + bal + "' (valid: auto, off)");
        // After the prefetch choice, which settles the launch kind (MIX or not).
        choose_balance(m_plan.t, pr.in_es, pr.out_es, dev, bal == "off");
    }

    void prepare(rt::Runtime& rt) override {
        const MatmulTiling& t = m_plan.t;
        const uint32_t es = isa::dtype_size(m_in);
        const uint64_t a_bytes = uint64_t{t.batch} * t.m * t.k * es, b_bytes = uint64_t{t.batch} * t.k * t.n * es;
        // NZ of the matrices as stored: A k x m when transposed, B n x k.
        const uint32_t ar = t.trans_a ? t.k : t.m, ac = t.trans_a ? t.m : t.k;
        const uint32_t br = t.trans_b ? t.n : t.k, bc = t.trans_b ? t.k : t.n;
        const uint64_t a_gm = t.gm_nz ? nz_elems(ar, ac) * es : a_bytes;
        const uint64_t b_gm = t.gm_nz ? nz_elems(br, bc) * es : b_bytes;
        if (rt.functional()) {
            // A and B on the host, the copies uploaded, their device image, C's image and its
            // copy back, and the reference's A and B as doubles.
            const uint64_t c_bytes = uint64_t{t.batch} * t.m * t.n * isa::dtype_size(m_out);
            const uint64_t ab = a_bytes + b_bytes;
            require_host_memory("kernel matmul " + std::to_string(t.m) + "x" + std::to_string(t.n) + "x" + std::to_string(t.k),
                                2 * ab + a_gm + b_gm + 2 * c_bytes + ab / es * 8);
        }
        m_plan.a = rt.malloc(a_gm);
        m_plan.b = rt.malloc(b_gm);
        m_plan.c = rt.malloc(uint64_t{t.batch} * t.m * t.n * isa::dtype_size(m_out));
        if (t.two_pass()) m_plan.ws = rt.malloc(uint64_t{t.k_split} * matmul_c_elems(t) * 4);
        std::vector<uint8_t> a_up, b_up;  // what goes to GM: ND as is, or rearranged to NZ
        if (rt.functional()) {
            std::mt19937 gen(2024);
            std::uniform_real_distribution<float> d(-1.0f, 1.0f);
            std::uniform_int_distribution<int> di(-128, 127);
            auto fill = [&](std::vector<uint8_t>& v, uint64_t bytes) {
                v.resize(bytes);
                for (uint64_t i = 0; i < bytes / es; ++i)
                    isa::store_from_f32(m_in, v.data() + i * es,
                                        m_in == isa::DType::INT8 ? static_cast<float>(di(gen)) : d(gen));
            };
            fill(m_a, a_bytes);
            fill(m_b, b_bytes);
            a_up = t.gm_nz ? to_nz(m_a, ar, ac, es) : m_a;
            b_up = t.gm_nz ? to_nz(m_b, br, bc, es) : m_b;
        }
        rt.memcpy_h2d(m_plan.a, rt.functional() ? a_up.data() : nullptr, a_gm);
        rt.memcpy_h2d(m_plan.b, rt.functional() ? b_up.data() : nullptr, b_gm);
    }

    std::vector<KernelDesc> kernels() const override {
        const MatmulTiling& t = m_plan.t;
        KernelDesc kd;
        kd.name = t.k_split > 1 ? "matmul [split-K " + std::to_string(t.k_split) + "]" : "matmul";
        kd.type = "MatMul";
        kd.block_dim = t.block_dim;
        // MIX when the AIVs read ahead into L2 (MatmulTiling::pf_ahead).
        kd.kind = t.pf_ahead ? KernelKind::Mix : KernelKind::Cube;
        const MatmulPlan plan = m_plan;
        const isa::DType in = m_in, out = m_out;
        kd.body = [plan, in, out](isa::IInstrSink& s) { run_matmul_kernel(s, plan, in, out); };
        kd.args_bytes = sizeof(MatmulPlan);  // the GM pointers and tiling the kernel is passed
        kd.flops = 2.0 * t.batch * t.m * t.n * t.k;
        kd.bytes = uint64_t{t.batch} * ((uint64_t{t.m} * t.k + uint64_t{t.k} * t.n) * isa::dtype_size(m_in) +
                                        uint64_t{t.m} * t.n * isa::dtype_size(m_out));
        // Cube fractal steps (16 x K0 x 16 blocks) at the chip's peak: every cube core
        // (KernelDesc::min_compute_cycles).
        const uint32_t k0 = m_dev.cube_depth_of(isa::dtype_size(m_in));  // per-type depth per cycle
        const double steps = double(t.batch) * isa::ceil_div(t.m, 16) * isa::ceil_div(t.k, k0) * isa::ceil_div(t.n, 16);
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        if (!t.two_pass()) return {kd};
        // Two-pass split-K: the cube kernel writes the partial sums, the reduction makes C.
        kd.name = "matmul [split-K " + std::to_string(t.k_split) + ", two-pass]";
        kd.bytes = uint64_t{t.batch} * (uint64_t{t.m} * t.k + uint64_t{t.k} * t.n) * isa::dtype_size(m_in) +
                   uint64_t{t.k_split} * matmul_c_elems(t) * 4;
        EpiloguePlan e;
        e.x = m_plan.ws, e.y = m_plan.c, e.y_dtype = m_out, e.n = matmul_c_elems(t);
        e.parts = t.k_split, e.part_stride = matmul_c_elems(t);
        return {kd, epilogue_kernel(e, m_dev, "matmul [split-K reduction]", "MatMul")};
    }

    // Reference: the exact (double) sum of products of the rounded inputs. Tolerance, per
    // element: the chip rounds the accumulator to fp32 once per mad (ceil(k / base_k) times),
    // each time by at most 2^-24 of a partial sum bounded by S = sum |a_ik * b_kj|, so
    // |err| <= 2 * steps * 2^-24 * S (factor 2 for slack), plus the output cast: u * |ref|
    // with u the output's unit roundoff (0 for fp32), plus half the output's smallest subnormal.
    // int8 inputs accumulate exactly in int32.
    CheckResult check(rt::Runtime& rt) override {
        CheckResult r;
        const MatmulTiling& t = m_plan.t;
        const uint32_t es = isa::dtype_size(m_in), eo = isa::dtype_size(m_out);
        if (!rt.functional()) {  // the copy is timed; timing mode has no data to hold
            rt.memcpy_d2h(nullptr, m_plan.c, uint64_t{t.batch} * t.m * t.n * eo);
            return r;
        }
        std::vector<uint8_t> c(uint64_t{t.batch} * t.m * t.n * eo);
        rt.memcpy_d2h(c.data(), m_plan.c, c.size());
        r.checked = true;
        const bool exact = m_in == isa::DType::INT8;
        const double steps = isa::ceil_div(t.k, t.base_k);
        const double u = out_roundoff(m_out);
        const double part_u = t.two_pass() ? 0x1p-24 : u;
        const double tiny = exact ? 0.0 : m_out == isa::DType::FP16 ? 0x1p-25 : 0x1p-150;
        std::vector<double> a(m_a.size() / es), b(m_b.size() / es);
        for (size_t i = 0; i < a.size(); ++i) a[i] = isa::load_as_f32(m_in, m_a.data() + i * es);
        for (size_t i = 0; i < b.size(); ++i) b[i] = isa::load_as_f32(m_in, m_b.data() + i * es);
        const uint64_t sa = uint64_t{t.m} * t.k, sb = uint64_t{t.k} * t.n;
        std::vector<double> ref(t.n), sabs(t.n);
        for (uint32_t bt = 0; bt < t.batch; ++bt)
            for (uint32_t i = 0; i < t.m; ++i) {
                std::fill(ref.begin(), ref.end(), 0.0);
                std::fill(sabs.begin(), sabs.end(), 0.0);
                for (uint32_t kk = 0; kk < t.k; ++kk) {
                    const double x = a[bt * sa + (t.trans_a ? uint64_t{kk} * t.m + i : uint64_t{i} * t.k + kk)];
                    for (uint32_t j = 0; j < t.n; ++j) {
                        const double y = b[bt * sb + (t.trans_b ? uint64_t{j} * t.k + kk : uint64_t{kk} * t.n + j)];
                        ref[j] += x * y, sabs[j] += std::fabs(x * y);
                    }
                }
                for (uint32_t j = 0; j < t.n; ++j) {
                    const uint64_t at = (uint64_t{bt} * t.m + i) * t.n + j;
                    const double got = m_out == isa::DType::INT32 ? load_i32(c.data() + at * 4)
                                                                  : isa::load_as_f32(m_out, c.data() + at * eo);
                    const double err = std::fabs(got - ref[j]);
                    // Split-K: each part's sum is rounded to the output type and added into C
                    // with one more rounding (2 u per part, of at most sabs); two-pass: the fp32
                    // partial sums are added in fp32 (2^-24 per part), then cast once.
                    const double tol = exact ? 0.0
                                             : 2.0 * steps * 0x1p-24 * sabs[j] + u * std::fabs(ref[j]) + tiny +
                                                   (t.k_split > 1 ? 2.0 * t.k_split * part_u * sabs[j] : 0.0);
                    r.max_abs_err = std::max(r.max_abs_err, err);
                    if (std::fabs(ref[j]) > 1e-3) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(ref[j]));
                    if (!(err <= tol)) r.passed = false;
                }
            }
        return r;
    }

    void release(rt::Runtime& rt) override {
        rt.free(m_plan.a);
        rt.free(m_plan.b);
        rt.free(m_plan.c);
        if (m_plan.ws) rt.free(m_plan.ws);
    }

private:
    static double load_i32(const uint8_t* p) {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    DeviceInfo m_dev;
    isa::DType m_in = isa::DType::FP16, m_out = isa::DType::FP32;
    MatmulPlan m_plan;
    std::vector<uint8_t> m_a, m_b;
};

}  // namespace

SFUMATO_REGISTER_OP(matmul,
                    OpSpec{"matmul",
                           "C = A x B, batched (fp16/bf16/fp32/int8 in, fp32/int32 accumulate; cube kernel on all "
                           "blocks)",
                           {{"m", "", "rows of A and C"},
                            {"n", "", "columns of B and C"},
                            {"k", "", "columns of A, rows of B"},
                            {"batch", "1", "independent matmuls (A, B and C each hold batch matrices)"},
                            {"trans_a", "0", "1 = A stored transposed (k x m)"},
                            {"trans_b", "0", "1 = B stored transposed (n x k)"},
                            {"dtype", "fp16", "input type: fp16 | bf16 | fp32 | int8"},
                            {"out_dtype", "auto", "output type: fp32 | fp16 | bf16 (int32 for int8); auto = fp32 "
                             "(int32)"},
                            {"block_dim", "0", "logical blocks (0 = output tiles, up to the cube cores)"},
                            {"k_split", "0",
                             "split-K parts per output tile (0 = the tiling's cost-based choice, 1 = none)"},
                            {"split_k_mode", "atomic",
                             "how split-K parts combine: atomic (FixPipe atomic add into C) | two-pass (fp32 "
                             "partial sums in a GM workspace, then a vector kernel adds them in a fixed order: "
                             "deterministic)"},
                            {"split_k_balance", "auto",
                             "atomic split-K work over the blocks: auto (the tiling's choice: k-chunk ranges "
                             "weighted by the blocks' staggered starts, or whole items round robin) | off "
                             "(whole items round robin)"},
                            {"group_m", "0", "tile order: tile rows per swizzle group (0 = the tiling's choice)"},
                            {"k_rotate", "0", "k start offsets of tiles sharing a panel (0 = the tiling's choice, 1 = all start at k = 0)"},
                            {"group_n", "0", "tile order with --group-m: tile columns per super-column (0 = all)"},
                            {"nd2nz", "auto",
                             "ND->NZ loads: instr (MTE2 ND2NZ) | burst (a strided copy per 16 columns) | "
                             "auto (instr on split parts)"},
                            {"l2_prefetch", "auto",
                             "auto (split parts: the AIVs read the chunks the cube is about to miss into L2 "
                             "ahead of it, a MIX kernel) | off (a cube-only kernel)"},
                            {"layout", "auto",
                             "A and B in GM: nd (row-major, converted while loading) | nz (FRACTAL_NZ, "
                             "contiguous loads) | auto (nz on coupled parts, nd on split)"}},
                           [](const OpArgs& a, const DeviceInfo& d) {
                               return std::make_unique<MatmulOp>(a, d);
                           }});

SFUMATO_OP_SAMPLE(matmul, "matmul", {{"m", "40"}, {"n", "48"}, {"k", "64"}});

}  // namespace sfumato::ops
