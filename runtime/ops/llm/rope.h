// Rope: rotary position embedding of Q or K (contract: docs/llm.md,
// "Operators"). x [T, N, D] (N heads of D), positions [T] (int32 on the
// device), cos_sin [P, R] (cos in columns [0, R/2), sin in [R/2, R) per
// position). Both styles are one formula on the first R dims of a head: y = x *
// C + perm(x) * S, where perm swaps the halves (style "half", rotate-half) or
// the pairs (style "interleaved", GPT-J), C repeats the cos row over the pairs
// and S the sin row with the sign of the rotation; dims past R pass through. A
// vector kernel: a tile is k tokens; MTE2 loads their x rows in one burst and,
// per token, the cos_sin row of its position (the scalar unit reads the
// position from GM: the row address depends on data, as on the chip), V expands
// C and S with one vector gather each, permutes x with one gather, and applies
// two multiplies and an add over [token][head][R] nests; MTE3 stores. The
// gather offsets (per block, built on the core with iota and masked adds)
// depend only on the shape. Host-known positions: timing mode holds no data, so
// a row address read from GM would be row 0 there and cycles would differ
// between the modes by which cos_sin rows the L2 holds. The optional attribute
// `host_positions` (ints, T) gives the positions as the host knows them (the
// model builder always does: context length + i); the rows are then addressed
// from it (the scalar unit still loads each position, as the chip's kernel
// does) and both modes take the same cycles. Without it, the loaded position is
// used (functional mode exact, timing mode reads row 0 for every token).
// Simplified: D and R multiples of 16 (every head and half starts on 32 bytes
// in fp32); a loaded position outside the table is clamped to it (the reference
// reports it). y may alias x: each tile is read before it is written.
#pragma once
#include <cstdint>
#include <vector>

#include "isa/dtype.h"
#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::ops::llm {

struct RopePlan {
    isa::DType xt = isa::DType::FP16, ct = isa::DType::FP16;
    uint64_t x = 0, pos = 0, cs = 0, y = 0;  // GM
    uint64_t T = 0, N = 1, D = 0, R = 0, P = 0;
    bool interleaved = false;
    std::vector<int64_t> host_pos;  // empty: positions read from GM
    uint32_t k = 1;
    uint64_t per_block = 1;
    uint32_t blocks = 1;
};

uint64_t rope_ub_bytes(const RopePlan& p, uint32_t k);
bool plan_rope(RopePlan& p, const DeviceInfo& dev);
void rope_kernel(isa::IInstrSink& sink, const RopePlan& p);

}  // namespace sfumato::ops::llm
