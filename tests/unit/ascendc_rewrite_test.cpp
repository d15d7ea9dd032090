// The <<<...>>> launch rewriting of Ascend C sources (runtime/ascendc/asc_rewrite.h): callee
// forms, the kernel kind read from the definition's qualifiers, comments and strings left alone,
// line numbers kept, and an unterminated launch reported with its line.
#include <catch2/catch.hpp>

#include "runtime/ascendc/asc_rewrite.h"
#include "sim/error.h"

using sfumato::ascendc::rewrite_launches;

namespace {
int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}
}  // namespace

TEST_CASE("ascendc rewrite: a launch becomes make_launcher with the kernel's kind, the rest is kept") {
    const std::string src =
        "__global__ __vector__ void add_custom(GM_ADDR x, GM_ADDR y) {}\n"
        "int main() {\n"
        "    // add_custom<<<1, nullptr, s>>>(a) in a comment stays\n"
        "    const char* t = \"<<<not a launch>>>\";\n"
        "    add_custom<<<blockDim, nullptr, stream>>>(xDevice, yDevice);\n"
        "}\n";
    const std::string out = rewrite_launches(src, "add.asc");
    CHECK(out.rfind("#line 1 \"add.asc\"\n", 0) == 0);
    CHECK_THAT(out, Catch::Contains("::sfumato::ascendc::make_launcher(add_custom, \"add_custom\", "
                                    "::sfumato::ascendc::LaunchKind::Vector, blockDim, nullptr, stream)(xDevice, yDevice);"));
    CHECK_THAT(out, Catch::Contains("// add_custom<<<1, nullptr, s>>>(a) in a comment stays"));
    CHECK_THAT(out, Catch::Contains("\"<<<not a launch>>>\""));
    CHECK(lines(out) == lines(src) + 1);  // only the #line directive added
}

TEST_CASE("ascendc rewrite: template and qualified callees, kinds from __cube__, __mix__ and task types") {
    const std::string src =
        "template <uint32_t L>\n__vector__ __global__ void vadd(float* x) {}\n"
        "__global__ __cube__ void mm(GM_ADDR a) {}\n"
        "template <int M, int N>\n__global__ __mix__(1, 2) void mix(GM_ADDR a) {}\n"
        "extern \"C\" __global__ __aicore__ void typed(GM_ADDR a) { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY); }\n"
        "void go() {\n"
        "  vadd<2048><<<8, 0, s>>>(x);\n"
        "  mm<<<n, nullptr, s>>>(a);\n"
        "  mix<512, 128>\n      <<<blocks, 0, s>>>(a);\n"
        "  ns::typed<<<f(1, g(2)), nullptr, s>>>(a);\n"
        "}\n";
    const std::string out = rewrite_launches(src, "k.asc");
    CHECK_THAT(out, Catch::Contains("make_launcher(vadd<2048>, \"vadd<2048>\", ::sfumato::ascendc::LaunchKind::Vector, 8, 0, s)(x)"));
    CHECK_THAT(out, Catch::Contains("make_launcher(mm, \"mm\", ::sfumato::ascendc::LaunchKind::Cube, n, nullptr, s)(a)"));
    CHECK_THAT(out, Catch::Contains("make_launcher(mix<512, 128>\n      , \"mix<512,128>\", ::sfumato::ascendc::LaunchKind::Mix,"));
    CHECK_THAT(out, Catch::Contains("make_launcher(ns::typed, \"ns::typed\", ::sfumato::ascendc::LaunchKind::Cube, "
                                    "f(1, g(2)), nullptr, s)(a)"));
    CHECK(lines(out) == lines(src) + 1);
}

TEST_CASE("ascendc rewrite: an __aicore__ kernel's kind follows what the source uses") {
    const std::string vec = "__global__ __aicore__ void k(GM_ADDR x) { AscendC::Add(a, b, c, n); }\nvoid h() { k<<<1, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(vec, "v.cpp"), Catch::Contains("LaunchKind::Vector"));
    const std::string cube = "__global__ __aicore__ void k(GM_ADDR x) { AscendC::Mmad(c, a, b, p); }\nvoid h() { k<<<1, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(cube, "c.cpp"), Catch::Contains("LaunchKind::Cube"));
    const std::string both =
        "__global__ __aicore__ void k(GM_ADDR x) { Mmad(c, a, b, p); LeakyRelu(y, x, s, n); }\nvoid h() { k<<<1, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(both, "m.cpp"), Catch::Contains("LaunchKind::Mix"));
    // the high-level Matmul (REGIST_MATMUL_OBJ) with vector work beside it: a mix kernel; alone it stays as it was
    const std::string mm_vec =
        "__global__ __aicore__ void k(GM_ADDR x) { REGIST_MATMUL_OBJ(&p, w, mm, &t); TBuf<TPosition::VECIN> b; }\n"
        "void h() { k<<<1, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(mm_vec, "p.asc"), Catch::Contains("LaunchKind::Mix"));
    const std::string mm_only =
        "__global__ __aicore__ void k(GM_ADDR x) { REGIST_MATMUL_OBJ(&p, w, mm, &t); }\nvoid h() { k<<<1, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(mm_only, "q.asc"), Catch::Contains("LaunchKind::FromMode"));
    const std::string none = "__global__ __aicore__ void k(GM_ADDR x) {}\nvoid h() { k<<<1, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(none, "n.cpp"), Catch::Contains("LaunchKind::FromMode"));
}

