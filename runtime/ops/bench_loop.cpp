// The benchmark loop over one operator (see bench_loop.h).
#include "runtime/ops/bench_loop.h"

#include "sim/error.h"

namespace sfumato::ops {

uint64_t BenchLoop::launch_cycles(size_t i) const {
    uint64_t c = 0;
    for (const auto& t : launches.at(i)) c += t->cycles;
    return c;
}

uint64_t BenchLoop::first_cycles() const { return launches.empty() ? 0 : launch_cycles(0); }

double BenchLoop::steady_cycles() const {
    if (launches.size() <= 1) return static_cast<double>(first_cycles());
    uint64_t sum = 0;
    for (size_t i = 1; i < launches.size(); ++i) sum += launch_cycles(i);
    return static_cast<double>(sum) / static_cast<double>(launches.size() - 1);
}

BenchLoop run_bench_loop(rt::Runtime& rt, IOp& op, uint32_t repeat, bool cold) {
    if (repeat == 0) throw InputError("benchmark loop: the repeat count must be at least 1");
    BenchLoop r;
    op.prepare(rt);
    if (cold) rt.flush_caches();
    const rt::Stream s = rt.default_stream();
    for (uint32_t i = 0; i < repeat; ++i) {
        std::vector<std::shared_ptr<Task>> tasks;
        for (KernelDesc& k : op.kernels()) tasks.push_back(rt.launch(std::move(k), s));
        r.launches.push_back(std::move(tasks));
    }
    rt.synchronize(s);
    r.check = op.check(rt);
    op.release(rt);
    return r;
}

}  // namespace sfumato::ops
