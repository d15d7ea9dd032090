// The device side of the Ascend C layer: the per-block state behind the implicit context, the
// sink decorator that keeps it current across coroutine switches, the block wrapper that turns
// an error inside a kernel into one naming the block and the call, and the helpers the headers
// declare (event pools, static allocation, parameter conversions, atomic stores, printf).
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "isa/semantics.h"
#include "runtime/ascendc/core_run.h"
#include "runtime/ascendc/host_state.h"
#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/fixpipe_more.h"
#include "sfumato_ascendc/misc.h"
#include "sfumato_ascendc/sync.h"
#include "sim/error.h"

int64_t block_idx = 0;
int64_t block_num = 1;
int g_coreType = AscendC::AIV;

namespace sfumato::ascendc {

CoreState* g_current = nullptr;

CoreState& current_core(const char* call) {
    if (!g_current) throw InputError(std::string("AscendC::") + call + " called outside a running kernel");
    g_current->call = call;
    return *g_current;
}

void fail(const std::string& msg) { throw InputError(msg); }

namespace {

bool vector_side(isa::Pipe p) { return p == isa::Pipe::V || p == isa::Pipe::MTE3; }

// In a mix kernel's serving pass (the AIC running the body as one of its AIVs, mm_server), the body's own
// vector work is that AIV's, which runs it itself: instructions of the pipes only an AIV has (V, MTE3),
// flags naming them, and anything reading or writing UB. The AIC issues the rest (its Matmul calls).
bool aiv_work(const isa::Instr& in) {
    if (in.op == isa::Opcode::SET_FLAG || in.op == isa::Opcode::WAIT_FLAG)
        return vector_side(in.flag.src) || vector_side(in.flag.dst);
    if (vector_side(in.pipe)) return true;
    isa::Extent ext[isa::kMaxExtents];
    const int n = isa::footprint(in, ext);
    for (int i = 0; i < n; ++i)
        if (ext[i].pos == isa::Pos::UB) return true;
    return false;
}

// On a Matmul client AIV (mm_client), the body's cube-side work is its AIC's (done in the serving pass): the
// pipes only an AIC has (MTE1, M, FIX), flags naming them, and anything reading or writing L1, L0A/B/C, the bias
// table or the FixPipe buffer.
bool cube_side(isa::Pipe p) { return p == isa::Pipe::MTE1 || p == isa::Pipe::M || p == isa::Pipe::FIX; }
bool aic_work(const isa::Instr& in) {
    if (in.op == isa::Opcode::SET_FLAG || in.op == isa::Opcode::WAIT_FLAG)
        return cube_side(in.flag.src) || cube_side(in.flag.dst);
    if (cube_side(in.pipe)) return true;
    isa::Extent ext[isa::kMaxExtents];
    const int n = isa::footprint(in, ext);
    for (int i = 0; i < n; ++i)
        if (ext[i].pos != isa::Pos::UB && ext[i].pos != isa::Pos::GM) return true;
    return false;
}

// Forwards to the core's sink and, after every call (where other blocks may have run), makes
// this block's state current again.
class CoreSink final : public isa::IInstrSink {
public:
    CoreSink(isa::IInstrSink& real, CoreState& st) : m_real(real), m_st(st) {}
    void issue(const isa::Instr& in) override {
        if (m_st.mm_server && aiv_work(in)) return;
        if (m_st.mm_client && aic_work(in)) return;
        m_real.issue(in);
        resume();
    }
    uint64_t load(const isa::Instr& in) override {
        if (m_st.mm_server && aiv_work(in)) return 0;
        const uint64_t v = m_real.load(in);
        resume();
        return v;
    }
    void scalar(uint32_t cycles) override {
        m_real.scalar(cycles);
        resume();
    }
    uint32_t block_idx() const override { return m_real.block_idx(); }
    uint32_t block_num() const override { return m_real.block_num(); }
    uint32_t sub_block_idx() const override { return m_real.sub_block_idx(); }
    isa::CoreKind core_kind() const override { return m_real.core_kind(); }
    // A mix kernel's AIC runs the body's UB bookkeeping too (TPipe::InitBuffer of its AIVs' queues, before
    // REGIST_MATMUL_OBJ and in serving passes): the UB it sees is its AIVs'. Its own UB instructions
    // still fail. So does a cube-only kernel's AIC on a chip whose AICs have no UB (catlass's AIC-only
    // SmallMatmul builds its Arch::Resource, a TBuf of the whole UB among them, as every kernel does).
    // Likewise a mix kernel's AIV keeps the books of buffers in its AIC's L1, L0A/B/C, bias table and FixPipe
    // buffer (TPipe::InitBuffer: catlass's Arch::Resource reserves them on every core); instructions on them
    // still fail on the AIV.
    uint64_t buffer_size(isa::Pos pos) const override {
        if (pos == isa::Pos::UB && m_real.core_kind() == isa::CoreKind::Cube &&
            (m_st.mix || m_real.buffer_size(pos) == 0))
            return m_st.aiv_ub_bytes;
        if (pos != isa::Pos::UB && pos != isa::Pos::GM && m_st.mix && m_real.core_kind() == isa::CoreKind::Vector)
            return m_st.aic_bytes[static_cast<size_t>(pos)];
        return m_real.buffer_size(pos);
    }
    uint32_t event_ids() const override { return m_real.event_ids(); }
    void resume() {
        g_current = &m_st;
        ::block_idx = m_st.block_idx;
        ::block_num = m_st.block_num;
        ::g_coreType = m_st.core_type;
    }

private:
    isa::IInstrSink& m_real;
    CoreState& m_st;
};

const char* kind_name(isa::CoreKind k) {
    switch (k) {
        case isa::CoreKind::Cube: return "AIC";
        case isa::CoreKind::Vector: return "AIV";
        default: return "core";
    }
}

}  // namespace

void run_block(isa::IInstrSink& real, const BlockSetup& setup, const std::function<void()>& body) {
    CoreState st;
    CoreSink sink(real, st);
    kernel::KernelContext ctx(sink);
    st.ctx = &ctx;
    st.sink = &sink;
    st.mem = setup.functional ? dynamic_cast<isa::IMemView*>(&real) : nullptr;
    const isa::CoreKind kind = real.core_kind();
    st.coupled = kind == isa::CoreKind::Coupled;
    st.core_type = st.coupled ? AscendC::MIX : kind == isa::CoreKind::Cube ? AscendC::AIC : AscendC::AIV;
    st.block_idx = real.block_idx();
    st.block_num = real.block_num();
    st.sub_block_idx = real.sub_block_idx();
    st.mix = setup.mix;
    st.aiv_per_aic = setup.aiv_per_aic;
    st.aiv_ub_bytes = setup.aiv_ub_bytes;
    st.aic_bytes = setup.aic_bytes;
    if (setup.mix && kind == isa::CoreKind::Vector && setup.aiv_per_aic > 1) {
        // Mix kernels: the AIVs of block b are blocks b * ratio + sub of the vector side.
        st.task_ratio = setup.aiv_per_aic;
        st.block_idx = int64_t{real.block_idx()} * setup.aiv_per_aic + real.sub_block_idx();
    }
    const std::string who = "block " + std::to_string(real.block_idx()) +
                            (st.coupled ? "" : std::string(" (") + kind_name(kind) +
                                                   (kind == isa::CoreKind::Vector && setup.mix
                                                        ? " " + std::to_string(real.sub_block_idx())
                                                        : "") +
                                                   ")");
    sink.resume();
    block_started();
    struct Ended {
        CoreState& st;
        ~Ended() { block_ended(st); }
    } ended{st};
    try {
        bool serve = false;
        try {
            body();
        } catch (const MatmulServeClients&) {
            serve = true;
        }
        // The AIC of a mix kernel whose Matmuls are the AIVs' (client mode): the body again for each AIV,
        // as that AIV, the Matmul calls issued here (the server serving its clients in turn).
        for (uint32_t i = 0; serve && i < std::max<uint32_t>(setup.aiv_per_aic, 1); ++i) {
            ctx.reset_events();
            for (auto& pool : st.free_events) pool.clear();
            st.pipe = nullptr;
            st.mm_shared_l0 = nullptr;
            for (uint64_t& n : st.local_next) n = 0;
            st.mm_server = true;
            st.core_type = AscendC::AIV;
            st.task_ratio = std::max<uint32_t>(setup.aiv_per_aic, 1);
            st.block_idx = int64_t{real.block_idx()} * st.task_ratio + i;
            st.sub_block_idx = i;
            sink.resume();  // block_idx and g_coreType (ASCEND_IS_AIV) as the AIV's
            try {
                body();
            } catch (const MatmulPassDone&) {
            }
            ctx.pipe_barrier(isa::Pipe::ALL);  // the pass's stores drained, as at a body's end
            kernel::CrossCoreSetFlag(ctx, 2, kMmServedFlag, isa::Pipe::FIX, true);
        }
    } catch (const SimError& e) {
        g_current = nullptr;
        // A failing call is the kernel's bad input (exit 2), whichever layer noticed it.
        std::string msg = who + ": AscendC::" + st.call + ": " + e.what();
        if (setup.mix && std::string(e.what()).find("this core has no") != std::string::npos)
            msg += " (the kernel runs as a mix kernel, on both core kinds: a vector-only CPU-debug kernel needs "
                   "AscendC::SetKernelMode(KernelMode::AIV_MODE), a cube-only one AIC_MODE)";
        throw SimError(e.code() == kExitFailure ? kExitBadInput : e.code(), msg);
    } catch (...) {
        g_current = nullptr;
        throw;
    }
    g_current = nullptr;
}

// ---- events ----

PipePair event_pipes(AscendC::HardEvent e) {
    using AscendC::HardEvent;
    using isa::Pipe;
    switch (e) {
        case HardEvent::MTE2_MTE1: return {Pipe::MTE2, Pipe::MTE1};
        case HardEvent::MTE1_MTE2: return {Pipe::MTE1, Pipe::MTE2};
        case HardEvent::MTE1_M: return {Pipe::MTE1, Pipe::M};
        case HardEvent::M_MTE1: return {Pipe::M, Pipe::MTE1};
        case HardEvent::MTE2_V: return {Pipe::MTE2, Pipe::V};
        case HardEvent::V_MTE2: return {Pipe::V, Pipe::MTE2};
        case HardEvent::MTE3_V: return {Pipe::MTE3, Pipe::V};
        case HardEvent::V_MTE3: return {Pipe::V, Pipe::MTE3};
        case HardEvent::M_V: return {Pipe::M, Pipe::V};
        case HardEvent::V_M: return {Pipe::V, Pipe::M};
        case HardEvent::V_V: return {Pipe::V, Pipe::V};
        case HardEvent::MTE3_MTE1: return {Pipe::MTE3, Pipe::MTE1};
        case HardEvent::MTE1_MTE3: return {Pipe::MTE1, Pipe::MTE3};
        case HardEvent::MTE1_V: return {Pipe::MTE1, Pipe::V};
        case HardEvent::MTE2_M: return {Pipe::MTE2, Pipe::M};
        case HardEvent::M_MTE2: return {Pipe::M, Pipe::MTE2};
        case HardEvent::V_MTE1: return {Pipe::V, Pipe::MTE1};
        case HardEvent::M_FIX: return {Pipe::M, Pipe::FIX};
        case HardEvent::FIX_M: return {Pipe::FIX, Pipe::M};
        case HardEvent::MTE3_MTE2: return {Pipe::MTE3, Pipe::MTE2};
        case HardEvent::MTE2_MTE3: return {Pipe::MTE2, Pipe::MTE3};
        case HardEvent::S_V: return {Pipe::S, Pipe::V};
        case HardEvent::V_S: return {Pipe::V, Pipe::S};
        case HardEvent::S_MTE2: return {Pipe::S, Pipe::MTE2};
        case HardEvent::MTE2_S: return {Pipe::MTE2, Pipe::S};
        case HardEvent::S_MTE3: return {Pipe::S, Pipe::MTE3};
        case HardEvent::MTE3_S: return {Pipe::MTE3, Pipe::S};
        case HardEvent::MTE2_FIX: return {Pipe::MTE2, Pipe::FIX};
        case HardEvent::FIX_MTE2: return {Pipe::FIX, Pipe::MTE2};
        case HardEvent::FIX_S: return {Pipe::FIX, Pipe::S};
        case HardEvent::M_S: return {Pipe::M, Pipe::S};
        case HardEvent::FIX_MTE3: return {Pipe::FIX, Pipe::MTE3};
        case HardEvent::MTE1_FIX: return {Pipe::MTE1, Pipe::FIX};
        case HardEvent::FIX_MTE1: return {Pipe::FIX, Pipe::MTE1};
        case HardEvent::FIX_FIX: return {Pipe::FIX, Pipe::FIX};
        default: fail("HardEvent " + std::to_string(static_cast<int>(e)) + " names no pipe pair");
    }
}

isa::Pipe pipe_of(pipe_t p) {
    switch (p) {
        case PIPE_S: return isa::Pipe::S;
        case PIPE_V: return isa::Pipe::V;
        case PIPE_M: return isa::Pipe::M;
        case PIPE_MTE1: return isa::Pipe::MTE1;
        case PIPE_MTE2: return isa::Pipe::MTE2;
        case PIPE_MTE3: return isa::Pipe::MTE3;
        case PIPE_ALL: return isa::Pipe::ALL;
        case PIPE_FIX: return isa::Pipe::FIX;
        default: fail("pipe " + std::to_string(static_cast<int>(p)) + " is not modelled (PIPE_MTE4/MTE5/V2)");
    }
}

// The set_flag/wait_flag instructions carry the event id in a field of log2(ids per pipe pair) bits
// (3 on Atlas A2: the vendor's intrinsic reference, "3bit event ID"); an id taken from a register keeps
// its low bits there, so an id outside the range names the event its low bits do, as on the chip
// (catlass's BlockMmadTla with the unit flag sets and waits MTE1_M on an id it never initialises), with
// a warning once per call. Where the count is not a power of two no field width fits: an error.
uint8_t event_id(AscendC::HardEvent, int32_t id) {
    const uint32_t n = g_current->sink->event_ids();
    const uint32_t u = static_cast<uint32_t>(id);
    if (u < n) return static_cast<uint8_t>(id);
    if (n == 0 || (n & (n - 1)) != 0)
        fail("event id " + std::to_string(id) + " (this core has " + std::to_string(n) + " per pipe pair)");
    const uint32_t field = u & (n - 1);
    static std::vector<std::string> warned;
    const std::string call = g_current->call ? g_current->call : "";
    if (std::find(warned.begin(), warned.end(), call) == warned.end()) {
        warned.push_back(call);
        int bits = 0;
        while ((1u << bits) < n) ++bits;
        std::fprintf(stderr,
                     "sfumato: warning: AscendC::%s: event id %d is outside 0..%u; the instruction's %d-bit field "
                     "keeps its low bits (%u), as the chip does (an uninitialised or miscomputed id?)\n",
                     call.c_str(), id, n - 1, bits, field);
    }
    return static_cast<uint8_t>(field);
}

uint8_t cross_flag_id(const char* call, uint16_t id) {
    if (id > isa::kMaxCrossFlag)
        fail(std::string(call) + ": flagId " + std::to_string(id) + " (Atlas A2 has flag ids 0.." +
             std::to_string(isa::kMaxCrossFlag) + ")");
    return static_cast<uint8_t>(id);
}

namespace {
std::vector<uint8_t>& pool(AscendC::HardEvent e) {
    const PipePair pp = event_pipes(e);
    return g_current->free_events[static_cast<size_t>(pp.src) * isa::kNumPipes + static_cast<size_t>(pp.dst)];
}
}  // namespace

AscendC::TEventID alloc_event(AscendC::HardEvent e) {
    std::vector<uint8_t>& free = pool(e);
    if (!free.empty()) {
        const uint8_t id = free.back();
        free.pop_back();
        return static_cast<AscendC::TEventID>(id);
    }
    const PipePair pp = event_pipes(e);
    return static_cast<AscendC::TEventID>(g_current->ctx->alloc_event(pp.src, pp.dst, "TPipe::AllocEventID"));
}

void release_event(AscendC::HardEvent e, AscendC::TEventID id) { pool(e).push_back(static_cast<uint8_t>(id)); }

AscendC::TEventID fetch_event(AscendC::HardEvent e) {
    std::vector<uint8_t>& free = pool(e);
    if (free.empty()) release_event(e, alloc_event(e));
    return static_cast<AscendC::TEventID>(free.back());
}

// ---- buffers and queues ----

kernel::QueuePipes bound_pipes(AscendC::TPosition src, AscendC::TPosition dst) {
    const isa::CoreKind k = g_current->sink->core_kind();
    return {kernel::queue_pipes(kernel_position(src), k).producer, kernel::queue_pipes(kernel_position(dst), k).consumer};
}

LocalRange local_alloc(AscendC::Hardware hw, uint64_t bytes) {
    CoreState& st = enter("LocalMemAllocator::Alloc");
    using AscendC::Hardware;
    using AscendC::TPosition;
    struct Where {
        TPosition pos;
        isa::Pos phys;
        uint32_t align;
    };
    Where w;
    switch (hw) {
        case Hardware::UB: w = {TPosition::VECCALC, isa::Pos::UB, 32}; break;
        case Hardware::L1: w = {TPosition::A1, isa::Pos::L1, 32}; break;
        case Hardware::L0A: w = {TPosition::A2, isa::Pos::L0A, 512}; break;
        case Hardware::L0B: w = {TPosition::B2, isa::Pos::L0B, 512}; break;
        case Hardware::L0C: w = {TPosition::CO1, isa::Pos::L0C, 64}; break;
        case Hardware::BIAS: w = {TPosition::C2, isa::Pos::BT, 64}; break;
        case Hardware::FIXBUF: w = {TPosition::C2PIPE2GM, isa::Pos::FB, 128}; break;
        default: fail("LocalMemAllocator of a buffer the core does not have");
    }
    uint64_t& next = st.local_next[static_cast<size_t>(w.phys)];
    const uint64_t at = (next + w.align - 1) / w.align * w.align;
    const uint64_t cap = st.sink->buffer_size(w.phys);
    if (at + bytes > cap)
        fail(std::to_string(bytes) + " bytes do not fit in " + isa::pos_name(w.phys) + " (" + std::to_string(at) +
             " of " + std::to_string(cap) + " bytes used)");
    next = at + bytes;
    return {w.pos, static_cast<uint32_t>(at)};
}

// ---- conversions ----

isa::RoundMode kround(AscendC::RoundMode m) {
    using AscendC::RoundMode;
    switch (m) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT: return isa::RoundMode::RINT;
        case RoundMode::CAST_FLOOR: return isa::RoundMode::FLOOR;
        case RoundMode::CAST_CEIL: return isa::RoundMode::CEIL;
        case RoundMode::CAST_ROUND: return isa::RoundMode::ROUND;
        case RoundMode::CAST_TRUNC: return isa::RoundMode::TRUNC;
        case RoundMode::CAST_ODD: return isa::RoundMode::ODD;
    }
    fail("unknown RoundMode");
}

