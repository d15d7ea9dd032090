// The host side of the Ascend C layer: global-memory buffers as kernels see them (GmAlloc host
// buffers and aclrtMalloc device buffers, one registry mapping any pointer into them to device
// addresses), the CPU-debug calls (GmAlloc, GmFree, SetKernelMode), kernel launches (a KernelDesc
// whose body runs the captured kernel on each block), and scalar access to GM and local buffers.
// GmAlloc memory is the program's: it is written into device memory before each ICPU_RUN_KF and
// read back after it (functional mode), which is what a kernel sees of it.
#include "runtime/ascendc/host_state.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "isa/semantics.h"
#include "runtime/ascendc/core_run.h"
#include "runtime/ascendc/host_backend.h"
#include "sfumato_ascendc/cache.h"
#include "sfumato_ascendc/cpu_debug.h"
#include "sfumato_ascendc/tensor.h"
#include "tiling/platform/platform_ascendc.h"

namespace sfumato::ascendc {

namespace {
BackendFactory g_factory = nullptr;
IHostBackend* g_backend = nullptr;
int g_npu_arch = 0;

std::string hex(uint64_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}
}  // namespace

void set_backend_factory(BackendFactory f) { g_factory = f; }
void set_npu_arch(int arch) {
    if (arch) g_npu_arch = arch;
}

IHostBackend& backend() {
    if (!g_backend) {
        if (!g_factory) {
            std::fprintf(stderr, "error: no simulated chip is linked into this program (link sfumato::ascendc)\n");
            std::exit(kExitFailure);
        }
        g_backend = &g_factory(g_npu_arch);
    }
    return *g_backend;
}

void guarded(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const SimError& e) {
        g_current = nullptr;
        backend().fatal(e);
    }
    g_current = nullptr;
}

HostState& host_state() {
    static HostState s;
    return s;
}

// ---- the GM registry ----

void HostState::add(uintptr_t host, uint64_t dev, uint64_t bytes, uint8_t* storage) {
    bufs[host] = Buffer{dev, bytes, storage};
    by_dev[dev] = host;
}

void HostState::remove(uintptr_t host) {
    auto it = bufs.find(host);
    if (it == bufs.end()) return;
    by_dev.erase(it->second.dev);
    bufs.erase(it);
}

const HostState::Buffer* HostState::find_host(uintptr_t p, uintptr_t* start) const {
    auto it = bufs.upper_bound(p);
    if (it == bufs.begin()) return nullptr;
    --it;
    if (p >= it->first + it->second.span()) return nullptr;
    if (start) *start = it->first;
    return &it->second;
}

const HostState::Buffer* HostState::find_dev(uint64_t d) const {
    auto it = by_dev.upper_bound(d);
    if (it == by_dev.begin()) return nullptr;
    --it;
    const Buffer& b = bufs.at(it->second);
    return d < b.dev + b.span() ? &b : nullptr;
}

GmSpan gm_translate(const void* p) {
    uintptr_t start = 0;
    const HostState::Buffer* b = host_state().find_host(reinterpret_cast<uintptr_t>(p), &start);
    if (!b) fail("GM address " + hex(reinterpret_cast<uintptr_t>(p)) + " lies in no GmAlloc or aclrtMalloc buffer");
    const uint64_t dev = b->dev + (reinterpret_cast<uintptr_t>(p) - start);
    return {dev, b->dev, b->dev + b->span(), 0};
}

GmSpan gm_translate_lazy(const void* p) {
    uintptr_t start = 0;
    const HostState::Buffer* b = host_state().find_host(reinterpret_cast<uintptr_t>(p), &start);
    if (!b) return {0, 0, 0, reinterpret_cast<uintptr_t>(p)};
    const uint64_t dev = b->dev + (reinterpret_cast<uintptr_t>(p) - start);
    return {dev, b->dev, b->dev + b->span(), 0};
}

void gm_check(const GmSpan& s, uint64_t dev, uint64_t bytes) {
    if (s.stray != 0) fail("GM address " + hex(s.stray) + " lies in no GmAlloc or aclrtMalloc buffer");
    if (s.hi == 0) fail("the GlobalTensor was never given a buffer (SetGlobalBuffer)");
    if (dev < s.lo || dev + bytes > s.hi)
        fail("GM bytes [" + std::to_string(static_cast<int64_t>(dev - s.lo)) + ", " +
             std::to_string(static_cast<int64_t>(dev + bytes - s.lo)) + ") of a buffer of " +
             std::to_string(s.hi - s.lo) + " bytes: outside the buffer");
}

// ---- scalar access ----

