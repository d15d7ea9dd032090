// Helpers shared by the LLM operators (runtime/ops/llm/llm_common.h).
#include "runtime/ops/llm/llm_common.h"

#include "runtime/ops/norm/common.h"
#include "runtime/ops/norm/vec_nest.h"

namespace sfumato::ops::llm {

isa::DType act_input(const NodeDesc& n, size_t i, const char* what) { return norm::float_input(n, i, what); }

const TensorRef& index_input(const NodeDesc& n, size_t i, const char* what) {
    const TensorRef& t = norm::need_input(n, i, what);
    if (t.dtype != isa::DType::INT32)
        throw UnsupportedError(n, std::string("input '") + what + "' has dtype " + isa::dtype_name(t.dtype) +
                                      " (indices: int32 or int64)");
    if (t.format != Format::ND || !t.contiguous())
        throw UnsupportedError(n, std::string("input '") + what + "' is not contiguous ND");
    return t;
}

void to_f32(kernel::KernelContext& ctx, uint32_t dst, uint32_t src, isa::DType t, uint64_t n) {
    if (t == F32)
        norm::vrun(ctx, isa::Opcode::VMULS, F32, norm::vop(dst), norm::vop(src), {}, 1, 1, n, 1.0);
    else
        norm::vrun(ctx, isa::Opcode::VCONV, F32, norm::vop(dst), norm::vop(src), {}, 1, 1, n, 0, t);
}

void from_f32(kernel::KernelContext& ctx, uint32_t dst, uint32_t src, isa::DType t, uint64_t n) {
    if (t == F32)
        norm::vrun(ctx, isa::Opcode::VMULS, F32, norm::vop(dst), norm::vop(src), {}, 1, 1, n, 1.0);
    else
        norm::vrun(ctx, isa::Opcode::VCONV, t, norm::vop(dst), norm::vop(src), {}, 1, 1, n, 0, F32);
}

}  // namespace sfumato::ops::llm
