// Kernel timing re-use for train-step (kernel_reuse.h): the launch key and the stand-in body.
#include "cli/kernel_reuse.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "runtime/ops/node_launch.h"

namespace sfumato::cli {

namespace {

// The key is text built from integers and a 64-bit hash of each constant's values.
class KeyWriter {
public:
    void u(uint64_t v) { m_s += std::to_string(v) + ','; }
    void i(int64_t v) { m_s += std::to_string(v) + ','; }
    void s(const std::string& v) { m_s += std::to_string(v.size()) + ':' + v + ','; }
    void d(double v) {
        uint64_t b = 0;
        std::memcpy(&b, &v, sizeof b);
        u(b);
    }
    void ints(const std::vector<int64_t>& v) {
        u(v.size());
        for (int64_t x : v) i(x);
    }
    void tensor(const ops::TensorRef& t) {
        u(t.present);
        if (!t.present) return;
        ints(t.shape);
        ints(t.strides);
        u(static_cast<uint64_t>(t.dtype));
        u(static_cast<uint64_t>(t.elem));
        u(static_cast<uint64_t>(t.format));
        u(t.addr % 512);  // alignment decides how its rows split into memory requests
    }
    void host(const ref::HostTensor* h) {
        if (!h) {
            u(0);
            return;
        }
        u(1);
        u(static_cast<uint64_t>(h->type));
        ints(h->shape);
        uint64_t hash = 1469598103934665603ull;  // FNV-1a over the values' bits
        for (double v : h->data) {
            uint64_t b = 0;
            std::memcpy(&b, &v, sizeof b);
            for (int k = 0; k < 8; ++k) {
                hash ^= (b >> (8 * k)) & 0xff;
                hash *= 1099511628211ull;
            }
        }
        u(hash);
    }
    void attr(const ref::Attr& a) {
        u(static_cast<uint64_t>(a.kind));
        i(a.i);
        d(a.f);
        s(a.s);
        ints(a.ints);
        u(a.floats.size());
        for (double f : a.floats) d(f);
        u(a.strings.size());
        for (const std::string& x : a.strings) s(x);
        host(a.t.get());
    }
    std::string take() { return std::move(m_s); }

private:
    std::string m_s;
};

}  // namespace

std::string kernel_reuse_key(const KernelDesc& k) {
    const auto* nl = dynamic_cast<const ops::NodeLaunch*>(k.origin.get());
    if (!nl) return {};
    KeyWriter w;
    w.s(k.type);
    w.u(k.origin_part);
    w.u(k.block_dim);
    w.u(static_cast<uint64_t>(k.kind));
    w.u(k.args_bytes);
    w.u(k.code_bytes);
    w.d(k.flops);
    w.u(k.bytes);
    const ops::NodeDesc& n = nl->node;
    w.s(n.op_type);
    w.i(n.opset);
    w.i(n.num_outputs);
    w.u(n.attrs.all().size());
    for (const auto& [name, a] : n.attrs.all()) {
        w.s(name);
        w.attr(a);
    }
    w.u(n.constants.size());
    for (const auto& c : n.constants) w.host(c.get());
    w.u(nl->in.size());
    for (const ops::TensorRef& t : nl->in) w.tensor(t);
    w.u(nl->out.size());
    for (const ops::TensorRef& t : nl->out) w.tensor(t);
    w.u(nl->workspace_bytes);
    w.u(nl->workspace % 512);
    return w.take();
}

KernelReuse::KernelReuse(rt::Context& ctx, const DeviceInfo& dev, uint32_t block_dispatch_cycles,
                         uint32_t core_start_cycles)
    : m_ctx(ctx),
      m_cube(dev.cube_cores),
      m_vector(dev.vector_cores),
      m_aiv_per_aic(dev.aiv_per_aic),
      m_block_cycles(block_dispatch_cycles),
      m_core_cycles(core_start_cycles) {
    m_ctx.set_launch_hook([this](KernelDesc& k) { on_launch(k); });
}

KernelReuse::~KernelReuse() { m_ctx.set_launch_hook(nullptr); }

void KernelReuse::on_launch(KernelDesc& k) {
    const std::string key = kernel_reuse_key(k);
    if (key.empty()) return;
    ++m_candidates;
    // The launch's task record is the next one (Context::launch records it after this hook).
    const size_t index = m_ctx.tasks().size();
    auto found = m_first.find(key);
    if (found == m_first.end()) {
        m_first.emplace(key, index);
        return;
    }
    ++m_reused;
    const uint32_t cores = std::max<uint32_t>(1, k.kind == KernelKind::Vector ? m_vector : m_cube);
    const uint64_t waves = (k.block_dim + cores - 1) / cores;
    rt::Context* ctx = &m_ctx;
    const size_t first = found->second;
    // Blocks are dispatched one after another (delta cycles apart), `cores` at a time. In the
    // first occurrence a wave's blocks started delta apart and, running about equally long, ended
    // delta apart, the last one a wave's span (its span split evenly over its waves) after the
    // first one started. Each stand-in block charges that block time less the first's longest
    // block start-up (its own start-up comes before its body): its blocks end staggered as the
    // first's did (their completion reports do not pile up) and its waves take as long.
    const uint64_t delta = m_block_cycles + uint64_t{m_core_cycles} *
                                                (k.kind == KernelKind::Mix && m_aiv_per_aic ? 1 + m_aiv_per_aic : 1);
    const uint32_t block_dim = k.block_dim;
    // The real body stays for blocks that start before the first occurrence has finished.
    std::function<void(isa::IInstrSink&)> real = std::move(k.body);
    k.body = [ctx, first, waves, cores, block_dim, delta, real](isa::IInstrSink& sink) {
        const Task* f = ctx->tasks().at(first).task.get();
        if (!f || !f->done) {
            real(sink);
            return;
        }
        const uint64_t wave = std::min<uint64_t>(sink.block_idx() / cores, waves - 1);
        const uint64_t in_wave = std::min<uint64_t>(cores, block_dim - wave * cores);
        const uint64_t used = f->startup_cycles + (in_wave - 1) * delta;
        const uint64_t per_wave = f->cycles / waves;
        const uint64_t body = per_wave > used ? per_wave - used : 1;
        sink.scalar(static_cast<uint32_t>(std::min<uint64_t>(body, 0xffffffffu)));
    };
    k.name += " (timing re-used)";
}

}  // namespace sfumato::cli