TEST_CASE("ascendc rewrite: a core-kind attribute (__attribute__((aic)) / ((aiv))) sets the kernel's kind") {
    // catlass's SmallMatmul: a macro for __global__ (expanded to nothing once preprocessed), the attribute after it,
    // a source that names vector calls too; the attribute wins.
    const std::string aic =
        "template <class L>\nCATLASS_GLOBAL __attribute__ ((aic)) void SmallMatmul(L l) { Mmad(c, a, b, p); Add(x, y, z, n); }\n"
        "void h() { SmallMatmul<<<24, nullptr, s>>>(l); }\n";
    CHECK_THAT(rewrite_launches(aic, "s.cpp"), Catch::Contains("LaunchKind::Cube"));
    const std::string aiv = "__attribute__((aiv)) void v(GM_ADDR x) { Mmad(c, a, b, p); Add(x, y, z, n); }\n"
                            "void h() { v<<<8, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(aiv, "v.cpp"), Catch::Contains("LaunchKind::Vector"));
    // Preprocessed (the macro gone, the attribute kept): the unit's launch names the kind too; without one it does not.
    const std::string pre =
        "template <class L>\n __attribute__((aic)) void SmallMatmul(L l) { Mmad(c, a, b, p); }\n"
        "void h() { SmallMatmul<<<24, nullptr, s>>>(l); }\nvoid g() { other<<<2, nullptr, s>>>(l); }\n";
    const std::string out = sfumato::ascendc::rewrite_unit_launches(pre, "s.ii");
    CHECK_THAT(out, Catch::Contains("make_call_launcher(\"SmallMatmul\", ::sfumato::ascendc::LaunchKind::Cube, [](auto..."));
    CHECK_THAT(out, Catch::Contains("make_call_launcher(\"other\", [](auto..."));
}

TEST_CASE("ascendc rewrite: a launch without its closing >>> names file and line") {
    const std::string src = "void h() {\n\n  k<<<1, nullptr, s(x);\n}\n";
    CHECK_THROWS_WITH(rewrite_launches(src, "bad.asc"), Catch::Contains("bad.asc:3") && Catch::Contains("'>>>'"));
    CHECK_THROWS_AS(rewrite_launches("int x = <<<1>>>;", "n.asc"), sfumato::InputError);
}

TEST_CASE("ascendc rewrite: a qualifier named in a comment before the kernel does not set its kind") {
    const std::string src =
        "void other() {}\n"
        "// cross-core flags: do not mark the kernel __vector__ or __cube__\n"
        "__global__ __mix__(1, 2) __aicore__ void k(GM_ADDR x) {}\n"
        "void h() { k<<<8, nullptr, s>>>(x); }\n";
    CHECK_THAT(rewrite_launches(src, "c.asc"), Catch::Contains("LaunchKind::Mix"));
}

TEST_CASE("ascendc rewrite: heads in #if/#else branches give the launch the compiled head's kind") {
    // The vendor's matmul_ibshareB: `#if SCENARIO_NUM == 2` a __cube__ head, `#else` an __aicore__ one, one
    // body after #endif. Read before preprocessing, the first head made every scenario a cube-only kernel
    // (its AIVs never ran); each head now defines the kind for the launch, and the preprocessor keeps the
    // compiled one's.
    const std::string src =
        "void other() {}\n"
        "#if SCENARIO_NUM == 2\n"
        "extern \"C\" __global__ __cube__ void k(GM_ADDR x)\n"
        "#else\n"
        "extern \"C\" __global__ __aicore__ void k(GM_ADDR x)\n"
        "#endif\n"
        "{ REGIST_MATMUL_OBJ(&p, w, mm, &t); TBuf<TPosition::VECIN> b; }\n"
        "void h() {\n"
        "  k<<<1, nullptr, s>>>(x);\n"
        "}\n";
    const std::string out = rewrite_launches(src, "ib.asc");
    CHECK_THAT(out, Catch::Contains(
                        "#if SCENARIO_NUM == 2\n#undef SFUMATO_ASC_KIND_k\n#define SFUMATO_ASC_KIND_k Cube\n"
                        "#line 3 \"ib.asc\"\nextern \"C\" __global__ __cube__ void k("));
    CHECK_THAT(out, Catch::Contains("#else\n#undef SFUMATO_ASC_KIND_k\n#define SFUMATO_ASC_KIND_k Mix\n"
                                    "#line 5 \"ib.asc\"\nextern \"C\" __global__ __aicore__ void k("));
    CHECK_THAT(
        out,
        Catch::Contains(
            "make_launcher(k, \"k\", ::sfumato::ascendc::LaunchKind::SFUMATO_ASC_KIND_k, 1, nullptr, s)(x)"));
    // Heads that agree (a declaration and its definition) keep the plain kind and add no lines.
    const std::string same =
        "extern \"C\" __global__ __vector__ void v(GM_ADDR x);\n"
        "extern \"C\" __global__ __vector__ void v(GM_ADDR x) {}\n"
        "void h() { v<<<1, nullptr, s>>>(x); }\n";
    const std::string plain = rewrite_launches(same, "v.asc");
    CHECK_THAT(plain, Catch::Contains("LaunchKind::Vector, 1"));
    CHECK(lines(plain) == lines(same) + 1);
}

