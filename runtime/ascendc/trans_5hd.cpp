// TransDataTo5HD (sfumato_ascendc/trans_5hd.h): the reference's checks on the address lists, then one
// vnchwconv through the kernel API.
#include "sfumato_ascendc/trans_5hd.h"

#include <string>

#include "isa/semantics.h"
#include "runtime/kernel/vec_api.h"
#include "sfumato_ascendc/tensor.h"

namespace sfumato::ascendc {

void read_5hd_lists(Trans5hdCall& c, const isa::Addr& dst_list, uint32_t dst_elems, const isa::Addr& src_list,
                    uint32_t src_elems) {
    for (const auto& [name, n] : {std::pair{"dst", dst_elems}, std::pair{"src", src_elems}})
        if (n < isa::kNchwList)
            fail(std::string(name) + " holds " + std::to_string(n) + " addresses, the call reads " +
                 std::to_string(isa::kNchwList));
    // The scalar unit reads the lists once the pipes that may write them drained (as GetValue does).
    g_current->ctx->pipe_barrier(isa::Pipe::ALL);
    local_scalar_read(dst_list.pos, dst_list.addr, c.dst, sizeof c.dst);
    local_scalar_read(src_list.pos, src_list.addr, c.src, sizeof c.src);
}

void trans_5hd(const Trans5hdCall& c) {
    if (c.p.repeatTimes == 0) return;  // a no-op (the reference)
    for (const auto& [name, list] : {std::pair{"dstList", c.dst}, std::pair{"srcList", c.src}})
        for (uint32_t i = 0; i < isa::kNchwList; ++i)
            if (list[i] % 32 != 0)
                fail(std::string(name) + "[" + std::to_string(i) + "] = UB address " + std::to_string(list[i]) +
                     " is not 32-byte aligned");
            else if (list[i] >= (uint64_t{1} << 20))
                fail(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(list[i]) +
                     " is no UB address (1 MiB or more)");
    const bool one_byte = c.esize == 1;
    kernel::detail::nchwconv(*g_current->ctx, c.dt, c.dst, c.src, c.p.repeatTimes, c.p.dstRepStride,
                             c.p.srcRepStride, one_byte && c.p.dstHighHalf, one_byte && c.p.srcHighHalf);
}

}  // namespace sfumato::ascendc
