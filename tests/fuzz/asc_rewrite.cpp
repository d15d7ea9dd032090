// Fuzz target `asc_rewrite`: the `<<<...>>>` launch rewriter for Ascend C sources
// (runtime/ascendc/asc_rewrite.h), as `sfumato asc-rewrite IN OUT` runs it. InputError (an
// unterminated launch, an unclosed placement list) is the documented error. Properties: a source
// without `<<<` has nothing to rewrite, so its text survives in the output; removing placement lists
// (asc-rewrite --preprocessed) keeps the line count and changes nothing in a source without `inline`.
#include <algorithm>

#include "runtime/ascendc/asc_rewrite.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(asc_rewrite) {
    const std::string src(fuzz::as_text(data, size));
    const std::string out = ascendc::rewrite_launches(src, "fuzz.asc");
    if (src.find("<<<") == std::string::npos && out.find(src) == std::string::npos)
        fuzz::fail("a source without launches was changed");
    const std::string stripped = ascendc::strip_placement_lists(src, "fuzz.ii");
    if (std::count(stripped.begin(), stripped.end(), '\n') != std::count(src.begin(), src.end(), '\n'))
        fuzz::fail("removing placement lists changed the line count");
    if (src.find("inline") == std::string::npos && stripped != src)
        fuzz::fail("a source without inline was changed by the placement-list removal");
}
