/*
 * File helpers of the Ascend C examples (the role data_utils.h plays in the public samples):
 * binary input/output files, an error check for AscendCL calls, and printing of buffers.
 */
#ifndef EXAMPLES_ASCENDC_DATA_UTILS_H
#define EXAMPLES_ASCENDC_DATA_UTILS_H
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "acl/acl.h"

#define CHECK_ACL(x)                                                                         \
    do {                                                                                     \
        aclError __ret = x;                                                                  \
        if (__ret != ACL_ERROR_NONE) {                                                       \
            std::cerr << __FILE__ << ":" << __LINE__ << " aclError:" << __ret << " "         \
                      << aclGetRecentErrMsg() << std::endl;                                  \
        }                                                                                    \
    } while (0)

#define INFO_LOG(fmt, ...) fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#define ERROR_LOG(fmt, ...) fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)

// Reads exactly fileSize bytes of filePath into buffer (of bufferSize bytes).
inline bool ReadFile(const std::string &filePath, size_t fileSize, void *buffer, size_t bufferSize)
{
    std::ifstream in(filePath, std::ios::binary | std::ios::ate);
    if (!in) {
        ERROR_LOG("cannot open %s (run scripts/gen_data.py first)", filePath.c_str());
        return false;
    }
    const size_t size = static_cast<size_t>(in.tellg());
    if (size < fileSize || bufferSize < fileSize) {
        ERROR_LOG("%s holds %zu bytes, %zu wanted (buffer %zu)", filePath.c_str(), size, fileSize, bufferSize);
        return false;
    }
    in.seekg(0);
    in.read(static_cast<char *>(buffer), static_cast<std::streamsize>(fileSize));
    return static_cast<bool>(in);
}

inline bool WriteFile(const std::string &filePath, const void *buffer, size_t size)
{
    std::ofstream out(filePath, std::ios::binary | std::ios::trunc);
    if (!out) {
        ERROR_LOG("cannot write %s", filePath.c_str());
        return false;
    }
    out.write(static_cast<const char *>(buffer), static_cast<std::streamsize>(size));
    return static_cast<bool>(out);
}

// Prints count fp16 values, elementsPerRow to a line.
inline void PrintHalf(const void *data, size_t count, size_t elementsPerRow = 16)
{
    const aclFloat16 *p = static_cast<const aclFloat16 *>(data);
    for (size_t i = 0; i < count; ++i) {
        std::cout << aclFloat16ToFloat(p[i]) << ((i + 1) % elementsPerRow == 0 ? "\n" : " ");
    }
    std::cout << std::endl;
}
#endif
