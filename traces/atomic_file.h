// Output files are written completely or not at all: content goes to a temporary name in the
// same directory and is renamed over the target only after a successful close. A run's set of
// outputs (StagedOutputs) is written into a staging directory inside the output directory and
// moved in only when every file is complete, so an error or an interrupt leaves none of them.
// Write errors (full or read-only file system, no permission) throw OutputError (exit 2).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace sfumato {

// Calls write(tmp_path); on success renames tmp_path to path. Throws OutputError on failure
// (and removes the temporary).
void write_atomically(const std::string& path, const std::function<void(const std::string& tmp_path)>& write);
void write_text_atomically(const std::string& path, const std::string& text);

class StagedOutputs {
public:
    // Creates `dir` if needed and a staging directory inside it; throws OutputError.
    explicit StagedOutputs(const std::string& dir);
    // Removes the staging directory and whatever is in it (and the output directory, if this
    // created it and nothing was committed).
    ~StagedOutputs();
    StagedOutputs(const StagedOutputs&) = delete;
    StagedOutputs& operator=(const StagedOutputs&) = delete;
    // Where to write the output `name` (a plain file name) before commit().
    std::string path(const std::string& name);
    // Moves every staged file into the output directory (same file system: renames).
    void commit();

private:
    std::string m_dir, m_stage;
    std::vector<std::string> m_names;
    bool m_created = false;  // the output directory did not exist before
    bool m_committed = false;
};

}  // namespace sfumato