void gm_scalar_read(uint64_t dev, void* dst, uint32_t bytes) {
    CoreState& st = *g_current;
    scalar_gm_access(false, dev, dst, bytes);
    if (st.mem) {
        st.mem->gm_read(dev, dst, bytes);
        note_poll(dev, dst, bytes);
        return;
    }
    // Timing mode: GmAlloc memory and small host->device copies are still readable (tiling data).
    std::memset(dst, 0, bytes);
    host_state().shadow_read(dev, dst, bytes);
    note_poll(dev, dst, bytes);
}

void gm_scalar_write(uint64_t dev, const void* src, uint32_t bytes) {
    CoreState& st = *g_current;
    scalar_gm_access(true, dev, src, bytes);
    if (st.mem) {
        st.mem->gm_write(dev, src, bytes);
        return;
    }
    // Timing mode: where scalar reads see memory (GmAlloc buffers, small host-to-device copies),
    // they also see the kernel's scalar writes, so blocks that hand each other a flag through GM
    // (ReadGmByPassDCache in a loop) behave as in functional mode and take its cycles.
    host_state().shadow_write(dev, src, bytes);
}

void gm_scalar_read_ptr(const void* gm, void* dst, uint32_t bytes) {
    const GmSpan s = gm_translate(gm);
    gm_check(s, s.dev, bytes);
    gm_scalar_read(s.dev, dst, bytes);
}

void gm_scalar_write_ptr(const void* gm, const void* src, uint32_t bytes) {
    const GmSpan s = gm_translate(gm);
    gm_check(s, s.dev, bytes);
    gm_scalar_write(s.dev, src, bytes);
}

void dcci(uint64_t dev, bool all) {
    CoreState& st = *g_current;
    isa::Instr in = isa::make_instr(isa::Opcode::DCCI);
    in.dst = {dev, isa::Pos::GM};
    in.sc.all = all ? 1 : 0;
    st.ctx->issue(in);
}

void HostState::shadow_read(uint64_t dev, void* dst, uint32_t bytes) const {
    if (const Buffer* b = find_dev(dev); b && b->storage) {
        const uint64_t off = dev - b->dev;
        if (off + bytes <= b->span()) std::memcpy(dst, b->storage + off, bytes);
        return;
    }
    auto it = shadows.upper_bound(dev);
    if (it == shadows.begin()) return;
    --it;
    const uint64_t off = dev - it->first;
    if (off + bytes <= it->second.size()) std::memcpy(dst, it->second.data() + off, bytes);
}

void HostState::shadow_write(uint64_t dev, const void* src, uint32_t bytes) {
    if (const Buffer* b = find_dev(dev); b && b->storage) {
        const uint64_t off = dev - b->dev;
        if (off + bytes <= b->span()) std::memcpy(b->storage + off, src, bytes);
        return;
    }
    auto it = shadows.upper_bound(dev);
    if (it == shadows.begin()) return;
    --it;
    const uint64_t off = dev - it->first;
    if (off + bytes <= it->second.size()) std::memcpy(it->second.data() + off, src, bytes);
}

namespace {
void check_local(isa::Pos pos, uint64_t addr, uint32_t bytes) {
    const uint64_t cap = g_current->sink->buffer_size(pos);
    if (addr + bytes > cap)
        fail(std::string(isa::pos_name(pos)) + " byte " + std::to_string(addr) + " beyond the " + std::to_string(cap) +
             "-byte buffer");
}

// A UB access on a cube core: in a mix kernel's serving pass it is the AIV's own work (the AIV does it; the
// AIC reads zeros and writes nothing), anywhere else the AIC has no UB.
bool aic_ub(isa::Pos pos) {
    if (pos != isa::Pos::UB || g_current->sink->core_kind() != isa::CoreKind::Cube) return false;
    if (!g_current->mm_server) fail("a scalar access of UB on a cube core (it has no UB)");
    return true;
}
}  // namespace

void local_scalar_read(isa::Pos pos, uint64_t addr, void* dst, uint32_t bytes) {
    check_local(pos, addr, bytes);
    if (aic_ub(pos)) std::memset(dst, 0, bytes);
    else if (isa::IMemView* m = g_current->mem) std::memcpy(dst, m->local(pos, addr, bytes), bytes);
    else std::memset(dst, 0, bytes);
}

void local_scalar_write(isa::Pos pos, uint64_t addr, const void* src, uint32_t bytes) {
    check_local(pos, addr, bytes);
    if (aic_ub(pos)) return;
    if (isa::IMemView* m = g_current->mem) std::memcpy(m->local(pos, addr, bytes), src, bytes);
}

// ---- launches ----