isa::CmpMode kcmp(AscendC::CMPMODE m) {
    using AscendC::CMPMODE;
    switch (m) {
        case CMPMODE::LT: return isa::CmpMode::LT;
        case CMPMODE::GT: return isa::CmpMode::GT;
        case CMPMODE::EQ: return isa::CmpMode::EQ;
        case CMPMODE::LE: return isa::CmpMode::LE;
        case CMPMODE::GE: return isa::CmpMode::GE;
        case CMPMODE::NE: return isa::CmpMode::NE;
    }
    fail("unknown CMPMODE");
}

namespace {
// The scale of a FixPipe quantisation word: bits 31..13 as a (1, 8, 10) float (an fp32 without
// its low 13 mantissa bits); the shift (bits 36..32) and the offset (bits 45..37) are not modelled.
double quant_scale(const char* what, uint64_t word) {
    if ((word >> 32) & 0x3fffu)
        fail(std::string(what) +
             ": a quantisation shift or offset (bits 32..45 of the word) is not modelled");
    return isa::bits_f32(static_cast<uint32_t>(word) & 0xffffe000u);
}
}  // namespace

void set_fixpipe_quant(uint64_t config) { g_current->fix_quant = config; }
void set_fixpipe_nz2nd(uint16_t ndNum, uint16_t srcNdStride, uint32_t dstNdStride) {
    if (ndNum == 0) fail("SetFixpipeNz2ndFlag: ndNum 0 (1..65535)");
    CoreState& st = *g_current;
    st.fix_nd_num = ndNum, st.fix_src_nd = srcNdStride, st.fix_dst_nd = dstNdStride;
}

