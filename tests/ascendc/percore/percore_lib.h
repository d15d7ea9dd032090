// The library side of percore.asc: an overloaded kernel template and the class that launches it.
#pragma once
#include "acl/acl.h"
#include "kernel_operator.h"

namespace percore {

template <class Op>
__global__ __aicore__ void Adapter(typename Op::Params params) {
    Op op;
    op(params);
}
template <class Op>
__global__ __aicore__ void Adapter(typename Op::Params params, uint64_t syncAddr) {
    AscendC::SetSyncBaseAddr(syncAddr);
    Op op;
    op(params);
}

template <class Op>
struct Device {
    void Run(typename Op::Params params, aclrtStream stream, uint32_t blocks, uint64_t syncAddr) {
        if (syncAddr == 0) {
            Adapter<Op><<<blocks, nullptr, stream>>>(params);
        } else {
            Adapter<Op><<<blocks, nullptr, stream>>>(params, syncAddr);
        }
    }
};

}  // namespace percore
