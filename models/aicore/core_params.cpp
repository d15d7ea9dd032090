#include "models/aicore/core_params.h"

namespace sfumato {

BufferParams::BufferParams(const ParamScope& s, uint64_t size_def, uint64_t align_def, const char* what)
    : size(s, "size", size_def, "B", std::string(what) + " capacity per core", {0, 1ull << 32}),
      align(s, "align", align_def, "B", std::string(what) + " address alignment", {1, 4096}) {}

CoreParams::CoreParams(const ParamScope& s)
    : scope(s),
      scalar_issue_cycles(s.sub("scalar"), "issue_cycles", 1, "cycle",
                          "scalar cycles to issue one instruction", {0, 1000}),
      scalar_setup_cycles(s.sub("scalar"), "setup_cycles", 1, "cycle",
                          "scalar cycles per register value an instruction takes (an address, a packed parameter word; est.)",
                          {0, 1000}),
      queue_depth(s, "queue_depth", 32, "instr", "depth of each pipe's instruction queue", {1, 4096}),
      event_ids(s, "event_ids", 8, "", "set_flag/wait_flag event ids per pipe pair", {1, 64}),
      flag_latency(s, "flag_latency", 1, "cycle", "cycles from set_flag until a wait_flag sees it", {0, 1000}),
      set_flag_blocks(s, "set_flag_blocks", false, "",
                      "true: a set_flag (or set_cross_flag) holds the later instructions of its pipe until every earlier one completed; "
                      "false: it waits for them on its own (a scoreboard) while later instructions start"),
      ub(s.sub("ub"), 32 * 1024, 32, "unified buffer"),
      l1(s.sub("l1"), 128 * 1024, 32, "L1 buffer"),
      l0a(s.sub("l0a"), 16 * 1024, 512, "L0A buffer"),
      l0b(s.sub("l0b"), 16 * 1024, 512, "L0B buffer"),
      l0c(s.sub("l0c"), 32 * 1024, 64, "L0C buffer"),
      // 7 KiB: Hardware::FIXBUF of __NPU_ARCH__ 2201 in the vendor's open CPU-mode buffer table (asc-devkit
      // kernel_utils_mode_cpu.h) and catlass's FIXBUF_SIZE for Atlas A2, all of which catlass kernels reserve as
      // C2PIPE2GM; its first 2 KiB (fb0_size of the vendor's Ascend910B platform file) hold the 256
      // per-channel quantisation words a fixpipe reads.
      fb(s.sub("fb"), 7 * 1024, 128, "FixPipe buffer (per-channel quantisation words)"),
      // 1 KiB on Atlas A2/A3 (the vendor's API reference, L1 -> BiasTable DataCopy): 256 fp32 entries.
      bt(s.sub("bt"), 1024, 64, "bias table (mad bias, fp32/int32 per column)"),
      vec_cycles_per_repeat(s.sub("vector"), "cycles_per_repeat", 1, "cycle",
                            "cycles per 256-byte repeat of a simple vector op", {1, 1000}),
      vec_transcendental_cycles_per_repeat(s.sub("vector"), "transcendental_cycles_per_repeat", 4, "cycle",
                                           "cycles per repeat of exp/ln/sqrt/rsqrt/rec/div (est.)", {1, 1000}),
      vec_reduce_cycles_per_repeat(s.sub("vector"), "reduce_cycles_per_repeat", 2, "cycle",
                                   "cycles per repeat of a reduction (est.)", {1, 1000}),
      vec_gather_cycles_per_repeat(s.sub("vector"), "gather_cycles_per_repeat", 8, "cycle",
                                   "cycles per repeat of a gather (est.)", {1, 1000}),
      vec_sort_fp16_bpc(s.sub("vector"), "sort_fp16_bytes_per_cycle", 128, "B/cycle",
                        "(score, index) bytes a sort writes per cycle, fp16 scores: the vendor's open A2/A3 "
                        "cost model (hicann/pypto cost_model, VBITSORT/VMRGSORT4) gives 128 per 256-B repeat; "
                        "vmrgsort4 charged per 256 bytes written (est.)",
                        {1, 65536}),
      vec_sort_fp32_bpc(s.sub("vector"), "sort_fp32_bytes_per_cycle", 64, "B/cycle",
                        "the same with fp32 scores: the cost model gives 64", {1, 65536}),
      vec_startup(s.sub("vector"), "startup", 8, "cycle", "vector pipeline depth (latency beyond throughput)", {0, 10000}),
      // UB bank layout and conflict rules: the vendor's Ascend C best practice "avoid UB bank
      // conflicts" for NPU arch 220x (Atlas A2/A3): 16 bank groups of 3 banks, a bank 128 rows of
      // 32 B; a read and a write to one bank, or two reads (or two writes) to one group, in the
      // same cycle conflict.
      ub_bank_bytes(s.sub("ub"), "bank_bytes", 32, "B", "UB bank row width (rows interleave over the bank groups)",
                    {32, 4096}),
      ub_bank_groups(s.sub("ub"), "bank_groups", 16, "group",
                     "UB bank groups (one read and one write port each per cycle; consecutive rows in consecutive "
                     "groups)",
                     {1, 1024}),
      ub_bank_rows(s.sub("ub"), "bank_rows", 128, "row",
                   "rows per UB bank (a group's next bank starts bank_groups x bank_rows rows further)", {1, 1u << 20}),
      ub_bank_conflict_cycles(s.sub("ub"), "bank_conflict_cycles", 1, "cycle",
                              "extra cycles per repeat for each cycle the repeat's UB accesses need beyond one",
                              {0, 1000}),
      cube_m0(s.sub("cube"), "m0", 16, "row", "fractal rows per cube cycle", {1, 256}),
      cube_n0(s.sub("cube"), "n0", 16, "col", "fractal columns per cube cycle", {1, 256}),
      cube_k0_16bit(s.sub("cube"), "k0_16bit", 16, "elem", "reduction depth per cycle, fp16/bf16", {1, 256}),
      cube_k0_int8(s.sub("cube"), "k0_int8", 32, "elem",
                   "reduction depth per cycle, int8 (twice fp16: the vendor's open A2/A3 cost model, hicann/pypto "
                   "cost_model, gives 32)",
                   {1, 256}),
      cube_k0_int4(s.sub("cube"), "k0_int4", 64, "elem",
                   "reduction depth per cycle, int4 (four times fp16: the vendor's open A2/A3 cost model, hicann/pypto "
                   "cost_model, gives 64; one 512-B fractal of 16 x 64 int4 a step, as fp16 and int8)",
                   {1, 256}),
      cube_k0_fp32(s.sub("cube"), "k0_fp32", 4, "elem",
                   "reduction depth per cycle, fp32 (a quarter of fp16: the vendor's open A2/A3 cost model, hicann/pypto "
                   "cost_model, gives 4; the fp32 fractal is 8 deep, so one takes two cycles)",
                   {1, 256}),
      cube_cycles_per_step(s.sub("cube"), "cycles_per_step", 1, "cycle", "cycles per m0 x k0 x n0 fractal step", {1, 1000}),
      cube_fill(s.sub("cube"), "fill", 16, "cycle", "cube pipeline fill: latency beyond throughput (est.)", {0, 10000}),
      mte1_l1_l0a_bpc(s.sub("mte1"), "l1_l0a_bytes_per_cycle", 512, "B/cycle", "L1->L0A bandwidth (load2d/load3d)", {1, 65536}),
      mte1_l1_l0b_bpc(s.sub("mte1"), "l1_l0b_bytes_per_cycle", 256, "B/cycle", "L1->L0B bandwidth", {1, 65536}),
      mte1_l1_ub_bpc(s.sub("mte1"), "l1_ub_bytes_per_cycle", 128, "B/cycle", "L1->UB bandwidth (coupled parts)", {1, 65536}),
      mte1_fill_bpc(s.sub("mte1"), "fill_bytes_per_cycle", 256, "B/cycle", "fill bandwidth into L1/L0A/L0B (est.)", {1, 65536}),
      mte1_startup(s.sub("mte1"), "startup", 4, "cycle", "MTE1 latency beyond throughput (est.)", {0, 10000}),
      fix_l0c_bpc(s.sub("fix"), "l0c_bytes_per_cycle", 256, "B/cycle", "FixPipe read rate from L0C (fp32/int32 bytes)", {1, 65536}),
      fix_l1_fb_bpc(s.sub("fix"), "l1_fb_bytes_per_cycle", 128, "B/cycle",
                    "L1->FixPipe buffer rate (est.: the L1 read port of L1->UB)", {1, 65536}),
      fix_startup(s.sub("fix"), "startup", 12, "cycle", "FixPipe latency beyond throughput / GM setup (est.)", {0, 10000}),
      l0c_ub_bpc(s.sub("vector"), "l0c_ub_bytes_per_cycle", 256, "B/cycle", "L0C->UB bandwidth (coupled parts)", {1, 65536}),
      ub_l1_bpc(s.sub("mte3"), "ub_l1_bytes_per_cycle", 128, "B/cycle", "UB->L1 bandwidth", {1, 65536}),
      cross_flag_latency(s.sub("cross_flag"), "latency", 20, "cycle", "cycles from set_cross_flag until a waiting core sees it (est.)", {0, 100000}),
      check_races(s, "check_races", false, "", "report unordered overlapping accesses of different pipes (exit 3)"),
      mte_request_bytes(s.sub("mte"), "request_bytes", 512, "B", "bytes per memory request an MTE issues", {32, 65536}),
      mte_max_outstanding(s.sub("mte"), "max_outstanding", 16, "req",
                          "outstanding memory requests per MTE pipe", {1, 1024}),
      mte2_startup(s.sub("mte2"), "startup", 12, "cycle", "MTE2 per-instruction setup", {0, 10000}),
      mte3_startup(s.sub("mte3"), "startup", 12, "cycle", "MTE3 per-instruction setup", {0, 10000}),
      smem(s) {}

uint32_t CoreParams::issue_cost(const isa::Instr& in) const {
    return scalar_issue_cycles + scalar_setup_cycles * isa::scalar_setup_words(in);
}

}  // namespace sfumato
