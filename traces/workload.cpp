#include "traces/workload.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/error.h"

namespace sfumato::workload {

using nlohmann::json;

const char* kind_name(Kind k) {
    constexpr const char* names[] = {"memcpy", "kernel", "record", "wait", "host_delay", "sync", "alloc", "free", "flush", "collective"};
    return names[static_cast<int>(k)];
}

const char* kernel_kind_name(KernelKind k) {
    constexpr const char* names[] = {"vector", "cube", "mix"};
    return names[static_cast<int>(k)];
}

const Stream* Workload::stream(int64_t id) const {
    for (const Stream& s : streams) {
        if (static_cast<int64_t>(s.id) == id) return &s;
    }
    return nullptr;
}

bool Task::on_device(uint32_t d) const { return kind == Kind::Collective ? rank_of(d) >= 0 : device == d; }

int Task::rank_of(uint32_t d) const {
    for (size_t i = 0; i < ranks.size(); ++i)
        if (ranks[i] == d) return static_cast<int>(i);
    return -1;
}

uint32_t Workload::devices() const {
    uint32_t n = 1;
    for (const Task& t : tasks) {
        n = std::max(n, t.device + 1);
        for (uint32_t r : t.ranks) n = std::max(n, r + 1);
    }
    return n;
}

bool Workload::multi_device() const {
    for (const Task& t : tasks)
        if (t.device != 0 || t.kind == Kind::Collective) return true;
    return false;
}

namespace {

struct KindSpec {
    Kind kind;
    const char* name;
    std::set<std::string> fields;
};

const std::vector<KindSpec>& kind_specs() {
    static const std::vector<KindSpec> specs = {
        {Kind::Memcpy, "memcpy", {"kind", "name", "device", "stream", "dir", "bytes", "pinned", "async", "dst", "src", "dst_offset", "src_offset", "save", "gap_ns", "at_us"}},
        {Kind::Kernel, "kernel", {"kind", "name", "device", "stream", "op", "args", "block_dim", "node", "launches", "gap_ns", "at_us", "source", "measured_us"}},
        {Kind::Record, "record", {"kind", "name", "device", "stream", "event", "gap_ns", "at_us"}},
        {Kind::Wait, "wait", {"kind", "name", "device", "stream", "event", "gap_ns", "at_us"}},
        {Kind::HostDelay, "host_delay", {"kind", "name", "device", "us"}},
        {Kind::Sync, "sync", {"kind", "name", "device", "stream", "event", "gap_ns", "at_us"}},
        {Kind::Alloc, "alloc", {"kind", "name", "device", "buffer", "bytes", "addr", "init", "gap_ns", "at_us"}},
        {Kind::Free, "free", {"kind", "name", "device", "buffer", "gap_ns", "at_us"}},
        {Kind::Flush, "flush", {"kind", "name", "device", "gap_ns", "at_us"}},
        {Kind::Collective, "collective", {"kind", "name", "stream", "op", "count", "dtype", "redop", "root", "algo", "ranks", "send", "recv", "send_offset", "recv_offset", "gap_ns", "at_us"}},
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

// Buffers named so far: (device, name) -> bytes, and whether still live. Each device has its own
// buffer names (a collective's send/recv name a buffer on every rank's device).
using BufKey = std::pair<uint32_t, std::string>;
struct BufferState {
    std::map<BufKey, uint64_t> bytes;
    std::set<BufKey> live;
    std::set<std::string> saves;  // files d2h copies save to (one task each)
};
// Events recorded so far, per device.
using Recorded = std::set<std::pair<uint32_t, std::string>>;

std::string on_dev(uint32_t d) { return d ? " on device " + std::to_string(d) : std::string(); }

void check_tensor_buffers(const TaskReader& r, const json& tensors, const char* field, const BufferState& bufs, uint32_t dev) {
    if (tensors.is_null()) return;
    if (!tensors.is_array()) r.fail(std::string("node.") + field, "must be an array of tensors");
    for (size_t i = 0; i < tensors.size(); ++i) {
        const json& t = tensors[i];
        const std::string f = std::string("node.") + field + "[" + std::to_string(i) + "]";
        if (t.is_null()) continue;  // an omitted optional operand
        if (!t.is_object()) r.fail(f, "must be a tensor object or null");
        if (!t.contains("shape") || !t["shape"].is_array()) r.fail(f + ".shape", "must be an array of integers");
        if (!t.contains("buffer")) continue;
        if (!t["buffer"].is_string()) r.fail(f + ".buffer", "must be a buffer name");
        const std::string b = t["buffer"].get<std::string>();
        if (!bufs.live.count({dev, b}))
            r.fail(f + ".buffer", "buffer '" + b + "' is not allocated" + on_dev(dev) + " (no live alloc task names it)");
    }
}

// A collective's fields: names checked against the collective library's (as `sfumato collective`
// takes them), ranks distinct devices, the buffers live on every rank's device and large enough.
template <class BufferRef>
void read_collective(const TaskReader& r, const json& j, Task& t, const BufferRef& buffer_ref_on) {
    auto one_of = [&](const char* f, const std::vector<std::string>& valid, std::string& out) {
        if (!r.has(f)) return;
        out = r.str(f);
        std::string names;
        for (const auto& v : valid) {
            if (v == out) return;
            names += (names.empty() ? "" : ", ") + v;
        }
        r.fail(f, "'" + out + "' is not one of " + names);
    };
    const std::vector<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all"};
    if (!r.has("op")) r.fail("op", "is missing (" + std::string("all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all)"));
    one_of("op", ops, t.coll_op);
    one_of("dtype", {"fp16", "bf16", "fp32"}, t.dtype);
    one_of("redop", {"sum", "max", "min"}, t.redop);
    one_of("algo", {"auto", "ring", "halving_doubling", "mesh", "double_ring", "hierarchical"}, t.algo);
    t.count = r.u64("count", 1);
    const json& rk = r.need("ranks");
    if (!rk.is_array() || rk.size() < 2) r.fail("ranks", "must be an array of at least two device ids (rank order)");
    for (const json& d : rk) {
        if (!d.is_number_unsigned() || d.get<uint64_t>() >= kMaxDevices)
            r.fail("ranks", "must hold device ids from 0 to " + std::to_string(kMaxDevices - 1));
        const uint32_t dev = d.get<uint32_t>();
        if (t.rank_of(dev) >= 0) r.fail("ranks", "device " + std::to_string(dev) + " is listed twice");
        t.ranks.push_back(dev);
    }
    const uint64_t n = t.ranks.size();
    if (r.has("root")) {
        const uint64_t root = r.u64("root", 0);
        if (root >= n) r.fail("root", "must be a rank (0.." + std::to_string(n - 1) + ")");
        t.root = static_cast<uint32_t>(root);
    }
    // Elements of each rank's send and receive buffer (as the communicator uses them).
    const uint64_t es = t.dtype == "fp32" ? 4 : 2, c = t.count;
    uint64_t in = c, out = c;
    if (t.coll_op == "all_gather") out = c * n;
    else if (t.coll_op == "reduce_scatter") in = c * n;
    else if (t.coll_op == "all_to_all") in = out = c * n;
    if (r.has("send_offset")) t.src_offset = r.u64("send_offset", 0);
    if (r.has("recv_offset")) t.dst_offset = r.u64("recv_offset", 0);
    for (uint32_t dev : t.ranks) {
        if (r.has("send")) t.src = buffer_ref_on("send", t.src_offset, in * es, dev);
        if (r.has("recv")) t.dst = buffer_ref_on("recv", t.dst_offset, out * es, dev);
    }
}

Task read_task(const std::string& origin, size_t index, const json& j, const Workload& w,
               const OpValidator& ops, Recorded& recorded, BufferState& bufs) {
    TaskReader r(origin, index, j);
    if (!j.is_object()) r.fail("", "must be an object");
    Task t;
    t.index = index;
    const std::string kind = r.str("kind");
    const KindSpec* spec = nullptr;
    for (const KindSpec& s : kind_specs()) {
        if (kind == s.name) spec = &s;
    }
    if (!spec) r.fail("kind", "unknown kind '" + kind + "' (memcpy, kernel, record, wait, host_delay, sync, alloc, free, flush, collective)");
    r.set_kind(kind);
    t.kind = spec->kind;
    for (const auto& [key, v] : j.items()) {
        if (!spec->fields.count(key)) r.fail(key, "unknown field for this kind");
    }
    if (r.has("name")) t.name = r.str("name");
    if (r.has("gap_ns")) t.gap_ns = r.u64("gap_ns", 0);
    if (r.has("at_us")) {
        if (!j.at("at_us").is_number()) r.fail("at_us", "must be a number");
        t.at_us = j.at("at_us").get<double>();
    }
    if (r.has("device")) {
        const json& d = j.at("device");
        if (!d.is_number_unsigned() || d.get<uint64_t>() >= kMaxDevices)
            r.fail("device", "must be a device id from 0 to " + std::to_string(kMaxDevices - 1));
        t.device = d.get<uint32_t>();
    }
    auto buffer_ref_on = [&](const char* f, uint64_t off, uint64_t bytes, uint32_t dev) {
        const std::string b = r.str(f);
        if (!bufs.live.count({dev, b}))
            r.fail(f, "buffer '" + b + "' is not allocated" + on_dev(dev) + " (no live alloc task names it)");
        const uint64_t have = bufs.bytes.at({dev, b});
        if (off + bytes > have)
            r.fail(f, "the " + std::to_string(bytes) + " bytes at offset " + std::to_string(off) + " do not fit buffer '" +
                          b + "'" + on_dev(dev) + " (" + std::to_string(have) + " bytes)");
        return b;
    };
    auto buffer_ref = [&](const char* f, uint64_t off, uint64_t bytes) { return buffer_ref_on(f, off, bytes, t.device); };
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
            if (r.has("async")) {
                if (!j.at("async").is_boolean()) r.fail("async", "must be true or false");
                t.async = j.at("async").get<bool>();
            }
            if (r.has("dst_offset")) t.dst_offset = r.u64("dst_offset", 0);
            if (r.has("src_offset")) t.src_offset = r.u64("src_offset", 0);
            if (r.has("dst")) {
                if (t.dir == CopyDir::D2H) r.fail("dst", "a d2h copy's destination is host memory");
                t.dst = buffer_ref("dst", t.dst_offset, t.bytes);
            }
            if (r.has("src")) {
                if (t.dir == CopyDir::H2D) r.fail("src", "an h2d copy's source is host memory");
                t.src = buffer_ref("src", t.src_offset, t.bytes);
            }
            if (r.has("save")) {
                if (t.dir != CopyDir::D2H) r.fail("save", "only a d2h copy saves what it read");
                t.save = r.str("save");
                if (t.save.find('/') != std::string::npos || t.save == "." || t.save == "..")
                    r.fail("save", "must be a plain file name (it is written into the --out directory)");
                if (!bufs.saves.insert(t.save).second) r.fail("save", "'" + t.save + "' is saved by an earlier task too");
            }
            break;
        }
        case Kind::Kernel: {
            if (!r.has("op") && !r.has("node") && !r.has("launches"))
                r.fail("op", "a kernel names an operator (op), a graph node (node) or recorded launches");
            if (r.has("node")) {
                t.node = j.at("node");
                if (!t.node.is_object() || !t.node.contains("op_type") || !t.node["op_type"].is_string())
                    r.fail("node", "must be an object with a string op_type");
                check_tensor_buffers(r, t.node.value("inputs", json()), "inputs", bufs, t.device);
                check_tensor_buffers(r, t.node.value("outputs", json()), "outputs", bufs, t.device);
            }
            if (r.has("launches")) {
                const json& ls = j.at("launches");
                if (!ls.is_array()) r.fail("launches", "must be an array");
                for (size_t i = 0; i < ls.size(); ++i) {
                    const json& l = ls[i];
                    const std::string f = "launches[" + std::to_string(i) + "]";
                    if (!l.is_object()) r.fail(f, "must be an object");
                    Launch x;
                    x.name = l.value("name", "");
                    x.type = l.value("type", "");
                    const std::string kind = l.value("kind", "vector");
                    if (kind == "vector") x.kind = KernelKind::Vector;
                    else if (kind == "cube") x.kind = KernelKind::Cube;
                    else if (kind == "mix") x.kind = KernelKind::Mix;
                    else r.fail(f + ".kind", "must be vector, cube or mix");
                    if (!l.contains("block_dim") || !l["block_dim"].is_number_unsigned() || l["block_dim"].get<uint64_t>() == 0)
                        r.fail(f + ".block_dim", "must be a positive integer");
                    x.block_dim = l["block_dim"].get<uint32_t>();
                    x.flops = l.value("flops", 0.0);
                    x.bytes = l.value("bytes", uint64_t{0});
                    x.min_compute_cycles = l.value("min_compute_cycles", 0.0);
                    x.instr = l.value("instr", "");
                    for (auto [key, dst] : {std::pair{"args_bytes", &x.args_bytes}, std::pair{"code_bytes", &x.code_bytes}}) {
                        if (!l.contains(key)) continue;
                        if (!l[key].is_number_unsigned() || l[key].get<uint64_t>() > (1u << 24))
                            r.fail(f + "." + key, "must be an integer from 0 to " + std::to_string(1u << 24));
                        *dst = l[key].get<uint32_t>();
                    }
                    t.launches.push_back(std::move(x));
                }
            }
            if (r.has("source")) t.source = r.str("source");
            if (r.has("measured_us")) {
                if (!j.at("measured_us").is_number() || j.at("measured_us").get<double>() < 0)
                    r.fail("measured_us", "must be a non-negative number");
                t.measured_us = j.at("measured_us").get<double>();
            }
            if (!r.has("op")) {
                if (r.has("args")) r.fail("args", "belongs to the op form (give op too)");
                if (r.has("block_dim")) t.block_dim = static_cast<uint32_t>(r.u64("block_dim", 1));
                break;
            }
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
            if (ops && t.node.is_null()) {
                if (std::string why = ops(t.op, t.args); !why.empty()) r.fail("op", why);
            }
            break;
        }
        case Kind::Record:
            t.event = r.str("event");
            recorded.insert({t.device, t.event});
            break;
        case Kind::Wait:
            t.event = r.str("event");
            if (!recorded.count({t.device, t.event}))
                r.fail("event", "event '" + t.event + "' is never recorded" + on_dev(t.device) + " before this wait");
            break;
        case Kind::HostDelay: {
            const json& v = r.need("us");
            if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > kMaxHostDelayUs)
                r.fail("us", "must be a number from 0 to " + std::to_string(static_cast<uint64_t>(kMaxHostDelayUs)));
            t.us = v.get<double>();
            break;
        }
        case Kind::Sync:
            if (r.has("event")) {
                if (t.stream >= 0) r.fail("event", "a sync waits for a stream or for an event, not both");
                t.event = r.str("event");
                if (!recorded.count({t.device, t.event}))
                    r.fail("event", "event '" + t.event + "' is never recorded" + on_dev(t.device) + " before this sync");
            }
            break;
        case Kind::Alloc:
            t.buffer = r.str("buffer");
            if (bufs.live.count({t.device, t.buffer}))
                r.fail("buffer", "buffer '" + t.buffer + "' is already allocated" + on_dev(t.device));
            t.bytes = r.u64("bytes", 1);
            if (r.has("addr")) t.addr = r.u64("addr", 0);
            if (r.has("init")) t.init = r.str("init");
            bufs.bytes[{t.device, t.buffer}] = t.bytes;
            bufs.live.insert({t.device, t.buffer});
            break;
        case Kind::Free:
            t.buffer = r.str("buffer");
            if (!bufs.live.count({t.device, t.buffer}))
                r.fail("buffer", "buffer '" + t.buffer + "' is not allocated" + on_dev(t.device));
            bufs.live.erase({t.device, t.buffer});
            break;
        case Kind::Flush: break;
        case Kind::Collective: read_collective(r, j, t, buffer_ref_on); break;
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
        if (key != "format" && key != "version" && key != "streams" && key != "tasks" && key != "description" &&
            key != "recorded_on" && key != "instr_file")
            fail("unknown top-level field '" + key + "'");
    }
    if (!j.contains("format") || j["format"] != "sfumato-workload") fail("field 'format' must be \"sfumato-workload\"");
    if (!j.contains("version") || (j["version"] != 1 && j["version"] != 2 && j["version"] != 3))
        fail("field 'version' must be 1, 2 or 3");
    if (!j.contains("streams") || !j["streams"].is_array()) fail("field 'streams' must be an array");
    if (!j.contains("tasks") || !j["tasks"].is_array()) fail("field 'tasks' must be an array");
    Workload w;
    if (j.contains("description")) {
        if (!j["description"].is_string()) fail("field 'description' must be a string");
        w.description = j["description"].get<std::string>();
    }
    if (j.contains("recorded_on")) {
        if (!j["recorded_on"].is_object()) fail("field 'recorded_on' must be an object");
        w.recorded_on = j["recorded_on"];
    }
    if (j.contains("instr_file")) {
        if (!j["instr_file"].is_string()) fail("field 'instr_file' must be a string");
        w.instr_file = j["instr_file"].get<std::string>();
    }
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
    Recorded recorded;
    BufferState bufs;
    size_t ti = 0;
    for (const json& t : j["tasks"]) {
        w.tasks.push_back(read_task(origin, ti, t, w, ops, recorded, bufs));
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
    j["version"] = 3;
    if (!w.description.empty()) j["description"] = w.description;
    if (!w.recorded_on.is_null()) j["recorded_on"] = w.recorded_on;
    if (!w.instr_file.empty()) j["instr_file"] = w.instr_file;
    j["streams"] = json::array();
    for (const Stream& s : w.streams) j["streams"].push_back({{"id", s.id}, {"priority", s.priority}});
    j["tasks"] = json::array();
    for (const Task& t : w.tasks) {
        json o;
        o["kind"] = kind_name(t.kind);
        if (!t.name.empty()) o["name"] = t.name;
        if (t.stream >= 0) o["stream"] = t.stream;
        if (t.device) o["device"] = t.device;
        if (t.kind != Kind::HostDelay) o["gap_ns"] = t.gap_ns;
        if (t.at_us >= 0) o["at_us"] = t.at_us;
        switch (t.kind) {
            case Kind::Memcpy:
                o["dir"] = copy_dir_name(t.dir);
                o["bytes"] = t.bytes;
                o["pinned"] = t.pinned;
                o["async"] = t.async;
                if (!t.dst.empty()) o["dst"] = t.dst, o["dst_offset"] = t.dst_offset;
                if (!t.src.empty()) o["src"] = t.src, o["src_offset"] = t.src_offset;
                if (!t.save.empty()) o["save"] = t.save;
                break;
            case Kind::Kernel:
                if (!t.op.empty()) {
                    o["op"] = t.op;
                    o["args"] = json::object();
                    for (const auto& [k, v] : t.args) o["args"][k] = v;
                }
                if (t.block_dim) o["block_dim"] = t.block_dim;
                if (!t.node.is_null()) o["node"] = t.node;
                if (!t.source.empty()) o["source"] = t.source;
                if (t.measured_us >= 0) o["measured_us"] = t.measured_us;
                if (!t.launches.empty()) {
                    o["launches"] = json::array();
                    for (const Launch& l : t.launches) {
                        json x = {{"name", l.name}, {"type", l.type}, {"kind", kernel_kind_name(l.kind)},
                                  {"block_dim", l.block_dim}, {"flops", l.flops}, {"bytes", l.bytes},
                                  {"min_compute_cycles", l.min_compute_cycles}};
                        if (!l.instr.empty()) x["instr"] = l.instr;
                        if (l.args_bytes) x["args_bytes"] = l.args_bytes;
                        if (l.code_bytes) x["code_bytes"] = l.code_bytes;
                        o["launches"].push_back(std::move(x));
                    }
                }
                break;
            case Kind::Record:
            case Kind::Wait: o["event"] = t.event; break;
            case Kind::HostDelay: o["us"] = t.us; break;
            case Kind::Sync:
                if (!t.event.empty()) o["event"] = t.event;
                break;
            case Kind::Alloc:
                o["buffer"] = t.buffer;
                o["bytes"] = t.bytes;
                if (t.addr) o["addr"] = t.addr;
                if (!t.init.empty()) o["init"] = t.init;
                break;
            case Kind::Free: o["buffer"] = t.buffer; break;
            case Kind::Flush: break;
            case Kind::Collective:
                o["op"] = t.coll_op;
                o["count"] = t.count;
                o["dtype"] = t.dtype;
                o["redop"] = t.redop;
                o["root"] = t.root;
                o["algo"] = t.algo;
                o["ranks"] = t.ranks;
                if (!t.src.empty()) o["send"] = t.src, o["send_offset"] = t.src_offset;
                if (!t.dst.empty()) o["recv"] = t.dst, o["recv_offset"] = t.dst_offset;
                break;
        }
        j["tasks"].push_back(std::move(o));
    }
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);  // names may hold invalid UTF-8
}

}  // namespace sfumato::workload
