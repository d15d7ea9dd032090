// The empty kernel: a body that issues nothing. What it costs is the kernel's start-up and
// completion alone (the scheduler's dispatch of every block and core, each core's code fetch,
// initialisation and argument loads, the completion reports): the "head overhead" every kernel
// pays, which the vendor's guide measures with exactly this kernel. Its argument block (by
// default two GM pointers, the workspace and tiling addresses an Ascend C kernel is passed) is
// read by each core at start-up.
#include <algorithm>

#include "runtime/ops/i_op.h"
#include "sim/error.h"

namespace sfumato::ops {

namespace {

class EmptyOp : public IOp {
public:
    EmptyOp(const OpArgs& a, const DeviceInfo& dev) {
        m_block_dim = static_cast<uint32_t>(arg_u64(a, "empty", "block_dim", 0, 65535));
        const std::string kind = arg_str(a, "kind");
        if (kind == "vector")
            m_kind = KernelKind::Vector;
        else if (kind == "cube")
            m_kind = KernelKind::Cube;
        else if (kind == "mix")
            m_kind = KernelKind::Mix;
        else
            throw InputError("operator 'empty': argument 'kind' = '" + kind + "' (valid: mix, vector, cube)");
        // 0 (the default): every core of the kind, as the vendor's head-overhead measurement runs
        // it; a mix block takes one cube core (and its AIVs).
        if (m_block_dim == 0) m_block_dim = std::max<uint32_t>(1, m_kind == KernelKind::Vector ? dev.vector_cores : dev.cube_cores);
        m_args_bytes = static_cast<uint32_t>(arg_u64(a, "empty", "args_bytes", 0, 1u << 24));
        m_code_bytes = static_cast<uint32_t>(arg_u64(a, "empty", "code_bytes", 0, 1u << 24));
    }
    void prepare(rt::Runtime&) override {}
    std::vector<KernelDesc> kernels() const override {
        KernelDesc k;
        k.name = "empty";
        k.type = "Empty";
        k.block_dim = m_block_dim;
        k.kind = m_kind;
        k.body = [](isa::IInstrSink&) {};
        k.args_bytes = m_args_bytes;
        k.code_bytes = m_code_bytes;
        return {k};
    }
    CheckResult check(rt::Runtime& rt) override {
        CheckResult r;
        r.checked = rt.functional();  // nothing to compare: it ran
        return r;
    }
    void release(rt::Runtime&) override {}

private:
    uint32_t m_block_dim = 1;
    KernelKind m_kind = KernelKind::Mix;
    uint32_t m_args_bytes = 16, m_code_bytes = 0;
};

}  // namespace

SFUMATO_REGISTER_OP(empty, OpSpec{"empty", "a kernel that does nothing: its task duration is the start-up overhead",
                                  {{"block_dim", "0", "logical blocks (0 = every core of the kind)"},
                                   {"kind", "mix", "mix (1 AIC + 2 AIV per block on split parts) | vector | cube"},
                                   {"args_bytes", "16", "argument block each core reads at start-up (bytes)"},
                                   {"code_bytes", "0", "declared code size (0: the entry code estimate)"}},
                                  [](const OpArgs& a, const DeviceInfo& d) { return std::make_unique<EmptyOp>(a, d); }});
SFUMATO_OP_SAMPLE(empty, "empty", {{"block_dim", "2"}});

}  // namespace sfumato::ops
