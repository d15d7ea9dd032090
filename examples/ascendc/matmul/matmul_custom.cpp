/*
 * C = A x B with the Cube through LoadData / Mmad and the FixPipe: A [256 x 128] and B [128 x 128]
 * half, C [256 x 128] float, two blocks of 128 rows each. A and B go GM -> L1 as NZ fractals
 * (with the ND->NZ conversion of the MTE2 on dav-2201; by a strided copy per column group on
 * dav-1001, which has none), L1 -> L0A as ZZ and L1 -> L0B as ZN (transposed fractals), one
 * Mmad, and the accumulator goes out through the FixPipe (dav-2201) or through CO2 in UB and the
 * MTE3 (dav-1001, the coupled core). Written for sfumato in the style of the public samples.
 */
#include "kernel_operator.h"

constexpr uint32_t M = 256;
constexpr uint32_t K = 128;
constexpr uint32_t N = 128;
constexpr uint32_t BLOCK_M = 128;  // rows of C per block

class KernelMatmul {
public:
    __aicore__ inline KernelMatmul() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c)
    {
        aGM.SetGlobalBuffer((__gm__ half *)a + AscendC::GetBlockIdx() * BLOCK_M * K, BLOCK_M * K);
        bGM.SetGlobalBuffer((__gm__ half *)b, K * N);
        cGM.SetGlobalBuffer((__gm__ float *)c + AscendC::GetBlockIdx() * BLOCK_M * N, BLOCK_M * N);
        pipe.InitBuffer(inQueueA1, 1, BLOCK_M * K * sizeof(half));
        pipe.InitBuffer(inQueueB1, 1, K * N * sizeof(half));
        pipe.InitBuffer(inQueueA2, 1, BLOCK_M * K * sizeof(half));
        pipe.InitBuffer(inQueueB2, 1, K * N * sizeof(half));
        pipe.InitBuffer(outQueueCO1, 1, BLOCK_M * N * sizeof(float));
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 1001)
        pipe.InitBuffer(outQueueCO2, 1, BLOCK_M * N * sizeof(float));
#endif
    }
    __aicore__ inline void Process()
    {
        CopyIn();
        SplitA();
        SplitB();
        Compute();
        CopyOut();
    }

private:
    // GM (rows x cols, row-major) -> L1 as NZ: column groups of 16, each holding every row.
    __aicore__ inline void CopyND2NZ(const AscendC::LocalTensor<half> &dst, const AscendC::GlobalTensor<half> &src,
                                     uint16_t rows, uint16_t cols)
    {
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 1001)
        for (uint16_t j = 0; j < cols / 16; j++) {
            AscendC::DataCopyParams params{rows, 1, static_cast<uint16_t>(cols / 16 - 1), 0};
            AscendC::DataCopy(dst[j * rows * 16], src[j * 16], params);
        }
#else
        AscendC::Nd2NzParams params{1, rows, cols, 0, cols, rows, 1, 0};
        AscendC::DataCopy(dst, src, params);
