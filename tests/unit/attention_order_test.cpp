// The FusedAttention kernel's vector side without the chip model: the order in which an AIV's
// MTE2 waits for the cube's cross-core flags (S_n ready, O_n ready). The MTE2 runs in program
// order, and O_{n-1} returns only after a round trip through the cube (P_{n-1} into L1, the mad,
// the FixPipe's drain), whereas the cube produced S_{n+1} before it (AttnPlan::ahead): so the
// AIV issues the load of S_{n+1} before its wait for O_{n-1}, and its vector pipe finds the next
// scores in UB when it finishes a step.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kapi_sink.h"
#include "runtime/ops/attention/attention.h"

using namespace sfumato;
using namespace sfumato::ops::attention;
using sfumato::isa::Pos;
using sfumato::kernel::test::KapiSink;

TEST_CASE("attention: an AIV issues S_{n+1}'s load before its wait for O_{n-1}") {
    DeviceInfo d;
    d.arch = "split";
    d.cube_cores = 24, d.aiv_per_aic = 2, d.vector_cores = 48;
    d.l1_bytes = 512 << 10, d.l0a_bytes = d.l0b_bytes = 64 << 10, d.l0c_bytes = 128 << 10, d.ub_bytes = 192 << 10;
    d.event_ids = 8;
    AttnPlan p;
    p.dt = isa::DType::FP16, p.wt = isa::DType::FP16;
    p.G = 1, p.D = p.Dv = 128;
    p.Sk = 1024;
    std::string why;
    p.Sq = 1024;
    REQUIRE(plan_attention(p, d, why));
    p.Sq = p.br;  // one item: its steps are the block's whole walk
    p.blocks = 1;
    p.q = 0x10000, p.k = 0x100000, p.v = 0x200000, p.o = 0x300000, p.ws = 0x400000;
    const uint32_t steps = p.kv_blocks();
    REQUIRE(steps >= 4);
    REQUIRE(p.ahead >= 1);
    constexpr uint8_t kS = 1, kO = 2;  // the kernel's flag ids (attention_attn.h)
    for (uint32_t sub = 0; sub < d.aiv_per_aic; ++sub) {
        KapiSink aiv(isa::CoreKind::Vector);
        aiv.set_block(0, 1);
        aiv.set_sub_block(sub);
        aiv.set_buffer(Pos::UB, d.ub_bytes);
        aiv.set_event_ids(d.event_ids);
        attention_kernel(aiv, p);
        INFO("aiv " << sub);
        CHECK(aiv.errors().empty());
        uint32_t s_waits = 0, o_waits = 0;
        for (const isa::Instr& in : aiv.instrs()) {
            if (in.op != isa::Opcode::WAIT_CROSS_FLAG) continue;
            if (in.xflag.flag_id == kS) ++s_waits;
            if (in.xflag.flag_id != kO) continue;
            // The wait for O_m follows the loads of S_0 .. S_{m+2} (all of them near the end).
            INFO("O_" << o_waits << " after " << s_waits << " S waits");
            CHECK(s_waits >= std::min(o_waits + 3, steps));
            ++o_waits;
        }
        CHECK(s_waits == steps);
        CHECK(o_waits == steps);
    }
}
