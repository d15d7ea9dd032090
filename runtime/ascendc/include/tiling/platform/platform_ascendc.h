// Host tiling code's view of the chip (platform_ascendc::PlatformAscendC): core counts and local
// memory sizes of the simulated chip the program runs on (the chip is set up on first use, from
// SFUMATO_CONFIG as for any Ascend C call).
#pragma once
#include <cstdint>

namespace sfumato::ascendc {
struct PlatformInfo {
    uint32_t aic = 0, aiv = 0;  // cube and vector cores (both the coupled core count on coupled parts)
    bool split = false;
    uint64_t ub = 0, l1 = 0, l0a = 0, l0b = 0, l0c = 0, l2 = 0, hbm = 0;
};
PlatformInfo platform_info();
}  // namespace sfumato::ascendc

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND310P, ASCEND310B, RESERVED_VERSION };

class PlatformAscendC {
public:
    // Vector cores on split parts (the cores that run vector kernels), all cores on coupled ones.
    uint32_t GetCoreNum() const { return info().aiv; }
    uint32_t GetCoreNumAic() const { return info().aic; }
    uint32_t GetCoreNumAiv() const { return info().aiv; }
    SocVersion GetSocVersion() const { return info().split ? SocVersion::ASCEND910B : SocVersion::ASCEND910; }
    void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const {
        const sfumato::ascendc::PlatformInfo i = info();
        switch (memType) {
            case CoreMemType::L0_A: size = i.l0a; break;
            case CoreMemType::L0_B: size = i.l0b; break;
            case CoreMemType::L0_C: size = i.l0c; break;
            case CoreMemType::L1: size = i.l1; break;
            case CoreMemType::L2: size = i.l2; break;
            case CoreMemType::UB: size = i.ub; break;
            case CoreMemType::HBM: size = i.hbm; break;
            default: size = 0; break;
        }
    }
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
        if (aicCoreNum == 0 || aivCoreNum == 0 || !info().split) return sliceNum;
        const uint32_t ratio = aivCoreNum / aicCoreNum ? aivCoreNum / aicCoreNum : 1;
        return (sliceNum + ratio - 1) / ratio;
    }
    uint32_t GetLibApiWorkSpaceSize() const { return 0; }

private:
    static sfumato::ascendc::PlatformInfo info() { return sfumato::ascendc::platform_info(); }
};

class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance() {
        static PlatformAscendC p;
        return &p;
    }
    // A named SoC: the platform is the chip the program runs on whatever the name.
    static PlatformAscendC* GetInstance(const char* socVersion) {
        (void)socVersion;
        return GetInstance();
    }
};

}  // namespace platform_ascendc
