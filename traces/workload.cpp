#include "traces/workload.h"

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/error.h"

namespace sfumato::workload {

using nlohmann::json;

const char* kind_name(Kind k) {
    constexpr const char* names[] = {"memcpy", "kernel", "record", "wait", "host_delay", "sync"};
    return names[static_cast<int>(k)];
}

const Stream* Workload::stream(int64_t id) const {
    for (const Stream& s : streams) {
        if (static_cast<int64_t>(s.id) == id) return &s;
    }
    return nullptr;
}

namespace {

struct KindSpec {
    Kind kind;
    const char* name;
    std::set<std::string> fields;
};

const std::vector<KindSpec>& kind_specs() {
    static const std::vector<KindSpec> specs = {
        {Kind::Memcpy, "memcpy", {"kind", "name", "stream", "dir", "bytes", "pinned"}},
        {Kind::Kernel, "kernel", {"kind", "name", "stream", "op", "args", "block_dim"}},
        {Kind::Record, "record", {"kind", "name", "stream", "event"}},
        {Kind::Wait, "wait", {"kind", "name", "stream", "event"}},
        {Kind::HostDelay, "host_delay", {"kind", "name", "us"}},
        {Kind::Sync, "sync", {"kind", "name", "stream"}},
    };
    return specs;
}

// Errors about one task name its index, its kind and the field.
class TaskReader {
public:
    TaskReader(const std::string& origin, size_t index, const json& j) : m_origin(origin), m_index(index), m_j(j) {}

    [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
        std::string where = m_origin + ": task " + std::to_string(m_index);
        if (!m_kind.empty()) where += " (" + m_kind + ")";
        if (!field.empty()) where += ": field '" + field + "'";
        throw InputError(where + ": " + msg);
    }
    void set_kind(const std::string& k) { m_kind = k; }
    bool has(const char* f) const { return m_j.contains(f); }
    const json& need(const char* f) const {
        if (!m_j.contains(f)) fail(f, "is missing");
        return m_j.at(f);
    }
    uint64_t u64(const char* f, uint64_t lo) const {
        const json& v = need(f);
        if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
            fail(f, "must be a non-negative integer");
        const uint64_t x = v.get<uint64_t>();
        if (x < lo) fail(f, "must be at least " + std::to_string(lo));
        return x;
    }
    std::string str(const char* f) const {
        const json& v = need(f);
        if (!v.is_string() || v.get<std::string>().empty()) fail(f, "must be a non-empty string");
        return v.get<std::string>();
    }

private:
    const std::string& m_origin;
    size_t m_index;
    const json& m_j;
    std::string m_kind;
};

std::string arg_string(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number_float()) return v.dump();
    return {};
}

Task read_task(const std::string& origin, size_t index, const json& j, const Workload& w,
               const OpValidator& ops, std::set<std::string>& recorded) {
    TaskReader r(origin, index, j);
    if (!j.is_object()) r.fail("", "must be an object");
    Task t;
    t.index = index;
    const std::string kind = r.str("kind");
    const KindSpec* spec = nullptr;
    for (const KindSpec& s : kind_specs()) {
        if (kind == s.name) spec = &s;
    }
    if (!spec) r.fail("kind", "unknown kind '" + kind + "' (memcpy, kernel, record, wait, host_delay, sync)");
    r.set_kind(kind);
    t.kind = spec->kind;
    for (const auto& [key, v] : j.items()) {
        if (!spec->fields.count(key)) r.fail(key, "unknown field for this kind");
    }
    if (r.has("name")) t.name = r.str("name");
    const bool stream_optional = t.kind == Kind::Sync;
    if (spec->fields.count("stream") && (!stream_optional || r.has("stream"))) {
        const json& s = r.need("stream");
        if (!s.is_number_integer()) r.fail("stream", "must be an integer stream id");
        t.stream = s.get<int64_t>();
        if (!w.stream(t.stream)) r.fail("stream", "stream " + std::to_string(t.stream) + " is not declared in \"streams\"");
    }
    switch (t.kind) {
        case Kind::Memcpy: {
            const std::string dir = r.str("dir");
            if (dir == "h2d") t.dir = CopyDir::H2D;
            else if (dir == "d2h") t.dir = CopyDir::D2H;
            else if (dir == "d2d") t.dir = CopyDir::D2D;
            else r.fail("dir", "must be h2d, d2h or d2d, not '" + dir + "'");
            t.bytes = r.u64("bytes", 1);
            if (r.has("pinned")) {
                if (!j.at("pinned").is_boolean()) r.fail("pinned", "must be true or false");
                t.pinned = j.at("pinned").get<bool>();
            }
            break;
        }
        case Kind::Kernel: {
            t.op = r.str("op");
            if (r.has("args")) {
                const json& a = j.at("args");
                if (!a.is_object()) r.fail("args", "must be an object");
                for (const auto& [k, v] : a.items()) {
                    std::string s = arg_string(v);
                    if (s.empty()) r.fail("args." + k, "must be a number, string or boolean");
                    t.args.emplace(k, std::move(s));
                }
            }
            if (r.has("block_dim")) {
                const uint64_t bd = r.u64("block_dim", 1);
                if (bd > kMaxBlockDim) r.fail("block_dim", "must be at most " + std::to_string(kMaxBlockDim));
                t.block_dim = static_cast<uint32_t>(bd);
            }
            if (ops) {
                if (std::string why = ops(t.op, t.args); !why.empty()) r.fail("op", why);
            }
            break;
        }
        case Kind::Record:
            t.event = r.str("event");
            recorded.insert(t.event);
            break;
        case Kind::Wait:
            t.event = r.str("event");
            if (!recorded.count(t.event)) r.fail("event", "event '" + t.event + "' is never recorded before this wait");
            break;
        case Kind::HostDelay: {
            const json& v = r.need("us");
            if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > kMaxHostDelayUs)
                r.fail("us", "must be a number from 0 to " + std::to_string(static_cast<uint64_t>(kMaxHostDelayUs)));
            t.us = v.get<double>();
            break;
        }
        case Kind::Sync: break;
    }
    return t;
}

}  // namespace

