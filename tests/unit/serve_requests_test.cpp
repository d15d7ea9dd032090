// runtime/serve/requests.h: the three trace layouts read the same requests, every malformed
// input is an InputError naming its line, and the generator's draws have the moments of the
// distributions it claims (bounds from the sample sizes, not tuned constants) and repeat per seed.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "runtime/serve/requests.h"
#include "sim/error.h"

using namespace sfumato;
using namespace sfumato::serve;

namespace {

const std::string kData = std::string(SFUMATO_SOURCE_DIR) + "/tests/data/serve/";

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

std::string parse_error(const std::string& text) {
    return error_of([&] { parse_requests(text, "t.csv"); });
}

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {
    const double m = mean(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
}

std::vector<double> gaps(const RequestTrace& t) {
    std::vector<double> g;
    for (size_t i = 1; i < t.requests.size(); ++i)
        g.push_back(t.requests[i].arrival_s - t.requests[i - 1].arrival_s);
    return g;
}

}  // namespace

TEST_CASE("serve requests: CSV and JSONL give the same requests", "[serve]") {
    const RequestTrace c = load_requests(kData + "requests.csv");
    const RequestTrace j = load_requests(kData + "requests.jsonl");
    CHECK(c.format == "csv");
    CHECK(j.format == "jsonl");
    REQUIRE(c.requests.size() == 3);
    REQUIRE(j.requests.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        const Request &a = c.requests[i], &b = j.requests[i];
        CHECK(a.arrival_s == b.arrival_s);
        CHECK(a.prompt_tokens == b.prompt_tokens);
        CHECK(a.output_tokens == b.output_tokens);
        CHECK(a.prefix_id == b.prefix_id);
        CHECK(a.prefix_tokens == b.prefix_tokens);
        CHECK(a.priority == b.priority);
    }
    CHECK(c.requests[2].arrival_s == 0.5);  // JSONL's arrival_ms 500
    CHECK(c.requests[1].id == "b");
    CHECK(j.requests[2].id == "7");  // an integer id reads as its digits
    CHECK(c.requests[2].id == "c");
    CHECK(c.requests[0].prefix_tokens == 256);
    CHECK(c.requests[2].prefix_id.empty());
    CHECK(c.requests[0].line == 2);
    CHECK(j.requests[2].line == 4);  // the blank line counts
}

TEST_CASE("serve requests: the Azure layout, timestamps relative to the earliest row", "[serve]") {
    const RequestTrace t = load_requests(kData + "azure_layout.csv");
    CHECK(t.format == "azure");
    REQUIRE(t.requests.size() == 5);
    CHECK(t.requests[0].arrival_s == 0.0);
    // 18:15:50.9951690 - 18:15:46.6805900 (100 ns ticks)
    CHECK(t.requests[1].arrival_s == Approx(4.314579).epsilon(1e-12));
    CHECK(t.requests[4].arrival_s == Approx(5.31941).epsilon(1e-12));
    CHECK(t.requests[0].prompt_tokens == 374);
    CHECK(t.requests[0].output_tokens == 44);
    // GeneratedTokens 0: served as one token, and said so.
    CHECK(t.requests[2].output_tokens == 1);
    REQUIRE(t.notes.size() == 1);
    CHECK(t.notes[0].find("1 rows with GeneratedTokens 0") != std::string::npos);
    CHECK(t.requests[3].id == "r3");

    // Across midnight, a month end and a leap day; fractions of any length; 'T', 'Z' and offsets.
    const RequestTrace m = parse_requests(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2024-02-28 23:59:59.5,10,1\n"
        "2024-03-01T00:00:00Z,10,1\n"
        "2024-02-29 01:00:00.000000001+01:00,10,1\n",
        "m.csv");
    REQUIRE(m.requests.size() == 3);
    // Reordered by arrival: 02-29 00:00:00.000000001 UTC comes second.
    CHECK(m.notes.size() == 1);
    CHECK(m.requests[0].line == 2);
    CHECK(m.requests[1].line == 4);
    CHECK(m.requests[1].arrival_s == Approx(0.500000001).epsilon(1e-12));
    CHECK(m.requests[2].arrival_s == Approx(86400.5).epsilon(1e-12));
}

TEST_CASE("serve requests: a malformed trace names the file, the line and the field", "[serve]") {
    const std::string h = "arrival_s,prompt_tokens,output_tokens\n";
    CHECK(parse_error("") == "t.csv: no requests (the file is empty)");
    CHECK(parse_error(h) == "t.csv: no requests");
    CHECK(parse_error(h + "0,12,x\n") == "t.csv:2: output_tokens 'x' is not an integer");
    CHECK(parse_error(h + "0,0,1\n") == "t.csv:2: prompt_tokens 0 out of range [1, 2147483648]");
    CHECK(parse_error(h + "0,1,1\n-1,1,1\n").find("t.csv:3: arrival time") == 0);
    CHECK(parse_error(h + "nan,1,1\n") == "t.csv:2: arrival_s 'nan' is not a finite number");
    CHECK(parse_error(h + "0,1\n") == "t.csv:2: 2 fields, the header has 3");
    CHECK(parse_error("arrival_s,prompt_tokens,output_token\n").find("t.csv:1: unknown column 'output_token'") == 0);
    CHECK(parse_error("arrival_s,prompt_tokens\n") == "t.csv:1: missing column 'output_tokens'");
    CHECK(parse_error("arrival_s,arrival_ms,prompt_tokens,output_tokens\n") == "t.csv:1: both arrival_s and arrival_ms");
    CHECK(parse_error("arrival_s,prompt_tokens,output_tokens,request_id\n0,1,1,a\n1,1,1,a\n") ==
          "t.csv:3: request id 'a' already used on line 2");
    CHECK(parse_error("arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,8,1,p,9\n") ==
          "t.csv:2: prefix_tokens 9 not in [0, prompt_tokens 8]");
    CHECK(parse_error("arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n0,8,1,,4\n") ==
          "t.csv:2: prefix_tokens without a prefix_id");
    CHECK(parse_error(h + "\"0,1,1\n") == "t.csv:2: unterminated quote");
    // JSONL
    CHECK(parse_error("{\"arrival_s\": 0, \"prompt_tokens\": 1}\n") == "t.csv:1: missing 'output_tokens'");
    CHECK(parse_error("{\"arrival_s\": 0, \"prompt_tokens\": 1.5, \"output_tokens\": 1}\n") ==
          "t.csv:1: 'prompt_tokens' must be an integer");
    CHECK(parse_error("{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1, \"prio\": 1}\n")
              .find("t.csv:1: unknown key 'prio'") == 0);
    CHECK(parse_error("{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 1}\n{\"arrival_s\": 1,\n")
              .find("t.csv:2: not a JSON object") == 0);
    CHECK(parse_error("{\"arrival_s\": 0, \"prompt_tokens\": 1, \"output_tokens\": 18446744073709551615}\n") ==
          "t.csv:1: 'output_tokens' out of range");
    // Azure
    const std::string a = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    CHECK(parse_error("TIMESTAMP,ContextTokens\n") == "t.csv:1: an Azure trace header without column 'GeneratedTokens'");
    CHECK(parse_error(a + "2023-02-29 00:00:00,1,1\n").find("t.csv:2: TIMESTAMP '2023-02-29 00:00:00': day out of range") == 0);
    CHECK(parse_error(a + "2023-11-16 18:15,1,1\n").find("t.csv:2: TIMESTAMP '2023-11-16 18:15': too short") == 0);
    CHECK(parse_error(a + "2023-11-16 18:15:46.,1,1\n").find("no digits after '.'") != std::string::npos);
    CHECK(parse_error(a + "2023-11-16 18:15:46 PM,1,1\n").find("unexpected ' PM'") != std::string::npos);
    CHECK(parse_error(a + "2023-11-16 18:15:46,0,1\n") == "t.csv:2: ContextTokens 0 out of range [1, 2147483648]");
    CHECK(error_of([] { load_requests("/nonexistent/trace.csv"); }) ==
          "cannot read request trace '/nonexistent/trace.csv'");
}

TEST_CASE("serve requests: the generator's spec and its errors", "[serve]") {
    const GenSpec g = parse_gen_spec("n=10, rate=4, arrival=gamma, cv=2, seed=9, prompt=uniform:64:128, output=32");
    CHECK(g.n == 10);
    CHECK(g.rate == 4.0);
    CHECK(g.arrival == GenSpec::Arrival::Gamma);
    CHECK(g.cv == 2.0);
    CHECK(g.seed == 9);
    CHECK(g.prompt.kind == LengthDist::Kind::Uniform);
    CHECK(g.output.lo == 32);
    auto err = [](const std::string& s) { return error_of([&] { parse_gen_spec(s, kData); }); };
    CHECK(err("n=10,prompt=1") == "request generator: 'output' missing (a length: 128, uniform:LO:HI or hist:FILE)");
    CHECK(err("n=0,prompt=1,output=1") == "request generator: n '0' not in [1, 10000000]");
    CHECK(err("rate=-1,prompt=1,output=1") == "request generator: rate '-1' is not a positive number");
    CHECK(err("arrival=bursty,prompt=1,output=1") == "request generator: arrival 'bursty' (known: poisson, gamma)");
    CHECK(err("cv=2,prompt=1,output=1") == "request generator: cv applies to arrival=gamma only");
    CHECK(err("prompt=uniform:9:3,output=1") == "request generator: prompt 'uniform:9:3': LO above HI");
    CHECK(err("prompt=hist:missing.csv,output=1").find("cannot read histogram file") != std::string::npos);
    CHECK(err("prompt=1,output=1,burst=2").find("unknown key 'burst'") != std::string::npos);
    CHECK(err("prompt=1,output=1,prefix_groups=4") == "request generator: prefix_groups and prefix_tokens go together");
}

TEST_CASE("serve requests: generated arrivals and lengths follow their distributions, per seed", "[serve]") {
    const size_t n = 20000;
    const double rate = 8.0;
    // Poisson: exponential gaps, mean 1/rate and standard deviation 1/rate. The sample mean's
    // standard error is (1/rate)/sqrt(n); allow 5 of them.
    GenSpec p = parse_gen_spec("n=20000,rate=8,seed=3,prompt=512,output=uniform:16:48");
    const RequestTrace a = generate_requests(p), b = generate_requests(p);
    REQUIRE(a.requests.size() == n);
    for (size_t i = 0; i < n; ++i) {
        REQUIRE(a.requests[i].arrival_s == b.requests[i].arrival_s);
        REQUIRE(a.requests[i].output_tokens == b.requests[i].output_tokens);
    }
    const double se = 1.0 / rate / std::sqrt(static_cast<double>(n));
    const std::vector<double> pg = gaps(a);
    CHECK(std::abs(mean(pg) - 1.0 / rate) < 5 * se);
    CHECK(std::abs(stddev(pg) - 1.0 / rate) < 10 * se);  // the deviation's error is about twice as wide
    CHECK(a.requests[0].arrival_s == 0.0);
    // Uniform output lengths: every value in [16, 48] drawn, mean 32 within 5 standard errors.
    std::vector<double> outs;
    std::map<int64_t, size_t> seen;
    for (const Request& r : a.requests) {
        outs.push_back(static_cast<double>(r.output_tokens));
        ++seen[r.output_tokens];
        REQUIRE(r.prompt_tokens == 512);
    }
    CHECK(seen.size() == 33);
    CHECK(seen.begin()->first == 16);
    CHECK(seen.rbegin()->first == 48);
    const double sd_uniform = std::sqrt((33.0 * 33.0 - 1.0) / 12.0);
    CHECK(std::abs(mean(outs) - 32.0) < 5 * sd_uniform / std::sqrt(static_cast<double>(n)));

    // Another seed, other arrivals.
    p.seed = 4;
    CHECK(generate_requests(p).requests[1].arrival_s != a.requests[1].arrival_s);

    // Gamma with CV 3 (bursty) and CV 0.5 (regular): the gaps' mean stays 1/rate, their CV
    // follows. The CV's sampling error grows with the CV (heavy tail at CV 3): 10 % there.
    for (double cv : {3.0, 0.5}) {
        GenSpec g = parse_gen_spec("n=20000,rate=8,arrival=gamma,seed=5,prompt=1,output=1");
        g.cv = cv;
        const std::vector<double> gg = gaps(generate_requests(g));
        INFO("cv " << cv);
        CHECK(std::abs(mean(gg) - 1.0 / rate) < 5 * cv * se);
        CHECK(stddev(gg) / mean(gg) == Approx(cv).epsilon(cv > 1 ? 0.1 : 0.03));
    }
}

TEST_CASE("serve requests: histogram lengths and shared prefixes", "[serve]") {
    const RequestTrace t =
        generate_requests(parse_gen_spec("n=8000,rate=1,seed=2,prompt=hist:lengths_hist.csv,output=4,"
                                         "prefix_groups=4,prefix_tokens=256",
                                         kData));
    std::map<int64_t, size_t> bins;
    std::map<std::string, size_t> groups;
    for (const Request& r : t.requests) {
        ++bins[r.prompt_tokens];
        ++groups[r.prefix_id];
        REQUIRE(r.prefix_tokens == std::min<int64_t>(256, r.prompt_tokens));
    }
    // Weights 1:2:1: shares 1/4, 1/2, 1/4, each within 5 binomial standard errors.
    REQUIRE(bins.size() == 3);
    const double n = static_cast<double>(t.requests.size());
    for (const auto& [tok, share] : std::map<int64_t, double>{{128, 0.25}, {512, 0.5}, {2048, 0.25}}) {
        INFO("bin " << tok);
        CHECK(std::abs(static_cast<double>(bins[tok]) / n - share) < 5 * std::sqrt(share * (1 - share) / n));
    }
    REQUIRE(groups.size() == 4);
    for (const auto& [id, count] : groups)
        CHECK(std::abs(static_cast<double>(count) / n - 0.25) < 5 * std::sqrt(0.25 * 0.75 / n));
}
