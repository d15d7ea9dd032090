// Fuzz target `sweep_spec`: the sweep specification parser (sweep/spec.h) as `sfumato sweep`
// uses it, then the point expansion. Properties: an accepted spec with a modest number of
// points expands to exactly num_points() points, each equal to make_point() of its index, with
// distinct directory names and one value per varied key.
#include <set>

#include "sweep/spec.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

SFUMATO_FUZZ_TARGET(sweep_spec) {
    // Config paths resolve beside the spec (as if it were in examples/sweep), then in the cwd.
    const sweep::Spec spec =
        sweep::parse_spec(std::string(fuzz::as_text(data, size)), SFUMATO_SOURCE_DIR "/examples/sweep/fuzz.ini");
    const size_t n = spec.num_points();
    if (n == 0) fuzz::fail("an accepted spec has no points");
    if (n > 4096) return;  // a large grid is legal; expanding it here would only be slow
    const std::vector<sweep::Point> pts = sweep::expand(spec);
    if (pts.size() != n) fuzz::fail("expand() gives " + std::to_string(pts.size()) + " points, num_points() " +
                                    std::to_string(n));
    std::set<std::string> names;
    for (size_t i = 0; i < n; ++i) {
        if (pts[i].index != i) fuzz::fail("point " + std::to_string(i) + " carries index " + std::to_string(pts[i].index));
        if (pts[i].params.size() != spec.params().size()) fuzz::fail("point " + std::to_string(i) + " misses a key");
        const sweep::Point again = sweep::make_point(spec, i);
        if (again.args != pts[i].args || again.params != pts[i].params)
            fuzz::fail("make_point(" + std::to_string(i) + ") differs from expand()");
        names.insert(sweep::point_name(i, n));
    }
    if (names.size() != n) fuzz::fail("two points share a directory name");
}
