/* sfumato's acl/acl.h: the AscendCL runtime calls that Ascend C sample programs make (device,
 * contexts, streams, events, device and pinned host memory, synchronous and asynchronous
 * copies, fp16 helpers, error codes), implemented over sfumato's device runtime (runtime/rt)
 * on the simulated chip: copies and launches take the simulated time they take there. Device
 * pointers are addresses in a reserved, inaccessible host range (dereferencing one on the host
 * faults, as on the real part). Declarations only; see runtime/ascendc/acl.cpp. */
#pragma once
#include <cstddef>
#include <cstdint>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef uint16_t aclFloat16;
typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;

static const aclError ACL_SUCCESS = 0;
static const aclError ACL_ERROR_NONE = 0;
static const aclError ACL_ERROR_INVALID_PARAM = 100000;
static const aclError ACL_ERROR_UNINITIALIZE = 100001;
static const aclError ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const aclError ACL_ERROR_INVALID_FILE = 100003;
static const aclError ACL_ERROR_BAD_ALLOC = 200000;
static const aclError ACL_ERROR_RT_PARAM_INVALID = 107000;
static const aclError ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const aclError ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const aclError ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const aclError ACL_ERROR_RT_EVENT_NOT_RECORDED = 107005;
static const aclError ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const aclError ACL_ERROR_RT_INTERNAL_ERROR = 507000;

typedef enum aclrtRunMode { ACL_DEVICE = 0, ACL_HOST = 1 } aclrtRunMode;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
} aclrtMemcpyKind;

typedef enum aclrtMemAttr { ACL_DDR_MEM = 0, ACL_HBM_MEM = 1 } aclrtMemAttr;

aclError aclInit(const char* configPath);
aclError aclFinalize(void);
const char* aclGetRecentErrMsg(void);

aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtGetRunMode(aclrtRunMode* runMode);
aclError aclrtSynchronizeDevice(void);
// The base address of the chip's cross-core synchronisation registers (the FFTS address a kernel passes to
// AscendC::SetSyncBaseAddr): sfumato's cross-core flags need none, so it is a fixed non-zero tag no GM
// allocation returns (kernels only hand it on).
aclError aclrtGetHardwareSyncAddr(void** addr);

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId);
aclError aclrtDestroyContext(aclrtContext context);
aclError aclrtSetCurrentContext(aclrtContext context);
aclError aclrtGetCurrentContext(aclrtContext* context);

aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);

aclError aclrtCreateEvent(aclrtEvent* event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent);

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMallocHost(void** hostPtr, size_t size);
aclError aclrtFreeHost(void* hostPtr);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);

float aclFloat16ToFloat(aclFloat16 value);
aclFloat16 aclFloatToFloat16(float value);

#ifdef __cplusplus
}
#endif
