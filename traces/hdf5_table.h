// A Table (traces/table.h) in HDF5, in one of two layouts. As one compound dataset (a file of
// its own): one member per column (int64, float64, or a variable-length UTF-8 string), one
// element per row, the table's attrs as string attributes of the dataset; h5py and pandas read
// it as a structured array; written to a temporary file and renamed. Or as a group of one 1-D
// dataset per column (with its `unit` attribute), the table's attrs as the group's attributes:
// how stats.h5 holds a run's tables (traces/hdf5_stats.h).
#pragma once
#include <string>

#include "traces/table.h"

namespace H5 {
class Group;
}

namespace sfumato {

// Writes the columns of t as datasets into g (which must not hold datasets of those names).
void write_table_columns(H5::Group& g, const Table& t);

void write_table_h5(const std::string& path, const std::string& dataset, const Table& t);
// Throws InputError naming the file if it cannot be read or lacks the dataset.
Table read_table_h5(const std::string& path, const std::string& dataset);

}  // namespace sfumato
