// `sfumato llm --system F --pp M [--tp T]`: the pipeline-parallel face of
// `sfumato llm` (cli/llm_pp.cpp), called by cmd_llm.cpp once it has parsed the
// options and loaded the model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/session.h"
#include "runtime/llm/engine.h"

namespace sfumato::cli {

struct LlmPpRequest {
    std::vector<std::string> args;  // the command's arguments (for the manifest)
    CommonOptions common;
    std::string system_file;
    uint32_t pp = 1, tp = 1;
    int64_t microbatches = 0;  // 0: min(pp, batch)
    llm::ModelConfig model;
    llm::RunOptions run;            // weights: none (functional runs load or draw them here)
    std::string weights_path;       // --weights FILE.safetensors (functional runs)
    std::string reuse;              // --reuse-timing (off with --exact)
    std::string simulate = "auto";  // --simulate all | one | auto (as with --tp)
};

int run_llm_pp(const LlmPpRequest& q);

}  // namespace sfumato::cli
