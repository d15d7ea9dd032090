// The CLI's side of splitting a system command over window-synchronised ranks: the
// --distributed option and which commands may run under a launcher. Opening the transport is the
// library's (runtime/system/transport.h).
#pragma once
#include <memory>
#include <string>

#include "cli/session.h"
#include "runtime/system/transport.h"

namespace sfumato::cli {

using sys::launcher_ranks;
using sys::open_transport;

// --distributed auto|on|off (auto: split when an MPI launcher started the process).
void add_distributed_option(po::options_description& d, std::string& mode);
// Non-empty (the reason) when `command` cannot run under a launcher of several ranks.
std::string split_refusal(const std::string& command);

}  // namespace sfumato::cli
