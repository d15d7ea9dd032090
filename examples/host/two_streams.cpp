// A small host program against runtime/rt, as a user would write one: it builds a chip from a
// config file, runs an add kernel on one stream while a second, lower-priority stream copies a
// buffer asynchronously, makes the second stream wait on an event recorded after the kernel,
// copies a result back asynchronously, and prints what the device did and when.
//   usage: host_two_streams [CONFIG.ini]   (exit 0 when the run checks out)
#include <cstdio>
#include <vector>

#include "models/chip/chip.h"
#include "models/chip/chip_params.h"
#include "runtime/ops/i_op.h"
#include "runtime/rt/runtime.h"
#include "sim/error.h"
#include "sim/failure.h"
#include "sim/host_thread.h"
#include "sim/sc_time_util.h"

using namespace sfumato;

namespace {

bool ok(rt::Status s, rt::Context& c, const char* what) {
    if (s != rt::Status::Ok) std::fprintf(stderr, "%s failed: %s\n", what, c.last_error().c_str());
    return s == rt::Status::Ok;
}

}  // namespace

int sc_main(int argc, char** argv) {
    try {
        Config cfg;
        if (argc > 1) cfg.load_ini(argv[1]);
        ChipParams chip_params(cfg);
        rt::RuntimeParams host_params(ParamScope(cfg, "host"));
        cfg.check_unused();
        init_time_resolution();
        TraceHub trace;
        StatGroup root(nullptr, "");
        Chip chip("chip", chip_params, /*functional=*/true, trace, root);

        bool good = true;
        double kernel_us = 0, copy_us = 0, elapsed_us = 0;
        bool overlapped = false, ordered = false, checked = false;
        HostThread host("host", [&] {
            rt::Runtime runtime(chip, host_params, trace, &root);
            rt::Context& ctx = runtime.context();
            rt::StreamId compute, copy;
            rt::EventId kernel_done, start;
            good &= ok(ctx.stream_create(&compute, 0), ctx, "stream_create");
            good &= ok(ctx.stream_create(&copy, 1), ctx, "stream_create");
            good &= ok(ctx.event_create(&kernel_done), ctx, "event_create");
            good &= ok(ctx.event_create(&start), ctx, "event_create");

            // Inputs of an add kernel (the op allocates and uploads them).
            auto add = ops::make_op("add", {{"n", "65536"}, {"dtype", "fp16"}, {"block_dim", "2"}}, chip.info());
            add->prepare(runtime);

            // A 1 MiB pinned buffer to stage to the device while the kernel runs.
            const uint64_t bytes = 1 << 20;
            void* host_in = nullptr;
            void* host_out = nullptr;
            rt::DevPtr dev_buf = 0;
            good &= ok(ctx.host_malloc(&host_in, bytes, true), ctx, "host_malloc");
            good &= ok(ctx.host_malloc(&host_out, bytes, true), ctx, "host_malloc");
            good &= ok(ctx.malloc(&dev_buf, bytes), ctx, "malloc");
            auto* in = static_cast<uint8_t*>(host_in);
            for (uint64_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);

            good &= ok(ctx.event_record(start, compute), ctx, "event_record");
            good &= ok(ctx.launch(add->kernels().front(), compute), ctx, "launch");
            const size_t kernel_index = ctx.tasks().size() - 1;
            good &= ok(ctx.event_record(kernel_done, compute), ctx, "event_record");
            good &= ok(ctx.memcpy_h2d(dev_buf, host_in, bytes, copy, /*async=*/true), ctx, "memcpy_h2d");
            const size_t copy_index = ctx.tasks().size() - 1;
            good &= ok(ctx.stream_wait_event(copy, kernel_done), ctx, "stream_wait_event");
            good &= ok(ctx.memcpy_d2h(host_out, dev_buf, bytes, copy, /*async=*/true), ctx, "memcpy_d2h");
            const size_t back_index = ctx.tasks().size() - 1;
            good &= ok(ctx.stream_synchronize(copy), ctx, "stream_synchronize");

            const Task& k = *ctx.tasks()[kernel_index].task;
            const Task& c = *ctx.tasks()[copy_index].task;
            const Task& back = *ctx.tasks()[back_index].task;
            kernel_us = static_cast<double>(k.end_tick.v - k.start_tick.v) / 1e6;
            copy_us = static_cast<double>(c.end_tick.v - c.start_tick.v) / 1e6;
            overlapped = c.start_tick < k.end_tick && k.start_tick < c.end_tick;
            ordered = back.start_tick >= k.end_tick;  // the wait held the copy-back until the kernel ended
            uint64_t ps = 0;
            good &= ok(ctx.event_elapsed(&ps, start, kernel_done), ctx, "event_elapsed");
            elapsed_us = static_cast<double>(ps) / 1e6;
            const auto* out = static_cast<const uint8_t*>(host_out);
            for (uint64_t i = 0; i < bytes; ++i) good &= out[i] == in[i];
            const ops::CheckResult r = add->check(runtime);
            checked = r.checked && r.passed;
            add->release(runtime);
        });
        sc_core::sc_start();
        rethrow_failure();
        if (!host.finished()) {
            std::fprintf(stderr, "the host program did not finish\n");
            return 1;
        }
        std::printf("add kernel on stream 0: %.3f us (events: %.3f us)\n", kernel_us, elapsed_us);
        std::printf("async 1 MiB copy on stream 1: %.3f us, overlapped with the kernel: %s\n", copy_us, overlapped ? "yes" : "no");
        std::printf("copy-back waited for the kernel's event: %s; data round trip and add check: %s\n",
                    ordered ? "yes" : "no", good && checked ? "ok" : "FAILED");
        return good && checked && overlapped && ordered ? 0 : 1;
    } catch (const SimError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return e.code();
    }
}
