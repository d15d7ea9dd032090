// Semantics of the scalar unit's accesses to global memory: LD_GM (a load into a scalar
// register), ST_GM (a store of an immediate value, rounded once to the element type) and DCCI
// (clean and invalidate data-cache lines). The data cache itself is timing only (models/aicore):
// functionally a load reads and a store writes global memory directly, so values are always
// coherent; stale lines, which the real cache can return before a DCCI, are not modelled.
#include <cstring>
#include <stdexcept>

#include "isa/sem_detail.h"

namespace sfumato::isa::detail {

bool is_scalar_mem(Opcode op) { return op == Opcode::LD_GM || op == Opcode::ST_GM || op == Opcode::DCCI; }

std::string validate_scalar_mem(const Instr& in) {
    if (!is_scalar_mem(in.op)) return "";
    if (in.op == Opcode::DCCI) {
        if (in.sc.all > 1) return "all must be 0 or 1";
        return in.dst.pos == Pos::GM ? "" : bad_pos(in, "dst", in.dst.pos);
    }
    if (in.dtype >= DType::kCount) return "bad dtype";
    const Addr& a = in.op == Opcode::LD_GM ? in.src0 : in.dst;
    if (a.pos != Pos::GM) return bad_pos(in, in.op == Opcode::LD_GM ? "src0" : "dst", a.pos);
    const uint32_t size = dtype_size(in.dtype);
    if (a.addr % size) return "address " + std::to_string(a.addr) + " not aligned to its " + std::to_string(size) + "-byte element";
    if (in.op == Opcode::LD_GM && in.sc.xd >= 32) return "scalar register x" + std::to_string(in.sc.xd) + " outside x0..x31";
    return "";
}

int footprint_scalar_mem(const Instr& in, Extent out[kMaxExtents]) {
    if (in.op == Opcode::LD_GM) {
        out[0] = {Pos::GM, in.src0.addr, in.src0.addr + dtype_size(in.dtype), false};
        return 1;
    }
    if (in.op == Opcode::ST_GM) {
        out[0] = {Pos::GM, in.dst.addr, in.dst.addr + dtype_size(in.dtype), true};
        return 1;
    }
    return 0;  // DCCI touches no data (it writes back only lines the cache holds)
}

void exec_scalar_mem(const Instr& in, IMemView& mem) {
    if (in.op != Opcode::ST_GM) return;
    uint8_t b[8] = {};
    store_f64(in.dtype, b, in.scalar);
    mem.gm_write(in.dst.addr, b, dtype_size(in.dtype));
}

}  // namespace sfumato::isa::detail

namespace sfumato::isa {

uint64_t load_scalar(const Instr& in, IMemView& mem) {
    uint64_t v = 0;
    if (in.op != Opcode::LD_GM) return v;
    if (std::string err = detail::validate_scalar_mem(in); !err.empty())
        throw std::invalid_argument(std::string(opcode_name(in.op)) + ": " + err);
    uint8_t b[8] = {};
    mem.gm_read(in.src0.addr, b, dtype_size(in.dtype));
    std::memcpy(&v, b, sizeof v);  // little-endian host
    return v;
}

}  // namespace sfumato::isa
