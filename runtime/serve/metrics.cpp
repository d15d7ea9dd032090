// Serving metrics (runtime/serve/metrics.h).
#include "runtime/serve/metrics.h"

#include <algorithm>
#include <cmath>

namespace sfumato::serve {

Percentiles percentiles(std::vector<double> v) {
    Percentiles p;
    if (v.empty()) return p;
    std::sort(v.begin(), v.end());
    auto rank = [&](double q) {
        const size_t k = static_cast<size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size())));
        return v[std::clamp<size_t>(k, 1, v.size()) - 1];
    };
    double s = 0;
    for (double x : v) s += x;
    p.mean = s / static_cast<double>(v.size());
    p.p50 = rank(50), p.p90 = rank(90), p.p99 = rank(99), p.max = v.back();
    return p;
}

ServeMetrics summarize(const ServeResult& r, double slo_ttft_s, double slo_tpot_s) {
    ServeMetrics m;
    std::vector<double> ttft, tpot, e2e;
    double out_tokens = 0;
    for (const RequestResult& x : r.requests) {
        if (!x.rejected.empty()) {
            ++m.rejected;
            continue;
        }
        ++m.served;
        ttft.push_back(x.ttft());
        e2e.push_back(x.e2e());
        if (x.output_tokens > 1) tpot.push_back(x.tpot());
        out_tokens += static_cast<double>(x.output_tokens);
        if ((slo_ttft_s <= 0 || x.ttft() <= slo_ttft_s) && (slo_tpot_s <= 0 || x.tpot() <= slo_tpot_s)) ++m.met_slo;
    }
    m.ttft = percentiles(ttft), m.tpot = percentiles(tpot), m.e2e = percentiles(e2e);
    m.itl = percentiles(r.itl_s);
    if (r.end_s > 0) {
        m.requests_per_s = static_cast<double>(m.served) / r.end_s;
        m.output_tokens_per_s = out_tokens / r.end_s;
        m.goodput_per_s = static_cast<double>(m.met_slo) / r.end_s;
    }
    double seqs = 0;
    for (const StepLog& s : r.steps) seqs += static_cast<double>(s.sequences);
    if (!r.steps.empty()) m.mean_batch = seqs / static_cast<double>(r.steps.size());
    return m;
}

}  // namespace sfumato::serve
