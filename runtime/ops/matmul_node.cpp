// MatMul, Gemm and MatMulInteger as graph nodes (see matmul_node.h): operand
// views, batch broadcasting, bias forms and epilogue choice on the host; the
// cube matmul and vector epilogue kernels on the device.
#include "runtime/ops/matmul_node.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "runtime/ops/cube_epilogue.h"
#include "runtime/ops/cube_matmul.h"

namespace sfumato::ops {

namespace {

// One matrix operand: its last two dimensions (rows x cols of the logical
// matrix) as stored.
struct Operand {
    bool trans = false;  // stored as cols x rows (the logical rows are contiguous)
    uint64_t ld = 0;     // row stride of the stored matrix
    std::vector<int64_t> bshape, bstrides;
};

std::vector<int64_t> strides_of(const TensorRef& t) {
    return t.strides.empty() ? ref::contiguous_strides(t.shape) : t.strides;
}

// The logical matrix rows x cols whose rows are `sr` and columns `sc` elements
// apart. `k_rows`: the contiguous-k form is the transposed one (B); prefer it
// when either form works.
bool as_operand(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool k_rows, Operand& op) {
    auto normal = [&] {
        op.trans = false;
        op.ld = rows == 1 ? static_cast<uint64_t>(cols) : static_cast<uint64_t>(sr);
        return rows == 1 || sr >= cols;
    };
    auto trans = [&] {
        op.trans = true;
        op.ld = cols == 1 ? static_cast<uint64_t>(rows) : static_cast<uint64_t>(sc);
        return cols == 1 || sc >= rows;
    };
    const bool cols_contig = sc == 1 || cols == 1, rows_contig = sr == 1 || rows == 1;
    if (k_rows && rows_contig) return trans();
    if (cols_contig) return normal();
    if (rows_contig) return trans();
    return false;
}

class MatmulNode : public INodeOp {
public:
    MatmulNode(const NodeDesc& n, const DeviceInfo& dev) : m_node(n), m_dev(dev) {
        const bool gemm = n.op_type == "Gemm", integer = n.op_type == "MatMulInteger";
        if (!n.has_input(0) || !n.has_input(1)) throw UnsupportedError(n, "needs inputs A and B");
        const TensorRef &a = n.inputs[0], &b = n.inputs[1];
        for (const TensorRef* t : {&a, &b}) {
            if (t->format != Format::ND)
                throw UnsupportedError(n, std::string("input in format ") + format_name(t->format));
            if (t->shape.empty()) throw UnsupportedError(n, "scalar operand");
            for (int64_t d : t->shape)
                if (d <= 0) throw UnsupportedError(n, "zero-size dimension in " + ref::shape_str(t->shape));
        }
        if (integer) {
            if (a.dtype != isa::DType::INT8 || b.dtype != isa::DType::INT8)
                throw UnsupportedError(n, std::string("operands ") + ref::elem_type_name(a.elem) + " x " +
                                              ref::elem_type_name(b.elem) +
                                              ": the cube multiplies int8 x int8 only");
            for (size_t i : {2u, 3u}) {
                if (!n.has_input(i)) continue;
                const ref::HostTensor* z = n.constant(i);
                if (!z) throw UnsupportedError(n, "zero point not a constant");
                for (double v : z->data)
                    if (v != 0)
                        throw UnsupportedError(n, "nonzero zero point (the cube has no zero-point input)");
            }
        } else {
            if (a.elem != b.elem) throw UnsupportedError(n, "A and B of different element types");
            if (a.dtype != isa::DType::FP16 && a.dtype != isa::DType::BF16 && a.dtype != isa::DType::FP32)
                throw UnsupportedError(n, std::string("element type ") + ref::elem_type_name(a.elem));
        }
        m_plan.in = a.dtype;
        m_out = make_tensor({}, integer ? ref::ElemType::Int32 : a.elem);
        m_act = ref::activation_of(n.attrs);
        if (gemm)
            plan_gemm(n);
        else
            plan_nd_matmul(n);
        finish_plan();
    }

