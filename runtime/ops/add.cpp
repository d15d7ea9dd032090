// Elementwise add z = x + y (fp16, bf16 or fp32): the canonical vector kernel. Host tiling
// splits n over block_dim blocks (each a multiple of 32 bytes but the last) and each block into
// tiles; the device kernel streams tiles through VECIN/VECOUT queues with `buffers` buffers per
// queue, so with 2 the MTE2 load of tile i+1, the vector add of tile i and the MTE3 store of
// tile i-1 overlap. The kernel's own loop control is not charged (the kernel API's calls charge
// what issuing their instructions costs), as for an Ascend C kernel's own code: the Ascend C
// add of examples/ascendc takes the same cycles (tests/component/ascendc_add_test.cpp).
#include <cmath>
#include <random>

#include "runtime/kernel/api.h"
#include "runtime/ops/ew/standalone_ops.h"
#include "runtime/ops/host_memory.h"
#include "runtime/ops/i_op.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

using namespace sfumato::kernel;

struct AddPlan {
    uint64_t x = 0, y = 0, z = 0;
    uint64_t n = 0;
    uint64_t per_block = 0;  // elements per block (last block may have fewer)
    uint32_t tile = 0;       // elements per tile
    uint32_t buffers = 2;
};

template <class T>
void add_kernel(isa::IInstrSink& sink, const AddPlan& p) {
    KernelContext ctx(sink);
    const uint64_t start = ctx.block_idx() * p.per_block;
    if (start >= p.n) return;
    const uint64_t count = std::min(p.per_block, p.n - start);
    GlobalTensor<T> gx, gy, gz;
    gx.SetGlobalBuffer(p.x + start * sizeof(T), count);
    gy.SetGlobalBuffer(p.y + start * sizeof(T), count);
    gz.SetGlobalBuffer(p.z + start * sizeof(T), count);
    TPipe pipe(ctx);
    TQue<TPosition::VECIN> in_x, in_y;
    TQue<TPosition::VECOUT> out_z;
    const uint32_t tile_bytes = p.tile * sizeof(T);
    pipe.InitBuffer(in_x, p.buffers, tile_bytes);
    pipe.InitBuffer(in_y, p.buffers, tile_bytes);
    pipe.InitBuffer(out_z, p.buffers, tile_bytes);
    for (uint64_t off = 0; off < count; off += p.tile) {
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(p.tile, count - off));
        LocalTensor<T> x = in_x.AllocTensor<T>();
        LocalTensor<T> y = in_y.AllocTensor<T>();
        DataCopy(x, gx[off], len);
        DataCopy(y, gy[off], len);
        in_x.EnQue(x);
        in_y.EnQue(y);

        LocalTensor<T> xi = in_x.DeQue<T>();
        LocalTensor<T> yi = in_y.DeQue<T>();
        LocalTensor<T> z = out_z.AllocTensor<T>();
        Add(z, xi, yi, len);
        out_z.EnQue(z);
        in_x.FreeTensor(xi);
        in_y.FreeTensor(yi);

        LocalTensor<T> zo = out_z.DeQue<T>();
        DataCopy(gz[off], zo, len);
        out_z.FreeTensor(zo);
    }
}

class AddOp : public IOp {
public:
    AddOp(const OpArgs& a, const DeviceInfo& dev) : m_dev(dev) {
        m_n = arg_u64(a, "add", "n", 1, 1ull << 34);
        if (!isa::parse_dtype(arg_str(a, "dtype"), m_dtype) ||
            (m_dtype != isa::DType::FP16 && m_dtype != isa::DType::FP32 && m_dtype != isa::DType::BF16))
            throw InputError("operator 'add': argument 'dtype' = '" + arg_str(a, "dtype") + "' (valid: fp16, bf16, fp32)");
        m_plan.buffers = static_cast<uint32_t>(arg_u64(a, "add", "buffers", 1, 2));
        // 0 (the default): one block per vector core, as the chip's own operators use them all; a
        // single block would show one core's share of the bandwidth as the chip's.
        m_block_dim = static_cast<uint32_t>(arg_u64(a, "add", "block_dim", 0, 65535));
        if (m_block_dim == 0) m_block_dim = std::max<uint32_t>(1, dev.vector_cores);
        const uint32_t es = isa::dtype_size(m_dtype);
        const uint32_t align = 32 / es;
        m_plan.n = m_n;
        m_plan.per_block = (m_n + m_block_dim - 1) / m_block_dim;
        m_plan.per_block = (m_plan.per_block + align - 1) / align * align;
        // Tiles: the requested size, capped by what 3 queues x buffers fit in UB (in 256-byte
        // repeats, so a vector repeat never reads past a buffer).
        const uint64_t fit = dev.ub_bytes / (3ull * m_plan.buffers) / 256 * 256 / es;
        uint64_t tile = arg_u64(a, "add", "tile", 0, 1u << 24);
        if (tile == 0) tile = 2048;
        if (fit == 0) throw InputError("operator 'add': UB of " + std::to_string(dev.ub_bytes) + " bytes is too small");
        tile = std::min<uint64_t>(tile, fit);
        tile = std::max<uint64_t>(align, tile / align * align);
        m_plan.tile = static_cast<uint32_t>(tile);
    }

