// Graph capture in the runtime (Context::capture_begin / capture_end / model_launch): captured
// launches are not submitted and cost the host nothing; launching the model costs one launch
// and submits every captured kernel, which then run in order on the stream as eager launches do.
#include <catch2/catch.hpp>

#include "runtime/rt/runtime.h"
#include "tests/sim_harness.h"

using namespace sfumato;

namespace {

KernelDesc small_kernel(const std::string& name) {
    KernelDesc k;
    k.name = name;
    k.block_dim = 1;
    k.kind = KernelKind::Vector;
    k.code_bytes = test::Harness::kCodeBytes;
    k.body = [](isa::IInstrSink& s) { s.scalar(100); };
    return k;
}

}  // namespace

TEST_CASE("rt: a captured stream is launched as one model at one host launch cost", "[rt][capture]") {
    test::Harness h;
    const uint64_t launch_ps = h.host_params().launch_overhead_ns * 1000;
    uint64_t eager_host = 0, capture_host = 0, model_host = 0;
    size_t records_after_capture = 0, records_before = 0;
    std::vector<std::shared_ptr<Task>> captured;
    rt::Status bad_model = rt::Status::Ok, bad_end = rt::Status::Ok;
    REQUIRE(h.run_host([&] {
        rt::Runtime rt(h.chip(), h.host_params(), h.trace(), &h.root());
        rt::Context& ctx = rt.context();
        const rt::StreamId s = rt.default_stream().id;
        uint64_t t0 = now_tick().v;
        for (int i = 0; i < 4; ++i) rt.launch(small_kernel("eager" + std::to_string(i)), rt.default_stream());
        eager_host = now_tick().v - t0;
        rt.synchronize_device();
        records_before = ctx.tasks().size();
        t0 = now_tick().v;
        rt::ModelId m = 0;
        if (ctx.capture_begin(s) != rt::Status::Ok) return;
        for (int i = 0; i < 4; ++i) captured.push_back(rt.launch(small_kernel("cap" + std::to_string(i)), rt.default_stream()));
        if (ctx.capture_end(s, &m) != rt::Status::Ok) return;
        capture_host = now_tick().v - t0;
        records_after_capture = ctx.tasks().size();
        t0 = now_tick().v;
        if (ctx.model_launch(m, s) != rt::Status::Ok) return;
        model_host = now_tick().v - t0;
        rt.synchronize_device();
        bad_model = ctx.model_launch(m + 1, s);
        bad_end = ctx.capture_end(s, &m);
    }));
    CHECK(eager_host == 4 * launch_ps);
    CHECK(capture_host == 0);
    CHECK(model_host == launch_ps);
    CHECK(records_after_capture == records_before);  // nothing submitted while capturing
    CHECK(bad_model == rt::Status::InvalidValue);
    CHECK(bad_end == rt::Status::InvalidStream);
    REQUIRE(captured.size() == 4);
    for (size_t i = 0; i < captured.size(); ++i) {
        REQUIRE(captured[i]);
        CHECK(captured[i]->done);
        if (i) CHECK(captured[i]->start_tick.v >= captured[i - 1]->end_tick.v);  // in order on the stream
    }
}
