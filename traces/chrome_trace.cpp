#include "traces/chrome_trace.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>

#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato {

namespace {

std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') { o += '\\'; o += c; }
        else if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += c;
    }
    return o;
}

// ps -> microseconds with ps resolution.
void put_us(FILE* f, uint64_t ps) { std::fprintf(f, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000), static_cast<unsigned long long>(ps % 1000000)); }

// An anonymous temporary file in $TMPDIR (else /tmp), removed when closed; null if none can be made.
std::FILE* temp_file() {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/sfumato-trace-XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) return nullptr;
    unlink(path.c_str());
    std::FILE* f = fdopen(fd, "w+");
    if (!f) close(fd);
    return f;
}

}  // namespace

ChromeTraceWriter::~ChromeTraceWriter() {
    if (m_spill) std::fclose(m_spill);
}

void ChromeTraceWriter::push(const Event& e) {
    m_events.push_back(e);
    if (m_budget && !m_budget_reached && m_events.size() + m_spilled >= m_budget) {
        m_budget_reached = true;
        m_budget_ts = e.ts;
        if (m_on_budget) m_on_budget();
    }
    if (m_events.size() >= kMaxBuffered && !m_spill_failed) spill();
}

void ChromeTraceWriter::spill() {
    if (!m_spill) m_spill = temp_file();
    if (!m_spill) {  // no temporary file: keep the events in memory
        m_spill_failed = true;
        return;
    }
    for (const Event& e : m_events) {
        std::fputs(",\n", m_spill);
        put_event(m_spill, e);
    }
    if (std::ferror(m_spill)) throw SimError(kExitFailure, "cannot write the trace's temporary file");
    m_spilled += m_events.size();
    m_events.clear();
    m_strings.clear();  // every event naming one is on file now
    m_extra_args.clear();
    for (Track& t : m_tracks) t.last = -1;
}

uint32_t ChromeTraceWriter::pid_of(const std::string& process) {
    auto it = m_pids.find(process);
    if (it != m_pids.end()) return it->second;
    const uint32_t pid = static_cast<uint32_t>(m_pids.size() + 1);
    m_pids[process] = pid;
    m_process_names.push_back(process);
    return pid;
}

TrackId ChromeTraceWriter::track(const std::string& process, const std::string& thread, int sort) {
    const uint32_t pid = pid_of(process);
    m_tracks.push_back({pid, static_cast<uint32_t>(m_tracks.size() + 1), process, thread, sort});
    return static_cast<TrackId>(m_tracks.size() - 1);
}

TrackId ChromeTraceWriter::counter_track(const std::string& process, const std::string& name) {
    const uint32_t pid = pid_of(process);
    m_tracks.push_back({pid, 0, process, name, 0});
    m_strings.push_back(name);
    return static_cast<TrackId>(m_tracks.size() - 1);
}

void ChromeTraceWriter::add_slice(TrackId t, const char* name, int32_t str, Tick b, Tick e, const TraceArg* args, int nargs) {
    Track& tr = m_tracks[t];
    if (name && tr.last >= 0) {
        Event& last = m_events[static_cast<size_t>(tr.last)];
        if (last.name == name && last.ts + last.dur == b.v) {
            last.dur = e.v - last.ts;
            ++last.merged;
            return;
        }
    }
    Event ev{};
    ev.ph = 'X';
    ev.track = t;
    ev.name = name;
    ev.str = str;
    ev.ts = b.v;
    ev.dur = e.v - b.v;
    ev.merged = 1;
    ev.nargs = static_cast<uint8_t>(std::min(nargs, 2));
    for (int i = 0; i < ev.nargs; ++i) ev.args[i] = args[i];
    ev.extra = -1;
    if (nargs > 2) {
        ev.extra = static_cast<int32_t>(m_extra_args.size());
        m_extra_args.emplace_back(args + 2, args + nargs);
    }
    tr.last = static_cast<int64_t>(m_events.size());
    push(ev);
}

void ChromeTraceWriter::slice(TrackId t, const char* name, Tick b, Tick e, const TraceArg* args, int nargs) {
    add_slice(t, name, -1, b, e, args, nargs);
}

void ChromeTraceWriter::slice_str(TrackId t, const std::string& name, Tick b, Tick e, const TraceArg* args, int nargs) {
    m_strings.push_back(name);
    add_slice(t, nullptr, static_cast<int32_t>(m_strings.size() - 1), b, e, args, nargs);
    m_tracks[t].last = -1;
}

