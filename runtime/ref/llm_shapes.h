// The attribute and shape checks of PagedAttention (contract: docs/llm.md,
// "Operators"), shared by the host reference, shape inference and the operator:
// every message names the node and the attribute or input at fault.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ref/attrs.h"

namespace sfumato::ref {

struct PagedLayout {
    int64_t T = 0, NH = 0, NKV = 0, D = 0, BS = 0, NB = 0, max_blocks = 0;
    double scale = 1.0;
    std::vector<int64_t> query_lens, context_lens, block_table;
    // Cache row (block * BS + slot) of position pos of sequence s.
    int64_t slot(size_t s, int64_t pos) const;
};

// Validates the attributes against the shapes of q, k, v, k_cache and v_cache;
// throws InputError.
PagedLayout paged_layout(const std::string& node, const Attrs& a, const std::vector<int64_t>& q,
                         const std::vector<int64_t>& k, const std::vector<int64_t>& v,
                         const std::vector<int64_t>& kc, const std::vector<int64_t>& vc);

}  // namespace sfumato::ref
