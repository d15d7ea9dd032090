// Host-side helpers of the normalisation, reduction and pooling operators
// (runtime/ops/norm/common.h).
#include "runtime/ops/norm/common.h"

#include <algorithm>

namespace sfumato::ops::norm {

const TensorRef& need_input(const NodeDesc& n, size_t i, const char* what) {
    if (!n.has_input(i)) throw UnsupportedError(n, std::string("missing input '") + what + "'");
    return n.inputs[i];
}

isa::DType float_input(const NodeDesc& n, size_t i, const char* what) {
    const TensorRef& t = need_input(n, i, what);
    if (t.format != Format::ND) throw UnsupportedError(n, std::string("input '") + what + "' in format " + format_name(t.format));
    if (!t.contiguous()) throw UnsupportedError(n, std::string("input '") + what + "' is a strided view");
    switch (t.dtype) {
        case isa::DType::FP16:
        case isa::DType::BF16:
        case isa::DType::FP32: return t.dtype;
        default:
            throw UnsupportedError(n, std::string("input '") + what + "' has dtype " + isa::dtype_name(t.dtype) +
                                          " (supported: fp16, bf16, fp32)");
    }
}

WorkSplit split_work(uint64_t items, uint32_t cores) {
    WorkSplit s;
    if (items == 0) return s;
    const uint64_t b = std::min<uint64_t>(std::max(1u, cores), items);
    s.per_block = (items + b - 1) / b;
    s.blocks = static_cast<uint32_t>((items + s.per_block - 1) / s.per_block);
    return s;
}

KernelDesc vector_launch(const std::string& name, const std::string& type, uint32_t blocks,
                         std::function<void(isa::IInstrSink&)> body, double flops, uint64_t bytes, double fp32_passes,
                         uint64_t elems, const DeviceInfo& dev) {
    KernelDesc k;
    k.name = name.empty() ? type : name;
    k.type = type;
    k.block_dim = blocks;
    k.kind = KernelKind::Vector;
    k.body = std::move(body);
    k.flops = flops;
    k.bytes = bytes;
    const double cores = std::min<double>(blocks, std::max(1u, dev.vector_cores));
    if (dev.vector_bytes_per_cycle > 0)
        k.min_compute_cycles = fp32_passes * static_cast<double>(elems) * 4.0 / (dev.vector_bytes_per_cycle * cores);
    return k;
}

TensorRef tensor_like(const TensorRef& like, const std::vector<int64_t>& shape) {
    TensorRef t;
    t.shape = shape;
    t.dtype = like.dtype;
    t.elem = like.elem;
    return t;
}

}  // namespace sfumato::ops::norm
