// Fuzz target `config`: the INI reader, `--set` overrides and the validation of every chip and
// host parameter, as `sfumato info --config F --set k=v...` runs them (without printing).
// Input: INI text; after a line `%%`, one `--set` assignment per line. A configuration that is
// accepted must give finite, positive derived peaks (a parameter range that lets a zero or an
// overflow through is a finding).
#include <cmath>
#include <sstream>

#include "models/chip/chip_params.h"
#include "runtime/rt/runtime.h"
#include "sim/config.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(config) {
    const std::string text(fuzz::as_text(data, size));
    const size_t split = text.find("\n%%\n");
    Config c;
    c.load_ini_text(text.substr(0, split), "fuzz.ini");
    if (split != std::string::npos) {
        std::istringstream sets(text.substr(split + 4));
        for (std::string line; std::getline(sets, line);) c.apply_override(line);
    }
    ChipParams chip(c);
    rt::RuntimeParams host(ParamScope(c, "host"));
    c.check_unused();
    const ChipPeaks k = chip_peaks(chip);
    for (double v : {k.cube_tflops_fp16, k.cube_tflops_fp32, k.cube_tops_int8, k.vector_gflops_fp16, k.gm_gbps,
                     k.core_read_gbps, k.core_gm_read_gbps, k.core_write_gbps, k.device_mem_max_gbps}) {
        if (!std::isfinite(v) || v <= 0) fuzz::fail("accepted config gives a derived peak of " + std::to_string(v));
    }
    const DeviceInfo d = device_info(chip, true);
    for (double v : {d.vector_bytes_per_cycle, d.gm_bytes_per_cycle, d.core_gm_read_bytes_per_cycle, d.mem_max_bytes_per_cycle}) {
        if (!std::isfinite(v) || v <= 0) fuzz::fail("accepted config gives a device rate of " + std::to_string(v));
    }
    (void)c.hash();
}
