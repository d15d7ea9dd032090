// The request generator (runtime/serve/requests.h): arrivals of a Poisson process (exponential
// gaps) or a Gamma renewal process (gaps with a given coefficient of variation: bursty above 1,
// regular below), lengths fixed, uniform or from a histogram. The uniform, exponential, normal
// and Gamma draws are written here over std::mt19937_64's specified output, so one seed gives
// one request list on every standard library.
#include <charconv>
#include <cmath>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>

#include "runtime/serve/requests.h"
#include "sim/error.h"

namespace sfumato::serve {

namespace {

[[noreturn]] void bad(const std::string& what) { throw InputError("request generator: " + what); }

std::string trimmed(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

template <class T>
bool parse_num(const std::string& s, T& v) {
    const char* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v);
    return !s.empty() && r.ec == std::errc() && r.ptr == end;
}

int64_t tokens(const std::string& s, const std::string& what) {
    int64_t v = 0;
    if (!parse_num(s, v) || v < 1 || v > kMaxTokens)
        bad(what + " '" + s + "' is not a token count in [1, " + std::to_string(kMaxTokens) + "]");
    return v;
}

double positive(const std::string& s, const std::string& what) {
    double v = 0;
    if (!parse_num(s, v) || !std::isfinite(v) || v <= 0) bad(what + " '" + s + "' is not a positive number");
    return v;
}

// "tokens,weight" lines; blank lines and '#' comments skipped; a first line that is not numeric
// is a header.
std::vector<std::pair<int64_t, double>> read_histogram(const std::string& path) {
    std::ifstream in(path);
    if (!in) bad("cannot read histogram file '" + path + "'");
    std::vector<std::pair<int64_t, double>> h;
    std::string line;
    size_t ln = 0;
    bool first = true;
    while (std::getline(in, line)) {
        ++ln;
        const std::string t = trimmed(line);
        if (t.empty() || t[0] == '#') continue;
        const std::vector<std::string> f = split(t, ',');
        int64_t tok = 0;
        if (first && f.size() == 2 && !parse_num(trimmed(f[0]), tok)) {
            first = false;
            continue;  // header
        }
        first = false;
        const std::string where = path + ":" + std::to_string(ln);
        if (f.size() != 2) bad(where + ": expected 'tokens,weight'");
        const int64_t n = tokens(trimmed(f[0]), where + ": tokens");
        double w = 0;
        if (!parse_num(trimmed(f[1]), w) || !std::isfinite(w) || w < 0)
            bad(where + ": weight '" + trimmed(f[1]) + "' is not a number >= 0");
        if (w > 0) h.emplace_back(n, w);
    }
    if (h.empty()) bad("histogram file '" + path + "' has no bin with a positive weight");
    return h;
}

LengthDist length(const std::string& s, const std::string& what, const std::string& base_dir) {
    LengthDist d;
    d.text = s;
    if (s.rfind("uniform:", 0) == 0) {
        const std::vector<std::string> f = split(s.substr(8), ':');
        if (f.size() != 2) bad(what + " '" + s + "': expected uniform:LO:HI");
        d.kind = LengthDist::Kind::Uniform;
        d.lo = tokens(f[0], what + " low bound");
        d.hi = tokens(f[1], what + " high bound");
        if (d.lo > d.hi) bad(what + " '" + s + "': LO above HI");
    } else if (s.rfind("hist:", 0) == 0) {
        std::string path = s.substr(5);
        if (path.empty()) bad(what + " '" + s + "': expected hist:FILE");
        if (path[0] != '/') path = base_dir + "/" + path;
        d.kind = LengthDist::Kind::Histogram;
        d.hist = read_histogram(path);
    } else {
        d.kind = LengthDist::Kind::Fixed;
        d.lo = d.hi = tokens(s, what);
    }
    return d;
}

// Draws over one std::mt19937_64 stream.
class Draw {
public:
    explicit Draw(uint64_t seed) : m_rng(seed) {}
    double u01() { return static_cast<double>(m_rng() >> 11) * 0x1.0p-53; }  // [0, 1)
    double exponential(double mean) { return -std::log1p(-u01()) * mean; }
    double normal() {  // Box-Muller, one of the pair
        const double u1 = 1.0 - u01(), u2 = u01();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }
    // Gamma(shape k, scale 1): Marsaglia and Tsang's squeeze method; k < 1 through k + 1.
    double gamma(double k) {
        if (k < 1.0) return gamma(k + 1.0) * std::pow(1.0 - u01(), 1.0 / k);
        const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
        for (;;) {
            const double x = normal(), t = 1.0 + c * x;
            if (t <= 0) continue;
            const double v = t * t * t, u = 1.0 - u01();
            if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
        }
    }
    int64_t between(int64_t lo, int64_t hi) {
        const int64_t n = hi - lo + 1;
        return std::min(hi, lo + static_cast<int64_t>(u01() * static_cast<double>(n)));
    }
    int64_t length(const LengthDist& d) {
        switch (d.kind) {
            case LengthDist::Kind::Fixed: return d.lo;
            case LengthDist::Kind::Uniform: return between(d.lo, d.hi);
            case LengthDist::Kind::Histogram: {
                double total = 0;
                for (const auto& b : d.hist) total += b.second;
                double x = u01() * total;
                for (const auto& b : d.hist) {
                    if (x < b.second) return b.first;
                    x -= b.second;
                }
                return d.hist.back().first;  // rounding at the top end
            }
        }
        return d.lo;
    }

private:
    std::mt19937_64 m_rng;
};

}  // namespace

GenSpec parse_gen_spec(const std::string& spec, const std::string& base_dir) {
    GenSpec g;
    g.text = spec;
    bool prompt = false, output = false;
    for (const std::string& item : split(spec, ',')) {
        const std::string kv = trimmed(item);
        if (kv.empty()) continue;
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) bad("'" + kv + "' is not key=value");
        const std::string k = trimmed(kv.substr(0, eq)), v = trimmed(kv.substr(eq + 1));
        if (k == "n") {
            int64_t n = 0;
            if (!parse_num(v, n) || n < 1 || n > 10000000) bad("n '" + v + "' not in [1, 10000000]");
            g.n = static_cast<size_t>(n);
        } else if (k == "rate") {
            g.rate = positive(v, "rate");
            if (g.rate < 1e-9 || g.rate > 1e9) bad("rate '" + v + "' not in [1e-9, 1e9] requests per second");
        } else if (k == "cv") {
            // Gamma's shape is 1 / cv^2: bounded so that the draws stay finite.
            g.cv = positive(v, "cv");
            if (g.cv < 0.05 || g.cv > 20) bad("cv '" + v + "' not in [0.05, 20]");
        } else if (k == "arrival") {
            if (v == "poisson")
                g.arrival = GenSpec::Arrival::Poisson;
            else if (v == "gamma")
                g.arrival = GenSpec::Arrival::Gamma;
            else
                bad("arrival '" + v + "' (known: poisson, gamma)");
        } else if (k == "seed") {
            if (!parse_num(v, g.seed)) bad("seed '" + v + "' is not an unsigned integer");
        } else if (k == "prompt") {
            g.prompt = length(v, "prompt", base_dir);
            prompt = true;
        } else if (k == "output") {
            g.output = length(v, "output", base_dir);
            output = true;
        } else if (k == "prefix_groups") {
            int64_t n = 0;
            if (!parse_num(v, n) || n < 0 || n > 1000000) bad("prefix_groups '" + v + "' not in [0, 1000000]");
            g.prefix_groups = static_cast<size_t>(n);
        } else if (k == "prefix_tokens") {
            g.prefix_tokens = tokens(v, "prefix_tokens");
        } else if (k == "priorities") {
            g.priority_weights.clear();
            double sum = 0;
            for (const std::string& w : split(v, ':')) {
                double x = 0;
                if (!parse_num(w, x) || !std::isfinite(x) || x < 0)
                    bad("priorities '" + v + "': weight '" + w +
                        "' is not a number >= 0 (W0:W1:..., class 0 the most urgent)");
                g.priority_weights.push_back(x);
                sum += x;
            }
            if (g.priority_weights.size() > 1000) bad("priorities '" + v + "': more than 1000 classes");
            if (!(sum > 0)) bad("priorities '" + v + "': no class has a positive weight");
        } else {
            bad("unknown key '" + k + "' (keys: n, rate, arrival, cv, seed, prompt, output, prefix_groups, "
                "prefix_tokens, priorities)");
        }
    }
    if (!prompt) bad("'prompt' missing (a length: 512, uniform:LO:HI or hist:FILE)");
    if (!output) bad("'output' missing (a length: 128, uniform:LO:HI or hist:FILE)");
    if ((g.prefix_groups > 0) != (g.prefix_tokens > 0)) bad("prefix_groups and prefix_tokens go together");
    if (g.arrival == GenSpec::Arrival::Poisson && g.cv != 1.0) bad("cv applies to arrival=gamma only");
    return g;
}

