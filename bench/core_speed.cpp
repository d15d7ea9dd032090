// Core speed benchmark (not a test): a kernel of small vector instructions written against the kernel API
// (runtime/kernel) runs on a chip from a preset in timing mode with tracing off; prints the
// instructions the kernel API issued and the pipes executed per wall second, with the
// whole-process wall time. Usage: core_speed [CONFIG.ini] [INSTRUCTIONS] [BLOCK_DIM]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "models/chip/chip.h"
#include "runtime/kernel/api.h"
#include "runtime/rt/runtime.h"
#include "sim/config.h"
#include "sim/failure.h"
#include "sim/host_thread.h"
#include "sim/sc_time_util.h"

using namespace sfumato;

int sc_main(int argc, char** argv) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string cfg_file = argc > 1 ? argv[1] : std::string(SFUMATO_SOURCE_DIR) + "/configs/ascend910b-like.ini";
    const uint64_t instrs = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4000000;
    const uint32_t block_dim = argc > 3 ? static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 1;
    try {
        Config cfg;
        cfg.load_ini(cfg_file);
        ChipParams params(cfg);
        rt::RuntimeParams host(ParamScope(cfg, "host"));
        cfg.check_unused();
        init_time_resolution();
        TraceHub trace;
        StatGroup root(nullptr, "");
        Chip chip("chip", params, /*functional=*/false, trace, root);

        KernelDesc k;
        k.name = "vector_bound";
        k.type = "bench";
        k.block_dim = block_dim;
        k.kind = KernelKind::Vector;
        const uint64_t per_block = instrs / block_dim;
        k.body = [per_block](isa::IInstrSink& sink) {
            kernel::KernelContext ctx(sink);
            kernel::TPipe pipe(ctx);
            kernel::TBuf<kernel::TPosition::VECCALC> bx, by, bz;
            pipe.InitBuffer(bx, 512);
            pipe.InitBuffer(by, 512);
            pipe.InitBuffer(bz, 512);
            auto x = bx.Get<isa::half>();
            auto y = by.Get<isa::half>();
            auto z = bz.Get<isa::half>();
            // Two 128-lane fp16 repeats per instruction: issuing one (its three addresses and its
            // repeat word) takes the scalar unit longer than the vector pipe takes to run it, so
            // the kernel is issue-bound (until issue 16 it was vector-bound: kept as it was, so
            // speed figures compare across versions).
            for (uint64_t i = 0; i < per_block; i += 2) {
                kernel::Add(z, x, y, 256);
                kernel::Mul(x, z, y, 256);
            }
        };
        std::shared_ptr<Task> task;
        std::unique_ptr<rt::Runtime> runtime;
        HostThread host_thread("host", [&] {
            runtime = std::make_unique<rt::Runtime>(chip, host, trace);
            task = runtime->launch(k, runtime->default_stream());
            runtime->synchronize(runtime->default_stream());
        });
        const auto s0 = std::chrono::steady_clock::now();
        sc_core::sc_start();
        rethrow_failure();
        const double sim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
        uint64_t executed = 0;
        for (const auto& e : chip.instr_stats().entries()) executed += e.count->value();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("core_speed: %s, timing mode, small vector instructions, block_dim %u\n", params.name.get().c_str(), block_dim);
        std::printf("  instructions executed: %llu, kernel cycles: %llu\n", static_cast<unsigned long long>(executed),
                    static_cast<unsigned long long>(task ? task->cycles : 0));
        std::printf("  simulation wall time: %.3f s -> %.2f M instructions per wall second\n", sim_s, executed / sim_s / 1e6);
        std::printf("  whole process wall time: %.3f s\n", wall);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "core_speed: %s\n", e.what());
        return 1;
    }
    return 0;
}