TEST_CASE("ascendc rewrite: placement lists after inline are removed from a preprocessed unit, attributes kept") {
    using sfumato::ascendc::strip_placement_lists;
    const std::string src =
        "# 1 \"k.h\"\n"
        "template <typename T> inline[host, aicore] constexpr T half_of(T v) { return v / 2; }\n"
        "inline [ host,\n aicore ] int one() { return 1; }\n"
        "inline [[nodiscard]] int two() { return 2; }\n"
        "int a[3]; const char* s = \"inline [host]\"; int inlined[2];\n"
        "// inline [host, aicore] in a comment stays\n";
    const std::string out = strip_placement_lists(src, "k.ii");
    CHECK_THAT(out, Catch::Contains("template <typename T> inline constexpr T half_of"));
    CHECK_THAT(out, Catch::Contains("inline \n int one()"));
    CHECK_THAT(out, Catch::Contains("inline [[nodiscard]] int two()"));
    CHECK_THAT(out, Catch::Contains("\"inline [host]\"; int inlined[2];"));
    CHECK_THAT(out, Catch::Contains("// inline [host, aicore] in a comment stays"));
    CHECK(lines(out) == lines(src));  // a list's line breaks are kept: diagnostics keep their lines
    // A macro from a system header: the preprocessor puts line markers between its expansion and the list.
    const std::string marked = "template <class T>\n# 24 \"m.hpp\" 3 4\ninline\n# 24 \"m.hpp\"\n[host, aicore] T f(T t);\n";
    CHECK(strip_placement_lists(marked, "m.ii") ==
          "template <class T>\n# 24 \"m.hpp\" 3 4\ninline\n# 24 \"m.hpp\"\n T f(T t);\n");
    CHECK_THROWS_WITH(strip_placement_lists("int x;\ninline [host, aicore int f();\n", "u.ii"),
                      Catch::Contains("u.ii:2") && Catch::Contains("not closed"));
    CHECK_THROWS_AS(strip_placement_lists("inline [host,] int f();", "v.ii"), sfumato::InputError);
}

TEST_CASE("ascendc rewrite: a preprocessed unit's launches call the kernel through a generic lambda, lines kept") {
    using sfumato::ascendc::rewrite_unit_launches;
    const std::string src =
        "# 12 \"lib/device.hpp\"\n"
        "template <class K> struct D { void Run(P p, S s, unsigned n, unsigned long long a) {\n"
        "  if (a == 0) { Lib::Adapter<K><<<n, nullptr, s>>>(p); }\n"
        "  else { Lib::Adapter<K>\n     <<<n, nullptr, s>>>(p, a); }\n"
        "  const char* t = \"x<<<1>>>\";\n"
        "} };\n";
    const std::string out = rewrite_unit_launches(src, "u.ii");
    CHECK(out.rfind("# 12 \"lib/device.hpp\"\n", 0) == 0);  // no #line of its own: the unit's markers stay true
    CHECK_THAT(out, Catch::Contains("::sfumato::ascendc::make_call_launcher(\"Lib::Adapter<K>\", [](auto... sfumato_arg_) "
                                    "{ Lib::Adapter<K>(sfumato_arg_...); }, n, nullptr, s)(p);"));
    CHECK_THAT(out, Catch::Contains("{ Lib::Adapter<K>\n     (sfumato_arg_...); }, n, nullptr, s)(p, a);"));
    CHECK_THAT(out, Catch::Contains("\"x<<<1>>>\""));
    CHECK(lines(out) == lines(src));  // the line break inside the split launch is kept
    CHECK_THROWS_WITH(rewrite_unit_launches("void f() {\n  k<<<1, 0, s(a);\n}\n", "v.ii"),
                      Catch::Contains("v.ii:2") && Catch::Contains("'>>>'"));
}
