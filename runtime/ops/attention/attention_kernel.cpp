// The FusedAttention kernel's entry point (see attention.h) and the plan's step, workspace and
// flop arithmetic. The kernel itself: attention_attn.h (the walk, the buffers, the coupled
// schedule), attention_cube.h (the AIC side), attention_vector.h (the AIV side).
#include <algorithm>
#include <string>

#include "runtime/ops/attention/attention_cube.h"
#include "runtime/ops/attention/attention_vector.h"
#include "sim/error.h"

namespace sfumato::ops::attention {

using detail::Attn;
using kernel::bfloat16;
using kernel::half;

uint32_t AttnPlan::steps(uint32_t i0, uint32_t rows) const {
    const uint32_t all = kv_blocks();
    if (!causal) return all;
    const uint32_t last = i0 + rows - 1;  // the last row sees keys 0..last
    return std::min(all, last / bc + 1);
}

uint64_t AttnPlan::ws_block_bytes() const {
    const uint64_t w = isa::dtype_size(wt);
    const uint64_t s = uint64_t{br} * bc * w, pp = uint64_t{br} * bc * isa::dtype_size(dt),
                   o = uint64_t{br} * Dv * w;
    return (ahead + 1) * s + 2 * (pp + o);
}

double AttnPlan::visible_pairs() const {
    if (!causal) return double(Sq) * double(Sk);
    double v = 0;
    for (uint32_t i = 0; i < Sq; ++i) v += std::min<double>(Sk, i + 1.0);
    return v;
}

double AttnPlan::flops() const { return double(G) * visible_pairs() * 2.0 * (D + Dv); }

void attention_kernel(isa::IInstrSink& sink, const AttnPlan& p) {
    const bool wide = p.wt == isa::DType::FP32;
    if (p.dt == isa::DType::FP16 && wide)
        Attn<half, float>(sink, p).run();
    else if (p.dt == isa::DType::FP16)
        Attn<half, half>(sink, p).run();
    else if (p.dt == isa::DType::BF16 && wide)
        Attn<bfloat16, float>(sink, p).run();
    else if (p.dt == isa::DType::BF16)
        Attn<bfloat16, half>(sink, p).run();
    else
        throw InputError(std::string("attention: unsupported type ") + isa::dtype_name(p.dt));
}

}  // namespace sfumato::ops::attention
