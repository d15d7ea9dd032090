// Output files are written completely or not at all: content goes to a temporary name in the
// same directory and is renamed over the target only after a successful close.
#pragma once
#include <functional>
#include <string>

namespace sfumato {

// Calls write(tmp_path); on success renames tmp_path to path. Throws SimError on failure
// (and removes the temporary).
void write_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write);
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace sfumato
