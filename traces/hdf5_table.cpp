#include "traces/hdf5_table.h"

#include <H5Cpp.h>

#include <cstring>
#include <stdexcept>

#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato {

namespace {

constexpr size_t kCell = 8;  // int64, double and a string pointer are all 8 bytes

H5::StrType vlen_string() {
    H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
    t.setCset(H5T_CSET_UTF8);
    return t;
}

H5::CompType memory_type(const Table& t) {
    H5::CompType ct(std::max<size_t>(1, t.columns.size()) * kCell);
    for (size_t i = 0; i < t.columns.size(); ++i) {
        const TableColumn& c = t.columns[i];
        switch (c.kind) {
            case TableColumn::Kind::Int: ct.insertMember(c.name, i * kCell, H5::PredType::NATIVE_INT64); break;
            case TableColumn::Kind::Float: ct.insertMember(c.name, i * kCell, H5::PredType::NATIVE_DOUBLE); break;
            case TableColumn::Kind::Text: ct.insertMember(c.name, i * kCell, vlen_string()); break;
        }
    }
    return ct;
}

void put_str_attr(H5::H5Object& d, const std::string& name, const std::string& value) {
    H5::StrType t(H5::PredType::C_S1, value.empty() ? 1 : value.size());
    H5::Attribute a = d.createAttribute(name, t, H5::DataSpace(H5S_SCALAR));
    a.write(t, value.empty() ? std::string(" ") : value);
}

}  // namespace

void write_table_columns(H5::Group& g, const Table& t) {
    for (const auto& [k, v] : t.attrs) put_str_attr(g, k, v);
    for (const TableColumn& c : t.columns) {
        hsize_t dims[1] = {c.size()};
        const H5::DataSpace space(1, dims);
        H5::DataSet d;
        switch (c.kind) {
            case TableColumn::Kind::Int:
                d = g.createDataSet(c.name, H5::PredType::NATIVE_INT64, space);
                if (!c.ints.empty()) d.write(c.ints.data(), H5::PredType::NATIVE_INT64);
                break;
            case TableColumn::Kind::Float:
                d = g.createDataSet(c.name, H5::PredType::NATIVE_DOUBLE, space);
                if (!c.floats.empty()) d.write(c.floats.data(), H5::PredType::NATIVE_DOUBLE);
                break;
            case TableColumn::Kind::Text: {
                const H5::StrType st = vlen_string();
                d = g.createDataSet(c.name, st, space);
                std::vector<const char*> ptrs;
                for (const auto& s : c.texts) ptrs.push_back(s.c_str());
                if (!ptrs.empty()) d.write(ptrs.data(), st);
                break;
            }
        }
        put_str_attr(d, "unit", c.unit);
    }
}

void write_table_h5(const std::string& path, const std::string& dataset, const Table& t) {
    const size_t n = t.rows();
    for (const auto& c : t.columns)
        if (c.size() != n) throw std::logic_error("table column '" + c.name + "' has a different length");
    if (t.columns.empty()) throw std::logic_error("table without columns");
    const size_t row = t.columns.size() * kCell;
    std::vector<unsigned char> buf(std::max<size_t>(1, n) * row, 0);
    for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < t.columns.size(); ++i) {
            unsigned char* p = buf.data() + r * row + i * kCell;
            const TableColumn& c = t.columns[i];
            if (c.kind == TableColumn::Kind::Int) std::memcpy(p, &c.ints[r], kCell);
            else if (c.kind == TableColumn::Kind::Float) std::memcpy(p, &c.floats[r], kCell);
            else {
                const char* s = c.texts[r].c_str();
                std::memcpy(p, &s, kCell);
            }
        }
    }
    write_atomically(path, [&](const std::string& tmp) {
        try {
            H5::Exception::dontPrint();
            H5::H5File file(tmp, H5F_ACC_TRUNC);
            const H5::CompType ct = memory_type(t);
            hsize_t dims[1] = {n};
            H5::DataSet d = file.createDataSet(dataset, ct, H5::DataSpace(1, dims));
            if (n) d.write(buf.data(), ct);
            for (const auto& [k, v] : t.attrs) put_str_attr(d, k, v);
            file.close();
        } catch (const H5::Exception& e) {
            throw SimError(kExitFailure, "cannot write '" + tmp + "': " + e.getDetailMsg());
        }
    });
}

Table read_table_h5(const std::string& path, const std::string& dataset) {
    Table t;
    try {
        H5::Exception::dontPrint();
        H5::H5File file(path, H5F_ACC_RDONLY);
        if (!file.nameExists(dataset)) throw InputError("'" + path + "' has no dataset '" + dataset + "'");
        H5::DataSet d = file.openDataSet(dataset);
        if (d.getTypeClass() != H5T_COMPOUND) throw InputError("'" + path + "': '" + dataset + "' is not a table");
        const H5::CompType ft = d.getCompType();
        const int members = ft.getNmembers();
        for (int i = 0; i < members; ++i) {
            TableColumn c;
            c.name = ft.getMemberName(static_cast<unsigned>(i));
            const H5T_class_t cls = ft.getMemberClass(static_cast<unsigned>(i));
            if (cls == H5T_INTEGER) c.kind = TableColumn::Kind::Int;
            else if (cls == H5T_FLOAT) c.kind = TableColumn::Kind::Float;
            else if (cls == H5T_STRING) c.kind = TableColumn::Kind::Text;
            else throw InputError("'" + path + "': column '" + c.name + "' has an unsupported type");
            t.columns.push_back(std::move(c));
        }
        const size_t n = static_cast<size_t>(d.getSpace().getSimpleExtentNpoints());
        const H5::CompType mt = memory_type(t);
        const size_t row = t.columns.size() * kCell;
        std::vector<unsigned char> buf(std::max<size_t>(1, n) * row, 0);
        if (n) d.read(buf.data(), mt);
        for (size_t i = 0; i < t.columns.size(); ++i) {
            TableColumn& c = t.columns[i];
            for (size_t r = 0; r < n; ++r) {
                const unsigned char* p = buf.data() + r * row + i * kCell;
                if (c.kind == TableColumn::Kind::Int) {
                    int64_t v;
                    std::memcpy(&v, p, kCell);
                    c.ints.push_back(v);
                } else if (c.kind == TableColumn::Kind::Float) {
                    double v;
                    std::memcpy(&v, p, kCell);
                    c.floats.push_back(v);
                } else {
                    const char* s;
                    std::memcpy(&s, p, kCell);
                    c.texts.push_back(s ? s : "");
                }
            }
        }
        if (n) {
            hsize_t dims[1] = {n};
            H5::DataSpace space(1, dims);
            H5Dvlen_reclaim(mt.getId(), space.getId(), H5P_DEFAULT, buf.data());
        }
        for (int i = 0; i < d.getNumAttrs(); ++i) {
            H5::Attribute a = d.openAttribute(static_cast<unsigned>(i));
            if (a.getTypeClass() != H5T_STRING) continue;
            std::string v;
            a.read(a.getStrType(), v);
            t.attrs[a.getName()] = v == " " ? "" : v;
        }
    } catch (const H5::Exception& e) {
        throw InputError("cannot read '" + path + "' as HDF5: " + e.getDetailMsg());
    }
    return t;
}

}  // namespace sfumato