    void prepare(rt::Runtime& rt) override {
        const uint64_t bytes = m_n * isa::dtype_size(m_dtype);
        // x and y on the host, x, y and z in the device image, z copied back.
        if (rt.functional()) require_host_memory("kernel add --n " + std::to_string(m_n), 6 * bytes);
        m_plan.x = rt.malloc(bytes);
        m_plan.y = rt.malloc(bytes);
        m_plan.z = rt.malloc(bytes);
        if (rt.functional()) {
            std::mt19937 gen(12345);
            std::uniform_real_distribution<float> d(-4.0f, 4.0f);
            m_x.resize(bytes);
            m_y.resize(bytes);
            for (uint64_t i = 0; i < m_n; ++i) {
                isa::store_from_f32(m_dtype, m_x.data() + i * isa::dtype_size(m_dtype), d(gen));
                isa::store_from_f32(m_dtype, m_y.data() + i * isa::dtype_size(m_dtype), d(gen));
            }
        }
        rt.memcpy_h2d(m_plan.x, rt.functional() ? m_x.data() : nullptr, bytes);
        rt.memcpy_h2d(m_plan.y, rt.functional() ? m_y.data() : nullptr, bytes);
    }

    std::vector<KernelDesc> kernels() const override {
        KernelDesc k;
        k.name = "add";
        k.type = "Add";
        k.block_dim = m_block_dim;
        k.kind = KernelKind::Vector;
        const AddPlan plan = m_plan;
        switch (m_dtype) {
            case isa::DType::FP16: k.body = [plan](isa::IInstrSink& s) { add_kernel<half>(s, plan); }; break;
            case isa::DType::BF16: k.body = [plan](isa::IInstrSink& s) { add_kernel<bfloat16>(s, plan); }; break;
            default: k.body = [plan](isa::IInstrSink& s) { add_kernel<float>(s, plan); }; break;
        }
        k.args_bytes = sizeof(AddPlan);  // the GM pointers and tiling the kernel is passed
        k.flops = static_cast<double>(m_n);
        k.bytes = 3 * m_n * isa::dtype_size(m_dtype);
        // At the chip's vector peak: every vector core (KernelDesc::min_compute_cycles).
        k.min_compute_cycles = static_cast<double>(m_n * isa::dtype_size(m_dtype)) / (m_dev.vector_bytes_per_cycle * m_dev.vector_cores);
        return {k};
    }

    CheckResult check(rt::Runtime& rt) override {
        CheckResult r;
        const uint32_t es = isa::dtype_size(m_dtype);
        if (!rt.functional()) {  // the copy is timed; timing mode has no data to hold
            rt.memcpy_d2h(nullptr, m_plan.z, m_n * es);
            return r;
        }
        std::vector<uint8_t> z(m_n * es);
        rt.memcpy_d2h(z.data(), m_plan.z, z.size());
        r.checked = true;
        for (uint64_t i = 0; i < m_n; ++i) {
            const float a = isa::load_as_f32(m_dtype, m_x.data() + i * es);
            const float b = isa::load_as_f32(m_dtype, m_y.data() + i * es);
            // Reference: the exact sum rounded once to the output type.
            uint8_t ref_bytes[4];
            isa::store_from_f32(m_dtype, ref_bytes, static_cast<float>(static_cast<double>(a) + b));
            const double ref = isa::load_as_f32(m_dtype, ref_bytes);
            const double got = isa::load_as_f32(m_dtype, z.data() + i * es);
            const double err = std::fabs(got - ref);
            r.max_abs_err = std::max(r.max_abs_err, err);
            if (std::fabs(ref) > 1e-6) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(ref));
            if (!(err <= 0.0) || std::isnan(got)) r.passed = false;
        }
        return r;
    }

    void release(rt::Runtime& rt) override {
        rt.free(m_plan.x);
        rt.free(m_plan.y);
        rt.free(m_plan.z);
    }

    const AddPlan& plan() const { return m_plan; }

private:
    DeviceInfo m_dev;
    uint64_t m_n = 0;
    isa::DType m_dtype = isa::DType::FP16;
    uint32_t m_block_dim = 1;
    AddPlan m_plan;
    std::vector<uint8_t> m_x, m_y;
};

}  // namespace

// `--n N` runs the hand-written kernel above; `--shape-a A [--shape-b B]` runs the ONNX Add node
// op (numpy broadcasting, every vector core; runtime/ops/ew).
std::unique_ptr<IOp> make_add(const OpArgs& a, const DeviceInfo& d) {
    if (a.at("shape_a") == "-" && a.at("shape_b") == "-") {
        if (a.at("n") == "0") throw InputError("operator 'add': missing argument 'n' (or --shape-a/--shape-b)");
        return std::make_unique<AddOp>(a, d);
    }
    for (const char* k : {"buffers", "block_dim", "tile"}) {
        const std::string dflt = std::string(k) == "buffers" ? "2" : "0";
        if (a.at(k) != dflt)
            throw InputError(std::string("operator 'add': argument '") + k + "' applies to --n only (the shape form plans its own tiling)");
    }
    if (a.at("shape_a") == "-") throw InputError("operator 'add': argument 'shape-b' needs 'shape-a'");
    OpArgs b{{"n", a.at("n")}, {"shape_a", a.at("shape_a")}, {"shape_b", a.at("shape_b")}, {"dtype", a.at("dtype")}};
    return ew::make_binary_standalone("Add", "add", b, d);
}

SFUMATO_REGISTER_OP(add, OpSpec{"add", "elementwise z = x + y",
                                {{"n", "0", "number of elements (the hand-written kernel)"},
                                 {"dtype", "fp16", "fp16 | bf16 | fp32 (int types with shapes)"},
                                 {"buffers", "2", "buffers per queue (1 = single, 2 = double buffering)"},
                                 {"block_dim", "0", "logical blocks (0 = every vector core)"},
                                 {"tile", "0", "elements per tile (0 = 2048, capped by UB)"},
                                 {"shape_a", "-", "ONNX Add node op: shape of A, dims joined by x (e.g. 4096x1024)"},
                                 {"shape_b", "-", "shape of B (numpy broadcasting; default: A's)"}},
                                make_add});
SFUMATO_OP_SAMPLE(add, "add", {{"n", "1000"}});

}  // namespace sfumato::ops
