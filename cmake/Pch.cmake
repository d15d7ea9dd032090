# Precompiled headers (SFUMATO_PCH; scripts/demo turns it on). Most of a translation unit's
# compile time is spent parsing the same third-party and standard headers: an operator source is
# about 1,600 lines of its own over 87,000 of headers, SystemC (reached through sim/device_if.h)
# and libstdc++ most of them. Each library below parses them once into a precompiled header that
# its sources load (measured in docs/build_time.md). Only third-party and standard headers: a
# project header forced into every source would change name lookup where a source did not
# include it, and the normal build (no PCH) still checks that every source includes what it uses.
set(SFUMATO_PCH_STD <algorithm> <array> <cmath> <cstdint> <cstring> <deque> <functional> <limits> <map>
    <memory> <optional> <set> <sstream> <string> <unordered_map> <vector>)

# gcc 12 loses the system-header status of libstdc++'s inline code when it comes from a
# precompiled header, so its known false positives in std::string's copies (GCC PR 105651 and
# kin: -Warray-bounds, -Wrestrict, -Wstringop-overflow at -O2) are reported in our sources and
# would fail -Werror in the PCH builds only (scripts/demo's, scripts/test's). There they stay
# warnings; a build without precompiled headers still fails on them.
if(SFUMATO_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-error=array-bounds -Wno-error=restrict -Wno-error=stringop-overflow)
endif()

# sfumato_pch(TARGET HEADERS h...): TARGET precompiles the standard headers above and h...
# sfumato_pch(TARGET REUSE_FROM OTHER): TARGET loads OTHER's precompiled header (same compile
# definitions and options: gcc rejects a precompiled header built with other macros).
function(sfumato_pch target)
  if(NOT SFUMATO_PCH)
    return()
  endif()
  cmake_parse_arguments(P "" "REUSE_FROM" "HEADERS" ${ARGN})
  if(P_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${P_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${SFUMATO_PCH_STD} ${P_HEADERS})
  endif()
endfunction()
