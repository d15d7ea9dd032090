// safetensors reader (see safetensors.h).
#include "runtime/llm/safetensors.h"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "isa/dtype.h"
#include "sim/error.h"

namespace sfumato::llm {

namespace {
using json = nlohmann::json;
constexpr uint64_t kMaxHeader = 100u << 20;  // the format's own limit is 100 MB
constexpr int kMaxRank = 8;
}  // namespace

int safetensors_elem_bytes(const std::string& d) {
    if (d == "F64" || d == "I64" || d == "U64") return 8;
    if (d == "F32" || d == "I32" || d == "U32") return 4;
    if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
    if (d == "I8" || d == "U8" || d == "BOOL") return 1;
    return 0;
}

uint64_t SafeTensorInfo::numel() const {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

Safetensors::Safetensors(std::string bytes, std::string label) : m_bytes(std::move(bytes)), m_label(std::move(label)) {
    auto fail = [&](const std::string& what) -> void { throw InputError(m_label + ": not a valid safetensors file: " + what); };
    if (m_bytes.size() < 8) fail("shorter than its 8-byte header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(m_bytes[static_cast<size_t>(i)]);
    if (n > kMaxHeader || n > m_bytes.size() - 8)
        fail("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(m_bytes.size()) + " bytes)");
    m_data = 8 + n;
    const uint64_t data_size = m_bytes.size() - m_data;
    json h;
    try {
        h = json::parse(m_bytes.begin() + 8, m_bytes.begin() + static_cast<std::ptrdiff_t>(m_data));
    } catch (const json::exception& e) {
        fail(std::string("header is not JSON (") + e.what() + ")");
    }
    if (!h.is_object()) fail("header is not a JSON object");
    for (auto it = h.begin(); it != h.end(); ++it) {
        const std::string& name = it.key();
        const json& v = it.value();
        if (name == "__metadata__") {
            if (!v.is_object()) fail("__metadata__ is not an object");
            for (auto m = v.begin(); m != v.end(); ++m)
                if (m.value().is_string()) m_metadata[m.key()] = m.value().get<std::string>();
            continue;
        }
        auto bad = [&](const std::string& what) { fail("tensor '" + name + "': " + what); };
        if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
            bad("needs dtype, shape and data_offsets");
        SafeTensorInfo t;
        if (!v["dtype"].is_string()) bad("dtype is not a string");
        t.dtype = v["dtype"].get<std::string>();
        const int eb = safetensors_elem_bytes(t.dtype);
        if (eb == 0) bad("unknown dtype '" + t.dtype + "'");
        const json& s = v["shape"];
        if (!s.is_array() || s.size() > kMaxRank) bad("shape must be an array of at most 8 sizes");
        uint64_t numel = 1;
        for (const json& d : s) {
            if (!d.is_number_unsigned()) bad("shape has a size that is not a non-negative integer");
            const uint64_t x = d.get<uint64_t>();
            if (x > data_size || (x && numel > data_size / x)) bad("shape is larger than the file");
            numel *= x;
            t.shape.push_back(static_cast<int64_t>(x));
        }
        const json& o = v["data_offsets"];
        if (!o.is_array() || o.size() != 2 || !o[0].is_number_unsigned() || !o[1].is_number_unsigned())
            bad("data_offsets must be [begin, end]");
        t.begin = o[0].get<uint64_t>();
        t.end = o[1].get<uint64_t>();
        if (t.begin > t.end || t.end > data_size)
            bad("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] outside the " +
                std::to_string(data_size) + "-byte data section");
        if (t.end - t.begin != numel * static_cast<uint64_t>(eb))
            bad(std::to_string(t.end - t.begin) + " bytes for " + std::to_string(numel) + " elements of " + t.dtype);
        m_tensors[name] = std::move(t);
    }
}

Safetensors Safetensors::read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("--weights: cannot read " + path);
    std::ostringstream ss;
    ss << f.rdbuf();
    return Safetensors(ss.str(), path);
}

const SafeTensorInfo& Safetensors::info(const std::string& name) const {
    auto it = m_tensors.find(name);
    if (it == m_tensors.end()) throw InputError(m_label + ": no tensor '" + name + "'");
    return it->second;
}

std::vector<float> Safetensors::floats(const std::string& name, const std::vector<int64_t>& shape) const {
    const SafeTensorInfo& t = info(name);
    auto shape_str = [](const std::vector<int64_t>& s) {
        std::string r = "[";
        for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
        return r + "]";
    };
    if (!shape.empty() && shape != t.shape)
        throw InputError(m_label + ": tensor '" + name + "' has shape " + shape_str(t.shape) + ", the model needs " +
                         shape_str(shape));
    const char* p = m_bytes.data() + m_data + t.begin;
    std::vector<float> out(t.numel());
    for (size_t i = 0; i < out.size(); ++i) {
        if (t.dtype == "F32") {
            std::memcpy(&out[i], p + 4 * i, 4);
        } else if (t.dtype == "F16") {
            uint16_t b;
            std::memcpy(&b, p + 2 * i, 2);
            out[i] = isa::f16_to_f32(b);
        } else if (t.dtype == "BF16") {
            uint16_t b;
            std::memcpy(&b, p + 2 * i, 2);
            out[i] = isa::bf16_to_f32(b);
        } else if (t.dtype == "F64") {
            double d;
            std::memcpy(&d, p + 8 * i, 8);
            out[i] = static_cast<float>(d);
        } else {
            throw InputError(m_label + ": tensor '" + name + "' is " + t.dtype + ", a float tensor is needed");
        }
    }
    return out;
}

}  // namespace sfumato::llm
