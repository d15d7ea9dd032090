#include "runtime/ops/standalone.h"

#include "runtime/ops/node_launch.h"
#include "runtime/ops/transdata.h"

#include <cmath>

#include "runtime/ref/ref_ops.h"

namespace sfumato::ops {

InputGen uniform_input(double lo, double hi) {
    return [lo, hi](ref::HostTensor& t, std::mt19937& rng) {
        std::uniform_real_distribution<double> d(lo, hi);
        for (double& v : t.data) v = d(rng);
    };
}

InputGen integer_input(int64_t lo, int64_t hi) {
    return [lo, hi](ref::HostTensor& t, std::mt19937& rng) {
        std::uniform_int_distribution<int64_t> d(lo, hi);
        for (double& v : t.data) v = static_cast<double>(d(rng));
    };
}

CheckResult compare_tensors(const ref::HostTensor& got, const ref::HostTensor& want, const Tolerance& tol) {
    CheckResult r;
    r.checked = true;
    if (got.shape != want.shape || got.data.size() != want.data.size()) {
        r.passed = false;
        r.max_abs_err = INFINITY;
        return r;
    }
    ref::HostTensor w = want;
    w.type = got.type;
    ref::round_to_type(w);
    for (size_t i = 0; i < got.data.size(); ++i) {
        const double g = got.data[i], e = w.data[i];
        if (std::isnan(e) || std::isnan(g)) {
            if (std::isnan(e) != std::isnan(g)) r.passed = false, r.max_abs_err = INFINITY;
            continue;
        }
        if (std::isinf(e) || std::isinf(g)) {
            if (g != e) r.passed = false, r.max_abs_err = INFINITY;
            continue;
        }
        const double err = std::fabs(g - e);
        r.max_abs_err = std::max(r.max_abs_err, err);
        if (std::fabs(e) > 0) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(e));
        if (err > tol.atol + tol.rtol * std::fabs(e)) r.passed = false;
    }
    return r;
}

namespace {

// A tensor's logical [N, C, spatial...] values as NC1HWC0 storage [N, C1, spatial..., C0] in its
// device type (padding channels zero).
std::vector<uint8_t> nc1hwc0_bytes(const ref::HostTensor& t, const TensorRef& r) {
    const int64_t c0 = 32 / static_cast<int64_t>(isa::dtype_size(r.dtype));
    const int64_t n = r.shape[0], c = r.shape[1], c1 = (c + c0 - 1) / c0;
    int64_t pix = 1;
    for (size_t d = 2; d < r.shape.size(); ++d) pix *= r.shape[d];
    ref::HostTensor s(t.type, {n, c1, pix, c0});
    for (int64_t i = 0; i < n; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < pix; ++p)
                s.data[static_cast<size_t>(((i * c1 + ch / c0) * pix + p) * c0 + ch % c0)] =
                    t.data[static_cast<size_t>((i * c + ch) * pix + p)];
    return ref::to_device_bytes(s, r.dtype);
}

class StandaloneOp : public IOp {
public:
    StandaloneOp(StandaloneSpec spec, const DeviceInfo& dev) : m_spec(std::move(spec)) {
        m_op = make_node_op(m_spec.node, dev);
        m_outs = m_op->outputs();
    }

