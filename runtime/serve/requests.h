// Requests for the serving simulation (`sfumato serve`, issue 25): what arrives when, with how
// many prompt tokens, how many tokens it asks for, which shared prefix it starts with and its
// priority. Two sources:
//  - a trace file: sfumato's CSV or JSONL layout (columns/keys below), or the public Azure LLM
//    inference trace CSV as published (TIMESTAMP, ContextTokens, GeneratedTokens; 2023 and 2024
//    releases), the layout detected from the file's first line;
//  - a generator (GenSpec): Poisson or Gamma arrivals at a rate, prompt and output lengths fixed,
//    uniform or drawn from a histogram file, optional shared prefixes, from a seed. The draws
//    use their own transforms of std::mt19937_64's specified sequence (not std::*_distribution,
//    whose algorithms differ between standard libraries), so a seed gives the same requests
//    everywhere.
// Arrival times are seconds from the first request's arrival (the earliest is 0). A malformed
// trace is an InputError naming the file and line (exit 2); nothing is half-read.
// Simplified: a trace carries token counts, not token ids: prompts are token counts, and shared
// prefixes are named (prefix id + length) rather than found by hashing the tokens.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sfumato::serve {

struct Request {
    std::string id;           // the trace's request id, else "r<index in arrival order>"
    double arrival_s = 0.0;   // seconds after the first arrival
    int64_t prompt_tokens = 0;  // >= 1
    int64_t output_tokens = 0;  // tokens to generate, >= 1 (the first comes out of prefill)
    // Requests with the same prefix id start with the same prefix_tokens tokens (a system
    // prompt, a shared document); empty: no shared prefix.
    std::string prefix_id;
    int64_t prefix_tokens = 0;  // <= prompt_tokens; 0 when prefix_id is empty
    // Lower values are served first (vLLM's priority scheduling convention); 0 by default.
    int64_t priority = 0;
    size_t line = 0;  // line in the trace file (1-based); 0 for generated requests
};

struct RequestTrace {
    std::vector<Request> requests;  // ordered by arrival (stable for equal times)
    std::string source;             // the file, or the generator spec
    std::string format;             // "csv", "jsonl", "azure" or "generated"
    // What the loader changed and why, one line each (the CLI prints them): rows reordered by
    // arrival, Azure rows with GeneratedTokens 0 served as one token.
    std::vector<std::string> notes;
};

// Largest token count a field may hold (a context far beyond any model's, small enough that
// sums over a trace cannot overflow).
constexpr int64_t kMaxTokens = int64_t{1} << 31;

// Reads a trace file (layout detected from its first non-empty line: '{' JSONL; a header with
// TIMESTAMP, ContextTokens and GeneratedTokens: Azure; else sfumato's CSV).
//  CSV: a header naming the columns, in any order: arrival_s (or arrival_ms), prompt_tokens,
//    output_tokens required; request_id, prefix_id, prefix_tokens, priority optional. An unknown
//    column is an error (a misspelt optional column would otherwise be ignored silently).
//  JSONL: one object per non-empty line with the same keys.
//  Azure: TIMESTAMP "YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM|Z]", arrival relative to the
//    earliest row; ContextTokens -> prompt_tokens, GeneratedTokens -> output_tokens.
RequestTrace load_requests(const std::string& path);
// The same from text (`name` stands for the file in messages).
RequestTrace parse_requests(std::string_view text, const std::string& name);

// A length distribution: fixed, uniform over [lo, hi], or a histogram (token count, weight).
struct LengthDist {
    enum class Kind : uint8_t { Fixed, Uniform, Histogram } kind = Kind::Fixed;
    int64_t lo = 0, hi = 0;                          // Fixed: lo; Uniform: [lo, hi]
    std::vector<std::pair<int64_t, double>> hist;  // Histogram: (tokens, weight > 0)
    std::string text;                              // as written (for the summary)
};

struct GenSpec {
    enum class Arrival : uint8_t { Poisson, Gamma } arrival = Arrival::Poisson;
    double rate = 1.0;  // requests per second, [1e-9, 1e9]
    double cv = 1.0;    // Gamma: coefficient of variation of the inter-arrival times, [0.05, 20]
    size_t n = 100;     // requests
    uint64_t seed = 1;
    LengthDist prompt, output;
    // Shared prefixes: each request draws one of `prefix_groups` groups uniformly and shares its
    // first min(prefix_tokens, prompt) tokens with the group (0 groups: none).
    size_t prefix_groups = 0;
    int64_t prefix_tokens = 0;
    // Priority classes: request priority k (0 the most urgent) drawn with weight
    // priority_weights[k] (empty: every request priority 0).
    std::vector<double> priority_weights;
    std::string text;  // the spec as written
};

// Parses "key=value,..." with keys n, rate, arrival (poisson|gamma), cv, seed, prompt, output,
// prefix_groups, prefix_tokens, priorities (W0:W1:...: the weight of each priority class from 0,
// the most urgent, e.g. 1:3 for a quarter urgent requests); a length is "512", "uniform:LO:HI"
// or "hist:FILE" (FILE: CSV lines "tokens,weight", relative paths from `base_dir`). Unknown keys
// and bad values are InputErrors naming them.
GenSpec parse_gen_spec(const std::string& spec, const std::string& base_dir = ".");
RequestTrace generate_requests(const GenSpec& g);

}  // namespace sfumato::serve
