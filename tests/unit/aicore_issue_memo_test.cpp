// The issue memo the cores of one kind share (models/aicore/instr_cache.h, InstrMemo): it returns
// a value only for an instruction equal (isa::operator==) to the one it was put with, and an equal
// instruction finds it whatever the bytes equality does not read hold (the issue cycle, the
// sequence number, a parameter block's fields another opcode class uses), since the kernel API
// writes its instructions into a reused scratch instruction.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "isa/instr.h"
#include "models/aicore/instr_cache.h"

using namespace sfumato;
using isa::Instr;
using isa::Opcode;

namespace {
Instr vadd(uint64_t dst, uint64_t src0, uint64_t src1, uint16_t repeat) {
    Instr in = isa::make_instr(Opcode::VADD);
    in.dst.addr = dst;
    in.src0.addr = src0;
    in.src1.addr = src1;
    in.vec.repeat = repeat;
    return in;
}
}  // namespace

TEST_CASE("issue memo: finds what was put for an equal instruction only") {
    InstrMemo<int> memo;
    const Instr a = vadd(0x100, 0x200, 0x300, 4);
    CHECK(memo.find(a) == nullptr);
    memo.put(a, 7);
    REQUIRE(memo.find(a) != nullptr);
    CHECK(memo.find(a)->value == 7);
    // Bookkeeping fields are not part of the key.
    Instr later = a;
    later.seq = 99;
    later.issue_cycle = 12345;
    REQUIRE(memo.find(later) != nullptr);
    CHECK(memo.find(later)->value == 7);
    // Any architectural difference misses.
    Instr other = a;
    other.vec.repeat = 5;
    CHECK(memo.find(other) == nullptr);
    other = a;
    other.vec.src1_rep_stride = 16;
    CHECK(memo.find(other) == nullptr);
    other = a;
    other.dtype = isa::DType::FP32;
    CHECK(memo.find(other) == nullptr);
}

TEST_CASE("issue memo: bytes of the parameter block that the opcode's class leaves unused do not hide a hit") {
    InstrMemo<int> memo;
    Instr a = isa::make_instr(Opcode::SET_FLAG);
    a.flag.src = isa::Pipe::V;
    a.flag.dst = isa::Pipe::MTE3;
    a.flag.event_id = 1;
    memo.put(a, 3);
    // The same flag written into a scratch instruction a vector instruction used before.
    Instr b = vadd(0, 0, 0, 200);
    b.vec.mask_lo = 0x1234;
    b.op = Opcode::SET_FLAG;
    b.pipe = a.pipe;
    b.dtype = a.dtype;
    b.dst = a.dst;
    b.src0 = a.src0;
    b.src1 = a.src1;
    b.src2 = a.src2;
    b.scalar = a.scalar;
    b.flag.src = isa::Pipe::V;
    b.flag.dst = isa::Pipe::MTE3;
    b.flag.event_id = 1;
    REQUIRE(a == b);
    REQUIRE(std::memcmp(&a.vec, &b.vec, sizeof a.vec) != 0);
    REQUIRE(memo.find(b) != nullptr);
    CHECK(memo.find(b)->value == 3);
}

TEST_CASE("issue memo: over many instructions, a found value is always one put with an equal instruction") {
    InstrMemo<size_t, 6> memo;  // 64 slots: collisions happen
    std::vector<Instr> all;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    auto rnd = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    for (size_t i = 0; i < 2000; ++i) {
        // Few distinct values, so equal instructions recur.
        all.push_back(vadd((rnd() % 8) * 0x800, (rnd() % 8) * 0x800, (rnd() % 4) * 0x800, static_cast<uint16_t>(1 + rnd() % 3)));
        memo.put(all.back(), i);
        const auto* e = memo.find(all.back());
        REQUIRE(e != nullptr);  // what was just put is found
        CHECK(e->value == i);
    }
    size_t found = 0;
    for (const Instr& in : all) {
        if (const auto* e = memo.find(in)) {
            ++found;
            CHECK(all.at(e->value) == in);
        }
    }
    CHECK(found > 0);
}

TEST_CASE("issue memo and issue cache: flags differing only in their pipes or event id keep their own entries") {
    // A tile loop with double buffers issues such flags in turn; had they shared a slot, each would
    // evict the other (the caches are direct-mapped).
    InstrMemo<int> memo;
    InstrCache<int> cache;
    std::vector<Instr> flags;
    for (Opcode op : {Opcode::SET_FLAG, Opcode::WAIT_FLAG})
        for (isa::Pipe src : {isa::Pipe::MTE2, isa::Pipe::V})
            for (uint8_t id = 0; id < 2; ++id) {
                Instr in = isa::make_instr(op);
                in.flag.src = src;
                in.flag.dst = src == isa::Pipe::V ? isa::Pipe::MTE3 : isa::Pipe::V;
                in.flag.event_id = id;
                flags.push_back(in);
            }
    for (size_t i = 0; i < flags.size(); ++i) {
        memo.put(flags[i], static_cast<int>(i));
        cache.put(flags[i], static_cast<int>(i));
    }
    for (size_t i = 0; i < flags.size(); ++i) {
        REQUIRE(memo.find(flags[i]) != nullptr);
        CHECK(memo.find(flags[i])->value == static_cast<int>(i));
        REQUIRE(cache.find(flags[i]) != nullptr);
        CHECK(cache.find(flags[i])->value == static_cast<int>(i));
    }
}