namespace {

KernelKind resolve_kind(LaunchKind k) {
    switch (k) {
        case LaunchKind::Vector: return KernelKind::Vector;
        case LaunchKind::Cube: return KernelKind::Cube;
        case LaunchKind::Mix: return KernelKind::Mix;
        default: break;
    }
    switch (host_state().mode) {
        case KernelMode::AIV_MODE: return KernelKind::Vector;
        case KernelMode::AIC_MODE: return KernelKind::Cube;
        default: return KernelKind::Mix;
    }
}

// GmAlloc buffers into device memory before a CPU-debug launch, and back after it.
void sync_gm_alloc(IBackingStore* gm, bool to_device) {
    if (!gm) return;
    for (auto& [host, b] : host_state().bufs) {
        if (!b.storage) continue;
        if (to_device) gm->write(b.dev, b.storage, b.bytes);
        else gm->read(b.dev, b.storage, b.bytes);
    }
}

}  // namespace

KernelDesc make_kernel_desc(const LaunchRequest& r, const DeviceInfo& dev) {
    if (r.block_dim == 0 || r.block_dim > 65535)
        throw InputError("launch of " + r.name + ": blockDim " + std::to_string(r.block_dim) + " (1..65535)");
    KernelDesc k;
    k.name = r.name;
    k.type = r.name;
    k.block_dim = r.block_dim;
    k.kind = resolve_kind(r.kind);
    k.args_bytes = r.args_bytes;
    BlockSetup setup;
    setup.functional = dev.functional;
    setup.mix = k.kind == KernelKind::Mix && dev.arch == "split";
    setup.aiv_per_aic = dev.aiv_per_aic;
    setup.aiv_ub_bytes = dev.ub_bytes;
    std::function<void()> body = r.body;
    if (r.body_aiv) {
        // One program per core kind: the AIC's and the AIV's bodies of one launch, as a mix kernel.
        if (dev.arch != "split")
            throw InputError("launch of " + r.name + ": the kernel is compiled once per core kind (AIC and AIV "
                             "programs) and needs a chip with separate cube and vector cores (ascend910b-like)");
        k.kind = KernelKind::Mix;
        setup.mix = true;
        std::function<void()> aiv = r.body_aiv;
        k.body = [setup, body, aiv](isa::IInstrSink& sink) {
            run_block(sink, setup, sink.core_kind() == isa::CoreKind::Vector ? aiv : body);
        };
        return k;
    }
    k.body = [setup, body](isa::IInstrSink& sink) { run_block(sink, setup, body); };
    return k;
}

namespace {
std::map<std::string, CoreBodyFn>& core_bodies() {
    static std::map<std::string, CoreBodyFn> m;
    return m;
}
}  // namespace

bool register_core_body(const char* key, int core_type, CoreBodyFn fn) {
    core_bodies()[std::to_string(core_type) + "|" + key] = fn;
    return true;
}

CoreBodyFn core_body(const std::string& key, int core_type) {
    auto it = core_bodies().find(std::to_string(core_type) + "|" + key);
    return it == core_bodies().end() ? nullptr : it->second;
}

void ib_reset();  // vector.cpp: no IBSet slot is set when a kernel starts

void launch(LaunchRequest r) {
    guarded([&] {
        ib_reset();
        IHostBackend& b = backend();
        KernelDesc k = make_kernel_desc(r, b.info());
        if (r.cpu_debug) {
            b.run([&](rt::Runtime& rt) {
                sync_gm_alloc(b.gm(), true);
                rt.launch(std::move(k), rt.default_stream());
                rt.synchronize(rt.default_stream());
                sync_gm_alloc(b.gm(), false);
            });
        } else {
            const uint32_t stream = stream_id(r.stream);
            b.run([&](rt::Runtime& rt) {
                if (rt.context().launch(std::move(k), stream) != rt::Status::Ok)
                    throw InputError("launch of " + r.name + ": " + rt.context().last_error());
            });
        }
    });
}

}  // namespace sfumato::ascendc

