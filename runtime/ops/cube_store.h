// The way out of L0C shared by the cube kernels (matmul, conv, conv weight gradient): a tm x tn
// tile of fp32 (or int32) partial sums goes to GM rows `ld` elements apart. On split parts the
// FixPipe writes GM directly; on coupled parts (no FixPipe to GM) it goes L0C -> UB through the
// CO2 queue, rows `ub_row` elements apart, then UB -> GM by the MTE3 with the GM row pitch.
// `fp` carries the tile's shape and the caller's conversions (ReLU, scalar dequantisation).
#pragma once
#include <cstdint>

#include "runtime/kernel/api.h"

namespace sfumato::ops {

template <class U, class C, class Q>
void store_l0c_tile(const kernel::GlobalTensor<U>& out, const kernel::LocalTensor<C>& c, kernel::FixpipeParams fp,
                    bool coupled, Q& qc2, uint32_t ub_row, uint32_t tm, uint32_t tn, uint64_t ld) {
    if (!coupled) {
        kernel::Fixpipe(out, c, fp);
        return;
    }
    constexpr uint32_t eo = sizeof(U);
    fp.dstStride = ub_row;
    kernel::LocalTensor<U> c2 = qc2.template AllocTensor<U>();
    kernel::DataCopy(c2, c, fp);
    qc2.EnQue(c2);
    c2 = qc2.template DeQue<U>();
    kernel::DataCopyPad(out, c2, kernel::DataCopyExtParams{tm, tn * eo, 0, static_cast<uint32_t>((ld - tn) * eo)});
    qc2.FreeTensor(c2);
}

}  // namespace sfumato::ops
