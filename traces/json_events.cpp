#include "traces/json_events.h"

#include <zlib.h>

#include "sim/error.h"

namespace sfumato {

TraceEventReader::TraceEventReader(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");  // reads plain files as they are
    if (!f) throw InputError("cannot open '" + path + "'");
    gzbuffer(f, 1 << 20);
    m_file = f;
}

TraceEventReader::~TraceEventReader() {
    if (m_file) gzclose(static_cast<gzFile>(m_file));
}

bool TraceEventReader::fill() {
    if (m_eof) return false;
    // Drop what was consumed, keep the unfinished tail.
    if (m_pos > 0) {
        m_buf.erase(0, m_pos);
        m_pos = 0;
    }
    char chunk[1 << 16];
    const int n = gzread(static_cast<gzFile>(m_file), chunk, sizeof chunk);
    if (n <= 0) {
        m_eof = true;  // end of file, or a damaged gzip stream: what came before is kept
        return false;
    }
    m_buf.append(chunk, static_cast<size_t>(n));
    return true;
}

bool TraceEventReader::find_array() {
    // A bare [ ... ], or {"traceEvents": [ ... (other top-level fields are ignored).
    size_t first;
    while ((first = m_buf.find_first_not_of(" \t\r\n")) == std::string::npos) {
        if (!fill()) return false;
    }
    if (m_buf[first] == '[') {
        m_pos = first + 1;
        return true;
    }
    if (m_buf[first] != '{') return false;
    while (true) {
        const size_t key = m_buf.find("\"traceEvents\"", m_pos);
        if (key != std::string::npos) {
            const size_t b = m_buf.find('[', key);
            if (b != std::string::npos) {
                m_pos = b + 1;
                return true;
            }
            m_pos = key;
        } else if (m_buf.size() > 16) {
            m_pos = m_buf.size() - 16;  // keep a tail that could hold the start of the key
        }
        if (!fill()) return false;
    }
}

bool TraceEventReader::next(nlohmann::json& event) {
    if (m_done) return false;
    if (!m_in_array) {
        if (!find_array()) {
            m_done = true;
            return false;
        }
        m_in_array = true;
    }
    while (true) {
        // Skip separators.
        while (true) {
            while (m_pos < m_buf.size() && (m_buf[m_pos] == ',' || m_buf[m_pos] == ' ' || m_buf[m_pos] == '\n' ||
                                            m_buf[m_pos] == '\r' || m_buf[m_pos] == '\t'))
                ++m_pos;
            if (m_pos < m_buf.size()) break;
            if (!fill()) {
                m_truncated = true;
                m_done = true;
                return false;
            }
        }
        if (m_buf[m_pos] == ']') {
            m_done = true;
            return false;
        }
        if (m_buf[m_pos] != '{') {
            m_truncated = true;  // not an event array from here on
            m_done = true;
            return false;
        }
        // The matching brace, outside strings; read more until it is there.
        int depth = 0;
        bool str = false, esc = false;
        size_t q = m_pos;
        while (true) {
            for (; q < m_buf.size(); ++q) {
                const char c = m_buf[q];
                if (str) {
                    if (esc) esc = false;
                    else if (c == '\\') esc = true;
                    else if (c == '"') str = false;
                } else if (c == '"') {
                    str = true;
                } else if (c == '{') {
                    ++depth;
                } else if (c == '}' && --depth == 0) {
                    break;
                }
            }
            if (q < m_buf.size()) break;
            const size_t off = q - m_pos;
            if (!fill()) {
                m_truncated = true;
                m_done = true;
                return false;
            }
            q = m_pos + off;  // fill() moved the unfinished object to the front
        }
        event = nlohmann::json::parse(m_buf.begin() + static_cast<std::ptrdiff_t>(m_pos),
                                      m_buf.begin() + static_cast<std::ptrdiff_t>(q + 1), nullptr, false);
        m_pos = q + 1;
        if (event.is_discarded() || !event.is_object()) {
            ++m_bad;
            continue;
        }
        return true;
    }
}

}  // namespace sfumato