    std::vector<TensorRef> outputs() const override { return {m_out}; }
    uint64_t workspace_bytes() const override { return m_ws; }

    std::vector<KernelDesc> launches(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                                     uint64_t workspace) const override {
        CubeMatmulPlan p = m_plan;
        p.a = in.at(0).addr, p.b = in.at(1).addr;
        p.c = m_epilogue ? workspace : out.at(0).addr;
        if (p.bias_form != BiasForm::None) p.bias = in.at(2).addr;
        const MatmulTiling& t = p.t;
        KernelDesc kd;
        kd.name = m_node.name;
        kd.type = m_node.op_type;
        kd.kind = t.pf_ahead ? KernelKind::Mix : KernelKind::Cube;  // MIX: AIV L2 prefetch
        kd.block_dim = t.block_dim;
        kd.body = [p](isa::IInstrSink& s) { run_cube_matmul(s, p); };
        const uint32_t es = isa::dtype_size(p.in);
        kd.flops = 2.0 * t.batch * t.m * t.n * t.k;
        kd.bytes = uint64_t{t.batch} * ((uint64_t{t.m} * t.k + uint64_t{t.k} * t.n) * es +
                                        uint64_t{t.m} * t.n * isa::dtype_size(p.out));
        const double steps = double(t.batch) * isa::ceil_div(t.m, 16) * isa::ceil_div(t.k, m_dev.cube_depth_of(es)) *
                             isa::ceil_div(t.n, 16);
        // At the chip's peak: every cube core (KernelDesc::min_compute_cycles).
        kd.min_compute_cycles = steps / std::max<uint32_t>(1, m_dev.cube_cores);
        std::vector<KernelDesc> ks{std::move(kd)};
        if (m_epilogue) {
            EpiloguePlan e = m_epi;
            e.x = workspace, e.y = out.at(0).addr;
            if (e.has_c) e.c = in.at(2).addr;
            ks.push_back(epilogue_kernel(e, m_dev, m_node.name + "/epilogue", m_node.op_type));
        }
        return ks;
    }

