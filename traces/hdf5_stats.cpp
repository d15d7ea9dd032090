#include "traces/hdf5_stats.h"

#include <H5Cpp.h>

#include <memory>

#include "sim/error.h"
#include "traces/atomic_file.h"
#include "traces/hdf5_table.h"

namespace sfumato {

namespace {

H5::Group open_path(H5::H5File& file, const std::string& path) {
    H5::Group g = file.openGroup("/");
    size_t start = 0;
    while (start < path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        const std::string part = path.substr(start, end - start);
        if (!part.empty()) g = g.nameExists(part) ? g.openGroup(part) : g.createGroup(part);
        start = end + 1;
    }
    return g;
}

void put_string(H5::Group& g, const std::string& name, const std::string& value) {
    H5::StrType t(H5::PredType::C_S1, value.empty() ? 1 : value.size());
    H5::DataSet d = g.createDataSet(name, t, H5::DataSpace(H5S_SCALAR));
    d.write(value.empty() ? std::string(" ") : value, t);
}

// The stats are written through HDF5's C API: the C++ wrapper copies and closes a property list
// per call and checks every identifier, which took about as many host instructions as creating
// the objects (one dataset with two attributes per stat). The objects are the same.
class H5Handle {
public:
    H5Handle(hid_t id, herr_t (*close)(hid_t), const char* what, const std::string& name)
        : m_id(id), m_close(close) {
        if (id < 0) throw H5::Exception(what, "cannot create '" + name + "'");
    }
    ~H5Handle() {
        if (m_id >= 0) m_close(m_id);
    }
    H5Handle(H5Handle&& o) noexcept : m_id(o.m_id), m_close(o.m_close) { o.m_id = -1; }
    H5Handle(const H5Handle&) = delete;
    H5Handle& operator=(const H5Handle&) = delete;
    hid_t id() const { return m_id; }

private:
    hid_t m_id;
    herr_t (*m_close)(hid_t);
};

void h5_check(herr_t r, const char* what, const std::string& name) {
    if (r < 0) throw H5::Exception(what, "cannot write '" + name + "'");
}

class H5Visitor : public StatVisitor {
public:
    explicit H5Visitor(H5::H5File& f)
        : m_file(f), m_scalar(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate", "scalar") {}
    void visit(const std::string& path, const Counter& s) override {
        uint64_t v = s.value();
        H5Handle d = make(path, s, H5T_NATIVE_UINT64, 1);
        h5_check(H5Dwrite(d.id(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), "H5Dwrite",
                 s.name());
    }
    void visit(const std::string& path, const Average& s) override {
        double v = s.mean();
        H5Handle d = make(path, s, H5T_NATIVE_DOUBLE, 1);
        h5_check(H5Dwrite(d.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), "H5Dwrite",
                 s.name());
        put_double_attr(d, "max", s.max());
        put_double_attr(d, "samples", static_cast<double>(s.samples()));
    }
    void visit(const std::string& path, const Histogram& s) override {
        H5Handle d = make(path, s, H5T_NATIVE_UINT64, s.buckets().size());
        h5_check(H5Dwrite(d.id(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.buckets().data()),
                 "H5Dwrite", s.name());
        put_double_attr(d, "lo", s.lo());
        put_double_attr(d, "width", s.width());
        put_double_attr(d, "mean", s.mean());
    }
    void visit(const std::string& path, const Formula& s) override {
        double v = s.value();
        H5Handle d = make(path, s, H5T_NATIVE_DOUBLE, 1);
        h5_check(H5Dwrite(d.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v), "H5Dwrite",
                 s.name());
    }

private:
    H5Handle make(const std::string& path, const StatBase& s, hid_t type, size_t n) {
        // A component's stats come one after another: its group is opened once, not per stat
        // (walking the path costs a lookup per level).
        if (!m_group || path != m_group_path) {
            m_group = std::make_unique<H5::Group>(open_path(m_file, "/stats/" + path));
            m_group_path = path;
        }
        hsize_t dims[1] = {n};
        std::unique_ptr<H5Handle> simple;
        if (n != 1)
            simple = std::make_unique<H5Handle>(H5Screate_simple(1, dims, nullptr), H5Sclose,
                                                "H5Screate_simple", s.name());
        H5Handle d(H5Dcreate2(m_group->getId(), s.name().c_str(), type, simple ? simple->id() : m_scalar.id(),
                              H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Dclose, "H5Dcreate2", path + "/" + s.name());
        put_string_attr(d, "unit", s.unit());
        put_string_attr(d, "description", s.desc());
        return d;
    }
    // A fixed-length string of the value's length (one blank for an empty value), as put_string.
    void put_string_attr(const H5Handle& d, const char* name, const std::string& value) {
        const std::string v = value.empty() ? std::string(" ") : value;
        H5Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy", name);
        h5_check(H5Tset_size(t.id(), v.size()), "H5Tset_size", name);
        H5Handle a(H5Acreate2(d.id(), name, t.id(), m_scalar.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   "H5Acreate2", name);
        h5_check(H5Awrite(a.id(), t.id(), v.data()), "H5Awrite", name);
    }
    void put_double_attr(const H5Handle& d, const char* name, double v) {
        H5Handle a(H5Acreate2(d.id(), name, H5T_NATIVE_DOUBLE, m_scalar.id(), H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose, "H5Acreate2", name);
        h5_check(H5Awrite(a.id(), H5T_NATIVE_DOUBLE, &v), "H5Awrite", name);
    }
    H5::H5File& m_file;
    H5Handle m_scalar;
    std::unique_ptr<H5::Group> m_group;
    std::string m_group_path;
};

}  // namespace

namespace {
void write_table(H5::H5File& file, const H5Table& t) {
    H5::Group g = open_path(file, t.path);
    write_table_columns(g, t.table);
}
}  // namespace

void write_stats_h5(const std::string& path, const StatGroup& root,
                    const std::map<std::string, std::string>& config, const RunMeta& meta,
                    const std::vector<H5Table>& tables) {
    write_atomically(path, [&](const std::string& tmp) {
        try {
            H5::Exception::dontPrint();
            H5::H5File file(tmp, H5F_ACC_TRUNC);
            H5::Group m = file.createGroup("/meta");
            put_string(m, "version", meta.version);
            put_string(m, "command_line", meta.command_line);
            put_string(m, "config_hash", meta.config_hash);
            put_string(m, "mode", meta.mode);
            if (!meta.git_revision.empty()) put_string(m, "git_revision", meta.git_revision);
            if (!meta.inputs.empty()) {
                H5::Group in = m.createGroup("inputs");
                for (const auto& [kind, v] : meta.inputs) put_string(in, kind, v);
            }
            H5::Group c = file.createGroup("/config");
            for (const auto& [k, v] : config) put_string(c, k, v);
            file.createGroup("/stats");
            H5Visitor vis(file);
            root.accept(vis);
            for (const H5Table& t : tables) write_table(file, t);
            file.close();
        } catch (const H5::Exception& e) {
            throw OutputError("cannot write '" + path + "': " + e.getDetailMsg());
        }
    });
}

namespace {

std::string get_string_attr(const H5::DataSet& d, const char* name) {
    if (!d.attrExists(name)) return "";
    H5::Attribute a = d.openAttribute(name);
    std::string v;
    a.read(a.getStrType(), v);
    return v;
}

void read_group(const H5::Group& g, const std::string& prefix, std::vector<StatRecord>& out) {
    for (hsize_t i = 0; i < g.getNumObjs(); ++i) {
        const std::string name = g.getObjnameByIdx(i);
        const std::string path = prefix.empty() ? name : prefix + "/" + name;
        if (g.getObjTypeByIdx(i) == H5G_GROUP) {
            read_group(g.openGroup(name), path, out);
            continue;
        }
        H5::DataSet d = g.openDataSet(name);
        StatRecord r;
        r.path = path;
        const hssize_t n = d.getSpace().getSimpleExtentNpoints();
        r.values.resize(static_cast<size_t>(n));
        d.read(r.values.data(), H5::PredType::NATIVE_DOUBLE);
        if (d.getTypeClass() == H5T_INTEGER) {
            r.integer = true;
            r.ints.resize(static_cast<size_t>(n));
            d.read(r.ints.data(), H5::PredType::NATIVE_UINT64);
        }
        r.unit = get_string_attr(d, "unit");
        r.description = get_string_attr(d, "description");
        for (auto [attr, dst] : {std::pair<const char*, double*>{"lo", &r.lo}, {"width", &r.width}}) {
            if (!d.attrExists(attr)) continue;
            H5::Attribute a = d.openAttribute(attr);
            if (a.getTypeClass() == H5T_FLOAT) a.read(H5::PredType::NATIVE_DOUBLE, dst);
        }
        out.push_back(std::move(r));
    }
}

}  // namespace

std::vector<StatRecord> read_stats_h5(const std::string& path) {
    std::vector<StatRecord> out;
    try {
        H5::Exception::dontPrint();
        H5::H5File file(path, H5F_ACC_RDONLY);
        if (!file.nameExists("/stats"))
            throw InputError("'" + path + "' has no /stats group: not a sfumato stats file");
        read_group(file.openGroup("/stats"), "", out);
    } catch (const H5::Exception& e) {
        throw InputError("cannot read '" + path + "' as HDF5: " + e.getDetailMsg());
    }
    return out;
}

}  // namespace sfumato
