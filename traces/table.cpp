#include "traces/table.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace sfumato {

size_t TableColumn::size() const {
    switch (kind) {
        case Kind::Int: return ints.size();
        case Kind::Float: return floats.size();
        case Kind::Text: return texts.size();
    }
    return 0;
}

std::string shortest_double(double v) {
    if (std::isnan(v)) return "";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

namespace {
std::string csv_quote(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}
}  // namespace

std::string TableColumn::csv_cell(size_t row) const {
    switch (kind) {
        case Kind::Int: return std::to_string(ints.at(row));
        case Kind::Float: return shortest_double(floats.at(row));
        case Kind::Text: return csv_quote(texts.at(row));
    }
    return "";
}

const TableColumn* Table::find(const std::string& name) const {
    for (const auto& c : columns)
        if (c.name == name) return &c;
    return nullptr;
}

std::string table_csv(const Table& t) {
    const size_t n = t.rows();
    for (const auto& c : t.columns)
        if (c.size() != n) throw std::logic_error("table column '" + c.name + "' has a different length");
    std::string s;
    for (size_t i = 0; i < t.columns.size(); ++i) s += (i ? "," : "") + csv_quote(t.columns[i].name);
    s += "\n";
    for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < t.columns.size(); ++i) s += (i ? "," : "") + t.columns[i].csv_cell(r);
        s += "\n";
    }
    return s;
}

}  // namespace sfumato
