// valid_utf8 (traces/utf8.h): well-formed text passes unchanged, each invalid byte becomes '?',
// and the result is always accepted by the JSON writer.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "traces/utf8.h"

using sfumato::valid_utf8;

TEST_CASE("utf8: well-formed text is unchanged, invalid bytes become '?'") {
    const std::string ok = "MatMul_1 \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // e-acute, euro, emoji
    CHECK(valid_utf8(ok) == ok);
    CHECK(valid_utf8("a\x80z") == "a?z");                  // stray continuation byte
    CHECK(valid_utf8("a\xC3") == "a?");                     // truncated at the end
    CHECK(valid_utf8("\xC0\xAF") == "??");                  // overlong '/'
    CHECK(valid_utf8("\xED\xA0\x80") == "???");             // surrogate U+D800
    CHECK(valid_utf8("\xF4\x90\x80\x80") == "????");        // past U+10FFFF
    CHECK(valid_utf8("\xE2\x82z") == "??z");                // truncated in the middle
    CHECK(valid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));
}

TEST_CASE("utf8: every byte string becomes text the JSON writer accepts") {
    std::string all;
    for (int i = 0; i < 256; ++i)
        for (int j = 0; j < 256; j += 17) all += {static_cast<char>(i), static_cast<char>(j)};
    const nlohmann::json j = valid_utf8(all);
    CHECK_NOTHROW(j.dump());
}
