// Names of the collective library's operations, reduction operators and algorithms, with their
// parsers (errors name the bad value and the valid ones). Plain C++.
#pragma once
#include <cstdint>
#include <string>

#include "isa/dtype.h"

namespace sfumato::comm {

enum class Op : uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll };
enum class RedOp : uint8_t { Sum, Max, Min };
// Auto: chosen from the topology and the size (comm/select.h).
enum class Algo : uint8_t { Auto, Ring, HalvingDoubling, Mesh, DoubleRing, Hierarchical };

const char* op_name(Op o);
const char* redop_name(RedOp r);
const char* algo_name(Algo a);
// Throw InputError naming `what` (the option or field) and the valid values.
Op parse_op(const std::string& s, const std::string& what);
RedOp parse_redop(const std::string& s, const std::string& what);
Algo parse_algo(const std::string& s, const std::string& what);
// fp16, bf16 or fp32 (the dtypes collectives reduce).
isa::DType parse_comm_dtype(const std::string& s, const std::string& what);
bool is_reduction(Op o);

}  // namespace sfumato::comm
