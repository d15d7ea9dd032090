/*
 * Host program of the matmul example (CPU-debug form, or AscendCL): A, B from ./input, C to
 * ./output. The kernel is cube-only (AIC_MODE on split chips).
 */
#include "data_utils.h"
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
extern void matmul_custom_do(uint32_t blockDim, void *stream, uint8_t *a, uint8_t *b, uint8_t *c);
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c);
#endif

int32_t main(int32_t argc, char *argv[])
{
    uint32_t blockDim = 2;
    size_t aSize = 256 * 128 * sizeof(uint16_t);
    size_t bSize = 128 * 128 * sizeof(uint16_t);
    size_t cSize = 256 * 128 * sizeof(float);

#ifdef ASCENDC_CPU_DEBUG
    uint8_t *a = (uint8_t *)AscendC::GmAlloc(aSize);
    uint8_t *b = (uint8_t *)AscendC::GmAlloc(bSize);
    uint8_t *c = (uint8_t *)AscendC::GmAlloc(cSize);
    ReadFile("./input/x1_gm.bin", aSize, a, aSize);
    ReadFile("./input/x2_gm.bin", bSize, b, bSize);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(matmul_custom, blockDim, a, b, c);
    WriteFile("./output/output.bin", c, cSize);
    AscendC::GmFree((void *)a);
    AscendC::GmFree((void *)b);
    AscendC::GmFree((void *)c);
#else
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    uint8_t *aHost, *bHost, *cHost, *aDevice, *bDevice, *cDevice;
    CHECK_ACL(aclrtMallocHost((void **)(&aHost), aSize));
    CHECK_ACL(aclrtMallocHost((void **)(&bHost), bSize));
    CHECK_ACL(aclrtMallocHost((void **)(&cHost), cSize));
    CHECK_ACL(aclrtMalloc((void **)&aDevice, aSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&bDevice, bSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&cDevice, cSize, ACL_MEM_MALLOC_HUGE_FIRST));
    ReadFile("./input/x1_gm.bin", aSize, aHost, aSize);
    ReadFile("./input/x2_gm.bin", bSize, bHost, bSize);
    CHECK_ACL(aclrtMemcpy(aDevice, aSize, aHost, aSize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(bDevice, bSize, bHost, bSize, ACL_MEMCPY_HOST_TO_DEVICE));
    matmul_custom_do(blockDim, stream, aDevice, bDevice, cDevice);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(cHost, cSize, cDevice, cSize, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile("./output/output.bin", cHost, cSize);
    CHECK_ACL(aclrtFree(aDevice));
    CHECK_ACL(aclrtFree(bDevice));
    CHECK_ACL(aclrtFree(cDevice));
    CHECK_ACL(aclrtFreeHost(aHost));
    CHECK_ACL(aclrtFreeHost(bHost));
    CHECK_ACL(aclrtFreeHost(cHost));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
#endif
    return 0;
}