uint8_t unit_flag(const char* what, uint8_t uf) {
    if (uf != 0 && uf != 2 && uf != 3) fail(std::string(what) + " " + std::to_string(uf) + " (0, 2 or 3)");
    return uf;
}

kernel::FixpipeParams kco12(const AscendC::DataCopyCO12DstParams& p) {
    if (p.clipReluPre || p.eltWiseOp) fail("DataCopyCO12DstParams::clipReluPre/eltWiseOp are not modelled");
    if (p.reluPre > 1)
        fail("DataCopyCO12DstParams::reluPre " + std::to_string(p.reluPre) + " (0 or 1 modelled)");
    AscendC::FixpipeParamsV220 f;
    f.nSize = p.nSize, f.mSize = p.mSize, f.srcStride = p.srcStride, f.dstStride = p.dstStride;
    f.reluEn = p.reluPre == 1;
    f.isChannelSplit = p.channelSplit;
    f.quantPre = p.quantPre;
    f.deqScalar = g_current->fix_quant;
    f.unitFlag = p.unitFlag;
    f.ndNum = g_current->fix_nd_num, f.srcNdStride = g_current->fix_src_nd;
    f.dstNdStride = static_cast<uint16_t>(std::min<uint32_t>(g_current->fix_dst_nd, 0xffffu));
    return kfixpipe(f, p.nz2ndEn);
}

