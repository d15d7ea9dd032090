// The Ascend C add (examples/ascendc/add) against `sfumato kernel add` with the same tiling
// (16384 fp16, 8 blocks, tiles of 128, two buffers): two identical chips side by side in one
// simulation, each with a host program that allocates x, y, z, uploads x and y and launches; one
// runs the add operator's kernel, the other the Ascend C kernel through the Ascend C layer. Both
// must take the same cycles with the same pipe busy times, and the Ascend C add must add. The
// two chips' cores interleave in one SystemC thread, which also exercises the Ascend C layer's
// implicit per-core context.
#include <catch2/catch.hpp>

#include "models/chip/chip.h"
#include "runtime/ascendc/host_state.h"
#include "runtime/ops/i_op.h"
#include "runtime/rt/runtime.h"
#include "sim/failure.h"
#include "sim/sc_time_util.h"
#include "tests/support.h"
#define ASCENDC_CPU_DEBUG 1
#include "examples/ascendc/add/add_custom.cpp"

using namespace sfumato;

TEST_CASE("ascendc: the Ascend C add takes the cycles of `sfumato kernel add` with the same tiling") {
    Config cfg;
    cfg.load_ini(test::config("ascend910b-like"));
    ChipParams params(cfg);
    rt::RuntimeParams host(ParamScope(cfg, "host"));
    cfg.check_unused();
    init_time_resolution();
    TraceHub trace_a, trace_b;
    StatGroup root_a(nullptr, ""), root_b(nullptr, "");
    Chip chip_a("chip_a", params, true, trace_a, root_a);
    Chip chip_b("chip_b", params, true, trace_b, root_b);

    constexpr uint64_t n = 16384, bytes = n * 2;
    const ops::OpArgs args{{"n", "16384"}, {"dtype", "fp16"}, {"block_dim", "8"}, {"tile", "128"}, {"buffers", "2"}};
    std::shared_ptr<Task> ta, tb;
    // Both declare the same code size: the two bodies issue their opcodes in different orders, so
    // estimated images would place their call sites on other lines (other L2 sets and HBM
    // channels); declared, each core fetches the same image at block start.
    constexpr uint32_t kCodeBytes = 8192;
    ops::CheckResult check_a;
    bool sums_ok = false;

    // Two host programs side by side from time 0 (a HostThread would stop the simulation when its
    // program ends, before the other chip's).
    bool done_a = false, done_b = false;
    auto spawn = [](const char* name, std::function<void()> program) {
        sc_core::sc_spawn(
            [program] {
                try {
                    program();
                } catch (...) {
                    record_failure(std::current_exception());
                }
            },
            name);
    };
    spawn("host_a", [&] {
        rt::Runtime rt(chip_a, host, trace_a, &root_a);
        auto op = ops::make_op("add", args, chip_a.info());
        op->prepare(rt);  // malloc x, y, z; upload x, y
        KernelDesc k = op->kernels().front();
        k.code_bytes = kCodeBytes;
        ta = rt.launch(std::move(k), rt.default_stream());
        rt.synchronize(rt.default_stream());
        check_a = op->check(rt);
        done_a = true;
    });
    spawn("host_b", [&] {
        rt::Runtime rt(chip_b, host, trace_b, &root_b);
        std::vector<uint16_t> hx(n), hy(n), hz(n);
        for (uint64_t i = 0; i < n; ++i) {
            hx[i] = isa::f32_to_f16(static_cast<float>(i % 100) * 0.5f);
            hy[i] = isa::f32_to_f16(static_cast<float>(i % 17) - 8.0f);
        }
        const uint64_t x = rt.malloc(bytes), y = rt.malloc(bytes), z = rt.malloc(bytes);
        rt.memcpy_h2d(x, hx.data(), bytes);
        rt.memcpy_h2d(y, hy.data(), bytes);
        // The kernel's GM pointers: host ranges of the buffers' sizes that the layer maps onto x, y, z.
        static std::vector<uint8_t> range_x(bytes), range_y(bytes), range_z(bytes);
        static uint8_t *px = range_x.data(), *py = range_y.data(), *pz = range_z.data();
        ascendc::host_state().add(reinterpret_cast<uintptr_t>(px), x, bytes, nullptr);
        ascendc::host_state().add(reinterpret_cast<uintptr_t>(py), y, bytes, nullptr);
        ascendc::host_state().add(reinterpret_cast<uintptr_t>(pz), z, bytes, nullptr);
        ascendc::LaunchRequest req;
        req.name = "add_custom";
        req.block_dim = 8;
        req.kind = ascendc::LaunchKind::Vector;
        req.body = [] { add_custom(px, py, pz); };
        // The add operator passes its tiling with its GM pointers, the Ascend C add compiles its
        // tiling in (3 pointers): given the operator's argument block, both cores read the same
        // arguments at start-up, and the kernels' bodies are what the cycles compare.
        req.args_bytes = ops::make_op("add", args, chip_b.info())->kernels().front().args_bytes;
        REQUIRE(req.args_bytes >= ascendc::args_block_bytes<GM_ADDR, GM_ADDR, GM_ADDR>());
        KernelDesc k = ascendc::make_kernel_desc(req, chip_b.info());
        k.code_bytes = kCodeBytes;
        tb = rt.launch(std::move(k), rt.default_stream());
        rt.synchronize(rt.default_stream());
        rt.memcpy_d2h(hz.data(), z, bytes);
        sums_ok = true;
        for (uint64_t i = 0; i < n; ++i)
            sums_ok = sums_ok && isa::f16_to_f32(hz[i]) == isa::f16_to_f32(hx[i]) + isa::f16_to_f32(hy[i]);
        done_b = true;
    });
    sc_core::sc_start();
    rethrow_failure();
    REQUIRE(done_a);
    REQUIRE(done_b);
    CHECK(check_a.passed);
    CHECK(sums_ok);
    REQUIRE(ta->done);
    REQUIRE(tb->done);
    CHECK(ta->cycles > 0);
    CHECK(tb->cycles == ta->cycles);
    for (int p = 0; p < isa::kNumPipes; ++p) {
        INFO("pipe " << isa::pipe_name(static_cast<isa::Pipe>(p)));
        CHECK(tb->pipe_busy[p] == ta->pipe_busy[p]);
    }
}
