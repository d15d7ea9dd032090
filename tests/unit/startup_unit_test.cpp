// Pure C++ parts of kernel start-up: the scalar unit's tag arrays (LRU, dirty lines), the
// system region's layout (argument slots, code images laid out by first use) and the checks on
// the caches' parameters.
#include <catch2/catch.hpp>

#include "models/aicore/scalar_mem_params.h"
#include "models/aicore/system_region.h"
#include "models/aicore/tag_array.h"

using namespace sfumato;

TEST_CASE("startup: a tag array replaces the least recently used way and remembers dirty lines") {
    TagArray t;
    t.configure(8, 2);  // 4 sets x 2 ways: lines 0, 4, 8 share set 0
    CHECK_FALSE(t.lookup(0));
    CHECK_FALSE(t.insert(0).valid);
    CHECK_FALSE(t.insert(4).valid);
    CHECK(t.lookup(0));  // 0 is now the most recent: 4 goes next
    t.set_dirty(4);
    const TagArray::Victim v = t.insert(8);
    CHECK((v.valid && v.dirty && v.line == 4));
    CHECK(t.lookup(0));
    CHECK(t.lookup(8));
    CHECK_FALSE(t.lookup(4));
    CHECK_FALSE(t.insert(1).valid);  // another set: no victim
    t.set_dirty(8);
    t.set_dirty(1);
    const std::vector<uint64_t> d = t.take_dirty();
    CHECK(d.size() == 2);
    CHECK(t.take_dirty().empty());  // now clean
    CHECK_FALSE(t.invalidate(8));  // present, clean
    CHECK_FALSE(t.lookup(8));
    t.clear();
    CHECK_FALSE(t.lookup(0));
    CHECK(t.capacity_lines() == 8);
}

TEST_CASE("startup: code images are laid out by first use, one per kernel type and core kind") {
    Config c;
    SystemRegionParams p(ParamScope(c, "chip"));
    const uint32_t entry = 4096, site = 64, align = 2048;
    SystemRegion r(p, entry, site, align);
    CodeImage& a = r.image("Add", isa::CoreKind::Vector, 0);
    CodeImage& b = r.image("Add", isa::CoreKind::Cube, 0);
    CHECK(&a == &r.image("Add", isa::CoreKind::Vector, 0));
    CHECK(&a != &b);
    CHECK(a.base % align == 0);
    CHECK(b.base >= a.base + entry + uint64_t{site} * static_cast<uint64_t>(isa::Opcode::kCount));
    CHECK(a.size == entry);
    // Sites follow the entry in the order of first use; a second use keeps its place.
    CHECK(a.site_addr(isa::Opcode::VADD) == a.base + entry);
    CHECK(a.site_addr(isa::Opcode::COPY_GM_TO_UB) == a.base + entry + site);
    CHECK(a.site_addr(isa::Opcode::VADD) == a.base + entry);
    CHECK(a.size == entry + 2 * site);
    // Argument slots: a ring below the code, one per launch.
    const uint64_t s0 = r.args_addr(0, 64, "k"), s1 = r.args_addr(1, 64, "k");
    CHECK(s1 - s0 == p.args_slot_bytes);
    CHECK(r.args_addr(p.args_slots, 64, "k") == s0);
    CHECK(s0 + uint64_t{p.args_slots} * p.args_slot_bytes <= a.base);
    CHECK(s0 >= r.page_table() + 4096 * 3);
    CHECK_THROWS_AS(r.args_addr(0, p.args_slot_bytes + 1, "big"), ModelError);
}

TEST_CASE("startup: cache geometry that does not divide into power-of-two sets is a config error naming the key") {
    auto expect = [](const std::string& key, const std::string& value) {
        Config c;
        c.set_raw(key, value, "test");
        try {
            ScalarMemParams p(ParamScope(c, "chip.aicore"));
            FAIL("no error for " << key << " = " << value);
        } catch (const ConfigError& e) {
            CHECK(std::string(e.what()).find(key) != std::string::npos);
        }
    };
    expect("chip.aicore.icache.line_bytes", "3000");
    expect("chip.aicore.dcache.bytes", "1000");
    expect("chip.aicore.icache.aiv_bytes", "24KiB");  // 3 sets of 4 x 2 KiB
    expect("chip.aicore.tlb.page_bytes", "12288");
}