kernel::FixpipeParams kfixpipe(const AscendC::FixpipeParamsV220& p, bool nz2nd) {
    if (p.isChannelSplit && nz2nd)
        fail("FixpipeParamsV220::isChannelSplit with CFG_ROW_MAJOR (NZ output only)");
    kernel::FixpipeParams k;
    k.nSize = p.nSize, k.mSize = p.mSize, k.srcStride = p.srcStride, k.dstStride = p.dstStride;
    k.reluEn = p.reluEn;
    k.nz2ndEn = nz2nd;
    k.channelSplit = p.isChannelSplit;
    k.unitFlag = unit_flag("FixpipeParamsV220::unitFlag", p.unitFlag);
    // SetAtomicAdd is in force for the FixPipe's stores too (the split-K Matmul's partial sums).
    if (g_current && g_current->atomic_op > 1) fail("Fixpipe with SetAtomicMax/Min in force: not modelled (add only)");
    k.atomicAdd = g_current && g_current->atomic_op == 1;
    // Several matrices are an NZ -> ND feature (the reference); an NZ output is one matrix.
    if (nz2nd && p.ndNum > 1) {
        if (p.srcNdStride == 0 || p.dstNdStride == 0)
            fail("FixpipeParamsV220::ndNum " + std::to_string(p.ndNum) +
                 " with srcNdStride or dstNdStride 0 (1..512 blocks of 1024 B, 1..65535 elements)");
        k.ndNum = p.ndNum, k.srcNdStride = p.srcNdStride, k.dstNdStride = p.dstNdStride;
    }
    switch (p.quantPre) {
        case QuantMode_t::NoQuant:
        case QuantMode_t::F322F16:
        case QuantMode_t::F322BF16:
        case QuantMode_t::F322F32: k.quantPre = isa::QuantMode::NONE; break;
        case QuantMode_t::DEQF16:
        case QuantMode_t::QF322B8_PRE:
        case QuantMode_t::REQ8:
            k.quantPre = isa::QuantMode::SCALAR;
            k.deqScalar = quant_scale("FixpipeParamsV220::deqScalar", p.deqScalar);
            break;
        case QuantMode_t::VDEQF16:
        case QuantMode_t::VQF322B8_PRE:
        case QuantMode_t::VREQ8: k.quantPre = isa::QuantMode::VECTOR; break;  // the words: runtime/ascendc/fixpipe.cpp
        default: fail("FixpipeParamsV220::quantPre: a mode Atlas A2's FixPipe does not have");
    }
    return k;
}