    std::string describe() const override {
        const MatmulTiling& t = m_plan.t;
        std::string s = "cube " + std::to_string(t.base_m) + "x" + std::to_string(t.base_n) +
                        " tiles, k chunk " + std::to_string(t.k_l1) + ", " + std::to_string(t.batch) +
                        " batch(es) of " + std::to_string(t.m) + "x" + std::to_string(t.n) + "x" +
                        std::to_string(t.k);
        if (t.trans_a) s += ", A transposed";
        if (t.trans_b) s += ", B transposed";
        if (t.group_m > 1 || t.group_n) s += ", tile order: groups of " + std::to_string(t.group_m) + " rows";
        if (t.k_rot > 1) s += ", k rotation " + std::to_string(t.k_rot);
        if (t.a_slots) s += ", A resident in L1 (" + std::to_string(t.a_slots) + " chunks)";
        if (t.k_split > 1)
            s += ", split-K " + std::to_string(t.k_split) +
                 (t.two_pass() ? " (two-pass: workspace, vector reduction)" : " (FixPipe atomic add)");
        static const char* kBias[] = {"", ", bias row (mad)", ", bias column (mad)", ", bias scalar (mad)"};
        s += kBias[static_cast<int>(m_plan.bias_form)];
        if (m_plan.relu) s += ", ReLU in FixPipe";
        if (m_epilogue)
            s += std::string(", vector epilogue") + (m_epi.parts > 1 ? " (split-K sum)" : "") +
                 (m_epi.has_c ? " (beta * C)" : "") +
                 (m_act.none() || m_act.kind == "Relu" ? "" : " (" + m_act.kind + ")");
        return s;
    }

private:
    void plan_nd_matmul(const NodeDesc& n) {
        const TensorRef &a = n.inputs[0], &b = n.inputs[1];
        std::vector<int64_t> as = a.shape, bs = b.shape, ast = strides_of(a), bst = strides_of(b);
        if (as.size() == 1) as.insert(as.begin(), 1), ast.insert(ast.begin(), as[1] * ast[0]);
        if (bs.size() == 1) bs.push_back(1), bst.push_back(1);
        const size_t ra = as.size(), rb = bs.size();
        const int64_t M = as[ra - 2], K = as[ra - 1], N = bs[rb - 1];
        if (bs[rb - 2] != K)
            throw UnsupportedError(n, "inner dimensions differ: A " + ref::shape_str(a.shape) + ", B " +
                                          ref::shape_str(b.shape));
        Operand oa, ob;
        if (!as_operand(M, K, ast[ra - 2], ast[ra - 1], false, oa) ||
            !as_operand(K, N, bst[rb - 2], bst[rb - 1], true, ob))
            throw UnsupportedError(n, "an operand whose last two dimensions are both strided");
        oa.bshape.assign(as.begin(), as.end() - 2), oa.bstrides.assign(ast.begin(), ast.end() - 2);
        ob.bshape.assign(bs.begin(), bs.end() - 2), ob.bstrides.assign(bst.begin(), bst.end() - 2);
        // Broadcast batch dimensions (numpy rules, right-aligned).
        const size_t r = std::max(oa.bshape.size(), ob.bshape.size());
        std::vector<int64_t> out_b(r), sa(r, 0), sb(r, 0);
        for (size_t i = 0; i < r; ++i) {
            const size_t ia = i + oa.bshape.size(),
                         ib = i + ob.bshape.size();  // index + size - r
            const int64_t da = ia >= r ? oa.bshape[ia - r] : 1, db = ib >= r ? ob.bshape[ib - r] : 1;
            if (da != db && da != 1 && db != 1)
                throw UnsupportedError(n, "batch dimensions of A " + ref::shape_str(a.shape) + " and B " +
                                              ref::shape_str(b.shape) + " do not broadcast");
            out_b[i] = std::max(da, db);
            if (da != 1) sa[i] = oa.bstrides[ia - r];
            if (db != 1) sb[i] = ob.bstrides[ib - r];
        }
        std::vector<int64_t> oshape = out_b;
        if (a.shape.size() > 1) oshape.push_back(M);
        if (b.shape.size() > 1) oshape.push_back(N);
        m_out.shape = oshape;
        // Drop size-1 batch dimensions; C is contiguous.
        std::vector<uint32_t> bd;
        std::vector<uint64_t> abs_, bbs, cbs;
        uint64_t cstride = uint64_t(M) * N, batch = 1;
        for (size_t i = r; i-- > 0;) {
            if (out_b[i] != 1) {
                bd.insert(bd.begin(), static_cast<uint32_t>(out_b[i]));
                abs_.insert(abs_.begin(), static_cast<uint64_t>(sa[i]));
                bbs.insert(bbs.begin(), static_cast<uint64_t>(sb[i]));
                cbs.insert(cbs.begin(), cstride);
            }
            cstride *= static_cast<uint64_t>(out_b[i]);
            batch *= static_cast<uint64_t>(out_b[i]);
        }
        // A batch that only A carries, with A's rows evenly spaced across it, folds
        // into M.
        bool fold = !oa.trans && !bd.empty();
        uint64_t expect = uint64_t(M) * oa.ld;
        for (size_t i = bd.size(); fold && i-- > 0;) {
            fold = bbs[i] == 0 && abs_[i] == expect;
            expect *= bd[i];
        }
        if (fold) {
            m_mn = {uint64_t(M) * batch, uint64_t(N), uint64_t(K)};
            batch = 1;
            bd.clear(), abs_.clear(), bbs.clear(), cbs.clear();
        } else {
            m_mn = {uint64_t(M), uint64_t(N), uint64_t(K)};
        }
        m_batch = batch;
        m_plan.bdims = bd, m_plan.a_bs = abs_, m_plan.b_bs = bbs, m_plan.c_bs = cbs;
        m_plan.lda = oa.ld, m_plan.ldb = ob.ld, m_plan.ldc = uint64_t(N);
        m_ta = oa.trans, m_tb = ob.trans;
    }

