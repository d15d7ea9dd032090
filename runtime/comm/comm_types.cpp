#include "runtime/comm/comm_types.h"

#include "sim/error.h"

namespace sfumato::comm {

namespace {
constexpr const char* kOps[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all"};
constexpr const char* kRedOps[] = {"sum", "max", "min"};
constexpr const char* kAlgos[] = {"auto", "ring", "halving_doubling", "mesh", "double_ring", "hierarchical"};

template <class E, size_t N>
E parse(const std::string& s, const std::string& what, const char* const (&names)[N]) {
    std::string valid;
    for (size_t i = 0; i < N; ++i) {
        if (s == names[i]) return static_cast<E>(i);
        valid += std::string(i ? ", " : "") + names[i];
    }
    throw InputError(what + " = '" + s + "' (valid: " + valid + ")");
}
}  // namespace

const char* op_name(Op o) { return kOps[static_cast<int>(o)]; }
const char* redop_name(RedOp r) { return kRedOps[static_cast<int>(r)]; }
const char* algo_name(Algo a) { return kAlgos[static_cast<int>(a)]; }
Op parse_op(const std::string& s, const std::string& what) { return parse<Op>(s, what, kOps); }
RedOp parse_redop(const std::string& s, const std::string& what) { return parse<RedOp>(s, what, kRedOps); }
Algo parse_algo(const std::string& s, const std::string& what) {
    if (s == "hd") return Algo::HalvingDoubling;
    return parse<Algo>(s, what, kAlgos);
}

isa::DType parse_comm_dtype(const std::string& s, const std::string& what) {
    isa::DType t;
    if (!isa::parse_dtype(s, t) || (t != isa::DType::FP16 && t != isa::DType::BF16 && t != isa::DType::FP32))
        throw InputError(what + " = '" + s + "' (valid: fp16, bf16, fp32)");
    return t;
}

bool is_reduction(Op o) { return o == Op::AllReduce || o == Op::ReduceScatter || o == Op::Reduce; }

}  // namespace sfumato::comm
