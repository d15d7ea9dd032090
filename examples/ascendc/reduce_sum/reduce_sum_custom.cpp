/*
 * Row sums: out[r] = sum over c of x[r][c] (float). Each block takes rowsPerBlock rows; a row
 * comes in with DataCopyPad (its byte length need not be a multiple of 32), ReduceSum folds it
 * (a count that one instruction cannot take goes through the work buffer), the scalar unit picks
 * the result up (after a V -> S flag) and collects it, and the block's sums go out in one copy.
 * The tiling is read from GM with GET_TILING_DATA. Written for sfumato in the style of the
 * public Ascend C samples.
 */
#include "kernel_operator.h"
#include "reduce_sum_tiling.h"

constexpr int32_t BUFFER_NUM = 2;

class KernelReduceSum {
public:
    __aicore__ inline KernelReduceSum() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR out, uint32_t rowsPerBlock, uint32_t cols)
    {
        this->rowsPerBlock = rowsPerBlock;
        this->cols = cols;
        uint32_t firstRow = rowsPerBlock * AscendC::GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ float *)x + firstRow * cols, rowsPerBlock * cols);
        outGm.SetGlobalBuffer((__gm__ float *)out + firstRow, rowsPerBlock);
        // Whole 256-byte repeats, so that the masked tail repeat of a row stays in its buffer.
        uint32_t rowBytes = (cols * sizeof(float) + 255) / 256 * 256;
        pipe.InitBuffer(inQueueX, BUFFER_NUM, rowBytes);
        pipe.InitBuffer(workBuf, rowBytes);
        pipe.InitBuffer(sumBuf, 32);
        pipe.InitBuffer(outBuf, (rowsPerBlock * sizeof(float) + 31) / 32 * 32);
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> outLocal = outBuf.Get<float>();
        for (uint32_t r = 0; r < rowsPerBlock; r++) {
            CopyIn(r);
            outLocal.SetValue(r, Compute());
        }
        AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(EVENT_ID0);
        AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(rowsPerBlock * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPad(outGm, outLocal, params);
    }

private:
    __aicore__ inline void CopyIn(uint32_t row)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopyExtParams params{1, static_cast<uint32_t>(cols * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(xLocal, xGm[row * cols], params, pad);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline float Compute()
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> sumLocal = sumBuf.Get<float>();
        AscendC::LocalTensor<float> workLocal = workBuf.Get<float>();
        AscendC::ReduceSum(sumLocal, xLocal, workLocal, cols);
        inQueueX.FreeTensor(xLocal);
        AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
        float sum = sumLocal.GetValue(0);
        AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        return sum;
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> workBuf, sumBuf, outBuf;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> outGm;
    uint32_t rowsPerBlock;
    uint32_t cols;
};

extern "C" __global__ __aicore__ void reduce_sum_custom(GM_ADDR x, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelReduceSum op;
    op.Init(x, out, tilingData.rowsPerBlock, tilingData.cols);
    op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
void reduce_sum_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *out, uint8_t *workspace,
                          uint8_t *tiling)
{
    reduce_sum_custom<<<blockDim, nullptr, stream>>>(x, out, workspace, tiling);
}
#endif
