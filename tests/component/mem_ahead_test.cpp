// Completions ahead of SystemC time (chip.mem.completions_ahead, models/mem/memory_system.h): a
// pipe waiting for a request slot takes a completion that only frees one before SystemC time gets
// there, when no other process can act first. Here one core's loads need more requests than the
// pipe has slots, with nothing else running: the memory system runs such batches, and the data
// arrives as it must. (tests/regression/mem_ahead_cli_test.cpp shows the cycles and every stat are
// the same with the switch off.)
#include <catch2/catch.hpp>

#include "models/mem/memory_system.h"
#include "tests/sim_harness.h"

using namespace sfumato;
using namespace sfumato::test;

namespace {

// Adds two vectors of `bytes` each (fp16) through one core: loads, vadd, store; returns the sums.
std::vector<uint16_t> add_through_core(Harness& h, uint32_t bytes) {
    const uint64_t n = bytes / 2, gx = 0x0, gy = 0x100000, gz = 0x200000;
    std::vector<uint16_t> x(n), y(n);
    for (uint64_t i = 0; i < n; ++i) {
        x[i] = isa::f32_to_f16(static_cast<float>(i % 1024));
        y[i] = isa::f32_to_f16(0.5f);
    }
    h.chip().gm()->write(gx, x.data(), bytes);
    h.chip().gm()->write(gy, y.data(), bytes);
    auto t = Harness::kernel([&](isa::IInstrSink& s) {
        s.issue(load(0x0, gx, bytes));
        s.issue(load(bytes, gy, bytes));
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::MTE2, isa::Pipe::V, 0));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::MTE2, isa::Pipe::V, 0));
        s.issue(vadd(0x0, 0x0, bytes, static_cast<uint16_t>(bytes / 256)));
        s.issue(flag(isa::Opcode::SET_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(flag(isa::Opcode::WAIT_FLAG, isa::Pipe::V, isa::Pipe::MTE3, 0));
        s.issue(store(gz, 0x0, bytes));
    });
    REQUIRE(h.run({t}));
    std::vector<uint16_t> z(n);
    h.chip().gm()->read(gz, z.data(), bytes);
    return z;
}
}  // namespace

TEST_CASE("mem ahead: slot refills of one core run ahead of SystemC time and the data arrives") {
    Harness h({"chip.mem.completions_ahead=true"});  // tiny, functional
    const uint32_t req = h.chip().params().core.mte_request_bytes, slots = h.chip().params().core.mte_max_outstanding;
    // Each load needs one and a half times the pipe's request slots: the pipe waits for slots.
    const uint32_t bytes = 3 * slots * req / 2;
    REQUIRE(2 * bytes <= 32768);  // both inputs fit tiny's UB
    const auto z = add_through_core(h, bytes);
    for (uint64_t i = 0; i < z.size(); ++i) CHECK(isa::f16_to_f32(z[i]) == static_cast<float>(i % 1024) + 0.5f);
    mem::MemorySystem* m = h.chip().memory_system();
    REQUIRE(m);
    CHECK(m->ahead_batches() > 0);
}

TEST_CASE("mem ahead: switched off no batch runs ahead and the data is the same") {
    Harness h({"chip.mem.completions_ahead=false"});
    const uint32_t req = h.chip().params().core.mte_request_bytes, slots = h.chip().params().core.mte_max_outstanding;
    const uint32_t bytes = 3 * slots * req / 2;
    const auto z = add_through_core(h, bytes);
    for (uint64_t i = 0; i < z.size(); ++i) CHECK(isa::f16_to_f32(z[i]) == static_cast<float>(i % 1024) + 0.5f);
    CHECK(h.chip().memory_system()->ahead_batches() == 0);
}
