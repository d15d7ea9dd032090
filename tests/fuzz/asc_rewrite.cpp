// Fuzz target `asc_rewrite`: the `<<<...>>>` launch rewriter for Ascend C sources
// (runtime/ascendc/asc_rewrite.h), as `sfumato asc-rewrite IN OUT` runs it. InputError (an
// unterminated launch) is the documented error. Property: a source without `<<<` has nothing to
// rewrite, so its text survives in the output.
#include "runtime/ascendc/asc_rewrite.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(asc_rewrite) {
    const std::string src(fuzz::as_text(data, size));
    const std::string out = ascendc::rewrite_launches(src, "fuzz.asc");
    if (src.find("<<<") == std::string::npos && out.find(src) == std::string::npos)
        fuzz::fail("a source without launches was changed");
}