    void plan_gemm(const NodeDesc& n) {
        const TensorRef &a = n.inputs[0], &b = n.inputs[1];
        if (a.shape.size() != 2 || b.shape.size() != 2)
            throw UnsupportedError(n, "Gemm needs 2-D A and B, got " + ref::shape_str(a.shape) + " and " +
                                          ref::shape_str(b.shape));
        const bool ta = n.attrs.get_int("transA", 0) != 0, tb = n.attrs.get_int("transB", 0) != 0;
        const std::vector<int64_t> ast = strides_of(a), bst = strides_of(b);
        // The logical A' (M x K) is A or A^T: swap the roles of A's dimensions and
        // strides.
        const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
        const int64_t KB = tb ? b.shape[1] : b.shape[0], N = tb ? b.shape[0] : b.shape[1];
        if (K != KB)
            throw UnsupportedError(n, "inner dimensions differ: A' has " + std::to_string(K) +
                                          " columns, B' " + std::to_string(KB) + " rows");
        Operand oa, ob;
        if (!as_operand(M, K, ta ? ast[1] : ast[0], ta ? ast[0] : ast[1], false, oa) ||
            !as_operand(K, N, tb ? bst[1] : bst[0], tb ? bst[0] : bst[1], true, ob))
            throw UnsupportedError(n, "an operand whose two dimensions are both strided");
        m_out.shape = {M, N};
        m_mn = {uint64_t(M), uint64_t(N), uint64_t(K)};
        m_batch = 1;
        m_plan.lda = oa.ld, m_plan.ldb = ob.ld, m_plan.ldc = uint64_t(N);
        m_ta = oa.trans, m_tb = ob.trans;
        const double alpha = n.attrs.get_float("alpha", 1.0), beta = n.attrs.get_float("beta", 1.0);
        m_plan.alpha = alpha;
        if (!n.has_input(2) || beta == 0.0) return;
        const TensorRef& c = n.inputs[2];
        if (c.elem != a.elem) throw UnsupportedError(n, "C of another element type than A");
        if (c.shape.size() > 2) throw UnsupportedError(n, "C of rank > 2");
        const std::vector<int64_t> cst = strides_of(c);
        const int64_t cn = c.shape.empty() ? 1 : c.shape.back(), cm = c.shape.size() == 2 ? c.shape[0] : 1;
        if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
            throw UnsupportedError(n, "C " + ref::shape_str(c.shape) + " does not broadcast to [" +
                                          std::to_string(M) + "," + std::to_string(N) + "]");
        const int64_t s_last = c.shape.empty() ? 1 : cst.back(), s_first = c.shape.size() == 2 ? cst[0] : 1;
        if (cm == 1 && cn == 1)
            m_plan.bias_form = BiasForm::Scalar;
        else if (cm == 1 && s_last == 1)
            m_plan.bias_form = BiasForm::Row;
        else if (cn == 1 && s_first == 1)
            m_plan.bias_form = BiasForm::Col;
        if (m_plan.bias_form != BiasForm::None) {
            if (alpha == 0.0)
                m_plan.skip_ab = true, m_plan.alpha = 1.0, m_plan.bias_scale = beta;
            else
                m_plan.bias_scale = beta / alpha;
            return;
        }
        if (!c.contiguous() || cm != M || cn != N)
            throw UnsupportedError(
                n, "C " + ref::shape_str(c.shape) + " neither a row, a column nor a dense M x N");
        m_epi.has_c = true, m_epi.c_dtype = c.dtype, m_epi.beta = beta;
    }