namespace AscendC {

void* GmAlloc(size_t size) {
    using namespace sfumato::ascendc;
    void* result = nullptr;
    guarded([&] {
        if (size == 0) throw sfumato::InputError("AscendC::GmAlloc of 0 bytes");
        IHostBackend& b = backend();
        uint64_t dev = 0;
        b.run([&](sfumato::rt::Runtime& rt) { dev = rt.malloc(size); });
        const uint64_t span = (size + 31) / 32 * 32;
        auto* mem = static_cast<uint8_t*>(std::aligned_alloc(64, (span + 63) / 64 * 64));
        if (!mem) throw sfumato::InputError("AscendC::GmAlloc of " + std::to_string(size) + " bytes: out of host memory");
        std::memset(mem, 0, span);
        host_state().add(reinterpret_cast<uintptr_t>(mem), dev, size, mem);
        result = mem;
    });
    return result;
}

void GmFree(void* ptr) {
    using namespace sfumato::ascendc;
    guarded([&] {
        auto it = host_state().bufs.find(reinterpret_cast<uintptr_t>(ptr));
        if (it == host_state().bufs.end() || !it->second.storage)
            throw sfumato::InputError("AscendC::GmFree of a pointer GmAlloc did not return");
        const uint64_t dev = it->second.dev;
        uint8_t* mem = it->second.storage;
        host_state().remove(reinterpret_cast<uintptr_t>(ptr));
        std::free(mem);
        backend().run([&](sfumato::rt::Runtime& rt) { rt.free(dev); });
    });
}

void SetKernelMode(KernelMode mode) { sfumato::ascendc::host_state().mode = mode; }

}  // namespace AscendC

namespace sfumato::ascendc {

PlatformInfo platform_info() {
    PlatformInfo p;
    guarded([&] {
        const DeviceInfo& d = backend().info();
        p.split = d.arch == "split";
        p.aic = d.cube_cores;
        p.aiv = d.vector_cores;
        p.ub = d.ub_bytes, p.l1 = d.l1_bytes, p.l0a = d.l0a_bytes, p.l0b = d.l0b_bytes, p.l0c = d.l0c_bytes;
        p.l2 = d.l2_bytes, p.hbm = d.gm_bytes;
    });
    return p;
}

// ---- scalar GM access ----
// Scalar access to global memory by a running block (GlobalTensor::GetValue/SetValue,
// ReadGmByPassDCache/WriteGmByPassDCache): each access issues the scalar unit's load or store
// (LD_GM/ST_GM, timed through the core's data cache), and the block's code continues only when
// the scalar unit reached that access in simulated time, so a block polling GM lets the others
// run. The data itself is read and written by gm_scalar_read/gm_scalar_write, in both modes.
//
// A poll that can never end: when every running block keeps reading one GM word that keeps its
// value (kPollLimit reads in a row each), nothing can change those words any more (no other
// block runs), so the run stops naming the block, the call, the address and the value (exit 2)
// instead of spinning forever.
namespace {
constexpr uint32_t kPollLimit = 1u << 16;
uint32_t g_running = 0;  // blocks inside run_block
uint32_t g_stuck = 0;    // of them, blocks at kPollLimit identical reads

isa::DType word_type(uint64_t dev, uint32_t n, uint32_t& used) {
    used = n >= 4 && dev % 4 == 0 ? 4 : n >= 2 && dev % 2 == 0 ? 2 : 1;
    return used == 4 ? isa::DType::INT32 : used == 2 ? isa::DType::INT16 : isa::DType::UINT8;
}
}  // namespace

void scalar_gm_access(bool store, uint64_t dev, const void* bytes, uint32_t n) {
    CoreState& st = *g_current;
    uint32_t used = 0;
    isa::Instr in = isa::make_instr(store ? isa::Opcode::ST_GM : isa::Opcode::LD_GM);
    in.dtype = word_type(dev, n, used);
    if (store) {
        in.dst = {dev, isa::Pos::GM};
        uint8_t b[8] = {};
        std::memcpy(b, bytes, used);
        in.scalar = isa::load_f64(in.dtype, b);  // exact; the caller writes every byte after it
        st.sink->issue(in);
    } else {
        in.src0 = {dev, isa::Pos::GM};
        st.sink->load(in);
    }
}

void note_poll(uint64_t dev, const void* bytes, uint32_t n) {
    CoreState& st = *g_current;
    uint64_t v = 0;
    std::memcpy(&v, bytes, n < 8 ? n : 8);
    if (dev != st.poll_addr || v != st.poll_value) {
        if (st.polls >= kPollLimit) --g_stuck;
        st.poll_addr = dev, st.poll_value = v, st.polls = 1;
        return;
    }
    if (st.polls >= kPollLimit) return;
    if (++st.polls < kPollLimit) return;
    if (++g_stuck < g_running) return;
    std::ostringstream m;
    m << "reads GM 0x" << std::hex << dev << std::dec << " (value " << v << ") for the " << kPollLimit
      << "th time in a row while every running block only polls GM: nothing can change it any more (a wait "
         "that never ends)";
    fail(m.str());
}

void block_started() {
    ++g_running;
    raw_gm_reset();
}

void block_ended(CoreState& st) {
    raw_gm_reset();
    if (st.polls >= kPollLimit) --g_stuck;
    --g_running;
}

}  // namespace sfumato::ascendc
