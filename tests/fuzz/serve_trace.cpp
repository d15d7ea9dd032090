// Fuzz target `serve_trace`: the request trace reader of the serving simulation
// (runtime/serve/requests.h: sfumato CSV, JSONL, Azure CSV) Properties
// of an accepted trace: requests in arrival order from 0, finite times, token counts in range,
// prefixes within their prompts, unique ids.
#include <cmath>
#include <set>

#include "runtime/serve/requests.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(serve_trace) {
    const std::string text(fuzz::as_text(data, size));
    const serve::RequestTrace t = serve::parse_requests(text, "fuzz.csv");
    if (t.requests.empty()) fuzz::fail("an accepted trace without requests");
    if (t.requests.front().arrival_s != 0.0) fuzz::fail("the first arrival is not 0");
    std::set<std::string> ids;
    double last = 0.0;
    for (const serve::Request& r : t.requests) {
        if (!(r.arrival_s >= last) || !std::isfinite(r.arrival_s)) fuzz::fail("arrivals out of order or not finite");
        last = r.arrival_s;
        if (r.prompt_tokens < 1 || r.prompt_tokens > serve::kMaxTokens || r.output_tokens < 1 ||
            r.output_tokens > serve::kMaxTokens)
            fuzz::fail("a token count out of range");
        if (r.prefix_tokens < 0 || r.prefix_tokens > r.prompt_tokens) fuzz::fail("a prefix longer than its prompt");
        if (!ids.insert(r.id).second) fuzz::fail("a duplicate request id");
    }
}
