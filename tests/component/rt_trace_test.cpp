// Runtime and scheduler traces: host API track, a track per stream with task slices, flow arrows
// from each launch to its execution, and queue depth counters.
#include <catch2/catch.hpp>
#include <map>

#include "tests/component/ts_fixture.h"

using namespace sfumato;
using namespace sfumato::test;
using rt::Status;

namespace {

struct RecordingSink : ITraceSink {
    struct Slice {
        TrackId track;
        std::string name;
        Tick begin, end;
    };
    struct Flow {
        TrackId from, to;
        Tick t_from, t_to;
    };
    std::vector<std::string> tracks;  // by id
    std::vector<Slice> slices;
    std::vector<Flow> flows;
    std::map<TrackId, std::vector<double>> counters;
    TrackId track(const std::string& process, const std::string& thread, int) override {
        tracks.push_back(process + "/" + thread);
        return static_cast<TrackId>(tracks.size() - 1);
    }
    void slice(TrackId t, const char* name, Tick b, Tick e, const TraceArg*, int) override { slices.push_back({t, name, b, e}); }
    void slice_str(TrackId t, const std::string& name, Tick b, Tick e, const TraceArg*, int) override {
        slices.push_back({t, name, b, e});
    }
    TrackId counter_track(const std::string& process, const std::string& name) override { return track(process, name, 0); }
    void counter(TrackId t, Tick, double v) override { counters[t].push_back(v); }
    void flow(TrackId from, Tick tf, TrackId to, Tick tt, const char*) override { flows.push_back({from, to, tf, tt}); }
    TrackId find(const std::string& name) const {
        for (size_t i = 0; i < tracks.size(); ++i) {
            if (tracks[i] == name) return static_cast<TrackId>(i);
        }
        FAIL("no track " << name);
        return 0;
    }
};

}  // namespace

TEST_CASE("rt trace: host API track and stream tracks with launch flows and queue depths") {
    init_time_resolution();
    Config cfg;
    RecordingSink sink;
    TestDevice dev(cfg);
    dev.trace().attach(&sink, TraceLevel::Task);
    rt::Device rtdev(dev, dev.host_params(), &dev.trace());
    rt::Context& c = rtdev.open_context();
    Host host("host", [&] {
        rt::StreamId s;
        REQUIRE(c.stream_create(&s, 1) == Status::Ok);
        for (int i = 0; i < 3; ++i) REQUIRE(c.launch(fixed_kernel("k" + std::to_string(i), 4, 20000), s) == Status::Ok);
        REQUIRE(c.launch(fixed_kernel("other", 1, 100), rt::kDefaultStream) == Status::Ok);
        REQUIRE(c.device_synchronize() == Status::Ok);
    });
    sc_core::sc_start();
    REQUIRE(host.finished);
    c.emit_task_trace();

    const TrackId api = sink.find("host/context 0 API");
    const TrackId s1 = sink.find("device/context 0 stream 1");
    const TrackId s0 = sink.find("device/context 0 stream 0");
    size_t launches = 0;
    std::vector<std::string> on_s1;
    for (const auto& sl : sink.slices) {
        if (sl.track == api && sl.name == "launch") ++launches;
        if (sl.track == s1) on_s1.push_back(sl.name);
        if (sl.track == s0) CHECK(sl.name == "other");
        CHECK(sl.begin <= sl.end);
    }
    CHECK(launches == 4);
    CHECK(on_s1 == std::vector<std::string>{"k0", "k1", "k2"});
    REQUIRE(sink.flows.size() == 4);
    for (const auto& f : sink.flows) {
        CHECK(f.from == api);
        CHECK(f.t_from <= f.t_to);  // from the launch call to the task's start
    }
    // Stream 1's queue held up to three kernels (its second hardware queue has id 1).
    const auto& depth = sink.counters[sink.find("device/queue 1 depth")];
    REQUIRE_FALSE(depth.empty());
    CHECK(*std::max_element(depth.begin(), depth.end()) == 3.0);
    CHECK(depth.back() == 0.0);
}
