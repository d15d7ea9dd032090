// AI core behaviour: functional results through the pipes, deadlock reports, buffer checks.
#include <catch2/catch.hpp>

#include <bit>

#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

TEST_CASE("core: a wait that nothing sets is reported as a deadlock with the pipe state") {
    Harness h;
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::MTE2, isa::Pipe::V, 3));
        s.issue(vadd(0x0, 0x100, 0x200, 1));
    });
    CHECK_FALSE(h.run({t}));
    CHECK_FALSE(sc_core::sc_pending_activity());
    const std::string state = h.chip().describe_state();
    INFO(state);
    CHECK(state.find("wait_flag MTE2->V #3") != std::string::npos);
    CHECK(state.find("flag never set") != std::string::npos);
}

TEST_CASE("core: an access past the end of UB stops the run naming the instruction and buffer") {
    Harness h;
    const uint64_t ub = h.params().core.ub.size;
    auto t = Harness::kernel([&](isa::IInstrSink& s) { s.issue(vadd(ub - 256, 0x0, 0x100, 2)); });
    try {
        h.run({t});
        FAIL("expected an error");
    } catch (const ModelError& e) {
        const std::string m = e.what();
        CHECK(m.find("vadd") != std::string::npos);
        CHECK(m.find("overruns") != std::string::npos);
        CHECK(m.find("UB") != std::string::npos);
    }
}

TEST_CASE("core: a vector instruction on a cube core is refused") {
    Harness h;
    auto t = Harness::kernel([&](isa::IInstrSink& s) { s.issue(vadd(0, 0, 0, 1)); }, 1, KernelKind::Cube);
    CHECK_THROWS_WITH(h.run({t}), Catch::Contains("no V pipe"));
}

TEST_CASE("core: misaligned UB operands are refused") {
    Harness h;
    auto t = Harness::kernel([&](isa::IInstrSink& s) { s.issue(vadd(0x10, 0x0, 0x100, 1)); });
    CHECK_THROWS_WITH(h.run({t}), Catch::Contains("aligned"));
}

TEST_CASE("core: data flows GM -> UB -> vector -> GM through flags") {
    Harness h;
    const uint64_t n = 128;
    std::vector<uint16_t> x(n), y(n);
    for (uint64_t i = 0; i < n; ++i) {
        x[i] = isa::f32_to_f16(static_cast<float>(i));
        y[i] = isa::f32_to_f16(0.5f);
    }
    h.chip().gm()->write(0x0, x.data(), n * 2);
    h.chip().gm()->write(0x1000, y.data(), n * 2);
    auto load = [](uint64_t ub, uint64_t gm) {
        isa::Instr in;
        in.op = isa::Opcode::COPY_GM_TO_UB;
        in.pipe = isa::Pipe::MTE2;
        in.dst = {ub, isa::Pos::UB};
        in.src0 = {gm, isa::Pos::GM};
        in.copy = {1, 256, 0, 0};
        return in;
    };
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(load(0x0, 0x0));
        s.issue(load(0x100, 0x1000));
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::MTE2, isa::Pipe::V, 0));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::MTE2, isa::Pipe::V, 0));
        s.issue(vadd(0x200, 0x0, 0x100, 1));
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(store(0x2000, 0x200, 256));
        // Two duplicates equal but for their nan's payload (the issue cache takes any two nans as
        // equal, so the second is a hit on the first): each writes its own.
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::MTE3, isa::Pipe::V, 1));
        for (int k = 0; k < 2; ++k) {
            isa::Instr dup = isa::make_instr(isa::Opcode::VDUP);
            dup.dtype = isa::DType::FP32;
            dup.dst = {0x400, isa::Pos::UB};
            dup.scalar = std::bit_cast<double>(k ? 0x7ffc000000000000ull : 0x7ff8000000000000ull);
            s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::MTE3, isa::Pipe::V, 1));
            s.issue(dup);
            s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 1));
            s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 1));
            s.issue(store(0x3000 + 0x100 * k, 0x400, 256));
            s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::MTE3, isa::Pipe::V, 1));
        }
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::MTE3, isa::Pipe::V, 1));
    });
    REQUIRE(h.run({t}));
    std::vector<uint16_t> z(n);
    h.chip().gm()->read(0x2000, z.data(), n * 2);
    for (uint64_t i = 0; i < n; ++i) CHECK(isa::f16_to_f32(z[i]) == static_cast<float>(i) + 0.5f);
    for (int k = 0; k < 2; ++k) {
        std::vector<float> d(64);
        h.chip().gm()->read(0x3000 + 0x100 * k, d.data(), 256);
        const float want = std::bit_cast<float>(k ? 0x7fe00000u : 0x7fc00000u);
        for (float v : d) CHECK(std::bit_cast<uint32_t>(v) == std::bit_cast<uint32_t>(want));
    }
}

TEST_CASE("core: without the flag the vector unit reads stale data, as on the chip") {
    Harness h;
    std::vector<uint16_t> x(128, isa::f32_to_f16(1.0f));
    h.chip().gm()->write(0x0, x.data(), 256);
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        isa::Instr in;
        in.op = isa::Opcode::COPY_GM_TO_UB;
        in.pipe = isa::Pipe::MTE2;
        in.dst = {0x0, isa::Pos::UB};
        in.src0 = {0x0, isa::Pos::GM};
        in.copy = {1, 256, 0, 0};
        s.issue(in);
        s.issue(vadd(0x200, 0x0, 0x0, 1));  // no wait: runs before the load's data arrives
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(store(0x1000, 0x200, 256));
    });
    REQUIRE(h.run({t}));
    uint16_t z = 0;
    h.chip().gm()->read(0x1000, &z, 2);
    CHECK(isa::f16_to_f32(z) == 0.0f);
}

TEST_CASE("ts: kernels on two queues share the chip when cores allow") {
    Harness h;
    const uint32_t half = h.params().vector_cores() / 2;
    auto body = [](isa::IInstrSink& s) {
        for (int k = 0; k < 20; ++k) s.issue(vadd(0x0, 0x2800, 0x5000, 40));
    };
    auto a = Harness::kernel(body, half), b = Harness::kernel(body, half);
    REQUIRE(h.run({a, b}));
    // Both are taken at once; the one dispatcher starts a's blocks, then b's, so b ends later by
    // about that much, and the two run side by side.
    CHECK(a->start_tick == b->start_tick);
    CHECK(b->end_tick > a->end_tick);
    const uint64_t e2e = std::max(a->end_tick, b->end_tick).v - a->start_tick.v;
    CHECK(static_cast<double>(e2e) < 0.7 * static_cast<double>((a->end_tick - a->start_tick).v + (b->end_tick - b->start_tick).v));
}