    void prepare(rt::Runtime& rt) override {
        std::mt19937 rng(m_spec.seed);
        auto& in = m_spec.node.inputs;
        m_host_in.resize(in.size());
        for (size_t i = 0; i < in.size(); ++i) {
            if (!in[i].present) continue;
            const bool c0 = in[i].format == Format::NC1HWC0 && in[i].shape.size() >= 3;
            if ((in[i].format != Format::ND && !c0) || !in[i].contiguous())
                throw InputError("standalone op '" + m_spec.node.op_type + "': input " + std::to_string(i) +
                                 " must be a contiguous ND (or NC1HWC0) tensor");
            in[i].addr = rt.malloc(std::max<uint64_t>(in[i].storage_bytes(), 1));
            m_allocs.push_back(in[i].addr);
            if (!rt.functional()) {
                // Timing mode: no data anywhere, host side included (inputs can be many GiB).
                rt.memcpy_h2d(in[i].addr, nullptr, in[i].storage_bytes());
                continue;
            }
            ref::HostTensor t(in[i].elem, in[i].shape);
            if (const ref::HostTensor* c = m_spec.node.constant(i)) t = *c;
            else if (i < m_spec.gens.size() && m_spec.gens[i]) m_spec.gens[i](t, rng);
            else if (ref::is_float(in[i].elem)) uniform_input(-4, 4)(t, rng);
            else integer_input(0, 7)(t, rng);
            ref::round_to_type(t);
            const std::vector<uint8_t> bytes = c0 ? nc1hwc0_bytes(t, in[i]) : ref::to_device_bytes(t, in[i].dtype);
            rt.memcpy_h2d(in[i].addr, bytes.data(), in[i].storage_bytes());
            // What the device holds is what the reference sees (int64 narrowed, bool as 0/1).
            m_host_in[i] = std::move(t);
        }
        for (size_t o = 0; o < m_outs.size(); ++o) {
            const int v = m_op->view_of(o);
            if (v >= 0) {
                m_outs[o].addr = in[static_cast<size_t>(v)].addr;
                continue;
            }
            m_outs[o].addr = rt.malloc(std::max<uint64_t>(m_outs[o].storage_bytes(), 1));
            m_allocs.push_back(m_outs[o].addr);
        }
        if (m_op->workspace_bytes()) {
            m_workspace = rt.malloc(m_op->workspace_bytes());
            m_allocs.push_back(m_workspace);
        }
    }

    std::vector<KernelDesc> kernels() const override {
        std::vector<KernelDesc> ks = m_op->launches(m_spec.node.inputs, m_outs, m_workspace);
        stamp_node_launch(ks, m_spec.node, m_spec.node.inputs, m_outs, m_workspace, m_op->workspace_bytes());
        return ks;
    }

    CheckResult check(rt::Runtime& rt) override {
        CheckResult all;
        std::vector<const ref::HostTensor*> ins;
        for (size_t i = 0; i < m_host_in.size(); ++i)
            ins.push_back(m_spec.node.has_input(i) ? &m_host_in[i] : nullptr);
        std::vector<ref::HostTensor> want;
        if (rt.functional()) {
            ref::RefNode rn{m_spec.node.name, m_spec.node.op_type, m_spec.node.opset, m_spec.node.attrs,
                              m_spec.node.num_outputs};
            want = ref::run_ref(rn, ins);
        }
        for (size_t o = 0; o < m_outs.size(); ++o) {
            const bool c0 = m_outs[o].format == Format::NC1HWC0 && m_outs[o].shape.size() >= 3;
            if (m_outs[o].format != Format::ND && !c0) throw InputError("standalone check of a non-ND output");
            if (!rt.functional()) {
                rt.memcpy_d2h(nullptr, m_outs[o].addr, m_outs[o].storage_bytes());
                continue;
            }
            std::vector<uint8_t> bytes(m_outs[o].storage_bytes());
            rt.memcpy_d2h(bytes.data(), m_outs[o].addr, bytes.size());
            if (c0) bytes = host_from_format(bytes, m_outs[o].shape, m_outs[o].dtype, m_outs[o].format);
            const ref::HostTensor got = ref::from_device_bytes(bytes.data(), m_outs[o].dtype, m_outs[o].elem, m_outs[o].shape);
            const CheckResult r = compare_tensors(got, want.at(o), m_spec.tol);
            all.checked = true;
            all.passed = all.passed && r.passed;
            all.max_abs_err = std::max(all.max_abs_err, r.max_abs_err);
            all.max_rel_err = std::max(all.max_rel_err, r.max_rel_err);
        }
        return all;
    }

    void release(rt::Runtime& rt) override {
        for (uint64_t p : m_allocs) rt.free(p);
        m_allocs.clear();
    }

private:
    StandaloneSpec m_spec;
    std::unique_ptr<INodeOp> m_op;
    std::vector<TensorRef> m_outs;
    std::vector<ref::HostTensor> m_host_in;
    std::vector<uint64_t> m_allocs;
    uint64_t m_workspace = 0;
};

}  // namespace

std::unique_ptr<IOp> make_standalone(StandaloneSpec spec, const DeviceInfo& dev) {
    return std::make_unique<StandaloneOp>(std::move(spec), dev);
}

}  // namespace sfumato::ops
