// The host side the conformance program's Matmul families share (conformance_matmul_more.cpp,
// conformance_matmul_forms.cpp, conformance_matmul.cpp's "matmul_partial"): integer-valued operands, a
// single-core tiling of MatmulApiTiling described by its settings, and one run's GM buffers and verdict,
// which is the first element of the kernel's output that differs from the host's reference (every element is
// compared).
#pragma once
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"
#include "tikicpulib.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace mm_host {

// Integer-valued A (i, k) in [-4, 4] and B (k, j) in [-3, 3]: every product and sum is exact in float and
// in half at these sizes.
inline int a_int(uint32_t i, uint32_t k) { return static_cast<int>((i * 7 + k * 3) % 9) - 4; }
inline int b_int(uint32_t k, uint32_t j) { return static_cast<int>((k * 5 + j * 11) % 7) - 3; }

// The kernel's copy of the tiling the host put in GM.
inline TCubeTiling read_tiling(GM_ADDR gm) {
    TCubeTiling t;
    uint32_t* w = reinterpret_cast<uint32_t*>(&t);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / 4; ++i) w[i] = reinterpret_cast<__gm__ uint32_t*>(gm)[i];
    return t;
}

// One operand as MatmulApiTiling's SetAType / SetBType / SetCType / SetBiasType take it (trans: A and B).
struct Operand {
    matmul_tiling::TPosition pos;
    matmul_tiling::CubeFormat format;
    matmul_tiling::DataType type;
    bool trans = false;
};
// A single-core MatmulApiTiling: the operands, the whole matrices (SetOrgShape), this core's part
// (SetShape), the bias (EnableBias), the base block (SetFixSplit; -1 leaves that side to the tiling), and
// what else a family sets (more: dequantisation, batch layouts), all before SetBufferSpace(-1, -1, -1).
struct TilingSpec {
    Operand a, b, c, bias;
    int32_t org_m, org_n, org_k;
    int32_t m, n, k;
    bool with_bias;
    int32_t base_m, base_n, base_k;
    std::function<void(matmul_tiling::MatmulApiTiling&)> more = nullptr;
};

// One family's run on the host: the tiling, the GM buffers (zeroed; freed with the run), the comparison
// with the reference and the line the regression test reads ("<name> ok" or "<name> wrong: ...").
class HostRun {
public:
    explicit HostRun(std::string name) : m_name(std::move(name)) {}
    HostRun(const HostRun&) = delete;
    HostRun& operator=(const HostRun&) = delete;
    ~HostRun() {
        for (void* p : m_gm) AscendC::GmFree(p);
    }

    // GetTiling of spec; false, with the run's "wrong" line printed, when it fails.
    bool tile(const TilingSpec& s) {
        matmul_tiling::MatmulApiTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
        api.SetAType(s.a.pos, s.a.format, s.a.type, s.a.trans);
        api.SetBType(s.b.pos, s.b.format, s.b.type, s.b.trans);
        api.SetCType(s.c.pos, s.c.format, s.c.type);
        api.SetBiasType(s.bias.pos, s.bias.format, s.bias.type);
        api.SetOrgShape(s.org_m, s.org_n, s.org_k);
        api.SetShape(s.m, s.n, s.k);
        api.EnableBias(s.with_bias);
        api.SetFixSplit(s.base_m, s.base_n, s.base_k);
        if (s.more) s.more(api);
        api.SetBufferSpace(-1, -1, -1);
        optiling::TCubeTiling data;
        if (api.GetTiling(data) != 0) {
            std::printf("%s wrong: GetTiling failed\n", m_name.c_str());
            return false;
        }
        std::vector<uint8_t> bytes(data.GetDataSize());
        data.SaveToBuffer(bytes.data(), bytes.size());
        std::memcpy(&m_t, bytes.data(), sizeof m_t);
        m_tiled = true;
        return true;
    }
    const TCubeTiling& tiling() const { return m_t; }
    // The tiling copied into a GM buffer, for the kernel's read_tiling.
    uint8_t* tiling_gm() {
        uint8_t* p = gm<uint8_t>(sizeof m_t);
        std::memcpy(p, &m_t, sizeof m_t);
        return p;
    }
    // A GM buffer of n zeroed elements.
    template <class T>
    T* gm(size_t n) {
        T* p = static_cast<T*>(AscendC::GmAlloc(n * sizeof(T)));
        std::memset(p, 0, n * sizeof(T));
        m_gm.push_back(p);
        return p;
    }

    // got(i, j) against want(i, j) over rows x cols; the first difference ("what[i][j] is x, expected y")
    // unless the run has one already.
    template <class Got, class Want>
    void compare(const std::string& what, uint32_t rows, uint32_t cols, Got got, Want want) {
        for (uint32_t i = 0; i < rows && m_bad.empty(); ++i)
            for (uint32_t j = 0; j < cols && m_bad.empty(); ++j) {
                const auto g = got(i, j);
                const auto w = want(i, j);
                if (g != w)
                    m_bad = what + "[" + std::to_string(i) + "][" + std::to_string(j) + "] is " +
                            std::to_string(g) + ", expected " + std::to_string(w);
            }
    }
    // A difference found by other means (the first one stands).
    void wrong(std::string why) {
        if (m_bad.empty()) m_bad = std::move(why);
    }
    // Prints the run's line (a wrong run's with the tiling's base block) and returns its exit code, 0 or 1.
    int verdict() const {
        if (m_bad.empty())
            std::printf("%s ok\n", m_name.c_str());
        else if (m_tiled)
            std::printf("%s wrong: %s (base %d x %d x %d)\n", m_name.c_str(), m_bad.c_str(), m_t.baseM,
                        m_t.baseN, m_t.baseK);
        else
            std::printf("%s wrong: %s\n", m_name.c_str(), m_bad.c_str());
        return m_bad.empty() ? 0 : 1;
    }

private:
    std::string m_name;
    TCubeTiling m_t{};
    bool m_tiled = false;
    std::string m_bad;
    std::vector<void*> m_gm;
};

}  // namespace mm_host
