// UB buffer placement for the 220x bank rules (docs/fidelity.md, "UB bank conflicts: the
// vendor's 220x rules"): a vector instruction's destination should lie in another bank span
// (kBankSpan bytes) than its sources, and two sources read in lockstep should start in
// different halves of the 16 bank groups (256 B apart modulo 512). A kernel names its buffers,
// the phase each must start at (its address modulo 512) and the pairs that one instruction
// writes and reads (they should not share a span); place_apart puts each buffer whole inside
// one span, at its phase, so that as few such pairs as possible share a span (pairs weighted
// by how often they meet). Deterministic: a bounded search over spans in item order.
#pragma once
#include <cstdint>
#include <vector>

namespace sfumato::ops::norm {

struct UbItem {
    uint64_t bytes = 0;
    uint32_t phase = 0;  // address modulo 512 wanted (0 or 256)
};
struct UbApart {
    int a = 0, b = 0;
    uint32_t weight = 1;  // how costly sharing a span is (e.g. repeats per row it touches)
};

// Offsets of the items within [0, total), or empty when they do not all fit whole inside spans
// (the caller then keeps its sequential layout). span: bytes of a bank span.
std::vector<uint64_t> place_apart(const std::vector<UbItem>& items, const std::vector<UbApart>& apart, uint64_t total,
                                  uint64_t span);

// The weight of the apart pairs an offset list leaves in one span (0 = every pair apart).
uint64_t shared_weight(const std::vector<UbItem>& items, const std::vector<UbApart>& apart,
                       const std::vector<uint64_t>& at, uint64_t span);

}  // namespace sfumato::ops::norm