void copy_out(isa::DType t, uint64_t dst, isa::Pos src_pos, uint32_t src, isa::CopyParams c) {
    CoreState& st = *g_current;
    if (st.atomic_op) {
        c.atomic = st.atomic_op;
        t = st.atomic_dtype;
    }
    kernel::detail::copy_out(*st.ctx, t, dst, src_pos, src, c);
}

}  // namespace sfumato::ascendc

namespace AscendC {

TPipe::TPipe() : m_state(&sfumato::ascendc::enter("TPipe")), m_pipe(*m_state->ctx) { m_state->pipe = this; }

TPipe::TPipe(const TPipe& other) : m_state(other.m_state), m_pipe(*other.m_state->ctx), m_copy(true) {}

void TPipe::not_a_copy() const {
    if (m_copy) sfumato::ascendc::fail("InitBuffer on a copy of a TPipe (a copy holds no buffers; set them up on the original)");
}

TPipe::~TPipe() noexcept(false) {
    if (m_state->pipe == this) m_state->pipe = nullptr;
}

TPipe* GetTPipePtr() {
    TPipe* p = sfumato::ascendc::enter("GetTPipePtr").pipe;
    if (!p) sfumato::ascendc::fail("no TPipe exists on this core");
    return p;
}

void assert_failed(const char* expr, const char* file, int line) {
    sfumato::ascendc::fail(std::string("ascendc_assert(") + expr + ") failed at " + file + ":" + std::to_string(line));
}

int64_t GetSystemCycle() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("GetSystemCycle");
    sfumato::isa::Instr in = sfumato::isa::make_instr(sfumato::isa::Opcode::GET_SYSREG);
    in.sc.reg = sfumato::isa::SysReg::SYS_CNT;
    return static_cast<int64_t>(s.sink->load(in));
}

