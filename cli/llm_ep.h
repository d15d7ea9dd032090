// `sfumato llm MODEL --system F --ep E`: the expert-parallel face of `sfumato
// llm` (cli/llm_ep.cpp), called by cmd_llm.cpp once it has parsed the options
// and loaded the model. The request is LlmTpRequest's, with `tp` the number of
// EP chips.
#pragma once
#include "cli/llm_tp.h"

namespace sfumato::cli {

int run_llm_ep(const LlmTpRequest &q);

} // namespace sfumato::cli