void ChromeTraceWriter::counter(TrackId t, Tick at, double value) {
    Event ev{};
    ev.ph = 'C';
    ev.track = t;
    ev.ts = at.v;
    ev.value = value;
    push(ev);
}

void ChromeTraceWriter::flow(TrackId from, Tick t_from, TrackId to, Tick t_to, const char* name) {
    const uint64_t id = m_next_flow++;
    Event s{};
    s.ph = 's';
    s.track = from;
    s.name = name;
    s.str = -1;
    s.ts = t_from.v;
    s.flow_id = id;
    Event f = s;
    f.ph = 'f';
    f.track = to;
    f.ts = t_to.v;
    push(s);
    push(f);
    // Flow ends bind to the enclosing slice; never merge across them.
    m_tracks[from].last = -1;
    m_tracks[to].last = -1;
}

void ChromeTraceWriter::put_event(std::FILE* f, const Event& e) const {
    const Track& t = m_tracks[e.track];
    if (e.ph == 'C') {
        std::fprintf(f, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%u,\"ts\":", escape(t.thread).c_str(), t.pid);
        put_us(f, e.ts);
        std::fprintf(f, ",\"args\":{\"value\":%.6g}}", e.value);
        return;
    }
    const std::string name = e.name ? e.name : m_strings[static_cast<size_t>(e.str)];
    std::fprintf(f, "{\"ph\":\"%c\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":", e.ph,
                 escape(name).c_str(), e.ph == 'X' ? "slice" : "flag", t.pid, t.tid);
    put_us(f, e.ts);
    if (e.ph == 'X') {
        std::fputs(",\"dur\":", f);
        put_us(f, e.dur);
        std::fputs(",\"args\":{", f);
        std::fprintf(f, "\"count\":%u", e.merged);
        for (int i = 0; i < e.nargs; ++i) std::fprintf(f, ",\"%s\":%lld", e.args[i].key, static_cast<long long>(e.args[i].value));
        if (e.extra >= 0)
            for (const TraceArg& a : m_extra_args[static_cast<size_t>(e.extra)])
                std::fprintf(f, ",\"%s\":%lld", a.key, static_cast<long long>(a.value));
        std::fputs("}}", f);
    } else {
        std::fprintf(f, ",\"id\":%llu%s}", static_cast<unsigned long long>(e.flow_id), e.ph == 'f' ? ",\"bp\":\"e\"" : "");
    }
}

void ChromeTraceWriter::write(const std::string& path) const {
    write_atomically(path, [&](const std::string& tmp) {
        std::unique_ptr<FILE, int (*)(FILE*)> fp(std::fopen(tmp.c_str(), "w"), &std::fclose);
        if (!fp) throw OutputError("cannot create '" + path + "': " + std::strerror(errno));
        FILE* f = fp.get();
        std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        bool first = true;
        auto sep = [&] { std::fputs(first ? "" : ",\n", f); first = false; };
        for (size_t i = 0; i < m_process_names.size(); ++i) {
            sep();
            std::fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,\"tid\":0,\"args\":{\"name\":\"%s\"}}", i + 1,
                         escape(m_process_names[i]).c_str());
            sep();
            std::fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%zu,\"tid\":0,\"args\":{\"sort_index\":%zu}}", i + 1, i);
        }
        for (const Track& t : m_tracks) {
            if (t.tid == 0) continue;
            sep();
            std::fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s\"}}", t.pid, t.tid,
                         escape(t.thread).c_str());
            sep();
            std::fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,\"args\":{\"sort_index\":%d}}", t.pid,
                         t.tid, t.sort);
        }
        if (m_spill) {
            // The spilled events, each already preceded by a separator.
            if (first) {
                std::fprintf(f, "{\"ph\":\"M\",\"name\":\"trace_writer\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"sfumato\"}}");
                first = false;
            }
            std::fflush(m_spill);
            std::rewind(m_spill);
            char buf[1 << 16];
            size_t n;
            while ((n = std::fread(buf, 1, sizeof buf, m_spill)) > 0) std::fwrite(buf, 1, n, f);
            std::fseek(m_spill, 0, SEEK_END);
        }
        for (const Event& e : m_events) {
            sep();
            put_event(f, e);
        }
        std::fprintf(f, "\n]}\n");
        // The last buffer is written at close: a full disk may show only there.
        const bool ok = !std::ferror(f) && std::fflush(f) == 0;
        const int err = errno;
        if (std::fclose(fp.release()) != 0 || !ok)
            throw OutputError("cannot write '" + path + "': " + std::strerror(ok ? errno : err));
    });
}

}  // namespace sfumato
