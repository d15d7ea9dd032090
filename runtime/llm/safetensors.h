// A reader of the safetensors format (what Hugging Face checkpoints ship): an 8-byte
// little-endian header length, a JSON header mapping each tensor name to its dtype, shape and
// [begin, end) byte offsets into the data that follows, then the raw little-endian tensors.
// The whole file is held in memory (the models simulated functionally are small); every offset,
// size and shape is checked against the file before a byte is read, and anything malformed is
// an InputError naming the file and the tensor. Simplified: no memory mapping, no sharded
// checkpoints (one file); dtypes F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL are indexed,
// only the float ones convert to floats.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sfumato::llm {

struct SafeTensorInfo {
    std::string dtype;  // as the header spells it: F16, BF16, F32, ...
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;  // within the data section
    uint64_t numel() const;
};

class Safetensors {
public:
    // Parses a whole file's bytes (the label names it in errors).
    Safetensors(std::string bytes, std::string label);
    static Safetensors read_file(const std::string& path);

    const std::map<std::string, SafeTensorInfo>& tensors() const { return m_tensors; }
    bool has(const std::string& name) const { return m_tensors.count(name) != 0; }
    const SafeTensorInfo& info(const std::string& name) const;
    // The values of a float tensor as floats, checked to have `shape` (empty: any shape).
    std::vector<float> floats(const std::string& name, const std::vector<int64_t>& shape = {}) const;
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }

private:
    std::string m_bytes, m_label;
    uint64_t m_data = 0;  // offset of the data section
    std::map<std::string, SafeTensorInfo> m_tensors;
    std::map<std::string, std::string> m_metadata;
};

// Bytes per element of a safetensors dtype (0: unknown).
int safetensors_elem_bytes(const std::string& dtype);

}  // namespace sfumato::llm
