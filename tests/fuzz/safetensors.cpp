// Fuzz target `safetensors`: a checkpoint as `sfumato llm --weights FILE.safetensors` reads it:
// the header is parsed and every float tensor it indexes is converted (each must lie inside the
// file, or the reader must have refused it).
#include "runtime/llm/safetensors.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(safetensors) {
    const llm::Safetensors st(std::string(fuzz::as_text(data, size)), "fuzz.safetensors");
    for (const auto& [name, t] : st.tensors()) {
        if (t.end > size) fuzz::fail("tensor '" + name + "' indexed past the file");
        if (t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64") {
            if (st.floats(name).size() != t.numel()) fuzz::fail("tensor '" + name + "' converted to the wrong size");
        }
    }
}
