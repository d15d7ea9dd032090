/*
 * Host program of the row-sum example: fills the tiling (operator-project tiling data), saves it
 * into GM, and runs the kernel in the CPU-debug form or through AscendCL.
 */
#include <vector>

#include "data_utils.h"
#include "reduce_sum_tiling.h"
#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
extern void reduce_sum_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *out, uint8_t *workspace,
                                 uint8_t *tiling);
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void reduce_sum_custom(GM_ADDR x, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling);
#endif

constexpr uint32_t ROWS = 128;
constexpr uint32_t COLS = 1000;

int32_t main(int32_t argc, char *argv[])
{
    uint32_t blockDim = 8;
    optiling::ReduceSumTilingData tiling;
    tiling.set_rows(ROWS);
    tiling.set_cols(COLS);
    tiling.set_rowsPerBlock(ROWS / blockDim);
    size_t tilingSize = tiling.GetDataSize();
    size_t inputByteSize = ROWS * COLS * sizeof(float);
    size_t outputByteSize = ROWS * sizeof(float);
    size_t workspaceSize = 32;

#ifdef ASCENDC_CPU_DEBUG
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(inputByteSize);
    uint8_t *out = (uint8_t *)AscendC::GmAlloc(outputByteSize);
    uint8_t *workspace = (uint8_t *)AscendC::GmAlloc(workspaceSize);
    uint8_t *tilingGm = (uint8_t *)AscendC::GmAlloc(tilingSize);
    tiling.SaveToBuffer(tilingGm, tilingSize);
    ReadFile("./input/input_x.bin", inputByteSize, x, inputByteSize);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(reduce_sum_custom, blockDim, x, out, workspace, tilingGm);
    WriteFile("./output/output.bin", out, outputByteSize);
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)out);
    AscendC::GmFree((void *)workspace);
    AscendC::GmFree((void *)tilingGm);
#else
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    std::vector<uint8_t> tilingHost(tilingSize);
    tiling.SaveToBuffer(tilingHost.data(), tilingSize);
    uint8_t *xHost, *outHost, *xDevice, *outDevice, *workspaceDevice, *tilingDevice;
    CHECK_ACL(aclrtMallocHost((void **)(&xHost), inputByteSize));
    CHECK_ACL(aclrtMallocHost((void **)(&outHost), outputByteSize));
    CHECK_ACL(aclrtMalloc((void **)&xDevice, inputByteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&outDevice, outputByteSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&workspaceDevice, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc((void **)&tilingDevice, tilingSize, ACL_MEM_MALLOC_HUGE_FIRST));
    ReadFile("./input/input_x.bin", inputByteSize, xHost, inputByteSize);
    CHECK_ACL(aclrtMemcpy(xDevice, inputByteSize, xHost, inputByteSize, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(tilingDevice, tilingSize, tilingHost.data(), tilingSize, ACL_MEMCPY_HOST_TO_DEVICE));
    reduce_sum_custom_do(blockDim, stream, xDevice, outDevice, workspaceDevice, tilingDevice);
    CHECK_ACL(aclrtSynchronizeStream(stream));
    CHECK_ACL(aclrtMemcpy(outHost, outputByteSize, outDevice, outputByteSize, ACL_MEMCPY_DEVICE_TO_HOST));
    WriteFile("./output/output.bin", outHost, outputByteSize);
    CHECK_ACL(aclrtFree(xDevice));
    CHECK_ACL(aclrtFree(outDevice));
    CHECK_ACL(aclrtFree(workspaceDevice));
    CHECK_ACL(aclrtFree(tilingDevice));
    CHECK_ACL(aclrtFreeHost(xHost));
    CHECK_ACL(aclrtFreeHost(outHost));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
#endif
    return 0;
}
