/*
 * A mix kernel on a split chip: C = LeakyRelu(A x B, 0.001) with A [256 x 128], B [128 x 128] half
 * and C [256 x 128] half, two blocks of 128 rows. In each block the AIC computes its tile
 * (LoadData / Mmad) and writes it to C through the FixPipe (fp32 -> fp16), then raises a
 * cross-core flag; each of the block's two AIVs waits for it, reads its half of the tile back
 * from GM, applies LeakyRelu and writes it over the tile. Needs a split part (dav-2201).
 * Written for sfumato in the style of the public Ascend C samples.
 */
#include "kernel_operator.h"

constexpr uint32_t M = 256;
constexpr uint32_t K = 128;
constexpr uint32_t N = 128;
constexpr uint32_t BLOCK_M = 128;
constexpr uint32_t AIV_M = BLOCK_M / 2;  // rows each AIV post-processes
constexpr uint16_t TILE_READY = 0;       // the cross-core flag

class KernelMatmulLeakyRelu {
public:
    __aicore__ inline KernelMatmulLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c)
    {
        if ASCEND_IS_AIC {
            aGM.SetGlobalBuffer((__gm__ half *)a + AscendC::GetBlockIdx() * BLOCK_M * K, BLOCK_M * K);
            bGM.SetGlobalBuffer((__gm__ half *)b, K * N);
            cGM.SetGlobalBuffer((__gm__ half *)c + AscendC::GetBlockIdx() * BLOCK_M * N, BLOCK_M * N);
        }
        if ASCEND_IS_AIV {
            // AIV i of block b handles rows [64 * (2b + i), +64): GetBlockIdx() counts the AIVs.
            cGM.SetGlobalBuffer((__gm__ half *)c + AscendC::GetBlockIdx() * AIV_M * N, AIV_M * N);
        }
    }
    __aicore__ inline void Process()
    {
        if ASCEND_IS_AIC {
            MatmulTile();
        }
        if ASCEND_IS_AIV {
            LeakyReluTile();
        }
    }

private:
    __aicore__ inline void MatmulTile()
    {
        AscendC::LocalMemAllocator<AscendC::Hardware::L1> l1Allocator;
        AscendC::LocalMemAllocator<AscendC::Hardware::L0A> l0aAllocator;
        AscendC::LocalMemAllocator<AscendC::Hardware::L0B> l0bAllocator;
        AscendC::LocalMemAllocator<AscendC::Hardware::L0C> l0cAllocator;
        AscendC::LocalTensor<half> a1Local = l1Allocator.Alloc<half>(BLOCK_M * K);
        AscendC::LocalTensor<half> b1Local = l1Allocator.Alloc<half>(K * N);
        AscendC::LocalTensor<half> a2Local = l0aAllocator.Alloc<half>(BLOCK_M * K);
        AscendC::LocalTensor<half> b2Local = l0bAllocator.Alloc<half>(K * N);
        AscendC::LocalTensor<float> c1Local = l0cAllocator.Alloc<float>(BLOCK_M * N);

        AscendC::DataCopy(a1Local, aGM, AscendC::Nd2NzParams{1, BLOCK_M, K, 0, K, BLOCK_M, 1, 0});
        AscendC::DataCopy(b1Local, bGM, AscendC::Nd2NzParams{1, K, N, 0, N, K, 1, 0});
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);

        for (uint32_t i = 0; i < BLOCK_M / 16; i++) {
            AscendC::LoadData(a2Local[i * K * 16], a1Local[i * 256],
                              AscendC::LoadData2DParams{0, K / 16, BLOCK_M / 16, 0, 0, false, 0});
        }
        for (uint32_t i = 0; i < K / 16; i++) {
            AscendC::LoadData(b2Local[i * N * 16], b1Local[i * 256],
                              AscendC::LoadData2DParams{0, N / 16, K / 16, 0, 0, true, 0});
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);

        AscendC::Mmad(c1Local, a2Local, b2Local, AscendC::MmadParams{BLOCK_M, N, K, 0, false, true});
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);

        AscendC::Fixpipe(cGM, c1Local,
                         AscendC::FixpipeParamsV220{N, BLOCK_M, BLOCK_M, N, false, QuantMode_t::F322F16, 0, 1, 0, 0, 0});
        // Tell this block's AIVs that the tile is in GM.
        AscendC::CrossCoreSetFlag<0x2, PIPE_FIX>(TILE_READY);
    }
    __aicore__ inline void LeakyReluTile()
    {
        pipe.InitBuffer(inQueue, 1, AIV_M * N * sizeof(half));
        pipe.InitBuffer(outQueue, 1, AIV_M * N * sizeof(half));
        AscendC::CrossCoreWaitFlag<0x2>(TILE_READY);
        AscendC::LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        AscendC::DataCopy(xLocal, cGM, AIV_M * N);
        inQueue.EnQue(xLocal);
        xLocal = inQueue.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        AscendC::LeakyRelu(yLocal, xLocal, (half)0.001, AIV_M * N);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
        yLocal = outQueue.DeQue<half>();
        AscendC::DataCopy(cGM, yLocal, AIV_M * N);
        outQueue.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<half> aGM;
    AscendC::GlobalTensor<half> bGM;
    AscendC::GlobalTensor<half> cGM;
};

extern "C" __global__ __aicore__ void matmul_leakyrelu_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    KernelMatmulLeakyRelu op;
    op.Init(a, b, c);
    op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
void matmul_leakyrelu_custom_do(uint32_t blockDim, void *stream, uint8_t *a, uint8_t *b, uint8_t *c)
{
    matmul_leakyrelu_custom<<<blockDim, nullptr, stream>>>(a, b, c);
}
#endif
