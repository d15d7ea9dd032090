// Reads the events of a Chrome trace (a {"traceEvents": [...]} object or a bare array), plain or
// gzip, one event object at a time with bounded memory: the file is read in chunks and each
// object is parsed on its own. A file cut short yields the events before the cut (truncated()
// then says so); an object that is not valid JSON is counted (bad()) and skipped.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace sfumato {

class TraceEventReader {
public:
    // Throws InputError when the file cannot be opened.
    explicit TraceEventReader(const std::string& path);
    ~TraceEventReader();
    TraceEventReader(const TraceEventReader&) = delete;
    TraceEventReader& operator=(const TraceEventReader&) = delete;
    // The next event; false at the end of the array or of the file.
    bool next(nlohmann::json& event);
    bool found_array() const { return m_in_array || m_done; }
    bool truncated() const { return m_truncated; }
    size_t bad() const { return m_bad; }

private:
    bool fill();  // reads more input; false at end of file
    bool find_array();

    void* m_file = nullptr;  // gzFile
    std::string m_buf;
    size_t m_pos = 0;
    bool m_eof = false, m_in_array = false, m_done = false, m_truncated = false;
    size_t m_bad = 0;
};

}  // namespace sfumato
