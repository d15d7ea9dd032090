#include "traces/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "sim/error.h"

namespace sfumato {

namespace fs = std::filesystem;

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
    const std::string tmp = path + ".tmp" + std::to_string(::getpid());
    try {
        write(tmp);
    } catch (...) {
        std::remove(tmp.c_str());
        throw;
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        std::remove(tmp.c_str());
        throw OutputError("cannot write '" + path + "': " + ec.message());
    }
}

void write_text_atomically(const std::string& path, const std::string& text) {
    write_atomically(path, [&](const std::string& tmp) {
        errno = 0;
        std::ofstream f(tmp, std::ios::binary);
        if (!f) throw OutputError("cannot create '" + path + "': " + std::strerror(errno));
        f << text;
        f.close();
        if (!f) throw OutputError("cannot write '" + path + "': " + (errno ? std::strerror(errno) : "write failed"));
    });
}

StagedOutputs::StagedOutputs(const std::string& dir) : m_dir(dir) {
    std::error_code ec;
    m_created = !fs::exists(dir, ec);
    fs::create_directories(dir, ec);
    if (ec) throw OutputError("cannot create output directory '" + dir + "': " + ec.message());
    m_stage = (fs::path(dir) / (".sfumato-staging-" + std::to_string(::getpid()))).string();
    fs::remove_all(m_stage, ec);
    fs::create_directory(m_stage, ec);
    if (ec) throw OutputError("cannot write in output directory '" + dir + "': " + ec.message());
}

StagedOutputs::~StagedOutputs() {
    std::error_code ec;
    fs::remove_all(m_stage, ec);
    if (m_created && !m_committed) fs::remove(m_dir, ec);  // only if empty
}

std::string StagedOutputs::path(const std::string& name) {
    m_names.push_back(name);
    return (fs::path(m_stage) / name).string();
}

void StagedOutputs::commit() {
    for (const std::string& n : m_names) {
        std::error_code ec;
        const fs::path from = fs::path(m_stage) / n;
        if (!fs::exists(from, ec)) continue;
        fs::rename(from, fs::path(m_dir) / n, ec);
        if (ec) throw OutputError("cannot write '" + (fs::path(m_dir) / n).string() + "': " + ec.message());
    }
    m_committed = true;
}

}  // namespace sfumato
