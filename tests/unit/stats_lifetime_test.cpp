// Stat groups destroyed in either order (found by the sanitizer build: an AI core's group died
// before its pipes' groups, whose destructors then wrote into the freed parent).
#include <catch2/catch.hpp>
#include <memory>

#include "sim/stats.h"

using namespace sfumato;

TEST_CASE("stats: a parent group destroyed before its child leaves the child detached") {
    auto parent = std::make_unique<StatGroup>(nullptr, "core");
    auto child = std::make_unique<StatGroup>(parent.get(), "pipe");
    Counter n(*child, "n", "", "count");
    REQUIRE(parent->children().size() == 1);
    parent.reset();
    CHECK(child->path() == "core/pipe");
    child.reset();  // must not touch the freed parent (ASan reports it in the sanitizer build)
}

TEST_CASE("stats: a child group destroyed first leaves its parent's list") {
    StatGroup parent(nullptr, "core");
    {
        StatGroup child(&parent, "pipe");
        CHECK(parent.children().size() == 1);
    }
    CHECK(parent.children().empty());
}
