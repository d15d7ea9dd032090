// The Ascend C sort family (sfumato_ascendc/sort.h): the checks the public API reference states for
// Sort32 and MrgSort, turned into one vbitsort or vmrgsort4 each, and GetMrgSortResult's counts.
#include "sfumato_ascendc/sort.h"

#include <string>
#include <vector>

#include "isa/semantics.h"
#include "sfumato_ascendc/tensor.h"

namespace sfumato::ascendc {

namespace {

constexpr uint64_t kSortPair = 8;  // bytes of one (score, index) structure

void sort_aligned(const SortOperand& t, const char* name, uint64_t align) {
    if (t.a.addr % align)
        fail(std::string(name) + " at UB address " + std::to_string(t.a.addr) + " is not " +
             std::to_string(align) + "-byte aligned");
}

void sort_holds(const SortOperand& t, const std::string& name, uint64_t need) {
    if (t.bytes < need)
        fail(name + " holds " + std::to_string(t.bytes) + " bytes, the call uses " + std::to_string(need));
}

std::string sort_list_name(uint32_t i) { return "src" + std::to_string(i + 1); }

// repeatTimes > 1: four lists of one length, one after another, no exhausted suspension.
void sort_check_repeat(const SortOperand lists[4], const uint16_t len[4], bool exhausted, uint32_t n,
                       int32_t repeat) {
    std::string why;
    if (n != 4)
        why = "validBit 15";
    else if (exhausted)
        why = "ifExhaustedSuspension false";
    for (uint32_t i = 1; i < 4 && why.empty(); ++i) {
        if (len[i] != len[0])
            why = "four lists of one length";
        else if (lists[i].a.addr != lists[0].a.addr + i * len[0] * kSortPair)
            why = "the lists stored one after another (" + sort_list_name(i) + " at UB address " +
                  std::to_string(lists[i].a.addr) + ", not " +
                  std::to_string(lists[0].a.addr + i * len[0] * kSortPair) + ")";
    }
    if (!why.empty()) fail("repeatTimes " + std::to_string(repeat) + " needs " + why);
}

}  // namespace

void sort32(isa::DType dt, const SortOperand& dst, const SortOperand& score, const SortOperand& index,
            int32_t repeat) {
    if (repeat < 0 || repeat > 255) fail("repeatTime " + std::to_string(repeat) + " outside 0..255");
    if (!dst.valid || !score.valid || !index.valid) fail("a LocalTensor was never allocated");
    if (repeat == 0) return;  // a no-op on Atlas A2
    sort_aligned(dst, "dst", 32), sort_aligned(score, "src0", 32), sort_aligned(index, "src1", 32);
    const uint64_t r = static_cast<uint64_t>(repeat);
    sort_holds(score, "src0", r * 32 * isa::dtype_size(dt));
    sort_holds(index, "src1", r * 32 * 4);
    sort_holds(dst, "dst", r * 32 * kSortPair);
    isa::Instr in = isa::make_instr(isa::Opcode::VBITSORT);
    in.dtype = dt;
    in.dst = dst.a, in.src0 = score.a, in.src1 = index.a;
    in.vec.repeat = static_cast<uint16_t>(repeat);
    g_current->ctx->issue(in);
}

void mrg_sort(isa::DType dt, const SortOperand& dst, const SortOperand lists[4], const uint16_t len[4],
              bool exhausted, uint16_t valid, int32_t repeat) {
    const uint32_t n = valid > 15 ? 0 : isa::mrgsort4_lists(static_cast<uint8_t>(valid));
    if (n == 0)
        fail("validBit " + std::to_string(valid) + " (3, 7 or 15: the first 2, 3 or 4 lists take part)");
    if (repeat < 0 || repeat > 255) fail("repeatTimes " + std::to_string(repeat) + " outside 0..255");
    if (!dst.valid) fail("dst was never allocated");
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (!lists[i].valid)
            fail(sort_list_name(i) + " was never allocated (validBit " + std::to_string(valid) +
                 " takes it)");
        if (len[i] > 4095)
            fail("elementLengths[" + std::to_string(i) + "] " + std::to_string(len[i]) + " past 4095");
        total += len[i];
    }
    if (repeat == 0) return;  // a no-op on Atlas A2
    if (repeat > 1) sort_check_repeat(lists, len, exhausted, n, repeat);
    sort_aligned(dst, "dst", 32);
    const uint64_t out = static_cast<uint64_t>(repeat) * total * kSortPair;
    sort_holds(dst, "dst", out);
    for (uint32_t i = 0; i < n; ++i) {
        sort_aligned(lists[i], sort_list_name(i).c_str(), 8);
        const uint64_t need = (repeat - 1ull) * total * kSortPair + len[i] * kSortPair;
        sort_holds(lists[i], sort_list_name(i), need);
        const uint64_t lo = lists[i].a.addr;
        if (len[i] && lo < dst.a.addr + out && dst.a.addr < lo + need)
            fail(sort_list_name(i) + " (UB bytes [" + std::to_string(lo) + ", " + std::to_string(lo + need) +
                 ")) overlaps dst (UB bytes [" + std::to_string(dst.a.addr) + ", " +
                 std::to_string(dst.a.addr + out) + ")): the merge cannot work in place");
    }
    isa::MrgSort4Config c;
    c.valid = static_cast<uint8_t>(valid), c.exhausted = exhausted;
    for (uint32_t i = 0; i < 4; ++i) c.len[i] = i < n ? len[i] : 0;
    isa::Instr in = isa::make_instr(isa::Opcode::VMRGSORT4);
    in.dtype = dt;
    in.dst = dst.a;
    isa::Addr* slots[3] = {&in.src0, &in.src1, &in.src2};
    for (uint32_t i = 0; i < 3 && i < n; ++i) *slots[i] = lists[i].a;
    in.vec.repeat = static_cast<uint16_t>(repeat);
    isa::set_mrgsort4_config(in, c, n == 4 ? lists[3].a.addr : 0);
    CoreState& s = *g_current;
    s.mrg_any = true, s.mrg_exhausted = exhausted, s.mrg_dtype = dt, s.mrg_valid = c.valid;
    for (uint32_t i = 0; i < 4; ++i)
        s.mrg_len[i] = c.len[i], s.mrg_list[i] = i < n ? lists[i].a : isa::Addr{};
    s.ctx->issue(in);
}

void mrg_sort_result(uint32_t out[4]) {
    CoreState& s = *g_current;
    for (uint32_t i = 0; i < 4; ++i) out[i] = 0;
    if (!s.mrg_any) return;
    s.ctx->pipe_barrier(isa::Pipe::ALL);  // the scalar unit reads the register once V has it
    isa::MrgSort4Config c;
    c.valid = s.mrg_valid, c.exhausted = s.mrg_exhausted;
    for (uint32_t i = 0; i < 4; ++i) c.len[i] = s.mrg_len[i];
    if (!c.exhausted) {  // every list ran to its end
        for (uint32_t i = 0; i < 4; ++i) out[i] = c.len[i];
        return;
    }
    std::vector<uint8_t> bytes[4];
    const uint8_t* lists[4] = {};
    for (uint32_t i = 0; i < isa::mrgsort4_lists(c.valid); ++i) {
        bytes[i].resize(c.len[i] * kSortPair);
        if (c.len[i])
            local_scalar_read(s.mrg_list[i].pos, s.mrg_list[i].addr, bytes[i].data(), c.len[i] * kSortPair);
        lists[i] = bytes[i].data();
    }
    isa::mrgsort4_merge(s.mrg_dtype, lists, c, nullptr, out);
}

}  // namespace sfumato::ascendc
