// Cache control and scalar global-memory access of the public Ascend C API: the scalar unit's
// reads and writes of GM that bypass its data cache (ReadGmByPassDCache/WriteGmByPassDCache),
// the data cache's clean-and-invalidate (DataCacheCleanAndInvalid, the chip's dcci), and
// DataSyncBarrier (the scalar unit waiting for its memory accesses). Each scalar GM access is the
// scalar unit's load or store (as GlobalTensor::GetValue/SetValue are), and the kernel's code
// continues at the scalar unit's point in simulated time, so DataSyncBarrier has nothing left to
// wait for and costs no cycles; the cache line operations are issued as the chip's instruction,
// on the line of the tensor's first element or the whole cache. Simplified: the data cache is
// timing only (a read never returns a stale line).
#pragma once
#include "sfumato_ascendc/tensor.h"

namespace sfumato::ascendc {
void gm_scalar_read_ptr(const void* gm, void* dst, uint32_t bytes);
void gm_scalar_write_ptr(const void* gm, const void* src, uint32_t bytes);
void dcci(uint64_t dev, bool all);
}  // namespace sfumato::ascendc

namespace AscendC {

enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };
enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

template <class T>
T ReadGmByPassDCache(__gm__ T* addr) {
    sfumato::ascendc::enter("ReadGmByPassDCache");
    T v{};
    sfumato::ascendc::gm_scalar_read_ptr(addr, &v, sizeof(T));
    return v;
}
template <class T>
void WriteGmByPassDCache(__gm__ T* addr, T value) {
    sfumato::ascendc::enter("WriteGmByPassDCache");
    sfumato::ascendc::gm_scalar_write_ptr(addr, &value, sizeof(T));
}
template <MemDsbT arg0 = MemDsbT::ALL>
void DataSyncBarrier() {
    sfumato::ascendc::enter("DataSyncBarrier");
}

template <class T, CacheLine entireType, DcciDst dcciDst = DcciDst::CACHELINE_OUT>
void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    sfumato::ascendc::enter("DataCacheCleanAndInvalid");
    static_assert(dcciDst == DcciDst::CACHELINE_OUT || dcciDst == DcciDst::CACHELINE_ALL,
                  "DataCacheCleanAndInvalid: sfumato models the scalar data cache of global memory only");
    sfumato::ascendc::dcci(dst.device_address(), entireType == CacheLine::ENTIRE_DATA_CACHE);
}

// Prefetch of the kernel's next instructions into the instruction cache: sfumato's cores fetch no
// instructions (the kernel is host code), so it issues nothing.
inline void ICachePreLoad(const int64_t preFetchLen) {
    sfumato::ascendc::enter("ICachePreLoad");
    (void)preFetchLen;
}

}  // namespace AscendC

// The vendor compiler's intrinsic of the same prefetch (catlass's MLA kernel calls it): nothing to issue.
inline void icache_preload(const int64_t preFetchLen) { AscendC::ICachePreLoad(preFetchLen); }
