// Request traces and the request generator (runtime/serve/requests.h).
#include "runtime/serve/requests.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "sim/error.h"

namespace sfumato::serve {

namespace {

[[noreturn]] void fail_at(const std::string& name, size_t line, const std::string& what) {
    throw InputError(name + (line ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

std::string trim(std::string_view s) {
    const size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string_view::npos) return "";
    const size_t b = s.find_last_not_of(" \t\r");
    return std::string(s.substr(a, b - a + 1));
}

// Lines of a text with their 1-based numbers (a final line without '\n' included).
std::vector<std::pair<size_t, std::string_view>> lines_of(std::string_view text) {
    std::vector<std::pair<size_t, std::string_view>> out;
    size_t n = 0, pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        out.emplace_back(++n, text.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

// CSV fields: ',' separated, '"' quoting with "" for a quote inside, surrounding blanks trimmed.
std::vector<std::string> csv_fields(std::string_view line, const std::string& name, size_t ln) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
                cur += '"', ++i;
            else if (c == '"')
                quoted = false;
            else
                cur += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (quoted) fail_at(name, ln, "unterminated quote");
    out.push_back(trim(cur));
    return out;
}

int64_t parse_int(const std::string& s, const std::string& what, const std::string& name, size_t ln, int64_t lo,
                  int64_t hi) {
    int64_t v = 0;
    const char* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v);
    if (s.empty() || r.ec != std::errc() || r.ptr != end)
        fail_at(name, ln, what + " '" + s + "' is not an integer");
    if (v < lo || v > hi)
        fail_at(name, ln, what + " " + s + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

double parse_real(const std::string& s, const std::string& what, const std::string& name, size_t ln) {
    double v = 0;
    const char* end = s.data() + s.size();
    const auto r = std::from_chars(s.data(), end, v);
    if (s.empty() || r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
        fail_at(name, ln, what + " '" + s + "' is not a finite number");
    return v;
}

// Checks one request's fields (the ones every layout shares).
void check_request(const Request& r, const std::string& name) {
    if (r.prompt_tokens < 1) fail_at(name, r.line, "prompt_tokens must be at least 1");
    if (r.output_tokens < 1) fail_at(name, r.line, "output_tokens must be at least 1");
    if (r.prefix_tokens < 0 || r.prefix_tokens > r.prompt_tokens)
        fail_at(name, r.line,
                "prefix_tokens " + std::to_string(r.prefix_tokens) + " not in [0, prompt_tokens " +
                    std::to_string(r.prompt_tokens) + "]");
    if (r.prefix_tokens > 0 && r.prefix_id.empty()) fail_at(name, r.line, "prefix_tokens without a prefix_id");
    if (!r.prefix_id.empty() && r.prefix_tokens == 0) fail_at(name, r.line, "prefix_id without prefix_tokens");
    if (!(r.arrival_s >= 0.0) || !std::isfinite(r.arrival_s))
        fail_at(name, r.line, "arrival time must be a finite number >= 0");
}

// Sorts by arrival (noting it), shifts the first arrival to 0, names unnamed requests and
// rejects duplicate ids.
void finish(RequestTrace& t, const std::string& name) {
    if (t.requests.empty()) fail_at(name, 0, "no requests");
    auto by_arrival = [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; };
    if (!std::is_sorted(t.requests.begin(), t.requests.end(), by_arrival)) {
        std::stable_sort(t.requests.begin(), t.requests.end(), by_arrival);
        t.notes.push_back("rows are not in arrival order: ordered by arrival time");
    }
    const double t0 = t.requests.front().arrival_s;
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < t.requests.size(); ++i) {
        Request& r = t.requests[i];
        r.arrival_s -= t0;
        if (r.id.empty()) r.id = "r" + std::to_string(i);
        const auto [it, fresh] = seen.emplace(r.id, r.line);
        if (!fresh)
            fail_at(name, r.line,
                    "request id '" + r.id + "' already used" +
                        (it->second ? " on line " + std::to_string(it->second) : std::string()));
    }
}

// ---- sfumato's CSV ----

RequestTrace parse_csv(const std::vector<std::pair<size_t, std::string_view>>& lines, size_t header,
                       const std::string& name) {
    RequestTrace t;
    t.format = "csv";
    const size_t hl = lines[header].first;
    const std::vector<std::string> cols = csv_fields(lines[header].second, name, hl);
    static const std::vector<std::string> known = {"arrival_s",  "arrival_ms",    "prompt_tokens", "output_tokens",
                                                   "request_id", "prefix_id",     "prefix_tokens", "priority"};
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < cols.size(); ++i) {
        if (std::find(known.begin(), known.end(), cols[i]) == known.end())
            fail_at(name, hl,
                    "unknown column '" + cols[i] +
                        "' (columns: arrival_s or arrival_ms, prompt_tokens, output_tokens; optional request_id, "
                        "prefix_id, prefix_tokens, priority)");
        if (!at.emplace(cols[i], i).second) fail_at(name, hl, "column '" + cols[i] + "' appears twice");
    }
    const bool ms = at.count("arrival_ms") > 0;
    if (ms && at.count("arrival_s")) fail_at(name, hl, "both arrival_s and arrival_ms");
    for (const char* need : {ms ? "arrival_ms" : "arrival_s", "prompt_tokens", "output_tokens"})
        if (!at.count(need)) fail_at(name, hl, std::string("missing column '") + need + "'");
    for (size_t k = header + 1; k < lines.size(); ++k) {
        const auto& [ln, text] = lines[k];
        if (trim(text).empty()) continue;
        const std::vector<std::string> f = csv_fields(text, name, ln);
        if (f.size() != cols.size())
            fail_at(name, ln, std::to_string(f.size()) + " fields, the header has " + std::to_string(cols.size()));
        auto get = [&](const char* c) -> const std::string* { return at.count(c) ? &f[at.at(c)] : nullptr; };
        Request r;
        r.line = ln;
        r.arrival_s = parse_real(*get(ms ? "arrival_ms" : "arrival_s"), ms ? "arrival_ms" : "arrival_s", name, ln) /
                      (ms ? 1000.0 : 1.0);
        r.prompt_tokens = parse_int(*get("prompt_tokens"), "prompt_tokens", name, ln, 1, kMaxTokens);
        r.output_tokens = parse_int(*get("output_tokens"), "output_tokens", name, ln, 1, kMaxTokens);
        if (const std::string* s = get("request_id")) r.id = *s;
        if (const std::string* s = get("prefix_id")) r.prefix_id = *s;
        if (const std::string* s = get("prefix_tokens"); s && !s->empty())
            r.prefix_tokens = parse_int(*s, "prefix_tokens", name, ln, 0, kMaxTokens);
        if (const std::string* s = get("priority"); s && !s->empty())
            r.priority = parse_int(*s, "priority", name, ln, -kMaxTokens, kMaxTokens);
        check_request(r, name);
        t.requests.push_back(std::move(r));
    }
    return t;
}

// ---- JSONL ----

int64_t json_int(const nlohmann::json& v, const std::string& key, const std::string& name, size_t ln, int64_t lo,
                 int64_t hi) {
    if (!v.is_number_integer()) fail_at(name, ln, "'" + key + "' must be an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
        fail_at(name, ln, "'" + key + "' out of range");
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi)
        fail_at(name, ln, "'" + key + "' " + std::to_string(x) + " out of range [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
    return x;
}

RequestTrace parse_jsonl(const std::vector<std::pair<size_t, std::string_view>>& lines, const std::string& name) {
    RequestTrace t;
    t.format = "jsonl";
    for (const auto& [ln, text] : lines) {
        if (trim(text).empty()) continue;
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception& e) {
            fail_at(name, ln, std::string("not a JSON object: ") + e.what());
        }
        if (!j.is_object()) fail_at(name, ln, "not a JSON object");
        Request r;
        r.line = ln;
        bool arrival = false;
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string& k = it.key();
            const nlohmann::json& v = it.value();
            if (k == "arrival_s" || k == "arrival_ms") {
                if (arrival) fail_at(name, ln, "both arrival_s and arrival_ms");
                if (!v.is_number() || !std::isfinite(v.get<double>()))
                    fail_at(name, ln, "'" + k + "' must be a finite number");
                r.arrival_s = v.get<double>() / (k == "arrival_ms" ? 1000.0 : 1.0);
                arrival = true;
            } else if (k == "prompt_tokens") {
                r.prompt_tokens = json_int(v, k, name, ln, 1, kMaxTokens);
            } else if (k == "output_tokens") {
                r.output_tokens = json_int(v, k, name, ln, 1, kMaxTokens);
            } else if (k == "prefix_tokens") {
                r.prefix_tokens = json_int(v, k, name, ln, 0, kMaxTokens);
            } else if (k == "priority") {
                r.priority = json_int(v, k, name, ln, -kMaxTokens, kMaxTokens);
            } else if (k == "request_id" || k == "prefix_id") {
                std::string s;
                if (v.is_string())
                    s = v.get<std::string>();
                else if (v.is_number_integer())
                    s = v.dump();
                else
                    fail_at(name, ln, "'" + k + "' must be a string or an integer");
                (k == "request_id" ? r.id : r.prefix_id) = s;
            } else {
                fail_at(name, ln,
                        "unknown key '" + k +
                            "' (keys: arrival_s or arrival_ms, prompt_tokens, output_tokens; optional request_id, "
                            "prefix_id, prefix_tokens, priority)");
            }
        }
        if (!arrival) fail_at(name, ln, "missing 'arrival_s'");
        if (!j.contains("prompt_tokens")) fail_at(name, ln, "missing 'prompt_tokens'");
        if (!j.contains("output_tokens")) fail_at(name, ln, "missing 'output_tokens'");
        check_request(r, name);
        t.requests.push_back(std::move(r));
    }
    return t;
}

// ---- Azure ----

// Days from 1970-01-01 to a proleptic Gregorian date (era arithmetic over 400-year cycles).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

bool leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (or 'T' between date and time) as
// nanoseconds since 1970 UTC.
int64_t azure_time_ns(const std::string& s, const std::string& name, size_t ln) {
    auto bad = [&](const std::string& why) -> int64_t {
        fail_at(name, ln, "TIMESTAMP '" + s + "': " + why + " (expected YYYY-MM-DD HH:MM:SS[.fraction])");
    };
    auto num = [&](size_t pos, size_t len) -> int64_t {
        if (pos + len > s.size()) bad("too short");
        int64_t v = 0;
        for (size_t i = pos; i < pos + len; ++i) {
            if (s[i] < '0' || s[i] > '9') bad("a digit expected at position " + std::to_string(i + 1));
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    auto sep = [&](size_t pos, const char* any) {
        if (pos >= s.size() || s[pos] == '\0' || !std::strchr(any, s[pos])) bad(std::string("'") + any[0] + "' expected");
    };
    if (s.size() < 19) bad("too short");
    const int64_t y = num(0, 4);
    sep(4, "-");
    const int64_t mo = num(5, 2);
    sep(7, "-");
    const int64_t d = num(8, 2);
    sep(10, " T");
    const int64_t h = num(11, 2);
    sep(13, ":");
    const int64_t mi = num(14, 2);
    sep(16, ":");
    const int64_t se = num(17, 2);
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || y > 2200) bad("year out of range");
    if (mo < 1 || mo > 12) bad("month out of range");
    if (d < 1 || d > dim[mo - 1] + (mo == 2 && leap(y))) bad("day out of range");
    if (h > 23 || mi > 59 || se > 59) bad("time of day out of range");
    size_t pos = 19;
    int64_t frac_ns = 0;
    if (pos < s.size() && s[pos] == '.') {
        size_t digits = 0;
        int64_t scale = 100000000;
        for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, ++digits) {
            frac_ns += (s[pos] - '0') * scale;  // digits past nanoseconds add nothing
            scale /= 10;
        }
        if (digits == 0) bad("no digits after '.'");
    }
    int64_t offset_s = 0;
    if (pos < s.size() && s[pos] == 'Z') {
        ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
        const int64_t sign = s[pos] == '-' ? -1 : 1;
        const int64_t oh = num(pos + 1, 2);
        sep(pos + 3, ":");
        const int64_t om = num(pos + 4, 2);
        if (oh > 23 || om > 59) bad("UTC offset out of range");
        offset_s = sign * (oh * 3600 + om * 60);
        pos += 6;
    }
    if (pos != s.size()) bad("unexpected '" + s.substr(pos) + "'");
    const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
    return secs * 1000000000 + frac_ns;
}

RequestTrace parse_azure(const std::vector<std::pair<size_t, std::string_view>>& lines, size_t header,
                         const std::string& name) {
    RequestTrace t;
    t.format = "azure";
    const size_t hl = lines[header].first;
    const std::vector<std::string> cols = csv_fields(lines[header].second, name, hl);
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < cols.size(); ++i) at.emplace(cols[i], i);
    std::vector<int64_t> ns;
    size_t zero_out = 0;
    for (size_t k = header + 1; k < lines.size(); ++k) {
        const auto& [ln, text] = lines[k];
        if (trim(text).empty()) continue;
        const std::vector<std::string> f = csv_fields(text, name, ln);
        if (f.size() != cols.size())
            fail_at(name, ln, std::to_string(f.size()) + " fields, the header has " + std::to_string(cols.size()));
        Request r;
        r.line = ln;
        ns.push_back(azure_time_ns(f[at.at("TIMESTAMP")], name, ln));
        r.prompt_tokens = parse_int(f[at.at("ContextTokens")], "ContextTokens", name, ln, 1, kMaxTokens);
        r.output_tokens = parse_int(f[at.at("GeneratedTokens")], "GeneratedTokens", name, ln, 0, kMaxTokens);
        if (r.output_tokens == 0) r.output_tokens = 1, ++zero_out;
        t.requests.push_back(std::move(r));
    }
    if (!ns.empty()) {
        const int64_t t0 = *std::min_element(ns.begin(), ns.end());
        for (size_t i = 0; i < ns.size(); ++i) t.requests[i].arrival_s = static_cast<double>(ns[i] - t0) * 1e-9;
    }
    if (zero_out)
        t.notes.push_back(std::to_string(zero_out) +
                          " rows with GeneratedTokens 0 are served as one token (prefill gives the first)");
    return t;
}

}  // namespace

RequestTrace parse_requests(std::string_view text, const std::string& name) {
    const auto lines = lines_of(text);
    size_t first = 0;
    while (first < lines.size() && trim(lines[first].second).empty()) ++first;
    if (first == lines.size()) fail_at(name, 0, "no requests (the file is empty)");
    RequestTrace t;
    const std::string head = trim(lines[first].second);
    if (head.front() == '{') {
        t = parse_jsonl(lines, name);
    } else {
        const std::vector<std::string> cols = csv_fields(lines[first].second, name, lines[first].first);
        auto has = [&](const char* c) { return std::find(cols.begin(), cols.end(), c) != cols.end(); };
        if (has("TIMESTAMP") || has("ContextTokens") || has("GeneratedTokens")) {
            for (const char* c : {"TIMESTAMP", "ContextTokens", "GeneratedTokens"})
                if (!has(c))
                    fail_at(name, lines[first].first,
                            std::string("an Azure trace header without column '") + c + "'");
            t = parse_azure(lines, first, name);
        } else {
            t = parse_csv(lines, first, name);
        }
    }
    t.source = name;
    finish(t, name);
    return t;
}

RequestTrace load_requests(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot read request trace '" + path + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_requests(ss.str(), path);
}

}  // namespace sfumato::serve
