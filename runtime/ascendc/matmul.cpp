// The high-level Matmul's run-time checks (sfumato_ascendc/matmul.h): a tiling the kernel object
// cannot run (sizes that are not positive, base blocks not aligned to the fractal or past the L0
// buffers of the chip) stops the run naming the field, exit 2, before any instruction is issued.
#include "sfumato_ascendc/matmul.h"

#include <string>

#include "runtime/ascendc/core_run.h"

namespace sfumato::ascendc {

namespace {
void need(bool ok, const std::string& what) {
    if (!ok) fail("Matmul::Init: the tiling's " + what);
}
}  // namespace

void matmul_check_tiling(const TCubeTiling& t, uint32_t c0, bool bias) {
    need(t.M > 0 && t.N > 0 && t.Ka > 0 && t.Kb > 0, "M, N, Ka and Kb must be positive");
    need(t.singleCoreM > 0 && t.singleCoreN > 0 && t.singleCoreK > 0, "singleCoreM/N/K must be positive");
    need(t.baseM > 0 && t.baseN > 0 && t.baseK > 0, "baseM/N/K must be positive");
    need(t.baseM % 16 == 0 && t.baseN % 16 == 0, "baseM and baseN must be multiples of 16 (the fractal)");
    need(t.baseK % 16 == 0 && t.baseK % static_cast<int32_t>(c0) == 0,
         "baseK " + std::to_string(t.baseK) + " must be a multiple of 16 and of C0 = " + std::to_string(c0));
    need(t.baseM <= 4096 && t.baseN <= 4096 && t.baseK <= 4096, "base blocks past 4096 elements a side");
    need(t.stepM > 0 && t.stepN > 0 && t.stepKa > 0 && t.stepKb > 0, "stepM/N/Ka/Kb must be positive");
    need(t.depthA1 > 0 && t.depthB1 > 0, "depthA1 and depthB1 must be positive");
    // 0 is one buffer, as 1 (the vendor's matmul_s4 example writes its tiling words with dbL0B and dbL0C 0).
    need(t.dbL0A >= 0 && t.dbL0B >= 0 && t.dbL0C >= 0, "dbL0A/B/C must be 0, 1 or 2");
    need(!bias || t.baseN * 4 <= 1024, "baseN x 4 bytes of bias must fit the bias table (1 KiB)");
}

}  // namespace sfumato::ascendc