RequestTrace generate_requests(const GenSpec& g) {
    RequestTrace t;
    t.format = "generated";
    t.source = g.text;
    // Separate streams for the arrivals and the lengths, so that changing a length distribution
    // keeps the arrival times (and the reverse).
    Draw arrivals(g.seed), lengths(g.seed ^ 0x9e3779b97f4a7c15ull), classes(g.seed ^ 0x5851f42d4c957f2dull);
    double total = 0;
    for (double w : g.priority_weights) total += w;
    const double mean_gap = 1.0 / g.rate, k = 1.0 / (g.cv * g.cv);
    double at = 0.0;
    for (size_t i = 0; i < g.n; ++i) {
        if (i)
            at += g.arrival == GenSpec::Arrival::Poisson ? arrivals.exponential(mean_gap)
                                                         : arrivals.gamma(k) * mean_gap / k;
        Request r;
        r.id = "r" + std::to_string(i);
        r.arrival_s = at;
        r.prompt_tokens = lengths.length(g.prompt);
        r.output_tokens = lengths.length(g.output);
        if (g.prefix_groups) {
            r.prefix_id = "g" + std::to_string(lengths.between(0, static_cast<int64_t>(g.prefix_groups) - 1));
            r.prefix_tokens = std::min(g.prefix_tokens, r.prompt_tokens);
        }
        if (!g.priority_weights.empty()) {
            // Its own stream: adding classes keeps the arrivals and the lengths.
            double x = classes.u01() * total;
            size_t k = 0;
            while (k + 1 < g.priority_weights.size() && !(x < g.priority_weights[k]))
                x -= g.priority_weights[k++];
            while (g.priority_weights[k] <= 0) --k;  // rounding at the top end onto a zero-weight class
            r.priority = static_cast<int64_t>(k);
        }
        t.requests.push_back(std::move(r));
    }
    return t;
}

}  // namespace sfumato::serve