#endif
    }
    __aicore__ inline void CopyIn()
    {
        AscendC::LocalTensor<half> a1Local = inQueueA1.AllocTensor<half>();
        AscendC::LocalTensor<half> b1Local = inQueueB1.AllocTensor<half>();
        CopyND2NZ(a1Local, aGM, BLOCK_M, K);
        CopyND2NZ(b1Local, bGM, K, N);
        inQueueA1.EnQue(a1Local);
        inQueueB1.EnQue(b1Local);
    }
    // L1 NZ -> L0A ZZ: one LoadData per 16-row band, picking its fractal from every column group.
    __aicore__ inline void SplitA()
    {
        AscendC::LocalTensor<half> a1Local = inQueueA1.DeQue<half>();
        AscendC::LocalTensor<half> a2Local = inQueueA2.AllocTensor<half>();
        for (uint32_t i = 0; i < BLOCK_M / 16; i++) {
            AscendC::LoadData2DParams params{0, K / 16, BLOCK_M / 16, 0, 0, false, 0};
            AscendC::LoadData(a2Local[i * K * 16], a1Local[i * 256], params);
        }
        inQueueA2.EnQue(a2Local);
        inQueueA1.FreeTensor(a1Local);
    }
    // L1 NZ -> L0B ZN: per 16-row band of B, its fractals transposed.
    __aicore__ inline void SplitB()
    {
        AscendC::LocalTensor<half> b1Local = inQueueB1.DeQue<half>();
        AscendC::LocalTensor<half> b2Local = inQueueB2.AllocTensor<half>();
        for (uint32_t i = 0; i < K / 16; i++) {
            AscendC::LoadData2DParams params{0, N / 16, K / 16, 0, 0, true, 0};
            AscendC::LoadData(b2Local[i * N * 16], b1Local[i * 256], params);
        }
        inQueueB2.EnQue(b2Local);
        inQueueB1.FreeTensor(b1Local);
    }
    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<half> a2Local = inQueueA2.DeQue<half>();
        AscendC::LocalTensor<half> b2Local = inQueueB2.DeQue<half>();
        AscendC::LocalTensor<float> c1Local = outQueueCO1.AllocTensor<float>();
        AscendC::MmadParams params;
        params.m = BLOCK_M;
        params.n = N;
        params.k = K;
        AscendC::Mmad(c1Local, a2Local, b2Local, params);
        outQueueCO1.EnQue(c1Local);
        inQueueA2.FreeTensor(a2Local);
        inQueueB2.FreeTensor(b2Local);
    }
    __aicore__ inline void CopyOut()
    {
        AscendC::LocalTensor<float> c1Local = outQueueCO1.DeQue<float>();
#if defined(__NPU_ARCH__) && (__NPU_ARCH__ == 1001)
        AscendC::LocalTensor<float> c2Local = outQueueCO2.AllocTensor<float>();
        AscendC::DataCopyParams toUb{1, static_cast<uint16_t>(BLOCK_M * N / 256), 0, 0};
        AscendC::DataCopyEnhancedParams enhanced;
        enhanced.blockMode = AscendC::BlockMode::BLOCK_MODE_MATRIX;
        AscendC::DataCopy(c2Local, c1Local, toUb, enhanced);
        outQueueCO2.EnQue(c2Local);
        c2Local = outQueueCO2.DeQue<float>();
        for (uint32_t j = 0; j < N / 16; j++) {
            AscendC::DataCopyParams toGm{BLOCK_M, 2, 0, static_cast<uint16_t>((N - 16) * sizeof(float) / 32)};
            AscendC::DataCopy(cGM[j * 16], c2Local[j * BLOCK_M * 16], toGm);
        }
        outQueueCO2.FreeTensor(c2Local);
#else
        AscendC::FixpipeParamsV220 params{N, BLOCK_M, BLOCK_M, N, false, QuantMode_t::NoQuant, 0, 1, 0, 0, 0};
        AscendC::Fixpipe(cGM, c1Local, params);
#endif
        outQueueCO1.FreeTensor(c1Local);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::A1, 1> inQueueA1;
    AscendC::TQue<AscendC::QuePosition::B1, 1> inQueueB1;
    AscendC::TQue<AscendC::QuePosition::A2, 1> inQueueA2;
    AscendC::TQue<AscendC::QuePosition::B2, 1> inQueueB2;
    AscendC::TQue<AscendC::QuePosition::CO1, 1> outQueueCO1;
    AscendC::TQue<AscendC::QuePosition::CO2, 1> outQueueCO2;
    AscendC::GlobalTensor<half> aGM;
    AscendC::GlobalTensor<half> bGM;
    AscendC::GlobalTensor<float> cGM;
};

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    KernelMatmul op;
    op.Init(a, b, c);
    op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
void matmul_custom_do(uint32_t blockDim, void *stream, uint8_t *a, uint8_t *b, uint8_t *c)
{
    matmul_custom<<<blockDim, nullptr, stream>>>(a, b, c);
}
#endif