    void finish_plan() {
        const NodeDesc& n = m_node;
        m_out.dtype = m_out.elem == ref::ElemType::Int32 ? isa::DType::INT32 : m_plan.in;
        m_epilogue = m_epi.has_c || !fixpipe_activation(m_act);
        if (m_epilogue && m_out.dtype == isa::DType::INT32)
            throw UnsupportedError(n, "activation on an integer result");
        m_plan.relu = !m_epilogue && m_act.kind == "Relu";
        m_plan.out = m_epilogue ? isa::DType::FP32 : m_out.dtype;
        for (uint64_t v : {m_mn[0], m_mn[1], m_mn[2], m_batch})
            if (v > 0x7fffffffull) throw UnsupportedError(n, "dimension above 2^31");
        MatmulProblem pr;
        pr.batch = static_cast<uint32_t>(m_batch);
        pr.m = static_cast<uint32_t>(m_mn[0]), pr.n = static_cast<uint32_t>(m_mn[1]),
        pr.k = static_cast<uint32_t>(m_mn[2]);
        pr.in_es = isa::dtype_size(m_plan.in), pr.out_es = isa::dtype_size(m_plan.out);
        pr.trans_a = m_ta, pr.trans_b = m_tb;
        pr.bias = m_plan.bias_form;
        // Split-K adds partial sums into C: not with a ReLU in the FixPipe or a bias-only product.
        pr.split_k_ok = !m_plan.relu && !m_plan.skip_ab;
        // How split-K parts combine (MatmulTiling::split_mode): the node attribute split_k_mode
        // ("atomic", the default, or "two-pass"); int32 sums are exact either way (atomic).
        const std::string sm = n.attrs.get_string("split_k_mode", "atomic");
        if (!parse_split_k_mode(sm, pr.split_mode))
            throw UnsupportedError(n, "split_k_mode '" + sm + "' (valid: atomic, two-pass)");
        if (m_out.dtype == isa::DType::INT32) pr.split_mode = SplitKMode::Atomic;
        try {
            m_plan.t = ops::plan_matmul(pr, m_dev);
        } catch (const InputError& e) {
            throw UnsupportedError(n, e.what());
        }
        m_plan.t.gm_nz = false;
        // Two-pass split-K: the cube writes fp32 partial sums to workspace slices, the vector
        // epilogue adds them in part order (then beta * C and the activation, if any).
        if (m_plan.t.two_pass()) m_epilogue = true, m_plan.out = isa::DType::FP32;
        if (m_epilogue) {
            m_epi.n = m_batch * m_mn[0] * m_mn[1];
            m_epi.y_dtype = m_out.dtype;
            m_epi.act = m_act;
            m_epi.parts = m_plan.t.two_pass() ? m_plan.t.k_split : 1;
            m_epi.part_stride = m_epi.parts > 1 ? m_epi.n : 0;
            m_plan.c_part_stride = m_epi.part_stride;
            m_ws = m_epi.n * 4 * m_epi.parts;
        }
    }

    NodeDesc m_node;
    DeviceInfo m_dev;
    TensorRef m_out;
    ref::Activation m_act;
    CubeMatmulPlan m_plan;
    EpiloguePlan m_epi;
    bool m_epilogue = false, m_ta = false, m_tb = false;
    std::array<uint64_t, 3> m_mn{};
    uint64_t m_batch = 1, m_ws = 0;
};

}  // namespace

std::unique_ptr<INodeOp> make_matmul_node(const NodeDesc& node, const DeviceInfo& dev) {
    return std::make_unique<MatmulNode>(node, dev);
}

SFUMATO_REGISTER_NODE_OP(matmul, "MatMul", make_matmul_node);
SFUMATO_REGISTER_NODE_OP(gemm, "Gemm", make_matmul_node);
SFUMATO_REGISTER_NODE_OP(matmul_integer, "MatMulInteger", make_matmul_node);

}  // namespace sfumato::ops
