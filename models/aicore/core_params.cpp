#include "models/aicore/core_params.h"

namespace sfumato {

BufferParams::BufferParams(const ParamScope& s, uint64_t size_def, uint64_t align_def, const char* what)
    : size(s, "size", size_def, "B", std::string(what) + " capacity per core", {0, 1ull << 32}),
      align(s, "align", align_def, "B", std::string(what) + " address alignment", {1, 4096}) {}

CoreParams::CoreParams(const ParamScope& s)
    : scope(s),
      scalar_issue_cycles(s.sub("scalar"), "issue_cycles", 1, "cycle",
                          "scalar cycles to issue one pipe instruction", {0, 1000}),
      queue_depth(s, "queue_depth", 32, "instr", "depth of each pipe's instruction queue", {1, 4096}),
      event_ids(s, "event_ids", 8, "", "set_flag/wait_flag event ids per pipe pair", {1, 64}),
      flag_latency(s, "flag_latency", 1, "cycle", "cycles from set_flag until a wait_flag sees it", {0, 1000}),
      ub(s.sub("ub"), 32 * 1024, 32, "unified buffer"),
      l1(s.sub("l1"), 128 * 1024, 32, "L1 buffer"),
      l0a(s.sub("l0a"), 16 * 1024, 512, "L0A buffer"),
      l0b(s.sub("l0b"), 16 * 1024, 512, "L0B buffer"),
      l0c(s.sub("l0c"), 32 * 1024, 64, "L0C buffer"),
      vec_cycles_per_repeat(s.sub("vector"), "cycles_per_repeat", 1, "cycle",
                            "cycles per 256-byte repeat of a simple vector op", {1, 1000}),
      vec_startup(s.sub("vector"), "startup", 8, "cycle", "vector pipeline depth (latency beyond throughput)", {0, 10000}),
      cube_m0(s.sub("cube"), "m0", 16, "row", "fractal rows per cube cycle", {1, 256}),
      cube_n0(s.sub("cube"), "n0", 16, "col", "fractal columns per cube cycle", {1, 256}),
      cube_k0_16bit(s.sub("cube"), "k0_16bit", 16, "elem", "reduction depth per cycle, fp16/bf16", {1, 256}),
      cube_k0_int8(s.sub("cube"), "k0_int8", 32, "elem", "reduction depth per cycle, int8", {1, 256}),
      cube_k0_fp32(s.sub("cube"), "k0_fp32", 8, "elem", "reduction depth per cycle, fp32", {1, 256}),
      mte_request_bytes(s.sub("mte"), "request_bytes", 512, "B", "bytes per memory request an MTE issues", {32, 65536}),
      mte_max_outstanding(s.sub("mte"), "max_outstanding", 16, "req",
                          "outstanding memory requests per MTE pipe", {1, 1024}),
      mte2_startup(s.sub("mte2"), "startup", 12, "cycle", "MTE2 per-instruction setup", {0, 10000}),
      mte3_startup(s.sub("mte3"), "startup", 12, "cycle", "MTE3 per-instruction setup", {0, 10000}) {}

}  // namespace sfumato
