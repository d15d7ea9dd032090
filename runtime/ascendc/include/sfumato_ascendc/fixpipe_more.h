// The FixPipe through the older DataCopy form of the public Ascend C API: DataCopy(GM or L1 <- CO1)
// with DataCopyCO12DstParams (the "随路量化激活搬运" family), whose scalar quantisation word comes from
// SetFixpipePreQuantFlag and whose NZ -> ND matrices from SetFixpipeNz2ndFlag, both registers of the
// FixPipe that stay set for later copies. Each call is one `fixpipe` instruction, as Fixpipe is.
// The quantisation word holds the scale as a (1, 8, 10) float in bits 31..13 (the low 13 bits of
// an fp32 dropped), a shift in bits 35..32 with its enable in bit 36, an offset in bits 45..37 and
// the output's signedness in bit 46; the shift and the offset are not modelled (the run stops
// naming the call when they are set). Clip-ReLU and element-wise ops stop the run naming the
// field. SetFixpipeNz2ndFlag's ND matrices and DataCopyCO12DstParams' unit flag are the fixpipe
// instruction's (isa::FixpipeParams). SetFixPipeConfig sets the FixPipe's per-channel parameter
// address (the FPC register), where a V* quantPre reads one quantisation word per column
// (runtime/ascendc/fixpipe.cpp); its isUnitFlag reset of every L0C unit bit issues nothing (the
// modelled ISA has no such instruction): a FixPipe with unit flag 3 clears what it read, so the
// reset changes nothing when Mmad and Fixpipe cover the same L0C (the reference's advice);
// otherwise a later Mmad with a unit flag waits for bits nothing clears, a deadlock (exit 4)
// naming the unit flag.
#pragma once
#include "sfumato_ascendc/cube.h"

namespace sfumato::ascendc {
// The FixPipe registers SetFixpipePreQuantFlag/SetFixpipeNz2ndFlag set (one set per core).
void set_fixpipe_quant(uint64_t config);
void set_fixpipe_nz2nd(uint16_t ndNum, uint16_t srcNdStride, uint32_t dstNdStride);
void set_fixpipe_config(AscendC::TPosition pos, uint32_t addr);
kernel::FixpipeParams kco12(const AscendC::DataCopyCO12DstParams& p);
}  // namespace sfumato::ascendc

namespace AscendC {

inline void SetFixpipePreQuantFlag(uint64_t config) {
    sfumato::ascendc::enter("SetFixpipePreQuantFlag");
    sfumato::ascendc::set_fixpipe_quant(config);
}
// setRelu: whether the tensor is the ReLU slopes (reluPre) rather than the quantisation words; the
// slopes are read by no modelled FixPipe mode, so setting them stops the run.
template <class T, bool setRelu = false>
void SetFixPipeConfig(const LocalTensor<T>& preTensor, bool isUnitFlag = false) {
    sfumato::ascendc::enter("SetFixPipeConfig");
    if constexpr (setRelu) sfumato::ascendc::fail("SetFixPipeConfig<T, true>: per-channel ReLU slopes (reluPre) are not modelled");
    sfumato::ascendc::set_fixpipe_config(preTensor.GetPosition(), preTensor.kt().address());
    (void)isUnitFlag;
}
// reluPre (per-channel ReLU slopes) is read by no modelled FixPipe mode (reluPre > 1 stops the run).
template <class T, bool setRelu = false>
void SetFixPipeConfig(const LocalTensor<T>& reluPre, const LocalTensor<T>& quantPre, bool isUnitFlag = false) {
    sfumato::ascendc::enter("SetFixPipeConfig");
    sfumato::ascendc::set_fixpipe_config(quantPre.GetPosition(), quantPre.kt().address());
    (void)reluPre, (void)isUnitFlag;
}
inline void SetFixpipeNz2ndFlag(uint16_t ndNum, uint16_t srcNdStride, uint16_t dstNdStride) {
    sfumato::ascendc::enter("SetFixpipeNz2ndFlag");
    sfumato::ascendc::set_fixpipe_nz2nd(ndNum, srcNdStride, dstNdStride);
}

// CO1 -> GM through the FixPipe, quantisation and ReLU on the way, NZ or (nz2ndEn) ND.
template <class T, class U>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const DataCopyCO12DstParams& p) {
    sfumato::ascendc::enter("DataCopy");
    static_assert(std::is_same_v<U, float> || std::is_same_v<U, int32_t>,
                  "DataCopy(DataCopyCO12DstParams): the source is CO1 (float or int32_t)");
    const sfumato::kernel::FixpipeParams k = sfumato::ascendc::kco12(p);
    if (k.nz2ndEn && k.mSize) dst.check_bytes(((k.mSize - 1ull) * k.dstStride + k.nSize) * sizeof(T));
    else dst.check_bytes(1);
    sfumato::ascendc::fixpipe_fpc(sfumato::ascendc::dtype_of<U>(), sfumato::ascendc::dtype_of<T>(),
                                  {dst.device_address(), sfumato::isa::Pos::GM}, {src.kt().address(), src.kt().pos()}, k);
}
// CO1 -> L1 through the FixPipe.
template <class T, class U>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const DataCopyCO12DstParams& p) {
    sfumato::ascendc::enter("DataCopy");
    static_assert(std::is_same_v<U, float> || std::is_same_v<U, int32_t>,
                  "DataCopy(DataCopyCO12DstParams): the source is CO1 (float or int32_t)");
    sfumato::ascendc::fixpipe_fpc(sfumato::ascendc::dtype_of<U>(), sfumato::ascendc::dtype_of<T>(),
                                  {dst.kt().address(), dst.kt().pos()}, {src.kt().address(), src.kt().pos()},
                                  sfumato::ascendc::kco12(p));
}

}  // namespace AscendC
