// A Table (traces/table.h) as one HDF5 compound dataset: one member per column (int64, float64,
// or a variable-length UTF-8 string), one element per row, the table's attrs as string
// attributes of the dataset. h5py and pandas read it as a structured array. Written to a
// temporary file and renamed.
#pragma once
#include <string>

#include "traces/table.h"

namespace sfumato {

void write_table_h5(const std::string& path, const std::string& dataset, const Table& t);
// Throws InputError naming the file if it cannot be read or lacks the dataset.
Table read_table_h5(const std::string& path, const std::string& dataset);

}  // namespace sfumato
