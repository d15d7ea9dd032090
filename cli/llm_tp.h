// `sfumato llm --system F --tp N`: the multi-chip face of `sfumato llm`
// (cli/llm_tp.cpp), called by cmd_llm.cpp once it has parsed the options and
// loaded the model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/session.h"
#include "runtime/llm/engine.h"

namespace sfumato::cli {

struct LlmTpRequest {
    std::vector<std::string> args;  // the command's arguments (for the manifest)
    CommonOptions common;
    std::string system_file;
    uint32_t tp = 1;
    llm::ModelConfig model;
    llm::RunOptions run;            // weights: none (functional runs load or draw them here)
    std::string weights_path;       // --weights FILE.safetensors (functional runs)
    std::string reuse;              // --reuse-timing (off with --exact)
    std::string simulate = "auto";  // --simulate all | one | auto
};

int run_llm_tp(const LlmTpRequest& q);

}  // namespace sfumato::cli
