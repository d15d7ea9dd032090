#include "traces/atomic_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/error.h"

namespace sfumato {

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
    const std::string tmp = path + ".tmp";
    try {
        write(tmp);
    } catch (...) {
        std::remove(tmp.c_str());
        throw;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::remove(tmp.c_str());
        throw SimError(kExitFailure, "cannot write '" + path + "': " + ec.message());
    }
}

void write_text_atomically(const std::string& path, const std::string& text) {
    write_atomically(path, [&](const std::string& tmp) {
        std::ofstream f(tmp, std::ios::binary);
        f << text;
        f.close();
        if (!f) throw SimError(kExitFailure, "cannot write '" + tmp + "'");
    });
}

}  // namespace sfumato
