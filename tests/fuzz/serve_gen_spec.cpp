// Fuzz target `serve_gen_spec`: the request generator's spec (runtime/serve/requests.h,
// parse_gen_spec) and the generation it describes: as many requests as asked, in arrival order.
// Specs naming a histogram file are skipped (they read files, not the spec).
#include "runtime/serve/requests.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(serve_gen_spec) {
    const std::string text(fuzz::as_text(data, size));
    if (text.find("hist:") != std::string::npos) return;  // names files: not the parser under test
    const serve::GenSpec g = serve::parse_gen_spec(text);
    if (g.n > 2000) return;
    const serve::RequestTrace t = serve::generate_requests(g);
    if (t.requests.size() != g.n) fuzz::fail("generated a different number of requests");
    for (size_t i = 1; i < t.requests.size(); ++i)
        if (!(t.requests[i].arrival_s >= t.requests[i - 1].arrival_s)) fuzz::fail("generated arrivals out of order");
}
