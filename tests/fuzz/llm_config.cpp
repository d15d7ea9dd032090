// Fuzz target `llm_config`: a Hugging Face config.json as `sfumato llm CONFIG.json` reads it. An
// accepted config must describe a model whose derived sizes are positive and whose RoPE table is
// finite (a range check that lets a zero, an overflow or a NaN through is a finding).
#include <cmath>

#include "runtime/llm/model_config.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(llm_config) {
    const llm::ModelConfig c = llm::parse_model_config(std::string(fuzz::as_text(data, size)), "fuzz.json");
    if (c.params() <= 0 || c.layer_params() <= 0 || c.kv_bytes_per_token_layer(2) <= 0)
        fuzz::fail("accepted config gives a non-positive size");
    if (c.num_heads % c.num_kv_heads != 0) fuzz::fail("accepted config with heads not a multiple of kv heads");
    for (double f : llm::rope_inv_freq(c, 2 * c.max_position_embeddings))
        if (!std::isfinite(f) || f <= 0) fuzz::fail("accepted config gives a RoPE frequency of " + std::to_string(f));
}