void SyncAll() {
    sfumato::ascendc::CoreState& s = sfumato::ascendc::enter("SyncAll");
    if (s.coupled) sfumato::ascendc::fail("SyncAll needs the cross-core flags of split parts");
    sfumato::kernel::SyncAll(*s.ctx, sfumato::isa::kMaxCrossFlag, sfumato::isa::Pipe::MTE3, true);
}

namespace detail_reduce {
bool with_index(ReduceOrder order) {
    switch (order) {
        case ReduceOrder::ORDER_VALUE_INDEX: return true;
        case ReduceOrder::ORDER_ONLY_VALUE: return false;
        default: sfumato::ascendc::fail("ReduceOrder: the ISA writes (value, index) pairs or values only");
    }
}
}  // namespace detail_reduce

void kernel_log(int level, const char* fmt, ...) {
    static const char* const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    if (const sfumato::ascendc::CoreState* s = sfumato::ascendc::g_current)
        std::fprintf(stderr, "[block %lld] ", static_cast<long long>(s->block_idx));
    std::fprintf(stderr, "[%s] ", level >= 0 && level <= 3 ? names[level] : "LOG");
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}

void dump_tensor(const char* what, uint32_t desc, const std::string& values) {
    std::printf("%s desc %u: %s\n", what, desc, values.c_str());
}

}  // namespace AscendC

int sfumato_ascendc_printf(const char* fmt, ...) {
    int n = 0;
    // The vendor's prefix (its hello_world example's run result: "[AIV Block 3/8] Hello World!!!"): the core kind,
    // GetBlockIdx() and GetBlockNum().
    if (const sfumato::ascendc::CoreState* s = sfumato::ascendc::g_current)
        n += std::fprintf(stdout, "[%s Block %lld/%lld] ", s->core_type == AscendC::AIC ? "AIC" : "AIV",
                          static_cast<long long>(s->block_idx), static_cast<long long>(s->block_num));
    va_list ap;
    va_start(ap, fmt);
    n += std::vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}
