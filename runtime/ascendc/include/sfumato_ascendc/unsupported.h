// A false that depends on template arguments: a static_assert on it fires only when the template
// is instantiated, so an API sfumato does not support compiles until a kernel calls it, and then
// fails naming the API (misc.h, matmul.h).
#pragma once

namespace sfumato_unsupported {
template <class... A>
inline constexpr bool always_false = false;
}