Workload parse(const std::string& text, const OpValidator& ops, const std::string& origin) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large
        throw InputError(origin + ": not valid JSON: " + e.what());
    }
    auto fail = [&](const std::string& msg) { throw InputError(origin + ": " + msg); };
    if (!j.is_object()) fail("the top level must be an object");
    for (const auto& [key, v] : j.items()) {
        if (key != "format" && key != "version" && key != "streams" && key != "tasks" && key != "description")
            fail("unknown top-level field '" + key + "'");
    }
    if (!j.contains("format") || j["format"] != "sfumato-workload") fail("field 'format' must be \"sfumato-workload\"");
    if (!j.contains("version") || j["version"] != 1) fail("field 'version' must be 1");
    if (!j.contains("streams") || !j["streams"].is_array()) fail("field 'streams' must be an array");
    if (!j.contains("tasks") || !j["tasks"].is_array()) fail("field 'tasks' must be an array");
    Workload w;
    size_t si = 0;
    for (const json& s : j["streams"]) {
        const std::string where = "stream " + std::to_string(si++);
        if (!s.is_object()) fail(where + ": must be an object");
        for (const auto& [key, v] : s.items()) {
            if (key != "id" && key != "priority") fail(where + ": unknown field '" + key + "'");
        }
        if (!s.contains("id") || !s["id"].is_number_unsigned() || s["id"].get<uint64_t>() > UINT32_MAX)
            fail(where + ": field 'id' must be an integer from 0 to " + std::to_string(UINT32_MAX));
        Stream st;
        st.id = s["id"].get<uint32_t>();
        if (s.contains("priority")) {
            const json& p = s["priority"];
            if (!p.is_number_integer() || (p.is_number_unsigned() && p.get<uint64_t>() > INT32_MAX) ||
                (!p.is_number_unsigned() && (p.get<int64_t>() < INT32_MIN || p.get<int64_t>() > INT32_MAX)))
                fail(where + ": field 'priority' must be a 32-bit integer");
            st.priority = p.get<int>();
        }
        if (w.stream(st.id)) fail(where + ": stream id " + std::to_string(st.id) + " is declared twice");
        w.streams.push_back(st);
    }
    std::set<std::string> recorded;
    size_t ti = 0;
    for (const json& t : j["tasks"]) {
        w.tasks.push_back(read_task(origin, ti, t, w, ops, recorded));
        ++ti;
    }
    return w;
}

Workload load(const std::string& path, const OpValidator& ops) {
    std::ifstream in(path);
    if (!in) throw InputError("workload file '" + path + "' cannot be opened");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), ops, path);
}

std::string to_json(const Workload& w) {
    json j;
    j["format"] = "sfumato-workload";
    j["version"] = 1;
    j["streams"] = json::array();
    for (const Stream& s : w.streams) j["streams"].push_back({{"id", s.id}, {"priority", s.priority}});
    j["tasks"] = json::array();
    for (const Task& t : w.tasks) {
        json o;
        o["kind"] = kind_name(t.kind);
        if (!t.name.empty()) o["name"] = t.name;
        if (t.stream >= 0) o["stream"] = t.stream;
        switch (t.kind) {
            case Kind::Memcpy:
                o["dir"] = copy_dir_name(t.dir);
                o["bytes"] = t.bytes;
                o["pinned"] = t.pinned;
                break;
            case Kind::Kernel:
                o["op"] = t.op;
                o["args"] = json::object();
                for (const auto& [k, v] : t.args) o["args"][k] = v;
                if (t.block_dim) o["block_dim"] = t.block_dim;
                break;
            case Kind::Record:
            case Kind::Wait: o["event"] = t.event; break;
            case Kind::HostDelay: o["us"] = t.us; break;
            case Kind::Sync: break;
        }
        j["tasks"].push_back(std::move(o));
    }
    return j.dump(1);
}

}  // namespace sfumato::workload
