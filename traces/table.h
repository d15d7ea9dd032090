// A table of named, typed columns (64-bit integers, doubles, text), each with an optional unit:
// the result table of a sweep (one row per point) and the tables a run adds to stats.h5 (the
// graph's memory plan and steps). Written as CSV here, and by hdf5_table.h either as one HDF5
// compound dataset (row records, the sweep's sweep.h5) or as a group with one dataset per column
// (stats.h5). Missing numbers are NaN (an empty CSV cell); integer columns have no missing values.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sfumato {

struct TableColumn {
    enum class Kind { Int, Float, Text };
    std::string name;
    Kind kind = Kind::Float;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> texts;
    std::string unit;  // written as the column dataset's `unit` attribute (stats.h5 tables)
    size_t size() const;
    // The cell as CSV text: integers in decimal, doubles in the shortest form that reads back
    // to the same value (NaN as an empty cell), text quoted when it needs to be.
    std::string csv_cell(size_t row) const;
};

struct Table {
    std::vector<TableColumn> columns;
    // Free-form string metadata (HDF5 attributes of the dataset).
    std::map<std::string, std::string> attrs;
    size_t rows() const { return columns.empty() ? 0 : columns.front().size(); }
    const TableColumn* find(const std::string& name) const;
};

// Header line plus one line per row; every column must have rows() cells.
std::string table_csv(const Table& t);
// The shortest decimal form of v that parses back to v.
std::string shortest_double(double v);

}  // namespace sfumato
