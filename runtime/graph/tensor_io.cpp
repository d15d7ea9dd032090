// .npy and TensorProto .pb readers and writers (see tensor_io.h).
#include "runtime/graph/tensor_io.h"

#include <onnx/onnx_pb.h>

#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

#include "runtime/graph/ir.h"
#include "runtime/graph/onnx_import.h"
#include "sim/error.h"

namespace sfumato::graph {

namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot open tensor file '" + path + "'");
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct NpyType {
    const char* descr;
    ref::ElemType type;
};
const NpyType kNpyTypes[] = {
    {"<f4", ref::ElemType::Float}, {"<f2", ref::ElemType::Float16}, {"<f8", ref::ElemType::Double},
    {"<i8", ref::ElemType::Int64}, {"<i4", ref::ElemType::Int32},   {"<i2", ref::ElemType::Int16},
    {"|i1", ref::ElemType::Int8},  {"|u1", ref::ElemType::Uint8},   {"<u2", ref::ElemType::Uint16},
    {"|b1", ref::ElemType::Bool},  {"<u4", ref::ElemType::Uint32},  {"<u8", ref::ElemType::Uint64},
};

}  // namespace

ref::HostTensor read_npy(const std::string& path) {
    const std::string b = slurp(path);
    if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0)
        throw InputError(path + ": not a .npy file (bad magic)");
    const int major = static_cast<uint8_t>(b[6]);
    size_t hlen, hstart;
    if (major == 1) {
        hlen = static_cast<uint8_t>(b[8]) | (static_cast<size_t>(static_cast<uint8_t>(b[9])) << 8);
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) throw InputError(path + ": truncated .npy header");
        hlen = 0;
        for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<uint8_t>(b[8 + i])) << (8 * i);
        hstart = 12;
    } else {
        throw InputError(path + ": unsupported .npy version " + std::to_string(major));
    }
    if (b.size() < hstart + hlen) throw InputError(path + ": truncated .npy header");
    const std::string h = b.substr(hstart, hlen);
    std::smatch m;
    if (!std::regex_search(h, m, std::regex(R"('descr'\s*:\s*'([^']+)')")))
        throw InputError(path + ": .npy header has no descr");
    const std::string descr = m[1];
    if (std::regex_search(h, m, std::regex(R"('fortran_order'\s*:\s*True)")))
        throw InputError(path + ": Fortran-ordered arrays are not supported (save with C order)");
    if (!std::regex_search(h, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")))
        throw InputError(path + ": .npy header has no shape");
    std::vector<int64_t> shape;
    const std::string dims = m[1];
    const std::regex digits(R"(\d+)");
    for (std::sregex_iterator it(dims.begin(), dims.end(), digits), end; it != end; ++it)
        shape.push_back(std::stoll(it->str()));
    RawTensor r;
    bool found = false;
    for (const NpyType& t : kNpyTypes)
        if (descr == t.descr ||
            (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(t.descr).substr(1))) {
            r.type = t.type;
            found = true;
        }
    if (!found) throw InputError(path + ": .npy dtype '" + descr + "' is not supported");
    r.shape = shape;
    const size_t bytes = r.numel() * elem_size(r.type);
    if (b.size() - hstart - hlen < bytes)
        throw InputError(path + ": holds " + std::to_string(b.size() - hstart - hlen) +
                         " data bytes, shape " + ref::shape_str(shape) + " needs " + std::to_string(bytes) +
                         " (truncated)");
    r.bytes = b.substr(hstart + hlen, bytes);
    return r.to_host();
}

ref::HostTensor read_pb(const std::string& path, std::string* name) {
    const std::string b = slurp(path);
    onnx::TensorProto t;
    if (b.empty() || !t.ParseFromString(b)) throw InputError(path + ": not a TensorProto (.pb) file");
    if (name) *name = t.name();
    return raw_from_proto(t, path).to_host();
}

ref::HostTensor read_tensor_file(const std::string& path, std::string* name) {
    if (name) name->clear();
    auto ends = [&](const char* e) {
        const std::string s(e);
        return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".npy")) return read_npy(path);
    if (ends(".pb")) return read_pb(path, name);
    throw InputError("tensor file '" + path + "' must end in .npy or .pb");
}

std::string npy_bytes(const ref::HostTensor& t0) {
    ref::HostTensor t = t0;
    if (t.type == ref::ElemType::Bfloat16) t.type = ref::ElemType::Float;  // numpy has no bfloat16
    const char* descr = nullptr;
    for (const NpyType& n : kNpyTypes)
        if (n.type == t.type) descr = n.descr;
    if (!descr)
        throw InputError(std::string("cannot write a ") + ref::elem_type_name(t.type) + " tensor as .npy");
    std::string shape = "(";
    for (size_t i = 0; i < t.shape.size(); ++i)
        shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 || i + 1 < t.shape.size() ? "," : "");
    shape += ")";
    std::string header =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    out += header;
    out += raw_from_host(t).bytes;
    return out;
}

std::string pb_bytes(const ref::HostTensor& t, const std::string& name) {
    onnx::TensorProto p;
    p.set_name(name);
    p.set_data_type(static_cast<int32_t>(t.type));
    for (int64_t d : t.shape) p.add_dims(d);
    p.set_raw_data(raw_from_host(t).bytes);
    return p.SerializeAsString();
}

std::string safe_file_name(const std::string& name) {
    std::string s = name.empty() ? "output" : name;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    if (s[0] == '.') s[0] = '_';
    return s;
}

}  // namespace sfumato::graph
