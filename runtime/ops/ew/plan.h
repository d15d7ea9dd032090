// Host tiling of an elementwise kernel with numpy broadcasting. The output is viewed as R rows
// of L elements after merging dimensions that every operand walks alike; each operand is then
// read in one of these forms, chosen per shape (and named by describe() and the trace):
//   imm          a plan-time constant scalar, folded into vector-scalar instructions;
//   scalar       a one-element tensor: loaded once per core, spread over one 32-byte block
//                (vbrcb) and read with block and repeat stride 0 (a stride-0 read);
//   stream       rows loaded per tile, any row stride (runs of rows with one stride are one
//                DataCopy); rows that repeat (row stride 0 inside a run) are loaded once and
//                copied inside UB ("repeat-the-row load, per tile");
//   row          the same row for every output row: loaded once per core and replicated k
//                times in UB ("repeat-the-row load"), or, when tiles are parts of a row, kept
//                resident and re-read for every output row ("stride-0 read");
//   col          one value per row (a trailing broadcast dim): values loaded per tile, each
//                spread over its row by vbrcb;
//   gather       a strided view whose rows are not contiguous (a transpose that moves the
//                last axis, a slice with steps): one burst per element (each lands in its own
//                32-byte block), packed by a one-lane per-repeat reduction.
// Tiles are k whole rows padded to 32-byte blocks (row mode) or a chunk of one row (chunk
// mode); tiles are split over the vector cores in contiguous ranges; the UB holds a double-
// buffered input queue (all streamed operands of a tile in one buffer), a double-buffered
// output queue and the program's temporaries. Every vector step covers whole 256-element
// groups, so no masked tails and bitmasks stay 32-byte aligned.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ops/ew/onnx_ew.h"
#include "runtime/ops/ew/program.h"
#include "runtime/ref/host_tensor.h"
#include "sim/device_if.h"

namespace sfumato::ops::ew {

enum class Form : uint8_t { Absent, Imm, Scalar, Stream, Row, Col, Gather };

struct EwIn {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // elements; empty = contiguous; 0 = broadcast; may be negative
    int64_t base = 0;              // element offset of element 0 from the tensor's address
    isa::DType storage = isa::DType::FP32;
    ref::ElemType elem = ref::ElemType::Float;
    const ref::HostTensor* constant = nullptr;  // value when known at plan time
    bool present = true;
};

struct OperandPlan {
    Form form = Form::Absent;
    isa::DType storage = isa::DType::FP32;
    isa::DType deliver = isa::DType::FP32;  // Scalar: the type its block holds
    uint64_t numel = 0;
    int64_t base = 0;          // element offset from the tensor's address
    std::vector<int64_t> os;   // element strides over the outer dims
    int64_t istride = 1;       // inner stride
    bool repeat_rows = false;  // Stream: row stride 0 inside a run (copied in UB)
    uint32_t in_off = 0;       // Stream/Col: offset of its part of the input buffer
    uint32_t calc_off = 0;     // what the program reads: Scalar block, Row resident rows, Col tile
    uint32_t stage_off = 0;    // Scalar/Col: converted values (when storage != expansion type)
    uint32_t x_off = 0;        // Col: expansion area in the expansion type (== calc_off unless 1-byte)
    isa::DType xtype = isa::DType::FP32;  // Col: the type values are spread in (16/32-bit)
};

struct Plan {
    std::vector<int64_t> out_shape;
    std::vector<int64_t> outer;  // merged outer dims (rows = their product)
    int64_t L = 1;               // row length
    uint64_t R = 1;              // rows
    bool chunk = false;          // tiles are chunks of one row
    uint32_t Lp = 0;             // padded row length (row mode)
    uint32_t k = 1;              // rows per tile (row mode)
    uint32_t w = 0;              // chunk width (chunk mode)
    uint32_t T = 0;              // elements per tile, rounded up to 256
    uint64_t nchunks = 1;
    uint64_t units = 0;      // rows (row mode) or row chunks (chunk mode); core b takes the balanced
    uint64_t per_block = 0;  // range [units * b / block_dim, units * (b + 1) / block_dim)
    uint32_t block_dim = 1;
    uint32_t nbuf = 2;
    uint32_t run_len = 1;        // rows per run (the last outer dim), 1 if none
    std::vector<OperandPlan> in;
    isa::DType out_storage = isa::DType::FP32;
    std::vector<int64_t> out_os;  // output strides over the outer dims (a region of a larger tensor)
    bool out_contig = true;       // rows follow each other in the output
    int64_t out_is = 1;           // output inner stride; != 1: each element is stored by its own burst
    uint32_t spread_off = 0;      // (out_is != 1) elements spread one per 32-byte block, in the out buffer
    int64_t out_base = 0;         // element offset of the region
    Program prog;
    // UB layout (bytes): input buffer, output buffer, calc area and offsets in it.
    uint32_t in_bytes = 0, out_bytes = 0, calc_bytes = 0;
    uint32_t fixed_bytes = 0;         // the calc area's operand staging and constant blocks (slots follow)
    std::vector<uint32_t> slot_off;   // temp slots
    std::vector<uint32_t> const_off;  // per program register (constant blocks), else 0
    // Placed for the UB bank spans (runtime/ops/ew/ub_layout.h): the kernel reserves ub_reserve
    // bytes and puts each queue buffer at its offset; the calc offsets above then count from the
    // reserve's base. Not placed: queues and the calc area follow each other.
    bool placed = false;
    uint32_t ub_reserve = 0;
    std::vector<uint32_t> in_at, out_at;  // per queue buffer
    uint64_t shared_weight = 0;           // step repeats whose destination shares a span with a source
    // Addresses (set before launch).
    std::vector<uint64_t> in_addr;
    uint64_t out_addr = 0;

    std::string describe(const std::vector<std::string>& names) const;
    std::string short_form() const;  // e.g. "row: repeat-the-row load"
};

// Plans a node. Throws InputError (broadcast mismatch) or UnsupportedError-style InputError
// (strided views it cannot read, a UB too small).
// out_strides (elements, empty = contiguous) and out_base place the result inside a larger
// output tensor (data-movement jobs write regions).
Plan make_ew_plan(const EwNode& n, const std::vector<EwIn>& in, const std::vector<int64_t>& out_shape,
                  isa::DType out_storage, ref::ElemType out_elem, const DeviceInfo& dev,
                  const std::vector<int64_t>& out_strides = {}, int64_t out_base = 0);

const char* form_name(Form f);

}  // namespace sfumato::ops::ew
