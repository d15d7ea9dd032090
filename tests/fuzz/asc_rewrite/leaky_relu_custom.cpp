/*
 * y = x >= 0 ? x : alpha * x over half values. The tiling (length, tiles per block, alpha)
 * comes from the host as a struct passed by value; each block takes totalLength / blockNum
 * elements and streams them in 2 * tileNum double-buffered tiles.
 * Written for sfumato in the style of the public Ascend C samples.
 */
#include "kernel_operator.h"
#include "leaky_relu_tiling.h"

constexpr int32_t BUFFER_NUM = 2;

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LeakyReluTilingData &tiling)
    {
        blockLength = tiling.totalLength / AscendC::GetBlockNum();
        tileNum = tiling.tileNum;
        tileLength = blockLength / tileNum / BUFFER_NUM;
        alpha = static_cast<half>(tiling.alpha);
        xGm.SetGlobalBuffer((__gm__ half *)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        int32_t loopCount = tileNum * BUFFER_NUM;
        for (int32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(int32_t progress)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        AscendC::LeakyRelu(yLocal, xLocal, alpha, tileLength);
        outQueueY.EnQue<half>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        AscendC::LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        AscendC::DataCopy(yGm[progress * tileLength], yLocal, tileLength);
        outQueueY.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    half alpha;
};

extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, LeakyReluTilingData tiling)
{
    KernelLeakyRelu op;
    op.Init(x, y, tiling);
    op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
void leaky_relu_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, LeakyReluTilingData tiling)
{
    leaky_relu_custom<<<blockDim, nullptr, stream>>>(x, y, tiling);
}
#endif
