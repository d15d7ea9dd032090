// Small text helpers shared by the assembler, the config reader and the CLI (trim, case,
// joining). They live in isa/ because it is the one layer every other may include.
#pragma once
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace sfumato::text {

// Without leading and trailing blanks (space, tab, CR, LF).
inline std::string trim(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

inline std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

inline std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// `head` followed by each word, separated by spaces (a command line for reports).
inline std::string join(const std::string& head, const std::vector<std::string>& words) {
    std::string s = head;
    for (const auto& w : words) s += " " + w;
    return s;
}

// "0x..." in lower-case hex (addresses in messages).
inline std::string hex(uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

}  // namespace sfumato::text
