// Text from outside (CSV cells, ONNX names) as valid UTF-8: JSON writers refuse anything else, so
// input text is made valid where it enters. Invalid bytes (stray continuation bytes, truncated or
// overlong sequences, surrogates, code points past U+10FFFF) each become '?'.
#pragma once
#include <string>
#include <string_view>

namespace sfumato {

std::string valid_utf8(std::string_view s);

}  // namespace sfumato
